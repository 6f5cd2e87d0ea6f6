/**
 * The query engineer's quick timing loop (not the comparative bench: that is bench/engine.ts). Builds
 * SciFact once into a cached index directory, then runs every judged query through `Searcher.search`
 * as the benches do (plainQuery text, 20 hits, no snippets), reporting p50/p95/mean latency, nDCG@10
 * and Recall@100 for integer scores and for the internal float mode.
 *
 * Then the same searches under each disjunction plan forced (`auto`, `maxscore`, `accumulate`), timed in
 * CPU time of this process (less disturbed by other processes on a shared machine than wall time).
 *
 * `--slowest=N` lists the N queries with the largest CPU time under `auto` (what the p99 is made of).
 *
 *   node --import tsx bench/query-loop.ts [collection-dir] [--rebuild] [--snippets] [--rounds=N] [--slowest=N]
 */
import { existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { defaultCollectionPath, judgedQueries, loadCollection, plainQuery } from './dataset.js';
import { evaluate } from './metrics.js';
import { Index, createSearcher, type Searcher } from '../src/engine/index.js';

const args = process.argv.slice(2);
const path = args.find((a) => !a.startsWith('--')) ?? defaultCollectionPath('scifact');
if (!path) throw new Error('No collection: pass its directory (BEIR layout).');
const rounds = Number(args.find((a) => a.startsWith('--rounds='))?.slice(9) ?? 5);
const snippets = args.includes('--snippets');
const slowest = Number(args.find((a) => a.startsWith('--slowest='))?.slice(10) ?? 0);
const collection = await loadCollection(path);
const dir = join(tmpdir(), `quarry-query-loop-${collection.name}`);
if (args.includes('--rebuild')) rmSync(dir, { recursive: true, force: true });
const fresh = !existsSync(join(dir, 'MANIFEST'));
let index: Index;
try {
  index = await Index.open(dir);
} catch {
  // an index in an older format (the format is still moving): build it again
  rmSync(dir, { recursive: true, force: true });
  index = await Index.open(dir);
}
if (index.searcher().docCount === 0) {
  const t0 = performance.now();
  const w = await index.openWriter();
  collection.docs.forEach((d, i) => w.upsert({ cid: BigInt(i + 1), title: d.title, text: d.text }));
  await w.commit();
  await w.close();
  console.log(`built ${collection.docs.length} docs in ${(performance.now() - t0).toFixed(0)} ms`);
} else if (fresh) console.log('reusing index');

const queries = judgedQueries(collection).map((q) => ({ id: q.id, q: plainQuery(q.text) }));

function runAll(searcher: Searcher, pageSize: number): Map<string, string[]> {
  const run = new Map<string, string[]>();
  for (const { id, q } of queries) {
    if (q.trim() === '') { run.set(id, []); continue; }
    const r = searcher.search(q, { pageSize, snippets: false });
    run.set(id, r.hits.map((h) => collection.docs[Number(h.cid) - 1]!.id));
  }
  return run;
}

const searcher = index.searcher() as Searcher;
const floatSearcher = createSearcher([...index.snapshot().segments], searcher.generation, { scoring: 'float' });
const ev = evaluate(collection.qrels, runAll(searcher, 100));
const evf = evaluate(collection.qrels, runAll(floatSearcher, 100));
console.log(`int   nDCG@10 ${ev.ndcg10.toFixed(4)}  R@100 ${ev.recall100.toFixed(4)}  (${ev.queries} queries)`);
console.log(`float nDCG@10 ${evf.ndcg10.toFixed(4)}  R@100 ${evf.recall100.toFixed(4)}  Δ ${(evf.ndcg10 - ev.ndcg10).toFixed(4)}`);

const times: number[] = [];
for (let r = 0; r < rounds; r++) {
  for (const { q } of queries) {
    if (q.trim() === '') continue;
    const t = performance.now();
    searcher.search(q, { pageSize: 20, snippets });
    if (r > 0) times.push(performance.now() - t);
  }
}
times.sort((a, b) => a - b);
const pct = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!;
const mean = times.reduce((s, t) => s + t, 0) / times.length;
console.log(`latency over ${times.length} searches: p50 ${pct(0.5).toFixed(3)} ms  p95 ${pct(0.95).toFixed(3)} ms  p99 ${pct(0.99).toFixed(3)} ms  mean ${mean.toFixed(3)} ms`);
const segments = [...index.snapshot().segments];
for (const plan of ['auto', 'maxscore', 'accumulate'] as const) {
  const s = createSearcher(segments, searcher.generation, { plan });
  const cpu: number[] = [];
  const byQuery = new Map<string, number>();
  for (let r = 0; r < rounds; r++) {
    for (const { q } of queries) {
      if (q.trim() === '') continue;
      const c0 = process.cpuUsage();
      s.search(q, { pageSize: 20, snippets });
      const u = process.cpuUsage(c0);
      const ms = (u.user + u.system) / 1000;
      if (r > 0) {
        cpu.push(ms);
        byQuery.set(q, Math.min(byQuery.get(q) ?? Infinity, ms)); // the least disturbed of the rounds
      }
    }
  }
  if (plan === 'auto' && slowest > 0) {
    for (const [q, ms] of [...byQuery].sort((a, b) => b[1] - a[1]).slice(0, slowest)) {
      const r = s.search(q, { pageSize: 20, snippets: false });
      console.log(`  ${ms.toFixed(3)} ms  total ${r.total}  ${q.slice(0, 120)}`);
    }
  }
  cpu.sort((a, b) => a - b);
  const at = (p: number) => cpu[Math.min(cpu.length - 1, Math.floor(p * cpu.length))]!;
  console.log(`plan ${plan.padEnd(10)} CPU per search: p50 ${at(0.5).toFixed(3)} ms  p95 ${at(0.95).toFixed(3)} ms`);
}
await index.close();
