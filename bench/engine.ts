/**
 * `npm run bench [-- <BEIR dir | corpus.jsonl>] [--engines a,b] [--queries N] [--json out.json]`
 *
 * Builds the index of a collection (default: SciFact from ../shared/data when present) with Quarry and
 * with MiniSearch, FlexSearch, Lunr, Orama and SQLite FTS5, each in its own process, and runs the
 * collection's queries (all of them, in plain OR form, see bench/dataset.ts) single-threaded after a
 * warm-up pass: top 20 with the exact total. A bare JSONL corpus gets 1,000 seeded 1–3-word queries.
 * Prints markdown tables (figures, then ratios) for docs/benchmarks.md.
 */
import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { defaultCollectionPath, judgedQueries, loadCollection, plainQuery } from './dataset.js';
import { ALL_ENGINES, formatTables, runEngines, scoreRelevance } from './harness.js';
import { seededQueries } from './queries.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<void> {
  const positional = process.argv.slice(2).filter((a, i, all) => !a.startsWith('--') && !(i > 0 && all[i - 1]!.startsWith('--')));
  const path = positional[0] ?? defaultCollectionPath('scifact');
  if (!path) throw new Error('no collection given and ../shared/data/scifact is absent: npm run bench -- <BEIR dir | corpus.jsonl>');
  const engines = (arg('engines') ?? ALL_ENGINES.join(',')).split(',');
  const c = await loadCollection(path);
  let queries = c.queries.map((q) => ({ id: q.id, q: plainQuery(q.text) })).filter((q) => q.q !== '');
  if (queries.length === 0) queries = seededQueries(c.docs, 1000, 42);
  const limit = arg('queries');
  if (limit) queries = queries.slice(0, Number(limit));
  const judged = judgedQueries(c).map((q) => q.id);
  console.log(`# bench: ${c.name} — ${c.docs.length} documents, ${queries.length} queries; node ${process.version}, ${cpus()[0]?.model ?? '?'} × ${cpus().length}, ${Math.round(totalmem() / 2 ** 30)} GiB`);
  const summaries = runEngines(path, queries, judged, engines);
  scoreRelevance(summaries, c.qrels);
  console.log('');
  console.log(formatTables(summaries));
  console.log('');
  for (const s of summaries) if (s.report) console.log(`- ${s.engine}: ${s.report.method}`);
  const json = arg('json');
  if (json) writeFileSync(json, JSON.stringify(summaries.map(({ report, ...s }) => ({ ...s, method: report?.method, buildMs: report?.buildMs, indexBytes: report?.indexBytes, peakRss: report?.peakRss, textBytes: report?.textBytes, docs: report?.docs })), null, 2));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
