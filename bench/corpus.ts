/**
 * `npm run bench:corpus -- <corpus.jsonl> [--docs N] [--peers fts5]` (or `--synthetic N`): the scale
 * benchmark of bench/scale.ts on a Wikipedia-style JSONL.
 *
 * `npm run bench:corpus [-- --engines quarry,sqlite-fts5,…] [--queries N]`: the speed benchmark on the
 * Debian-docs corpus (bench/debian-docs.ts: ~44k HTML pages of four Debian documentation packages, ~190
 * MiB of text), with 1,000 seeded 1–3-word queries (bench/queries.ts, seed 42). By default Quarry and
 * SQLite FTS5 run; the in-memory JS peers can be added with --engines (they need several GiB and many
 * minutes on this corpus). Prints the tables and the targets beside the figures.
 */
import { cpus, totalmem } from 'node:os';
import { debianDocsCorpus } from './debian-docs.js';
import { loadCollection } from './dataset.js';
import { formatTables, runEngines } from './harness.js';
import { fmt, MB } from './measure.js';
import { seededQueries } from './queries.js';
import { runScale } from './scale.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--synthetic') || argv.some((a, i) => !a.startsWith('--') && !argv[i - 1]?.startsWith('--'))) {
    await runScale(argv);
    return;
  }
  const corpus = await debianDocsCorpus();
  const engines = (arg('engines') ?? 'quarry,sqlite-fts5').split(',');
  const { docs } = await loadCollection(corpus.path);
  const queries = seededQueries(docs, Number(arg('queries') ?? 1000), 42);
  const words = queries.reduce((n, q) => n + q.q.split(' ').length, 0);
  console.log(`# bench:corpus: debian-docs — ${docs.length} documents, ${fmt(corpus.textBytes / MB, 1)} MiB of text, ${queries.length} queries (${fmt(words / queries.length, 2)} words on average); node ${process.version}, ${cpus()[0]?.model ?? '?'} × ${cpus().length}, ${Math.round(totalmem() / 2 ** 30)} GiB`);
  console.log(`# sample queries: ${queries.slice(0, 8).map((q) => JSON.stringify(q.q)).join(', ')}`);
  const summaries = runEngines(corpus.path, queries, [], engines, { maxOldSpaceMb: 16384 });
  console.log('');
  console.log(formatTables(summaries));
  console.log('');
  for (const s of summaries) if (s.report) console.log(`- ${s.engine}: ${s.report.method}`);
  const q = summaries.find((s) => s.engine === 'quarry' && s.report);
  if (q?.report) {
    const r = q.report;
    console.log('');
    console.log('Targets (issue 2):');
    console.log(`- build ≥ 10 MB of text per second on one core: ${fmt(r.textBytes / 1e6 / (r.buildCpuMs / 1000), 1)} MB/s of CPU time (${fmt(r.textBytes / 1e6 / (r.buildMs / 1000), 1)} MB/s of wall time)`);
    console.log(`- index ≤ 40% of the text: ${fmt((100 * r.indexBytes) / r.textBytes, 1)}%`);
    console.log(`- p50 low single-digit ms: ${fmt(q.p50, 3)} ms (p95 ${fmt(q.p95, 3)}, p99 ${fmt(q.p99, 3)}; CPU p50 ${fmt(q.cpuP50, 3)} ms)`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
