/**
 * A searcher's view of one commit: its segments and the collection statistics BM25 needs, global across
 * segments (CONTRACT §2: N, df and avgdl over the scope's corpus):
 *   N = live documents, avgdl = Σ live lengths / N,
 *   df(t) = live documents containing t — exact even with deletes: for a segment with deletes its live
 *   postings are counted once and cached for the snapshot's life.
 * Also caches each segment's live-document bitset (for exact counting) when it has deletes, and the
 * exact per-block score bounds of frequent terms and of lone phrases decided by a pair term; the bitsets
 * of frequent terms and the impacts their bounds come from are the index's, shared by its snapshots
 * (segment-caches.ts).
 */
import { BLOCK_SIZE, NO_MORE_DOCS, gramTerm, type SegmentReader } from '../index/types.js';
import { LruCache } from '../index/lru.js';
import { SegmentCaches, type CidFloors } from './segment-caches.js';
import { Norms } from './norms.js';
import { Bm25, roundScore, type ScoringMode } from '../rank/bm25.js';

/** Most per-term df values a snapshot caches (each is a few bytes; bounds a flood of distinct terms). */
export const DF_CACHE_LIMIT = 100_000;

/**
 * How a disjunction of terms is executed (executor.ts): `auto` chooses by density; the others force one
 * plan. INTERNAL: tests force each plan to check they agree, benches compare them.
 */
export type DisjunctionPlan = 'auto' | 'maxscore' | 'accumulate';

/**
 * A term is *common* in a snapshot when it occurs in more than this fraction of its live documents:
 * df > COMMON_TERM_RATIO × N (one float64 multiplication). In a query without required terms or
 * phrases that also has a rare optional term, common optional terms only add to the score of documents
 * that match another optional clause (docs/ranking.md, "Common terms"; executor.ts).
 */
export const COMMON_TERM_RATIO = 0.3;

/**
 * A term gets exact per-block score bounds (`blockBounds`) in a segment where it has at least this many
 * postings: below it the index's own bounds (block max tf, block min length) prune well enough, and
 * computing them would cost a rare term's first query more than they save.
 */
export const BLOCK_BOUNDS_MIN_POSTINGS = 16 * BLOCK_SIZE;

/**
 * Bytes of per-block score bounds a snapshot keeps (`blockBounds`), least recently used first out: 16
 * bytes per block of 128 postings, ~1/20 of the postings' own size.
 */
export const BLOCK_BOUNDS_CACHE_BYTES = 32 * 1024 * 1024;

/** A term's exact per-block score bounds in one segment (Snapshot.blockBounds). */
export interface BlockBounds {
  /** Per block of the term's postings (BLOCK_SIZE each), the largest contribution to a live document of it. */
  readonly perBlock: Float64Array;
  /** The same values, largest first. */
  readonly descending: Float64Array;
}

/**
 * A score that k distinct live documents reach or pass by this term alone: the k-th largest of the block
 * bounds of the term in the given segments (each bound is attained by a document of its block), so the
 * k-th best score of a query in which the term alone makes a match is at least it. -Infinity when fewer
 * than k blocks hold a live document.
 */
export function kthBound(perSegment: readonly BlockBounds[], k: number): number {
  if (k < 1) return -Infinity;
  // the k largest of several descending lists: merge their heads
  const heads = new Int32Array(perSegment.length);
  let v = 0;
  for (let taken = 0; taken < k; taken++) {
    let best = -1;
    for (let i = 0; i < perSegment.length; i++) {
      const d = perSegment[i]!.descending;
      if (heads[i]! < d.length && (best < 0 || d[heads[i]!]! > perSegment[best]!.descending[heads[best]!]!)) best = i;
    }
    if (best < 0) return -Infinity;
    v = perSegment[best]!.descending[heads[best]!++]!;
  }
  return v > 0 ? v : -Infinity;
}

export class Snapshot {
  readonly docCount: number;
  readonly lengthSum: number;
  readonly bm25: Bm25;
  private readonly dfCache = new Map<string, number>();
  private readonly liveBitsCache = new Map<SegmentReader, Uint32Array>();
  private readonly normsCache = new Map<SegmentReader, Norms>();
  private readonly blockBoundsCache = new LruCache<BlockBounds, string>(BLOCK_BOUNDS_CACHE_BYTES, (b) => 2 * b.perBlock.byteLength);

  constructor(
    readonly segments: readonly SegmentReader[], mode: ScoringMode, readonly plan: DisjunctionPlan = 'auto',
    readonly commonTermRatio: number = COMMON_TERM_RATIO,
    readonly blockBoundsMinPostings: number = BLOCK_BOUNDS_MIN_POSTINGS,
    /** What the snapshots of one index share of each segment reader (segment-caches.ts). */
    private readonly caches: SegmentCaches = new SegmentCaches(),
  ) {
    let n = 0;
    let sum = 0;
    let maxDocs = 0;
    for (const s of segments) {
      n += s.liveDocs;
      sum += s.liveLengthSum;
      maxDocs += s.maxDoc;
    }
    caches.fitColumns(maxDocs);
    this.docCount = n;
    this.lengthSum = sum;
    this.bm25 = new Bm25(n, sum, mode);
  }

  /** df(term) > commonTermRatio × N (see COMMON_TERM_RATIO). */
  isCommon(term: string): boolean {
    return this.df(term) > this.commonTermRatio * this.docCount;
  }

  /** Live documents containing `term`. */
  df(term: string): number {
    let df = this.dfCache.get(term);
    if (df !== undefined) return df;
    df = 0;
    for (const s of this.segments) {
      if (s.liveDocs === s.maxDoc) {
        df += s.docFreq(term);
        continue;
      }
      if (s.liveDocs === 0) continue;
      const c = s.postings(term);
      if (!c) continue;
      for (let d = c.nextDoc(); d !== NO_MORE_DOCS; d = c.nextDoc()) if (s.isLive(d)) df++;
    }
    if (this.dfCache.size >= DF_CACHE_LIMIT) this.dfCache.clear();
    this.dfCache.set(term, df);
    return df;
  }

  /** norm(dl) of the segment's documents under this snapshot's statistics (norms.ts), built once per snapshot. */
  norms(s: SegmentReader): Norms {
    let norms = this.normsCache.get(s);
    if (!norms) {
      norms = new Norms(s, this.bm25);
      this.normsCache.set(s, norms);
    }
    return norms;
  }

  /** Floors of the least cid of each run of `s`'s documents (SegmentCaches.cidFloors). */
  cidFloors(s: SegmentReader): CidFloors {
    return this.caches.cidFloors(s);
  }

  /** The frequencies of `term` in `s` per document when it is common there (SegmentCaches.termFreqs). */
  termFreqs(s: SegmentReader, term: string): Uint8Array | undefined {
    return this.caches.termFreqs(s, term);
  }

  /** The documents of `term` in `s` as a bitset when it is frequent there (SegmentCaches.termBits). */
  termBits(s: SegmentReader, term: string): Uint32Array | undefined {
    return this.caches.termBits(s, term);
  }

  /** `termBits` when it is kept already, else undefined: nothing is made. */
  keptTermBits(s: SegmentReader, term: string): Uint32Array | undefined {
    return this.caches.keptTermBits(s, term);
  }

  /**
   * The exact largest contribution of `term` (with its weight in this snapshot) to a live document of
   * each of its blocks in `s`, 0 for a block without one: the same float64 operations and rounding as
   * the scoring loops, so each is the largest of the very numbers they add, and some live document of
   * the block attains it. The index's own block bound combines the block's largest tf with its shortest
   * document, which for a word in most documents (some long document with many occurrences, some short
   * one) is near the term's ceiling in every block and prunes nothing; these bounds let block-max
   * MaxScore and the leader walk skip every block that holds no top-k candidate, and, being attained,
   * give MaxScore a starting threshold (`kthBound`). Computed on first use from the term's impacts in the
   * segment (kept across snapshots, so a commit's new statistics cost a few pairs per block, not a pass
   * over the postings) and kept in an LRU bounded by BLOCK_BOUNDS_CACHE_BYTES for the snapshot's life (its
   * N, avgdl and deletes fix every score), for terms with `blockBoundsMinPostings`
   * (BLOCK_BOUNDS_MIN_POSTINGS) postings or more; undefined for rarer terms. `compute` false returns them
   * only when already kept: for a walk that visits few of the term's blocks.
   */
  blockBounds(s: SegmentReader, term: string, compute = true): BlockBounds | undefined {
    return this.kept(s, term, term, compute, () => this.termMaxima(s, term));
  }

  /**
   * The exact per-block score bounds of a two-word phrase that its pair term alone decides (a lone
   * phrase query, executor.ts's leader walk): per block of the pair's postings, the largest score its
   * words give a live document of it. Each word of a pair of common words has some short document dense
   * in it in nearly every one of its blocks, so the words' own bounds are near their ceiling everywhere
   * and skip nothing; the pair's blocks bounded by the phrase's score skip every block that holds no top-k
   * candidate. Kept as `blockBounds` are, under the same threshold; undefined when not computed.
   */
  phraseBounds(s: SegmentReader, phrase: readonly [string, string]): BlockBounds | undefined {
    const list = gramTerm(phrase[0], phrase[1]);
    const name = `"${phrase[0]} ${phrase[1]}"`;
    return this.kept(s, name, list, true, () => this.listMaxima(s, list, [...new Set(phrase)]));
  }

  /**
   * The bounds kept under `name` in the LRU, else (when `compute`, and `listTerm` has
   * `blockBoundsMinPostings` postings or more in `s`) `maxima()`'s, kept.
   */
  private kept(
    s: SegmentReader, name: string, listTerm: string, compute: boolean, maxima: () => Float64Array,
  ): BlockBounds | undefined {
    const key = this.caches.key(s, name);
    const kept = this.blockBoundsCache.get(key);
    if (kept || !compute) return kept;
    const df = s.docFreq(listTerm);
    if (df < this.blockBoundsMinPostings || df === 0) return undefined;
    const perBlock = maxima();
    const bounds = { perBlock, descending: perBlock.slice().sort().reverse() };
    this.blockBoundsCache.set(key, bounds);
    return bounds;
  }

  /**
   * Per block of `term`'s postings in `s`, the largest contribution of the term to a live document: the
   * largest over the block's impacts (SegmentCaches.impacts, kept across snapshots), each scored with the
   * same float64 operations and rounding as the scoring loops, so the largest of the very numbers they add.
   */
  private termMaxima(s: SegmentReader, term: string): Float64Array {
    const { starts, tfs, lengths } = this.caches.impacts(s, term);
    const w = this.bm25.weight(this.df(term));
    const norms = this.norms(s);
    const round = this.bm25.round;
    const perBlock = new Float64Array(starts.length - 1);
    for (let b = 0; b < perBlock.length; b++) {
      let best = 0;
      for (let p = starts[b]!, end = starts[b + 1]!; p < end; p++) {
        const tf = tfs[p]!;
        const x = (w * tf) / (tf + norms.ofLength(lengths[p]!)); // rank/bm25.ts Bm25.score
        const score = round ? roundScore(x) : x;
        if (score > best) best = score;
      }
      perBlock[b] = best;
    }
    return perBlock;
  }

  /**
   * Per block of the postings of `listTerm`, the largest score `terms` (distinct, each in every document
   * of the list) give a live document of it: the same float64 operations, rounding and order of addition
   * as the scoring loops, so each bound is the largest of the very numbers they compute.
   */
  private listMaxima(s: SegmentReader, listTerm: string, terms: readonly string[]): Float64Array {
    const list = s.postings(listTerm)!;
    const perBlock = new Float64Array(Math.ceil(list.docFreq / BLOCK_SIZE));
    const cursors = terms.map((t) => (t === listTerm ? list : s.postings(t)!));
    const weights = Float64Array.from(terms, (t) => this.bm25.weight(this.df(t)));
    const norms = this.norms(s);
    const round = this.bm25.round;
    const allLive = s.liveDocs === s.maxDoc;
    let i = 0;
    for (let d = list.nextDoc(); d !== NO_MORE_DOCS; d = list.nextDoc(), i++) {
      if (!allLive && !s.isLive(d)) continue;
      let score = 0;
      for (let t = 0; t < cursors.length; t++) {
        const c = cursors[t]!;
        if (c.doc() < d) c.advance(d);
        const tf = c.freq();
        const x = (weights[t]! * tf) / (tf + norms.at(d)); // rank/bm25.ts Bm25.score
        score += round ? roundScore(x) : x;
      }
      const b = (i / BLOCK_SIZE) | 0;
      if (score > perBlock[b]!) perBlock[b] = score;
    }
    return perBlock;
  }

  /** Bit d set when doc d is live; undefined when every doc of the segment is. */
  liveBits(s: SegmentReader): Uint32Array | undefined {
    if (s.liveDocs === s.maxDoc) return undefined;
    let bits = this.liveBitsCache.get(s);
    if (!bits) {
      bits = new Uint32Array((s.maxDoc + 31) >>> 5);
      for (let d = 0; d < s.maxDoc; d++) if (s.isLive(d)) bits[d >>> 5]! |= 1 << (d & 31);
      this.liveBitsCache.set(s, bits);
    }
    return bits;
  }
}
