/**
 * `quarry search QUERY…`: runs a query against one corpus, read-only (no lock: works while a server or
 * an import runs). `--json` prints the body of `GET /api/search`, byte for byte.
 */
import { LOCAL_OPERATOR } from '../kernel/principal.js';
import { COMMON_OPTIONS, EXIT_OK, intOption, parseCommandArgs, printJsonLine, resolveDataDir, runCommand, UsageError } from './command.js';
import { CORPUS_OPTIONS, corpusOption, openSearchService, wireScope } from './corpus-access.js';

const USAGE = `usage: quarry search [--corpus own|web|trusted] [--page N] [--data DIR] [--json] QUERY...

Searches a corpus (default own) with the query language of the API: terms, +required, -excluded,
"phrases", site:host. Twenty results per page; --page is 0-based.`;

export async function run(args: string[]): Promise<number> {
  let json = false;
  return runCommand('search', USAGE, () => json, async () => {
    const { values, positionals } = parseCommandArgs(args, { ...COMMON_OPTIONS, ...CORPUS_OPTIONS, page: { type: 'string' } });
    json = values.json === true;
    if (values.help) { console.log(USAGE); return EXIT_OK; }
    const scope = corpusOption(values);
    const q = positionals.join(' ');
    if (q.trim() === '') throw new UsageError('no QUERY given.');
    const page = intOption('page', values.page) ?? 0;
    const { service, close } = await openSearchService(resolveDataDir(values.data), scope);
    try {
      const r = await service.search(LOCAL_OPERATOR, { q, scope: wireScope(scope), page });
      if (json) {
        printJsonLine(r);
        return EXIT_OK;
      }
      const first = page * service.limits.pageSize;
      console.log(`${r.total.toLocaleString('en-US')} result${r.total === 1 ? '' : 's'} for ${JSON.stringify(q)} in ${scope}`
        + (r.nresults ? ` (${first + 1}–${first + r.nresults})` : '')
        + (r.phrase_exact === false ? ' — no exact phrase match; showing all the words instead' : ''));
      if (r.did_you_mean !== undefined) console.log(`Did you mean: ${r.did_you_mean}`);
      r.results.forEach((h, i) => {
        console.log(`\n${String(first + i + 1).padStart(3)}. ${h.title}`);
        console.log(`     cid ${h.cid}  score ${h.score}${h.url ? `  ${h.url}` : ''}`);
        if (h.snippet) console.log(`     ${h.snippet.replace(/\s+/g, ' ')}`);
      });
      return EXIT_OK;
    } finally {
      await close();
    }
  });
}
