/**
 * Reads the postings format (postings-format.ts has the layout): a term's skip table, decoded once per
 * segment and term, and a cursor that decodes one block at a time, freqs and positions only when asked.
 */
import { MAX_UNPACK_WIDTH, UNPACK_DOCS, UNPACK_FREQS } from './bit-unpack.js';
import { RICE_ESCAPE, readBits, riceParameter, skipRiceCodes, type CodedPositions } from './postings-format.js';
import { BLOCK_SIZE, NO_MORE_DOCS, type PostingsBuffer, type PostingsCursor } from './types.js';

const EMPTY_POSITIONS = new Int32Array(0);

/**
 * Cursors' block buffers are views carved from shared slabs. A typed array of more than 64 bytes gets a
 * store of its own outside the heap (an allocation and a finalizer: ~0.9 µs measured, against ~0.05 µs
 * for a view), and a query opens dozens of cursors that each need two. A slab is never handed out twice:
 * when it runs out the next one is taken, and it is freed once the last cursor that views it is.
 */
const SLAB_INTS = 64 * 1024;
let slab = new Int32Array(SLAB_INTS);
let slabUsed = 0;

/** `n` (≤ SLAB_INTS) ints for a cursor's block, not zeroed. */
function blockBuffer(n: number): Int32Array {
  if (slabUsed + n > SLAB_INTS) {
    slab = new Int32Array(SLAB_INTS);
    slabUsed = 0;
  }
  const view = slab.subarray(slabUsed, slabUsed + n);
  slabUsed += n;
  return view;
}

/**
 * The doc ids of a full block (postings-writer.ts `packFullBlock`) at byte `p`, from its gaps; returns
 * the byte where its freqs' run starts. Freqs are unpacked separately (`unpackFreqs`), only when a caller
 * asks for one: counting and skipping read docs alone.
 */
function unpackGaps(b: Uint8Array, p: number, prev: number, docs: Int32Array): number {
  const head = b[p]!;
  const gapBits = head & 31;
  const at = p + 2;
  if (gapBits === 0) {
    for (let i = 0; i < BLOCK_SIZE; i++) docs[i] = ++prev;
  } else if (gapBits <= MAX_UNPACK_WIDTH) {
    UNPACK_DOCS[gapBits]!(b, at, docs, prev);
  } else {
    for (let i = 0, bp = at * 8; i < BLOCK_SIZE; i++, bp += gapBits) docs[i] = prev += wideValue(b, bp, gapBits) + 1;
  }
  let e = at + 16 * gapBits;
  const exceptions = head >>> 5;
  if (exceptions === 0) return e;
  // an exception's high bits widen one gap, so they move its doc and every doc after it: one pass from
  // the first exception on, adding what the exceptions so far add (they are in index order)
  const end = e + 2 * exceptions;
  let add = 0;
  for (let i = b[e]!; e < end; ) {
    add += b[e + 1]! << gapBits;
    e += 2;
    const next = e < end ? b[e]! : BLOCK_SIZE;
    for (; i < next; i++) docs[i] += add;
  }
  return end;
}

/** The 128 freqs of a full block whose freqs' run, headed by `head`, starts at byte `p`. */
function unpackFreqs(b: Uint8Array, p: number, head: number, freqs: Int32Array): void {
  const freqBits = head & 31;
  if (freqBits === 0) {
    freqs.fill(1);
  } else if (freqBits <= MAX_UNPACK_WIDTH) {
    UNPACK_FREQS[freqBits]!(b, p, freqs);
  } else {
    for (let i = 0, bp = p * 8; i < BLOCK_SIZE; i++, bp += freqBits) freqs[i] = wideValue(b, bp, freqBits) + 1;
  }
  let e = p + 16 * freqBits;
  for (const end = e + 2 * (head >>> 5); e < end; e += 2) freqs[b[e]!]! += b[e + 1]! << freqBits;
}

/** A value of `bits` (17–32) bits at bit `bp`, MSB first. */
function wideValue(b: Uint8Array, bp: number, bits: number): number {
  return readBits(b, bp, bits - 16) * 65536 + readBits(b, bp + bits - 16, 16);
}

/**
 * The decoded skip table of a term with more than one block: per block its last doc, where its docs and
 * positions start, and its impact bounds. It depends only on the segment's bytes, so a segment decodes it
 * once per term and shares it between cursors (it was ~6 % of SciFact query CPU, parsed per cursor).
 */
export interface SkipTable {
  readonly lastDocs: Int32Array;
  readonly docStarts: Float64Array;
  readonly posStarts: Float64Array;
  readonly blockMaxF: Int32Array;
  readonly blockMinL: Int32Array;
}

/** Decodes the skip table at `start` of a term of `docFreq` (> BLOCK_SIZE) docs. */
export function decodeSkipTable(b: Uint8Array, start: number, docFreq: number, posStart: number): SkipTable {
  const nBlocks = Math.ceil(docFreq / BLOCK_SIZE);
  const lastDocs = new Int32Array(nBlocks);
  const docStarts = new Float64Array(nBlocks);
  const posStarts = new Float64Array(nBlocks);
  const blockMaxF = new Int32Array(nBlocks);
  const blockMinL = new Int32Array(nBlocks);
  let p = start;
  let last = -1;
  const docBytes = new Float64Array(nBlocks);
  let posAt = posStart;
  for (let k = 0; k < nBlocks; k++) {
    // five varints, inlined
    for (let f = 0; f < 5; f++) {
      let x = b[p++]!;
      if (x >= 0x80) {
        x &= 0x7f;
        let shift = 7;
        for (;;) {
          const c = b[p++]!;
          x += (c & 0x7f) * 2 ** shift;
          if (c < 0x80) break;
          shift += 7;
        }
      }
      switch (f) {
        case 0: last += x; lastDocs[k] = last; break;
        case 1: docBytes[k] = x; break;
        case 2: posStarts[k] = posAt; posAt += x; break;
        case 3: blockMaxF[k] = x; break;
        default: blockMinL[k] = x;
      }
    }
  }
  for (let k = 0; k < nBlocks; k++) {
    docStarts[k] = p;
    p += docBytes[k]!;
  }
  return { lastDocs, docStarts, posStarts, blockMaxF, blockMinL };
}

/**
 * A cursor over one term's postings, decoding one block at a time. A walk over many terms of a segment
 * (a merge) moves one cursor from term to term (`retarget`) rather than making one per term: most of a
 * large vocabulary's terms have a handful of documents, and a cursor's arrays cost more than their decoding.
 */
export class BlockPostingsCursor implements PostingsCursor {
  docFreq!: number;
  maxFreq!: number;
  minLength!: number;

  private nBlocks!: number;
  private lastDocs!: Int32Array;
  private docStarts!: Float64Array;
  private posStarts!: Float64Array;
  private blockMaxF!: Int32Array;
  private blockMinL!: Int32Array;
  /** The one-block summary arrays, made at the first term of one block and reused by the next. */
  private single: SkipTable | undefined;

  private block = -1;
  private docs: Int32Array;
  private freqs: Int32Array;
  private count = 0;
  /** Byte where the current full block's freqs' run starts while they are not unpacked yet, else −1. */
  private freqsAt = -1;
  /** That run's head: width and exceptions. */
  private freqHead = 0;
  private i = -1;
  private cur = -1;
  private shallow = 0;

  // positions: posBit is the bit where the positions of doc index posIdx of the current block start
  private posBit = 0;
  private posIdx = 0;
  private lastPositions: Int32Array | null = null;
  /** Bit where the positions of doc index posIdx − 1 start (the last doc decoded). */
  private keptBit = 0;

  constructor(
    private data: Uint8Array,
    start: number,
    docFreq: number,
    maxFreq: number,
    minLength: number,
    private posData: Uint8Array | null,
    posStart: number,
    /** Doc lengths of the segment: the positions' Rice parameters depend on them. */
    private readonly lengths: Uint32Array | null = null,
    /** The term's skip table when the caller keeps it (`decodeSkipTable` of the same arguments). */
    shared?: SkipTable,
  ) {
    this.docs = blockBuffer(Math.min(BLOCK_SIZE, docFreq));
    this.freqs = blockBuffer(Math.min(BLOCK_SIZE, docFreq));
    this.start(start, docFreq, maxFreq, minLength, posStart, shared);
  }

  /**
   * Moves the cursor to another term of the same segment, as a new cursor of these arguments would be
   * (before its first doc); its block buffers are kept, grown to a full block when they are smaller.
   */
  retarget(data: Uint8Array, start: number, docFreq: number, maxFreq: number, minLength: number, posData: Uint8Array | null, posStart: number): void {
    if (this.docs.length < Math.min(BLOCK_SIZE, docFreq)) {
      this.docs = blockBuffer(BLOCK_SIZE);
      this.freqs = blockBuffer(BLOCK_SIZE);
    }
    this.data = data;
    this.posData = posData;
    this.block = -1;
    this.count = 0;
    this.freqsAt = -1;
    this.freqHead = 0;
    this.i = -1;
    this.cur = -1;
    this.shallow = 0;
    this.posBit = 0;
    this.posIdx = 0;
    this.lastPositions = null;
    this.keptBit = 0;
    this.start(start, docFreq, maxFreq, minLength, posStart);
  }

  private start(start: number, docFreq: number, maxFreq: number, minLength: number, posStart: number, shared?: SkipTable): void {
    this.docFreq = docFreq;
    this.maxFreq = maxFreq;
    this.minLength = minLength;
    const nBlocks = Math.ceil(docFreq / BLOCK_SIZE);
    this.nBlocks = nBlocks;
    if (nBlocks === 1) {
      const one = (this.single ??= {
        lastDocs: new Int32Array(1), docStarts: new Float64Array(1), posStarts: new Float64Array(1),
        blockMaxF: new Int32Array(1), blockMinL: new Int32Array(1),
      });
      this.lastDocs = one.lastDocs;
      this.docStarts = one.docStarts;
      this.posStarts = one.posStarts;
      this.blockMaxF = one.blockMaxF;
      this.blockMinL = one.blockMinL;
      // no skip table: the term's summary is the block's; decode it now to learn its last doc
      this.docStarts[0] = start;
      this.posStarts[0] = posStart;
      this.blockMaxF[0] = maxFreq;
      this.blockMinL[0] = minLength;
      this.decodeBlock(0);
      this.lastDocs[0] = this.docs[this.count - 1]!;
      return;
    }
    const skip = shared ?? decodeSkipTable(this.data, start, docFreq, posStart);
    this.lastDocs = skip.lastDocs;
    this.docStarts = skip.docStarts;
    this.posStarts = skip.posStarts;
    this.blockMaxF = skip.blockMaxF;
    this.blockMinL = skip.blockMinL;
  }

  doc(): number {
    return this.cur;
  }

  freq(): number {
    if (this.freqsAt >= 0) this.loadFreqs();
    return this.freqs[this.i]!;
  }

  /** Unpacks the current full block's freqs, deferred by `decodeBlock`. */
  private loadFreqs(): void {
    unpackFreqs(this.data, this.freqsAt, this.freqHead, this.freqs);
    this.freqsAt = -1;
  }

  private decodeBlock(k: number): void {
    const b = this.data;
    let p = this.docStarts[k]!;
    let prev = k === 0 ? -1 : this.lastDocs[k - 1]!;
    let n = k === this.nBlocks - 1 ? this.docFreq - k * BLOCK_SIZE : BLOCK_SIZE;
    const count = n;
    const docs = this.docs;
    const freqs = this.freqs;
    this.freqsAt = -1;
    if (n === BLOCK_SIZE) {
      this.freqHead = b[p + 1]!;
      this.freqsAt = unpackGaps(b, p, prev, docs);
      n = 0; // decoded (freqs on demand)
    }
    for (let i = 0; i < n; i++) {
      let x = b[p++]!;
      if (x >= 0x80) {
        x &= 0x7f;
        let shift = 7;
        for (;;) {
          const c = b[p++]!;
          x += (c & 0x7f) * 2 ** shift;
          if (c < 0x80) break;
          shift += 7;
        }
      }
      if ((x & 1) === 1) {
        prev += (x - 1) / 2;
        freqs[i] = 1;
      } else {
        prev += x / 2;
        let f = b[p++]!;
        if (f >= 0x80) {
          f &= 0x7f;
          let shift = 7;
          for (;;) {
            const c = b[p++]!;
            f += (c & 0x7f) * 2 ** shift;
            if (c < 0x80) break;
            shift += 7;
          }
        }
        freqs[i] = f;
      }
      docs[i] = prev;
    }
    this.block = k;
    this.count = count;
    this.i = -1;
    if (k > this.shallow) this.shallow = k;
    this.posBit = this.posStarts[k]! * 8;
    this.posIdx = 0;
    this.lastPositions = null;
  }

  nextDoc(): number {
    if (this.cur === NO_MORE_DOCS) return NO_MORE_DOCS;
    if (this.i + 1 >= this.count) {
      if (this.block + 1 >= this.nBlocks) return (this.cur = NO_MORE_DOCS);
      this.decodeBlock(this.block + 1);
    }
    return (this.cur = this.docs[++this.i]!);
  }

  advance(target: number): number {
    if (this.cur === NO_MORE_DOCS) return NO_MORE_DOCS;
    if (this.block < 0 || target > this.lastDocs[this.block]!) {
      let k = this.block + 1;
      const last = this.lastDocs;
      const nb = this.nBlocks;
      if (k < nb && last[k]! < target) {
        // binary search for the first block whose last doc ≥ target
        let lo = k + 1;
        let hi = nb;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (last[mid]! < target) lo = mid + 1;
          else hi = mid;
        }
        k = lo;
      }
      if (k >= nb) return (this.cur = NO_MORE_DOCS);
      this.decodeBlock(k);
    }
    const docs = this.docs;
    let i = this.i + 1;
    while (docs[i]! < target) i++;
    this.i = i;
    return (this.cur = docs[i]!);
  }

  nextPostings(upTo: number, out: PostingsBuffer): number {
    const cur = this.cur;
    if (cur < 0 || cur >= upTo || cur === NO_MORE_DOCS) return 0; // before the first doc, at upTo, or past the last
    if (this.freqsAt >= 0) this.loadFreqs();
    const docs = this.docs;
    const freqs = this.freqs;
    const count = this.count;
    const outDocs = out.docs;
    const outFreqs = out.freqs;
    let i = this.i;
    let n = 0;
    for (; i < count && docs[i]! < upTo; i++, n++) {
      outDocs[n] = docs[i]!;
      outFreqs[n] = freqs[i]!;
    }
    if (i < count) {
      this.i = i;
      this.cur = docs[i]!;
    } else {
      this.i = count - 1;
      this.nextDoc(); // the next block's first doc
    }
    return n;
  }

  positions(): Int32Array {
    if (this.posData === null || this.i < 0 || this.cur === NO_MORE_DOCS) return EMPTY_POSITIONS;
    if (this.posIdx === this.i + 1 && this.lastPositions !== null) return this.lastPositions;
    const out = new Int32Array(this.freq());
    this.decodePositions(out, 0);
    this.lastPositions = out;
    return out;
  }

  /**
   * Points `out` at the current doc's positions as coded, without decoding them (a merge copies them);
   * false when the term has none.
   */
  codedPositions(out: CodedPositions): boolean {
    if (this.posData === null || this.i < 0 || this.cur === NO_MORE_DOCS) return false;
    const from = this.skipToCurrentPositions();
    const f = this.freqs[this.i]!;
    const to = skipRiceCodes(this.posData, from, f, riceParameter(this.lengths![this.docs[this.i]!]!, f));
    this.posBit = to;
    this.posIdx = this.i + 1;
    this.lastPositions = null;
    out.data = this.posData;
    out.from = from;
    out.to = to;
    return true;
  }

  /**
   * Moves past the positions of the block's docs before the current one, without decoding them; returns
   * the bit where the current doc's start, which is kept (its positions may be asked for again).
   */
  private skipToCurrentPositions(): number {
    if (this.posIdx === this.i + 1) {
      this.posBit = this.keptBit;
      this.posIdx = this.i;
    }
    if (this.freqsAt >= 0) this.loadFreqs();
    const { freqs, docs } = this;
    const lengths = this.lengths!;
    const b = this.posData!;
    let bp = this.posBit;
    for (let j = this.posIdx; j < this.i; j++) bp = skipRiceCodes(b, bp, freqs[j]!, riceParameter(lengths[docs[j]!]!, freqs[j]!));
    this.keptBit = bp;
    return bp;
  }

  /** Decodes the current doc's positions into `out` from `at` (decoded again when they were already: the bit stream is read forward only). */
  private decodePositions(out: Int32Array, at: number): void {
    const b = this.posData!;
    let bp = this.skipToCurrentPositions();
    const f = this.freqs[this.i]!;
    const k = riceParameter(this.lengths![this.docs[this.i]!]!, f);
    let last = -1;
    for (let n = 0; n < f; n++) {
      // peek 32 bits at bp (bytes past the end read as 0)
      let at8 = bp >>> 3;
      let w = ((b[at8]! << 24) | (b[at8 + 1]! << 16) | (b[at8 + 2]! << 8) | b[at8 + 3]!) << (bp & 7);
      const q = Math.clz32(~w);
      let v: number;
      if (q < RICE_ESCAPE) {
        bp += q + 1;
        if (k > 0) {
          at8 = bp >>> 3;
          w = ((b[at8]! << 24) | (b[at8 + 1]! << 16) | (b[at8 + 2]! << 8) | b[at8 + 3]!) << (bp & 7);
          v = (q << k) | (w >>> (32 - k));
          bp += k;
        } else v = q;
      } else {
        bp += RICE_ESCAPE;
        const bits = readBits(b, bp, 5);
        bp += 5;
        v = bits > 16 ? wideValue(b, bp, bits) : readBits(b, bp, bits);
        bp += bits;
      }
      last += v + 1;
      out[at + n] = last;
    }
    this.posBit = bp;
    this.posIdx = this.i + 1;
  }

  shallowAdvance(target: number): number {
    const last = this.lastDocs;
    const nb = this.nBlocks;
    // targets mostly move on by a block or a few (a scorer's next window): gallop from the current
    // block, and search from the first only for a target behind it
    let lo = this.shallow;
    if (lo >= nb || (lo > 0 && last[lo - 1]! >= target)) lo = 0;
    if (lo < nb && last[lo]! < target) {
      let step = 1;
      let bound = lo + 1;
      while (bound < nb && last[bound]! < target) {
        lo = bound;
        step += step;
        bound = lo + step;
      }
      // last[lo] < target; the answer is in (lo, min(bound, nb)]
      let hi = bound < nb ? bound : nb;
      lo++;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (last[mid]! < target) lo = mid + 1;
        else hi = mid;
      }
    }
    this.shallow = lo;
    return lo < nb ? last[lo]! : NO_MORE_DOCS;
  }

  shallowBlock(): number {
    return this.shallow;
  }

  blockLastDoc(b: number): number {
    return b < this.nBlocks ? this.lastDocs[b]! : NO_MORE_DOCS;
  }

  blockMaxFreq(): number {
    return this.shallow < this.nBlocks ? this.blockMaxF[this.shallow]! : 0;
  }

  blockMinLength(): number {
    return this.shallow < this.nBlocks ? this.blockMinL[this.shallow]! : 0x7fffffff;
  }
}
