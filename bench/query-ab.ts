/**
 * Two versions of the engine timed against one index in one process, for a query change: the machine's
 * speed drifts by a quarter between runs minutes apart (docs/benchmarks.md), so two runs of the scale
 * bench cannot show a 10% change. Here both versions open the same index directory; every query is run
 * by both, alternating which goes first, for several passes; per query each version's median is kept,
 * and the report gives each version's p50 / p90 / mean of those and the median of the per-query ratios
 * B / A.
 *
 * The queries are the scale bench's 1–3-word and title queries for the same corpus (`makeQueries`). A
 * version is a checkout of the repository (its `src/engine/index.ts` is loaded, compiled by tsx as the
 * scale bench's own engine is), e.g. a worktree of the other commit given this checkout's node_modules:
 *
 *   git worktree add ../quarry-a <commit> && ln -s "$PWD/node_modules" ../quarry-a/node_modules
 *   node --import tsx bench/query-ab.ts <index dir> <corpus.jsonl> ../quarry-a . [--passes N] [--queries N]
 *
 * Not copies of `dist/`: tsx also rewrites the plain JavaScript it loads, and a dist build loaded through
 * it answered 1.4–2.6× slower than the same build under plain node (the TypeScript sources compiled by
 * tsx ran as fast as that).
 *
 * The index is one the scale bench kept (`npm run bench:corpus -- <corpus.jsonl> --keep <dir>`: its
 * `quarry/` directory). For a change of the index format, `--index-b <dir>` gives version B its own
 * index of the same documents, built by that version (version A may not read it).
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { percentile } from './measure.js';
import { makeQueries } from './scale.js';
import { commandLine } from './command-line.js';

interface Engine {
  search(q: string): void;
}

async function open(checkout: string, dir: string): Promise<Engine> {
  const mod = await import(pathToFileURL(resolve(checkout, 'src/engine/index.ts')).href) as typeof import('../src/engine/index.js');
  const searcher = (await mod.Index.open(dir)).searcher();
  return { search: (q) => void searcher.search(q, { snippets: false }) };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

const { option, positional: [dir, corpus, checkoutA, checkoutB] } = commandLine();
const flag = (name: string, fallback: number): number => Number(option(name) ?? fallback);
if (!dir || !corpus || !checkoutA || !checkoutB) {
  console.error('usage: node --import tsx bench/query-ab.ts <index dir> <corpus.jsonl> <checkout A> <checkout B> [--index-b <dir>] [--passes N] [--queries N]');
  process.exit(2);
}
const passes = flag('passes', 3);
const queries = (await makeQueries({ path: corpus }, flag('queries', 1000))).filter((q) => q.kind === '1–3 words' || q.kind === 'titles');
const engines = [await open(checkoutA, dir), await open(checkoutB, option('index-b') ?? dir)] as const;
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
