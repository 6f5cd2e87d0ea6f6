/**
 * Two builds of the engine timed against one index in one process, for a query change: the machine's
 * speed drifts by a quarter between runs minutes apart (docs/benchmarks.md), so two runs of the scale
 * bench cannot show a 10% change. Here both builds open the same index directory; every query is run by
 * both, alternating which goes first, for several passes; per query each build's median is kept, and the
 * report gives each build's p50 / p90 / mean of those and the median of the per-query ratios B / A.
 *
 * The queries are the scale bench's 1–3-word and title queries for the same corpus (`makeQueries`).
 * A build is a copy of `dist/` (`node scripts/build.mjs`) placed inside the repository, so that its
 * imports find node_modules:
 *
 *   node scripts/build.mjs && cp -r dist .ab-a    # at the first commit
 *   node scripts/build.mjs && cp -r dist .ab-b    # at the second
 *   node --import tsx bench/query-ab.ts <index dir> <corpus.jsonl> .ab-a .ab-b [--passes N] [--queries N]
 *
 * The index is one the scale bench kept (`npm run bench:corpus -- <corpus.jsonl> --keep <dir>`: its
 * `quarry/` directory).
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { percentile } from './measure.js';
import { makeQueries } from './scale.js';

interface Engine {
  search(q: string): void;
}

async function open(build: string, dir: string): Promise<Engine> {
  const mod = await import(pathToFileURL(resolve(build, 'engine/index.js')).href) as typeof import('../src/engine/index.js');
  const searcher = (await mod.Index.open(dir)).searcher();
  return { search: (q) => void searcher.search(q, { snippets: false }) };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

const args = process.argv.slice(2);
const flag = (name: string, fallback: number): number => {
  const i = args.indexOf(`--${name}`);
  return i < 0 ? fallback : Number(args[i + 1]);
};
const [dir, corpus, buildA, buildB] = args.filter((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--'));
if (!dir || !corpus || !buildA || !buildB) {
  console.error('usage: node --import tsx bench/query-ab.ts <index dir> <corpus.jsonl> <build A> <build B> [--passes N] [--queries N]');
  process.exit(2);
}
const passes = flag('passes', 3);
const queries = (await makeQueries({ path: corpus }, flag('queries', 1000))).filter((q) => q.kind === '1–3 words' || q.kind === 'titles');
const engines = [await open(buildA, dir), await open(buildB, dir)] as const;
for (const q of queries) for (const e of engines) e.search(q.q); // caches fill, code is compiled
const ms = engines.map(() => queries.map(() => [] as number[]));
for (let p = 0; p < passes; p++) {
  queries.forEach((q, i) => {
    const order = (p + i) % 2 === 0 ? [0, 1] : [1, 0];
    for (const k of order) {
      const t0 = performance.now();
      engines[k]!.search(q.q);
      ms[k]![i]!.push(performance.now() - t0);
    }
  });
}
for (const kind of ['1–3 words', 'titles']) {
  const at = queries.flatMap((q, i) => (q.kind === kind ? [i] : []));
  const [a, b] = ms.map((perQuery) => at.map((i) => median(perQuery[i]!)));
  const cells = (xs: number[]) => {
    const sorted = [...xs].sort((x, y) => x - y);
    return `p50 ${percentile(sorted, 50).toFixed(3)} p90 ${percentile(sorted, 90).toFixed(3)} mean ${(xs.reduce((s, x) => s + x, 0) / xs.length).toFixed(3)}`;
  };
  console.log(`${kind} (${at.length}): A ${cells(a!)} | B ${cells(b!)} | median B/A ${median(a!.map((x, j) => b![j]! / x)).toFixed(3)}`);
}
