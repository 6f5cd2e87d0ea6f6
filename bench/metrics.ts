/**
 * Retrieval metrics with trec_eval's definitions (`ndcg_cut.10`, `recall.100`):
 *
 * - nDCG@k: DCG = Σ_{i=1..k} gain(d_i) / log2(i + 1) with the graded qrels relevance as linear gain (0
 *   for unjudged documents); the ideal DCG sorts every judged relevant document of the query by gain.
 * - Recall@k: relevant documents among the first k retrieved / relevant documents judged.
 *
 * The ranking is taken in the order the engine returned it (trec_eval would re-sort ties by document
 * name; the engines here break ties deterministically themselves). Averages run over every query with
 * judgments, a query with no results counting 0 (trec_eval `-c`).
 */
import type { Qrels } from './dataset.js';

export function ndcgAt(k: number, ranked: readonly string[], judged: ReadonlyMap<string, number>): number {
  let dcg = 0;
  const n = Math.min(k, ranked.length);
  for (let i = 0; i < n; i++) {
    const g = judged.get(ranked[i]!) ?? 0;
    if (g > 0) dcg += g / Math.log2(i + 2);
  }
  const ideal = [...judged.values()].filter((g) => g > 0).sort((a, b) => b - a);
  let idcg = 0;
  for (let i = 0; i < Math.min(k, ideal.length); i++) idcg += ideal[i]! / Math.log2(i + 2);
  return idcg === 0 ? 0 : dcg / idcg;
}

export function recallAt(k: number, ranked: readonly string[], judged: ReadonlyMap<string, number>): number {
  let relevant = 0;
  for (const g of judged.values()) if (g > 0) relevant++;
  if (relevant === 0) return 0;
  let found = 0;
  const n = Math.min(k, ranked.length);
  for (let i = 0; i < n; i++) if ((judged.get(ranked[i]!) ?? 0) > 0) found++;
  return found / relevant;
}

export interface Evaluation { queries: number; ndcg10: number; recall100: number }

/** Mean nDCG@10 and Recall@100 over every judged query; `run` maps query id → ranked doc ids. */
export function evaluate(qrels: Qrels, run: ReadonlyMap<string, readonly string[]>): Evaluation {
  let ndcg = 0;
  let recall = 0;
  for (const [qid, judged] of qrels) {
    const ranked = run.get(qid) ?? [];
    ndcg += ndcgAt(10, ranked, judged);
    recall += recallAt(100, ranked, judged);
  }
  const n = qrels.size;
  return { queries: n, ndcg10: n === 0 ? 0 : ndcg / n, recall100: n === 0 ? 0 : recall / n };
}
