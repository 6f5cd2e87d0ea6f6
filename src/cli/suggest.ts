/**
 * `quarry suggest PREFIX`: completions of the last word of PREFIX from a corpus's terms, as
 * `GET /api/suggest` gives them (read-only).
 */
import { COMMON_OPTIONS, EXIT_OK, intOption, parseCommandArgs, printJsonLine, resolveDataDir, runCommand, UsageError } from './command.js';
import { CORPUS_OPTIONS, corpusOption, openIndexReadOnly } from './corpus-access.js';

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
    const index = await openIndexReadOnly(resolveDataDir(values.data), scope);
    try {
      const suggestions = index.searcher().suggest(prefix, limit);
      if (json) printJsonLine({ v: 1, prefix, suggestions });
      else for (const s of suggestions) console.log(s);
      return EXIT_OK;
    } finally {
      await index.close();
    }
  });
}
