/**
 * An exhaustive, in-memory BM25 over the same analyzer as Quarry (title and text as one field, exact
 * document lengths, distinct query terms), written independently of the engine. The evaluation uses it
 * twice: in floating point (the ranking integer scores are measured against) and with the contract's
 * per-term rounding (which must reproduce the engine's ranking, a cross-check of the engine).
 * Ties: lower corpus position first, as Quarry orders equal scores by cid (= position + 1 here).
 * It applies the common-terms rule of docs/ranking.md as written there: with a rare term in the query,
 * terms in more than `commonRatio`·N documents only add to the score of documents a rare term matched.
 */
import { tokenize, analyzeTerms } from '../src/engine/analysis/analyzer.js';
import type { CorpusDoc } from './dataset.js';

const K1 = 1.2;
const B = 0.75;

export class ReferenceBm25 {
  private readonly postings = new Map<string, { docs: number[]; tfs: number[] }>();
  private readonly lengths: Float64Array;
  private readonly avgdl: number;

  constructor(docs: readonly CorpusDoc[]) {
    this.lengths = new Float64Array(docs.length);
    let sum = 0;
    for (let i = 0; i < docs.length; i++) {
      const tf = new Map<string, number>();
      const count = (term: string) => { tf.set(term, (tf.get(term) ?? 0) + 1); };
      const n = tokenize(docs[i]!.title, count) + tokenize(docs[i]!.text, count);
      this.lengths[i] = n;
      sum += n;
      for (const [term, f] of tf) {
        let p = this.postings.get(term);
        if (!p) this.postings.set(term, (p = { docs: [], tfs: [] }));
        p.docs.push(i);
        p.tfs.push(f);
      }
    }
    this.avgdl = docs.length > 0 && sum > 0 ? sum / docs.length : 1;
  }

  /** The top `k` positions for the query text (analyzed, distinct terms, OR), best first. */
  search(q: string, k: number, mode: 'float' | 'int', commonRatio: number): number[] {
    const n = this.lengths.length;
    const scores = new Map<number, number>();
    const lists = [...new Set(analyzeTerms(q))].map((t) => this.postings.get(t)).filter((p) => p !== undefined);
    const common = (p: { docs: number[] }) => p.docs.length > commonRatio * n;
    // rare terms first: with one among them, a common term scores only documents already matched
    const rule = lists.some((p) => !common(p)) && lists.some(common);
    lists.sort((a, b) => Number(common(a)) - Number(common(b)));
    for (const p of lists) {
      const scoreOnly = rule && common(p);
      const df = p.docs.length;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      for (let j = 0; j < df; j++) {
        const doc = p.docs[j]!;
        const tf = p.tfs[j]!;
        let s = 1000 * idf * ((tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * this.lengths[doc]!) / this.avgdl)));
        if (mode === 'int') s = Math.round(s);
        const before = scores.get(doc);
        if (before === undefined && scoreOnly) continue;
        scores.set(doc, (before ?? 0) + s);
      }
    }
    return [...scores].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, k).map(([doc]) => doc);
  }
}
