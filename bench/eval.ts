/**
 * `npm run eval [-- <BEIR dir>] [--reference-only]`: relevance of Quarry on a judged collection.
 *
 * Builds a Quarry index over the collection (default: SciFact from ../shared/data when present), runs the
 * test queries (those with judgments in qrels/test.tsv) in plain OR form (bench/dataset.ts), and prints
 * nDCG@10 and Recall@100 with trec_eval's definitions (bench/metrics.ts), for:
 *   - Quarry as it answers (integer BM25, CONTRACT §2);
 *   - the same ranking in floating point, twice: the engine's internal `scoring: 'float'` mode over the
 *     same snapshot, and an independent exhaustive BM25 (bench/reference-bm25.ts) without the rounding:
 *     the difference is what integer scores cost;
 *   - the reference with the contract's rounding, which must equal Quarry's ranking (a cross-check: the
 *     number of queries whose top 100 differ is printed).
 * `--common-ratio=R` evaluates another common-term cutoff (docs/ranking.md; 1 turns the rule off).
 */
import { cpus } from 'node:os';
import { defaultCollectionPath, judgedQueries, loadCollection, plainQuery } from './dataset.js';
import { evaluate, type Evaluation } from './metrics.js';
import { ReferenceBm25 } from './reference-bm25.js';
import { COMMON_TERM_RATIO } from '../src/engine/query/snapshot.js';

const DEPTH = 100;

interface QuarryRun { run: Map<string, string[]>; positions: Map<string, number[]>; floatRun: Map<string, string[]>; buildMs: number; ms: number }

/** Quarry's answers (integer, as served) and the engine's own float mode over the same snapshot. */
async function quarryRun(c: Awaited<ReturnType<typeof loadCollection>>, queries: { id: string; q: string }[], commonTermRatio: number): Promise<QuarryRun> {
  const { buildQuarry } = await import('./engines/quarry.js');
  const { createSearcher } = await import('../src/engine/index.js');
  const t0 = performance.now();
  const q = await buildQuarry(c.docs);
  const buildMs = performance.now() - t0;
  const snap = q.index.snapshot();
  const searcher = createSearcher([...snap.segments], snap.generation, { commonTermRatio });
  const floatSearcher = createSearcher([...snap.segments], snap.generation, { scoring: 'float', commonTermRatio });
  const run = new Map<string, string[]>();
  const floatRun = new Map<string, string[]>();
  const positions = new Map<string, number[]>();
  let ms = 0;
  try {
    for (const { id, q: text } of queries) {
      const t1 = performance.now();
      const pos = searcher.search(text, { pageSize: DEPTH, snippets: false }).hits.map((h) => Number(h.cid) - 1);
      ms += performance.now() - t1;
      positions.set(id, pos);
      run.set(id, pos.map((p) => c.docs[p]!.id));
      floatRun.set(id, floatSearcher.search(text, { pageSize: DEPTH, snippets: false }).hits.map((h) => c.docs[Number(h.cid) - 1]!.id));
    }
  } finally {
    await q.close();
  }
  return { run, positions, floatRun, buildMs, ms };
}

function line(label: string, e: Evaluation): string {
  return `| ${label} | ${e.ndcg10.toFixed(4)} | ${e.recall100.toFixed(4)} |`;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const path = args.find((a) => !a.startsWith('--')) ?? defaultCollectionPath('scifact');
  if (!path) throw new Error('no collection given and ../shared/data/scifact is absent: npm run eval -- <BEIR dir>');
  const ratioArg = args.find((a) => a.startsWith('--common-ratio='));
  const ratio = ratioArg ? Number(ratioArg.slice('--common-ratio='.length)) : COMMON_TERM_RATIO;
  const c = await loadCollection(path);
  const queries = judgedQueries(c).map((q) => ({ id: q.id, q: plainQuery(q.text) }));
  console.log(`# eval: ${c.name} — ${c.docs.length} documents, ${queries.length} judged test queries (${c.qrels.size} in qrels); common-term ratio ${ratio}; node ${process.version}, ${cpus()[0]?.model ?? '?'}`);

  const ref = new ReferenceBm25(c.docs);
  const floatRun = new Map<string, string[]>();
  const intPositions = new Map<string, number[]>();
  const intRun = new Map<string, string[]>();
  for (const { id, q } of queries) {
    floatRun.set(id, ref.search(q, DEPTH, 'float', ratio).map((p) => c.docs[p]!.id));
    const ip = ref.search(q, DEPTH, 'int', ratio);
    intPositions.set(id, ip);
    intRun.set(id, ip.map((p) => c.docs[p]!.id));
  }
  const floatEval = evaluate(c.qrels, floatRun);
  const intEval = evaluate(c.qrels, intRun);

  console.log('');
  console.log('| ranking | nDCG@10 | Recall@100 |');
  console.log('|---|---:|---:|');
  if (!args.includes('--reference-only')) {
    const q = await quarryRun(c, queries, ratio);
    const qEval = evaluate(c.qrels, q.run);
    const qFloat = evaluate(c.qrels, q.floatRun);
    console.log(line('Quarry (integer BM25, as served)', qEval));
    console.log(line('Quarry, same ranking in floating point (internal `scoring: float`)', qFloat));
    console.log(line('independent reference BM25, floating point', floatEval));
    console.log(line('independent reference BM25, contract integer rounding', intEval));
    let differ = 0;
    for (const { id } of queries) if (JSON.stringify(q.positions.get(id)) !== JSON.stringify(intPositions.get(id))) differ++;
    console.log('');
    console.log(`integer − float nDCG@10: ${(qEval.ndcg10 - qFloat.ndcg10).toFixed(5)} (engine's float mode), ${(qEval.ndcg10 - floatEval.ndcg10).toFixed(5)} (independent reference); budget −0.003`);
    console.log(`queries whose top ${DEPTH} differs between Quarry and the integer reference: ${differ} of ${queries.length}`);
    console.log(`Quarry build ${(q.buildMs / 1000).toFixed(2)} s; ${queries.length} queries × top ${DEPTH} (integer) in ${(q.ms / 1000).toFixed(2)} s`);
  } else {
    console.log(line('reference BM25, floating point', floatEval));
    console.log(line('reference BM25, contract integer rounding', intEval));
    console.log('');
    console.log(`integer − float nDCG@10: ${(intEval.ndcg10 - floatEval.ndcg10).toFixed(5)}`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
