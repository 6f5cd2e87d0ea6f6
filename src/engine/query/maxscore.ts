/**
 * Top-k of a disjunction of terms by block-max MaxScore (Turtle & Flood's MaxScore, with Lucene's
 * per-window block bounds). The doc-id space is cut into windows that end at the nearest block boundary of
 * any term; within a window each term's bound is its block's maximum contribution — the contribution of
 * (block max tf, block min length), a true upper bound of every integer contribution in the block
 * (rank/bm25.ts). Terms sorted by bound, the longest prefix whose bounds sum to less than the collector's
 * threshold is *non-essential*: a document matching only those cannot enter the top k, so candidates come
 * from the essential terms alone, and non-essential terms are only advanced to a candidate, highest bound
 * first, until the remaining bounds cannot lift it to the threshold. A window whose whole sum is below the
 * threshold is skipped without decoding a document.
 *
 * Documents it skips are not counted here: `count.ts` counts the same disjunction exactly.
 */
import { NO_MORE_DOCS, type PostingsCursor, type SegmentReader } from '../index/types.js';
import type { Bm25 } from '../rank/bm25.js';
import type { TopK } from './collector.js';

export interface TermScorer {
  cursor: PostingsCursor;
  weight: number;
}

interface Slot extends TermScorer {
  /** Upper bound of the contribution within the current window (0 once the list is exhausted). */
  bound: number;
}

/**
 * Offers to `collector` every live document `accept`s whose score could enter it, with its exact score.
 * `accept` is called with increasing doc numbers and says whether a candidate passes the filters.
 */
export function topKDisjunction(
  seg: SegmentReader, scorers: TermScorer[], accept: (doc: number) => boolean, collector: TopK, bm25: Bm25,
): void {
  const n = scorers.length;
  const slots: Slot[] = scorers.map((s) => ({ ...s, bound: 0 }));
  /** prefix[i] = Σ bound of slots[0..i] in the window's ascending-bound order. */
  const prefix = new Float64Array(n);
  const firstEssential = (t: number): number => {
    let e = 0;
    while (e < n && prefix[e]! < t) e++;
    return e;
  };

  let windowStart = 0;
  while (windowStart < NO_MORE_DOCS) {
    let windowEnd = NO_MORE_DOCS;
    for (const s of slots) {
      const end = s.cursor.shallowAdvance(windowStart);
      if (end === NO_MORE_DOCS) {
        s.bound = 0;
      } else {
        s.bound = bm25.score(s.weight, s.cursor.blockMaxFreq(), s.cursor.blockMinLength());
        if (end < windowEnd) windowEnd = end;
      }
    }
    if (windowEnd === NO_MORE_DOCS) return; // every list exhausted
    slots.sort((a, b) => a.bound - b.bound);
    let acc = 0;
    for (let i = 0; i < n; i++) prefix[i] = acc += slots[i]!.bound;

    let t = collector.minCompetitive;
    let e = firstEssential(t);
    while (e < n) {
      let doc = NO_MORE_DOCS;
      for (let i = e; i < n; i++) {
        const c = slots[i]!.cursor;
        let d = c.doc();
        if (d < windowStart) d = c.advance(windowStart);
        if (d < doc) doc = d;
      }
      if (doc > windowEnd) break;
      if (accept(doc)) {
        const dl = seg.length(doc);
        let score = 0;
        for (let i = e; i < n; i++) {
          const s = slots[i]!;
          if (s.cursor.doc() === doc) score += bm25.score(s.weight, s.cursor.freq(), dl);
        }
        let competitive = true;
        for (let i = e - 1; i >= 0; i--) {
          if (score + prefix[i]! < t) { competitive = false; break; }
          const s = slots[i]!;
          let d = s.cursor.doc();
          if (d < doc) d = s.cursor.advance(doc);
          if (d === doc) score += bm25.score(s.weight, s.cursor.freq(), dl);
        }
        if (competitive) {
          collector.offer(score, seg, doc);
          if (collector.minCompetitive > t) {
            t = collector.minCompetitive;
            e = firstEssential(t);
          }
        }
      }
      for (let i = e; i < n; i++) {
        const c = slots[i]!.cursor;
        if (c.doc() === doc) c.nextDoc();
      }
    }
    windowStart = windowEnd + 1;
  }
}
