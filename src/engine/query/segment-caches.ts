/**
 * What queries derive from a segment reader's postings, lengths and deletes alone, kept across the
 * snapshots of successive commits. A commit makes a new snapshot whose statistics (N, avgdl, so every
 * score and every exact block bound) differ from the last one's, but the segments it kept are the same
 * readers: the documents of a frequent term as a bitset, a common term's frequency per document and the
 * impacts of a term's blocks depend on nothing else. Rebuilding them at every commit was most of the
 * time of the queries that followed one: on a million Wikipedia articles, 1,000 short queries with a
 * commit of one document every 100 of them took 7.2–7.5 ms on average against 0.9–1.0 ms without commits,
 * and 3.5 ms with them kept (docs/benchmarks.md).
 *
 * Entries are keyed by reader: a segment whose deletes change is a new reader, and what it had is
 * recomputed. Entries of readers no snapshot holds any more age out of the LRUs.
 */
import { LruCache } from '../index/lru.js';
import { BLOCK_SIZE, CLIPPED_LENGTH, NO_MORE_DOCS, type SegmentReader } from '../index/types.js';

/**
 * Bytes of per-segment term bitsets kept (`termBits`), least recently used first out, at least: ~1,800
 * bitsets of a 300k-document segment, ~540 of a million-document one.
 */
export const TERM_BITS_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * Bitsets of the index's largest segment the cache holds at least, its bound raised as larger segments
 * come (a bitset takes maxDoc / 8 bytes): the scale bench's 1,000 short and title queries use ~480
 * frequent terms' bitsets. A fixed 64 MiB held ~100 of a 5M-document segment's, and they were rebuilt as
 * they were used: on the million, a bound of that many (13 MiB) took the short queries' median from
 * 0.44–0.60 to 0.84–0.91 ms (docs/benchmarks.md). 512 bitsets of 5M documents are 305 MiB.
 */
export const TERM_BITS_CACHE_BITSETS = 512;

/**
 * A term gets a bitset (`termBits`) in a segment where it is in more than this fraction of the documents.
 * Counting a union then ORs 32 documents a word instead of decoding one posting per 50 documents or fewer,
 * and a disjunction whose other terms are sparse is counted without decoding and ranked by pruned
 * MaxScore instead of scoring every posting (executor.ts). On the 292k-article Wikipedia extract, 0.02
 * against the common-term cutoff (0.3) before: median 1–3-word query 1.1 → 0.6 ms.
 */
export const TERM_BITS_MIN_RATIO = 0.02;

/** Whether a term in `df` of a segment's `maxDoc` documents has a bitset (`SegmentCaches.termBits`). */
export function hasTermBits(df: number, maxDoc: number): boolean {
  return df > 0 && df > TERM_BITS_MIN_RATIO * maxDoc;
}

/**
 * Bytes of impacts kept (`impacts`), least recently used first out: 2–20 pairs of 8 bytes per block of
 * 128 postings.
 */
export const IMPACTS_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * Per block of a term's postings in one segment reader, the (tf, length) pairs of the block's live
 * documents that no other live document of it beats in both — a tf as large or larger in a document as
 * short or shorter. A BM25 contribution rises with tf and falls with length (also in float64: each
 * operation is correctly rounded, so monotone), so under any statistics the block's largest contribution is
 * one of these pairs': a block bound is their maximum, exactly, without reading the postings again. They
 * are Lucene's impacts, computed here from the postings and lengths rather than stored. A block without a
 * live document has none.
 */
export interface Impacts {
  /** Block b's pairs are at [starts[b], starts[b + 1]). */
  readonly starts: Int32Array;
  readonly tfs: Int32Array;
  /** The documents' exact lengths (what query/norms.ts turns into a norm). */
  readonly lengths: Uint32Array;
}

/** Largest tf `impactsOf` tracks with a table; a block with larger ones finds its pairs by sorting. */
const TABLE_TFS = 1024;
const lengthByTf = new Float64Array(TABLE_TFS + 1).fill(Infinity);

/** The impacts of `term`'s postings in `s` (which must hold it). */
export function impactsOf(s: SegmentReader, term: string): Impacts {
  const c = s.postings(term)!;
  const nBlocks = Math.ceil(c.docFreq / BLOCK_SIZE);
  const starts = new Int32Array(nBlocks + 1);
  // the pairs, block after block
  const tfs: number[] = [];
  const lengths: number[] = [];
  const short = s.shortLengths();
  const allLive = s.liveDocs === s.maxDoc;
  // one block's live (tf, length) pairs: the least length per tf, then kept from the largest tf down while
  // their lengths fall
  const blockTfs = new Int32Array(BLOCK_SIZE);
  const blockLengths = new Float64Array(BLOCK_SIZE);
  let inBlock = 0;
  let maxTf = 0;
  const endBlock = (b: number) => {
    if (maxTf <= TABLE_TFS) {
      for (let i = 0; i < inBlock; i++) {
        const tf = blockTfs[i]!;
        if (blockLengths[i]! < lengthByTf[tf]!) lengthByTf[tf] = blockLengths[i]!;
      }
      let least = Infinity;
      for (let tf = maxTf; tf >= 1; tf--) {
        const l = lengthByTf[tf]!;
        if (l === Infinity) continue;
        lengthByTf[tf] = Infinity;
        if (l >= least) continue;
        least = l;
        tfs.push(tf);
        lengths.push(l);
      }
    } else {
      const order = Array.from({ length: inBlock }, (_, i) => i)
        .sort((x, y) => blockTfs[y]! - blockTfs[x]! || blockLengths[x]! - blockLengths[y]!);
      let least = Infinity;
      for (const i of order) {
        if (blockLengths[i]! >= least) continue;
        least = blockLengths[i]!;
        tfs.push(blockTfs[i]!);
        lengths.push(least);
      }
    }
    starts[b + 1] = tfs.length;
    inBlock = 0;
    maxTf = 0;
  };
  let i = 0;
  for (let d = c.nextDoc(); d !== NO_MORE_DOCS; d = c.nextDoc(), i++) {
    if (i > 0 && i % BLOCK_SIZE === 0) endBlock(i / BLOCK_SIZE - 1);
    if (!allLive && !s.isLive(d)) continue;
    const tf = c.freq();
    const l = short[d]!;
    blockTfs[inBlock] = tf;
    blockLengths[inBlock++] = l === CLIPPED_LENGTH ? s.length(d) : l;
    if (tf > maxTf) maxTf = tf;
  }
  if (nBlocks > 0) endBlock(nBlocks - 1);
  return { starts, tfs: Int32Array.from(tfs), lengths: Uint32Array.from(lengths) };
}

/**
 * A term gets a column of its frequencies (`termFreqs`) in a segment where it is in more than this
 * fraction of the documents: the common words of the common-terms rule (docs/ranking.md), which a query
 * reads only at the documents its other terms propose. Read through the postings, such a word's blocks are
 * short and nearly every one holds a candidate, so probing it decoded most of its list; a column reads one
 * byte. On the million-article extract: 23 words besides the common-word pairs; at 0.15, 85 more, which
 * the scale bench's queries did not answer faster.
 */
export const TERM_FREQS_MIN_RATIO = 0.3;

/** A column's value for a frequency of this or more: the exact one is read from the postings. */
export const TERM_FREQS_CLIPPED = 255;

/** Bytes of frequency columns kept (`termFreqs`), least recently used first out, at least. */
export const TERM_FREQS_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * Columns of the whole index (a word's columns in all its segments) the cache holds at least, its bound
 * raised as the index grows (a column takes a byte per document): every word in more than
 * TERM_FREQS_MIN_RATIO of the documents of the million-article extract, with room to spare (32 MiB there,
 * 160 MiB at five million, however many segments hold them).
 */
export const TERM_FREQS_CACHE_COLUMNS = 32;

/** log2 of the documents a cid floor covers (`SegmentCaches.cidFloors`): 128, a dense block's span. */
export const CID_FLOOR_SHIFT = 7;

/**
 * A double no greater than `cid`: the cid itself below 2^53, else its top 53 bits (a multiple of 2^11,
 * exact in a double). Compared with `cidCeiling` of another cid, it orders the two safely.
 */
function cidFloor(cid: bigint): number {
  return cid < 2n ** 53n ? Number(cid) : Number(cid >> 11n) * 2048;
}

/** A double no less than `cid` (see `cidFloor`). */
export function cidCeiling(cid: bigint): number {
  return cid < 2n ** 53n ? Number(cid) : (Number(cid >> 11n) + 1) * 2048;
}

/**
 * Per run of 2^CID_FLOOR_SHIFT documents of a segment (deleted ones included), a floor of their least
 * cid (`cidFloor`): a run whose floor is above the collector's worst hit's cid holds no document that wins
 * a tie against it (maxscore.ts `CidTies`). A run's floor is read from its cids when first asked for, so
 * a query pays for the runs its ties reach, not for every cid of the segment (~40 ms a million).
 */
export class CidFloors {
  /** Per run, its floor; NaN until read. */
  private readonly floors: Float64Array;

  constructor(private readonly s: SegmentReader) {
    this.floors = new Float64Array((s.maxDoc + (1 << CID_FLOOR_SHIFT) - 1) >>> CID_FLOOR_SHIFT).fill(NaN);
  }

  /** Run `r`'s floor. */
  of(r: number): number {
    let f = this.floors[r]!;
    if (f !== f) {
      f = Infinity;
      for (let d = r << CID_FLOOR_SHIFT, end = Math.min(this.s.maxDoc, d + (1 << CID_FLOOR_SHIFT)); d < end; d++) {
        const c = cidFloor(this.s.cid(d));
        if (c < f) f = c;
      }
      this.floors[r] = f;
    }
    return f;
  }
}

/** The caches of one index's searchers: one per `query/reader.ts` reader, handed to each snapshot. */
export class SegmentCaches {
  private readonly bits: LruCache<Uint32Array, string>;
  /** Bitsets of the largest segment the bitset cache holds at least. */
  private readonly bitsets: number;
  private readonly kept = new LruCache<Impacts, string>(IMPACTS_CACHE_BYTES,
    (i) => i.starts.byteLength + i.tfs.byteLength + i.lengths.byteLength);
  private readonly freqs: LruCache<Uint8Array, string>;
  private readonly readerIds = new WeakMap<SegmentReader, number>();
  private readonly floors = new WeakMap<SegmentReader, CidFloors>();
  private nextId = 0;

  /** `limits` are TERM_BITS_CACHE_BYTES, TERM_BITS_CACHE_BITSETS and TERM_FREQS_CACHE_BYTES but in tests. */
  constructor(limits: { bitsBytes?: number; bitsets?: number; columnsBytes?: number } = {}) {
    this.freqs = new LruCache<Uint8Array, string>(limits.columnsBytes ?? TERM_FREQS_CACHE_BYTES, (c) => c.byteLength);
    this.bits = new LruCache<Uint32Array, string>(limits.bitsBytes ?? TERM_BITS_CACHE_BYTES, (b) => b.byteLength);
    this.bitsets = limits.bitsets ?? TERM_BITS_CACHE_BITSETS;
  }

  /**
   * The documents of `term` in `s` as a bitset (bit d set when doc d has it, deleted docs included), for
   * terms in more than TERM_BITS_MIN_RATIO of the segment's documents: counting a union ORs their words
   * (maxDoc/32 operations) instead of decoding the postings at every query. Undefined for rarer terms.
   */
  termBits(s: SegmentReader, term: string): Uint32Array | undefined {
    const key = this.key(s, term);
    let bits = this.bits.get(key);
    if (bits) return bits;
    if (!hasTermBits(s.docFreq(term), s.maxDoc)) return undefined;
    bits = new Uint32Array((s.maxDoc + 31) >>> 5);
    this.bits.atLeast(this.bitsets * bits.byteLength);
    const c = s.postings(term)!;
    for (let d = c.nextDoc(); d !== NO_MORE_DOCS; d = c.nextDoc()) bits[d >>> 5]! |= 1 << (d & 31);
    this.bits.set(key, bits);
    return bits;
  }

  /** `termBits` when it is kept already, else undefined: nothing is made. */
  keptTermBits(s: SegmentReader, term: string): Uint32Array | undefined {
    return this.bits.get(this.key(s, term));
  }

  /**
   * The frequency of `term` in each document of `s` (0 where it is absent, TERM_FREQS_CLIPPED for that or
   * more; deleted documents included), for terms in more than TERM_FREQS_MIN_RATIO of the segment's
   * documents: a query that probes such a term at its candidates reads a byte instead of advancing
   * through the postings (maxscore.ts `termFreq`). Undefined for rarer terms.
   */
  termFreqs(s: SegmentReader, term: string): Uint8Array | undefined {
    const key = this.key(s, term);
    let column = this.freqs.get(key);
    if (column) return column;
    if (!(s.docFreq(term) > TERM_FREQS_MIN_RATIO * s.maxDoc)) return undefined;
    column = new Uint8Array(s.maxDoc);
    const c = s.postings(term)!;
    for (let d = c.nextDoc(); d !== NO_MORE_DOCS; d = c.nextDoc()) {
      const f = c.freq();
      column[d] = f < TERM_FREQS_CLIPPED ? f : TERM_FREQS_CLIPPED;
    }
    this.freqs.set(key, column);
    return column;
  }

  /** Raises the frequency columns' bound to TERM_FREQS_CACHE_COLUMNS columns of an index of `docs` documents (a snapshot's segments' maxDoc summed). */
  fitColumns(docs: number): void {
    this.freqs.atLeast(TERM_FREQS_CACHE_COLUMNS * docs);
  }

  /** Bytes of the frequency columns kept. */
  get columnBytes(): number {
    return this.freqs.size;
  }

  /** The most bytes of frequency columns kept: TERM_FREQS_CACHE_BYTES, or TERM_FREQS_CACHE_COLUMNS of the index's documents. */
  get columnBound(): number {
    return this.freqs.maxBytes;
  }

  /** Bytes of the bitsets kept. */
  get bitsetBytes(): number {
    return this.bits.size;
  }

  /** The most bytes of bitsets kept: TERM_BITS_CACHE_BYTES, or TERM_BITS_CACHE_BITSETS of the largest segment's. */
  get bitsetBound(): number {
    return this.bits.maxBytes;
  }

  /** The cid floors of `s`'s runs of documents (`CidFloors`), kept with the reader. */
  cidFloors(s: SegmentReader): CidFloors {
    let floors = this.floors.get(s);
    if (floors === undefined) this.floors.set(s, (floors = new CidFloors(s)));
    return floors;
  }

  /** `impactsOf(s, term)`, kept. */
  impacts(s: SegmentReader, term: string): Impacts {
    const key = this.key(s, term);
    let impacts = this.kept.get(key);
    if (impacts === undefined) {
      impacts = impactsOf(s, term);
      this.kept.set(key, impacts);
    }
    return impacts;
  }

  /** The key of `s`'s `term` (or any name) in a per-reader, per-term cache: this one's, or a snapshot's. */
  key(s: SegmentReader, term: string): string {
    let id = this.readerIds.get(s);
    if (id === undefined) this.readerIds.set(s, (id = this.nextId++));
    return `${id} ${term}`;
  }
}
