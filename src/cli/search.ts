/**
 * `quarry search QUERY…`: runs a query against one corpus, read-only (no lock: works while a server or
 * an import runs). `--json` prints the same object as `GET /api/search` (cids as strings).
 */
import { DEFAULT_PAGE_SIZE } from '../engine/index.js';
import { COMMON_OPTIONS, EXIT_OK, intOption, parseCommandArgs, printJsonLine, resolveDataDir, runCommand, UsageError } from './command.js';
import { CORPUS_OPTIONS, corpusOption, openIndexReadOnly } from './corpus-access.js';

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
    const index = await openIndexReadOnly(resolveDataDir(values.data), scope);
    try {
      const r = index.searcher().search(q, { page, pageSize: DEFAULT_PAGE_SIZE, snippets: true });
      if (json) {
        const out: Record<string, unknown> = {
          v: 1, query: q, scope, page, total: r.total, nresults: r.hits.length,
          results: r.hits.map((h) => ({
            cid: h.cid.toString(), score: h.score, title: h.title,
            ...(h.snippet !== undefined ? { snippet: h.snippet } : {}),
            doc: `/api/doc?cid=${h.cid}${scope === 'own' ? '' : `&scope=${scope}`}`,
            ...(h.url !== undefined ? { url: h.url } : {}), ...(h.host !== undefined ? { host: h.host } : {}),
          })),
        };
        if (r.phraseExact !== undefined) out.phrase_exact = r.phraseExact;
        if (r.didYouMean !== undefined) out.did_you_mean = r.didYouMean;
        printJsonLine(out);
        return EXIT_OK;
      }
      const first = page * DEFAULT_PAGE_SIZE;
      console.log(`${r.total.toLocaleString('en-US')} result${r.total === 1 ? '' : 's'} for ${JSON.stringify(q)} in ${scope}`
        + (r.hits.length ? ` (${first + 1}–${first + r.hits.length})` : '')
        + (r.phraseExact === false ? ' — no exact phrase match; showing all the words instead' : ''));
      if (r.didYouMean !== undefined) console.log(`Did you mean: ${r.didYouMean}`);
      r.hits.forEach((h, i) => {
        console.log(`\n${String(first + i + 1).padStart(3)}. ${h.title}`);
        console.log(`     cid ${h.cid}  score ${h.score}${h.url ? `  ${h.url}` : ''}`);
        if (h.snippet) console.log(`     ${h.snippet.replace(/\s+/g, ' ')}`);
      });
      return EXIT_OK;
    } finally {
      await index.close();
    }
  });
}
