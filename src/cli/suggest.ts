/**
 * `quarry suggest PREFIX`: completions of the last word of PREFIX from a corpus's terms, as
 * `GET /api/suggest` gives them (read-only; `--json` prints its body).
 */
import { COMMON_OPTIONS, EXIT_OK, intOption, parseCommandArgs, printJsonLine, resolveDataDir, runCommand, UsageError } from './command.js';
import { LOCAL_OPERATOR } from '../kernel/principal.js';
import { CORPUS_OPTIONS, corpusOption, openSearchService, wireScope } from './corpus-access.js';

const USAGE = `usage: quarry suggest [--corpus own|web|trusted] [--limit N] [--data DIR] [--json] PREFIX

Completes the last word of PREFIX from the words of the corpus, most frequent first (default 10).`;

export async function run(args: string[]): Promise<number> {
  let json = false;
  return runCommand('suggest', USAGE, () => json, async () => {
    const { values, positionals } = parseCommandArgs(args, { ...COMMON_OPTIONS, ...CORPUS_OPTIONS, limit: { type: 'string' } });
    json = values.json === true;
    if (values.help) { console.log(USAGE); return EXIT_OK; }
    const scope = corpusOption(values);
    const prefix = positionals.join(' ');
    if (prefix.trim() === '') throw new UsageError('no PREFIX given.');
    const limit = intOption('limit', values.limit, 1) ?? 10;
    const { service, close } = await openSearchService(resolveDataDir(values.data), scope, { suggestLimit: limit });
    try {
      const r = await service.suggest(LOCAL_OPERATOR, { q: prefix, scope: wireScope(scope) });
      if (json) printJsonLine(r);
      else for (const s of r.suggestions) console.log(s);
      return EXIT_OK;
    } finally {
      await close();
    }
  });
}
