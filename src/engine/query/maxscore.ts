/**
 * Top-k of a disjunction of terms by block-max MaxScore (Turtle & Flood's MaxScore, with Lucene's
 * per-window block bounds). The doc-id space is cut into windows that end at the nearest block boundary of
 * any optional term; within a window each term's bound is its block's maximum contribution: the exact one
 * when the snapshot keeps the term's block bounds (Snapshot.blockBounds), else the contribution of (block
 * max tf, block min length), a true upper bound of every integer contribution in the block (rank/bm25.ts). Terms
 * sorted by bound, the longest prefix whose bounds sum to less than the collector's threshold is
 * *non-essential*: a document matching only those cannot enter the top k, so candidates come
 * from the essential terms alone, and non-essential terms are only read at a candidate (a common word
 * from its frequency column, others by advancing their cursors: `termFreq`), highest bound first, until
 * the remaining bounds cannot lift it to the threshold. One essential list is scored a block
 * at a time; several, an inner window of 4,096 documents at a time, every posting's contribution added
 * into a score array before the marked documents are completed in order (Lucene's MaxScoreBulkScorer),
 * instead of finding each candidate as the least document of the lists. A window whose whole sum is below the
 * threshold is skipped without decoding a document, and the next window starts at the next document of a
 * term that can still lead anywhere (`Leads`), not at the next block of the densest term.
 *
 * Score-only terms (the common terms of executor.ts's common-terms rule) are kept non-essential whatever
 * their bounds: they never propose a candidate, only add to the score of one an optional term proposed.
 * Their blocks, short since they are common, do not end windows, and each is bounded in every window by
 * its whole-list bound: a window ended by a rarer term's blocks spans dozens of a common term's, whose
 * largest bound is its whole-list one or nearly, and finding it cost more than the looser bound saved (on
 * a million articles, queries of "the" and a rarer word took 9–11 % less time without it).
 *
 * Documents it skips are not counted here: `count.ts` counts the same disjunction exactly.
 */
import { NO_MORE_DOCS, postingsBuffer, type PostingsCursor, type SegmentReader } from '../index/types.js';
import { roundScore, type Bm25 } from '../rank/bm25.js';
import type { Norms } from './norms.js';
import type { TopK } from './collector.js';
import type { BlockBounds } from './snapshot.js';
import { checkDeadline } from './deadline.js';
import { CID_FLOOR_SHIFT, TERM_FREQS_CLIPPED, cidCeiling, type CidFloors } from './segment-caches.js';

export interface TermScorer {
  cursor: PostingsCursor;
  weight: number;
  /** The exact largest contribution per block of the cursor's postings (Snapshot.blockBounds), when kept. */
  bounds?: BlockBounds | undefined;
  /** The term's frequency per document of the segment (SegmentCaches.termFreqs), when kept. */
  freqs?: Uint8Array | undefined;
}

/**
 * The bound of a term's contribution in the block `cursor.shallowAdvance` moved to: the exact one when the
 * snapshot keeps it, else that of (block max tf, block min length). Block-max MaxScore and the leader walk
 * (executor.ts) both read this.
 */
export function blockBound(bm25: Bm25, weight: number, cursor: PostingsCursor, exact: BlockBounds | undefined): number {
  return exact !== undefined ? exact.perBlock[cursor.shallowBlock()]! : bm25.score(weight, cursor.blockMaxFreq(), cursor.blockMinLength());
}

/**
 * `doc`'s frequency of a term, 0 when `doc` lacks it: read from the term's column when kept
 * (SegmentCaches.termFreqs; a clipped value is read from the postings), else by advancing its cursor to
 * `doc`. Calls for one cursor must come with increasing docs.
 */
export function termFreq(cursor: PostingsCursor, freqs: Uint8Array | undefined, doc: number): number {
  if (freqs !== undefined) {
    const f = freqs[doc]!;
    if (f !== TERM_FREQS_CLIPPED) return f;
  }
  let d = cursor.doc();
  if (d < doc) d = cursor.advance(doc);
  return d === doc ? cursor.freq() : 0;
}

/**
 * Whether the documents of a range can win a tie against the collector's worst hit. Scores are integers,
 * so a window whose bound equals the threshold is common where words saturate (the top 20 of "the" on a
 * million articles share two scores): a document of it enters only with a cid below the worst hit's, and
 * a range whose cids are all above it (SegmentCaches.cidFloors) is passed over like one under the threshold.
 */
export class CidTies {
  private cid: bigint | undefined;
  private ceiling = 0;

  /** `floors`: the segment's (`SegmentCaches.cidFloors`). */
  constructor(private readonly floors: CidFloors, private readonly collector: TopK) {}

  /** True when no document of [from, to] can beat the collector's worst hit on an equal score (false until it holds k). */
  excluded(from: number, to: number): boolean {
    const cid = this.collector.worstCid;
    if (cid === undefined) return false;
    if (cid !== this.cid) {
      this.cid = cid;
      this.ceiling = cidCeiling(cid);
    }
    const floors = this.floors;
    const ceiling = this.ceiling;
    for (let r = from >>> CID_FLOOR_SHIFT, last = to >>> CID_FLOOR_SHIFT; r <= last; r++) if (floors.of(r) <= ceiling) return false;
    return true;
  }
}

/**
 * Offers to `collector` every document matching one of `optional` (that `accept`s, when given) whose score
 * could enter it, with its exact score over `optional` and `scoreOnly`. `accept` is called with increasing
 * doc numbers and says whether a candidate passes the filters (liveness included); without it every
 * document is live and unfiltered. `floor` is a score the final k-th best is known to reach (executor.ts:
 * from attained block bounds): pruning starts from it instead of from an empty collector's -Infinity.
 * With `ties`, a window whose bound only equals the collector's threshold is passed over too when none of
 * its documents can win the tie.
 */
export function topKDisjunction(
  seg: SegmentReader, optional: TermScorer[], scoreOnly: TermScorer[], accept: ((doc: number) => boolean) | undefined,
  collector: TopK, bm25: Bm25, norms: Norms, floor = -Infinity, ties?: CidTies,
): void {
  // score-only scorers first: the window order below keeps them ahead of every optional one
  const scorers = [...scoreOnly, ...optional];
  const fixed = scoreOnly.length;
  const n = scorers.length;
  // Parallel arrays in the window's ascending-bound order (re-ordered per window).
  const order = Array.from({ length: n }, (_, i) => i);
  const allCursors = scorers.map((s) => s.cursor);
  const allWeights = Float64Array.from(scorers, (s) => s.weight);
  const allBounds = scorers.map((s) => s.bounds);
  const allFreqs = scorers.map((s) => s.freqs);
  const freqCols: (Uint8Array | undefined)[] = allFreqs.slice();
  const bounds = new Float64Array(n);
  const cursors: PostingsCursor[] = allCursors.slice();
  const weights = new Float64Array(n);
  /** prefix[i] = Σ bounds of cursors[0..i]. */
  const prefix = new Float64Array(n);
  const window = new WindowScorer(seg, cursors, freqCols, weights, prefix, fixed, accept, collector, norms, bm25.round);
  const ceilings = Float64Array.from(scorers, (s) => termBound(bm25, s));
  const leads = new Leads(scorers, fixed, ceilings);
  for (let i = 0; i < fixed; i++) bounds[i] = ceilings[i]!;

  const lone = n - fixed === 1 && allBounds[fixed] !== undefined ? { cursor: allCursors[fixed]!, perBlock: allBounds[fixed]!.perBlock } : undefined;
  let target = leads.next(-Infinity, 0);
  while (target < NO_MORE_DOCS) {
    checkDeadline();
    let windowStart = target;
    // the optional terms' blocks end the window; the score-only terms (common: many short blocks) are
    // bounded by their whole lists' bounds
    let windowEnd = NO_MORE_DOCS;
    let candidates = false;
    let sum = 0;
    for (let i = fixed; i < n; i++) {
      const c = allCursors[i]!;
      const end = c.shallowAdvance(windowStart);
      if (end === NO_MORE_DOCS) {
        bounds[i] = 0;
      } else {
        sum += bounds[i] = blockBound(bm25, allWeights[i]!, c, allBounds[i]);
        if (end < windowEnd) windowEnd = end;
        candidates = true;
      }
    }
    if (!candidates) return; // every optional list exhausted: nothing left can match
    sum += leads.scoreOnlyCeiling;
    const t = Math.max(collector.minCompetitive, floor);
    const after = windowEnd === NO_MORE_DOCS ? NO_MORE_DOCS : windowEnd + 1;
    // ties are decided by cid only against the collector's own threshold, not a floor above it
    const tied = ties !== undefined && t === collector.minCompetitive ? ties : undefined;
    // a window no document of which can enter is passed over on the skip data alone: no block decoded.
    // A lone optional term with exact bounds goes on to its next block that can hold an entrant.
    if (sum < t || (sum === t && tied !== undefined && tied.excluded(windowStart, windowEnd))) {
      target = lone === undefined || windowEnd === NO_MORE_DOCS ? after : nextReachable(lone, t - leads.scoreOnlyCeiling, tied);
      continue;
    }
    // the window starts at the next document of a term that can still lead; past the window's end, the
    // window is drawn anew from there
    windowStart = leads.next(t, windowStart);
    if (windowStart > windowEnd || windowStart === NO_MORE_DOCS) {
      target = windowStart;
      continue;
    }
    // ascending bound, score-only scorers ahead of every optional one; insertion sort, as consecutive
    // windows mostly keep the previous order
    for (let i = fixed + 1; i < n; i++) {
      const o = order[i]!;
      const b = bounds[o]!;
      let j = i - 1;
      for (; j >= fixed && bounds[order[j]!]! > b; j--) order[j + 1] = order[j]!;
      order[j + 1] = o;
    }
    let acc = 0;
    for (let i = 0; i < n; i++) {
      const o = order[i]!;
      cursors[i] = allCursors[o]!;
      freqCols[i] = allFreqs[o];
      weights[i] = allWeights[o]!;
      prefix[i] = acc += bounds[o]!;
    }

    window.run(windowStart, windowEnd, t);
    target = after;
  }
}

/**
 * Where the window after the current block of `lone`'s cursor starts: at the first later block whose exact
 * bound reaches `need` (NO_MORE_DOCS when none does), its bounds scanned in the array rather than a window
 * drawn per block. A frequent word's blocks mostly sit under the threshold: "the" on a million articles
 * passed over ~6,600 of its ~7,000 blocks a window at a time. With `tied`, a block whose bound only equals
 * `need` is passed over too when none of its documents can win the tie.
 */
function nextReachable(lone: { cursor: PostingsCursor; perBlock: Float64Array }, need: number, tied: CidTies | undefined): number {
  const { cursor, perBlock } = lone;
  const n = perBlock.length;
  for (let b = cursor.shallowBlock() + 1; b < n; b++) {
    const bound = perBlock[b]!;
    if (bound < need) continue;
    const first = cursor.blockLastDoc(b - 1) + 1;
    if (bound > need || tied === undefined || !tied.excluded(first, cursor.blockLastDoc(b))) return first;
  }
  return NO_MORE_DOCS;
}

/** Documents of an inner window of several essential lists: its score array (8 B a document) stays in cache. */
const INNER_WINDOW = 4096;

/**
 * MaxScore's inner loop over one window's documents, apart from the window bookkeeping of
 * `topKDisjunction`: in one function with it, the compiler (whose inlining budget is per function) left
 * the cursors' `advance` and the heap's sift as calls, and a scored document of a lone term cost ~90 ns
 * instead of ~70 (V8's --trace-turbo-inlining; 292k-article index). For the same reason each of its two
 * ways of scoring is a method of its own: in one, the norms' read was left a call whose float result was
 * boxed for every scored posting (with `complete` taking the norm, 133 KB of garbage per short query on
 * the 1M-article index; 43 KB now).
 */
class WindowScorer {
  /** Shared by every scorer: a window's `run` ends before any other starts (allocating it cost ~2% of a short query). */
  private static readonly buffer = postingsBuffer();
  /** An inner window's summed contributions and its marked documents, left zeroed by every `run`. */
  private static readonly scores = new Float64Array(INNER_WINDOW);
  private static readonly marks = new Uint32Array(INNER_WINDOW >>> 5);

  constructor(
    private readonly seg: SegmentReader,
    /** The window's cursors by ascending bound, the score-only ones first; re-ordered per window by the caller. */
    private readonly cursors: PostingsCursor[],
    /** Per cursor, its term's frequency column when kept (`termFreq`); re-ordered with them. */
    private readonly freqCols: (Uint8Array | undefined)[],
    private readonly weights: Float64Array,
    /** prefix[i] = Σ bounds of cursors[0..i] in the window. */
    private readonly prefix: Float64Array,
    /** How many of the cursors are score-only: never essential. */
    private readonly fixed: number,
    private readonly accept: ((doc: number) => boolean) | undefined,
    private readonly collector: TopK,
    private readonly norms: Norms,
    private readonly round: boolean,
  ) {}

  /** The first essential cursor at threshold `t`: those before it cannot make a document competitive alone. */
  private firstEssential(t: number): number {
    const prefix = this.prefix;
    const n = prefix.length;
    let e = this.fixed;
    while (e < n && prefix[e]! < t) e++;
    return e;
  }

  /** Offers the competitive documents of [windowStart, windowEnd], pruning from threshold `t`. */
  run(windowStart: number, windowEnd: number, t: number): void {
    const cursors = this.cursors;
    const n = cursors.length;
    for (let e = this.firstEssential(t); e < n; e = this.firstEssential(t)) {
      if (e === n - 1) {
        this.scoreOne(windowStart, windowEnd, t);
        return;
      }
      // several essential lists: an inner window of their postings at a time (as Lucene's
      // MaxScoreBulkScorer), from the first document any of them holds
      let start = NO_MORE_DOCS;
      for (let i = e; i < n; i++) {
        const c = cursors[i]!;
        let d = c.doc();
        if (d < windowStart) d = c.advance(windowStart);
        if (d < start) start = d;
      }
      if (start > windowEnd) return;
      t = this.scoreSeveral(e, start, Math.min(windowEnd + 1, start + INNER_WINDOW), t);
    }
  }

  /**
   * One essential list (a lone term, or one term above the others' bounds): its postings in the window a
   * block at a time, without a call per document to find the next candidate, until the window ends or
   * the threshold leaves no list essential.
   */
  private scoreOne(windowStart: number, windowEnd: number, t: number): void {
    const { cursors, weights, accept, norms, round } = this;
    const n = cursors.length;
    const c = cursors[n - 1]!;
    const w = weights[n - 1]!;
    // the other terms' bounds, summed: a posting they cannot lift to the threshold needs no call
    const others = n > 1 ? this.prefix[n - 2]! : 0;
    const { docs, freqs } = WindowScorer.buffer;
    if (c.doc() < windowStart) c.advance(windowStart);
    for (let got = c.nextPostings(windowEnd + 1, WindowScorer.buffer); got > 0; got = c.nextPostings(windowEnd + 1, WindowScorer.buffer)) {
      for (let j = 0; j < got; j++) {
        const doc = docs[j]!;
        if (accept !== undefined && !accept(doc)) continue;
        const tf = freqs[j]!;
        const s = (w * tf) / (tf + norms.at(doc));
        const score = round ? roundScore(s) : s;
        if (score + others < t) continue;
        const raised = this.complete(doc, score, n - 1, t);
        if (raised !== t) {
          t = raised;
          if (this.firstEssential(t) === n) return;
        }
      }
    }
  }

  /**
   * The essential lists `cursors[e..]` over the inner window [start, end): each posting's contribution
   * added into a score array and its document marked, then the marked documents completed in order.
   * `e` stays for the inner window (the lists from `e` on are consumed to its end, the ones before it
   * only advanced to a marked document); returns the threshold after it.
   */
  private scoreSeveral(e: number, start: number, end: number, t: number): number {
    const { cursors, weights, accept, norms, round } = this;
    const n = cursors.length;
    const { docs, freqs } = WindowScorer.buffer;
    const scores = WindowScorer.scores;
    const marks = WindowScorer.marks;
    // the non-essential terms' bounds, summed: a marked document they cannot lift needs no call
    const others = e > 0 ? this.prefix[e - 1]! : 0;
    for (let i = e; i < n; i++) {
      const c = cursors[i]!;
      const w = weights[i]!;
      for (let got = c.nextPostings(end, WindowScorer.buffer); got > 0; got = c.nextPostings(end, WindowScorer.buffer)) {
        for (let j = 0; j < got; j++) {
          const doc = docs[j]!;
          const tf = freqs[j]!;
          const s = (w * tf) / (tf + norms.at(doc));
          const o = doc - start;
          scores[o] += round ? roundScore(s) : s;
          marks[o >>> 5]! |= 1 << (o & 31);
        }
      }
    }
    for (let k = 0, words = (end - start + 31) >>> 5; k < words; k++) {
      let word = marks[k]!;
      if (word === 0) continue;
      marks[k] = 0;
      do {
        const o = (k << 5) | (31 - Math.clz32(word & -word));
        word &= word - 1;
        const score = scores[o]!;
        scores[o] = 0;
        if (score + others < t) continue;
        const doc = start + o;
        if (accept !== undefined && !accept(doc)) continue;
        t = this.complete(doc, score, e, t);
      } while (word !== 0);
    }
    return t;
  }

  /**
   * Adds to `score` (the essential terms' contributions to `doc`) the non-essential ones, each probed
   * only while the bounds of those left can still lift the document to `t`, and offers the document when
   * it reaches `t`; returns the threshold after it (`t`, or the collector's raised one). The document's
   * norm is read here, when a term is probed: a float argument (not a small integer, as integer scores
   * and thresholds are) is boxed on every call.
   */
  private complete(doc: number, score: number, e: number, t: number): number {
    const { cursors, freqCols, weights, prefix, round, collector } = this;
    let norm = -1;
    for (let i = e - 1; i >= 0; i--) {
      if (score + prefix[i]! < t) return t;
      const tf = termFreq(cursors[i]!, freqCols[i], doc);
      if (tf > 0) {
        if (norm < 0) norm = this.norms.at(doc);
        const s = (weights[i]! * tf) / (tf + norm);
        score += round ? roundScore(s) : s;
      }
    }
    if (score < t) return t; // under the collector's threshold, or under the floor the k-th best reaches
    collector.offer(score, this.seg, doc);
    return collector.minCompetitive > t ? collector.minCompetitive : t;
  }
}

/**
 * The optional terms that can still propose a competitive document anywhere in the segment: every one
 * but the longest run of lowest term-wide ceilings that, with every score-only term's ceiling, sums below
 * the threshold (MaxScore's partition with whole-list bounds instead of a window's). No document before
 * the next posting of one of them can enter the top k, so the next window starts there: a rare term
 * beside common ones (score-only or merely low-scoring) visits its own documents' blocks, not every block
 * of the common ones.
 */
class Leads {
  /** Optional scorers' indices by ascending ceiling. */
  private readonly byCeiling: number[];
  /** The score-only terms' whole-list bounds, summed: their bound in any window. */
  readonly scoreOnlyCeiling: number;
  private threshold = -Infinity;
  /** byCeiling[from..] can lead at `threshold`. */
  private from = 0;

  /** `ceilings[i]`: `termBound` of `scorers[i]`; the first `fixed` scorers are score-only. */
  constructor(private readonly scorers: readonly TermScorer[], fixed: number, private readonly ceilings: Float64Array) {
    let scoreOnly = 0;
    for (let i = 0; i < fixed; i++) scoreOnly += this.ceilings[i]!;
    this.scoreOnlyCeiling = scoreOnly;
    this.byCeiling = Array.from({ length: scorers.length - fixed }, (_, i) => fixed + i).sort((a, b) => this.ceilings[a]! - this.ceilings[b]!);
  }

  /** The first document ≥ `target` some leading term holds (NO_MORE_DOCS when none), given the collector's threshold `t`. */
  next(t: number, target: number): number {
    if (t !== this.threshold) {
      this.threshold = t;
      let sum = this.scoreOnlyCeiling;
      let from = 0;
      while (from < this.byCeiling.length && sum + this.ceilings[this.byCeiling[from]!]! < t) sum += this.ceilings[this.byCeiling[from++]!]!;
      this.from = from;
    }
    let next = NO_MORE_DOCS;
    for (let i = this.from; i < this.byCeiling.length; i++) {
      const c = this.scorers[this.byCeiling[i]!]!.cursor;
      let d = c.doc();
      if (d < target) d = c.advance(target);
      if (d < next) next = d;
    }
    return next;
  }
}

/** A term's largest contribution anywhere in the segment: its exact block bounds' maximum when kept, else that of (largest tf, shortest document). */
function termBound(bm25: Bm25, s: TermScorer): number {
  if (s.bounds !== undefined) return s.bounds.descending.length > 0 ? s.bounds.descending[0]! : 0;
  return bm25.score(s.weight, s.cursor.maxFreq, s.cursor.minLength);
}
