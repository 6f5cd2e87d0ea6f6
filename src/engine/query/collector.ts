/**
 * The top-k collector: keeps the k best hits under the contract's order — score descending, then cid
 * ascending (as a number). Cids live in different segments, so ties are broken by comparing cids, never
 * segment-local doc numbers.
 *
 * A binary heap whose root is the worst hit kept. `minCompetitive` is the pruning threshold a scorer
 * reads: once the heap is full, a document whose score is < it can never enter; one whose score equals it
 * still can (a smaller cid wins the tie), so scorers prune only on strictly smaller upper bounds.
 */
import type { SegmentReader } from '../index/types.js';

export interface CollectedHit {
  score: number;
  cid: bigint;
  segment: SegmentReader;
  doc: number;
}

export class TopK {
  private readonly heap: CollectedHit[] = [];
  /** The threshold scorers prune against: -Infinity until k hits are held. */
  minCompetitive = -Infinity;

  constructor(readonly k: number) {}

  /** Offers a matching document; `segment.cid(doc)` is read only when the hit could enter. */
  offer(score: number, segment: SegmentReader, doc: number): void {
    const heap = this.heap;
    if (heap.length < this.k) {
      heap.push({ score, cid: segment.cid(doc), segment, doc });
      this.siftUp(heap.length - 1);
      if (heap.length === this.k) this.minCompetitive = heap[0]!.score;
      return;
    }
    const root = heap[0]!;
    if (score < root.score) return;
    const cid = segment.cid(doc);
    if (score === root.score && cid > root.cid) return;
    heap[0] = { score, cid, segment, doc };
    this.siftDown(0);
    this.minCompetitive = heap[0]!.score;
  }

  /** The cid of the worst hit kept once k are (the one a document scoring `minCompetitive` must beat), else undefined. */
  get worstCid(): bigint | undefined {
    return this.heap.length === this.k ? this.heap[0]!.cid : undefined;
  }

  /** The hits kept, best first. */
  sorted(): CollectedHit[] {
    return [...this.heap].sort((a, b) => (b.score - a.score) || (a.cid < b.cid ? -1 : a.cid > b.cid ? 1 : 0));
  }

  /** a is worse than b: lower score, or the same score and a larger cid. */
  private static worse(a: CollectedHit, b: CollectedHit): boolean {
    return a.score < b.score || (a.score === b.score && a.cid > b.cid);
  }

  private siftUp(i: number): void {
    const heap = this.heap;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!TopK.worse(heap[i]!, heap[p]!)) break;
      [heap[i], heap[p]] = [heap[p]!, heap[i]!];
      i = p;
    }
  }

  private siftDown(i: number): void {
    const heap = this.heap;
    const n = heap.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) return;
      const c = l + 1 < n && TopK.worse(heap[l + 1]!, heap[l]!) ? l + 1 : l;
      if (!TopK.worse(heap[c]!, heap[i]!)) return;
      [heap[c], heap[i]] = [heap[i]!, heap[c]!];
      i = c;
    }
  }
}
