/**
 * Integer BM25 (CONTRACT §2): k1 = 1.2, b = 0.75, idf = ln(1 + (N − df + 0.5)/(df + 0.5)), each matched
 * term contributing round(1000 × idf × tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl))). docs/ranking.md
 * writes down the exact float64 operations and their order; this file is that text as code, and the
 * reference evaluator in test/engine/query repeats it independently.
 *
 * Why these choices:
 * - Document lengths are exact (no 1-byte quantization): the segment stores them exactly, the division is
 *   one float64 op per posting either way, and exact lengths make the reference evaluator trivial.
 * - Every operation is an IEEE-754 basic operation (correctly rounded, so identical on every platform)
 *   except `Math.log`, computed once per term; V8 uses its own port of fdlibm for it, the same bits on
 *   every platform it runs on.
 * - The contribution is monotone non-decreasing in tf and non-increasing in dl (each correctly rounded
 *   operation, and Math.round, is monotone), so the contribution of (block max tf, block min length) is a
 *   true upper bound of the integer contribution of every document in a block: pruning never changes a
 *   result.
 */

export const K1 = 1.2;
export const B = 0.75;
/** Scores are integers in thousandths of a BM25 point. */
export const SCALE = 1000;

/**
 * `int`: the contract's integer scores (the default). `float`: the same arithmetic without the final
 * rounding — an internal mode for the evaluation that measures what integer scores cost in nDCG; never
 * exposed on a public face.
 */
export type ScoringMode = 'int' | 'float';

/**
 * `Math.round(x)` for a contribution x ≥ 0 (every BM25 contribution: idf > 0), cheaper: in a loop that
 * decodes and scores a term's postings on Node 20, `Math.round` took ~12 of ~26 ns a posting, this ~1.
 * For 0.5 ≤ x < 2^31 − 0.5, x + 0.5 is computed exactly or, when it crosses a
 * power of two, rounds within half an ulp of a sum that cannot reach the next integer, so truncating it
 * gives ⌊x + 0.5⌋ = Math.round(x); below 0.5 both give 0 (where x + 0.5 alone would round the largest
 * double under 0.5 up to 1). Contributions are far under 2^31 (1000 · idf · 2.2 with idf < 50).
 */
export function roundScore(x: number): number {
  return x < 0.5 ? 0 : (x + 0.5) | 0;
}

/** ln(1 + (N − df + 0.5)/(df + 0.5)), in float64. */
export function idf(docCount: number, df: number): number {
  return Math.log(1 + (docCount - df + 0.5) / (df + 0.5));
}

/**
 * The per-snapshot length normalization: norm(dl) = A + Bn·dl with A = k1·(1 − b) and Bn = k1·b / avgdl,
 * so a contribution is weight·tf / (tf + norm(dl)), weight = 1000·idf·(k1+1).
 */
export class Bm25 {
  readonly avgdl: number;
  readonly a: number;
  readonly bn: number;
  readonly round: boolean;

  constructor(readonly docCount: number, lengthSum: number, mode: ScoringMode = 'int') {
    // an index with no tokens at all has nothing to score; 1 keeps the arithmetic finite
    this.avgdl = docCount > 0 && lengthSum > 0 ? lengthSum / docCount : 1;
    this.a = K1 * (1 - B);
    this.bn = (K1 * B) / this.avgdl;
    this.round = mode === 'int';
  }

  /** The term's weight: 1000 × idf × (k1 + 1). */
  weight(df: number): number {
    return SCALE * idf(this.docCount, df) * (K1 + 1);
  }

  /** norm(dl) = A + Bn·dl. */
  norm(dl: number): number {
    return this.a + this.bn * dl;
  }

  /** One term's contribution to one document. */
  score(weight: number, tf: number, dl: number): number {
    const s = (weight * tf) / (tf + (this.a + this.bn * dl));
    return this.round ? roundScore(s) : s;
  }
}
