/**
 * The postings codec: one term's documents, frequencies and positions, in blocks of `BLOCK_SIZE` docs.
 *
 * Layout of one term in the postings stream (all varints):
 *
 *   skip table, one entry per block:  lastDocDelta · docBytes · posBytes · maxFreq · minLength
 *                                     (absent when the term has a single block: most terms)
 *   block data, concatenated:         per doc: (docDelta << 1 | freq == 1) [· freq when freq > 1]
 *
 * and in the positions stream, per doc of each block in order, `freq` position deltas (none for the
 * synthetic `site:` terms). `lastDocDelta` is relative to the previous block's last doc (−1 before the
 * first), so the skip table alone locates any block in both streams: `advance` and `shallowAdvance`
 * jump over blocks without decoding them, and positions are decoded only when asked for, skipping the
 * earlier docs of the block by counting varint terminators. Folding "freq is 1" into the delta's low bit
 * saves a byte on most postings of natural text (Lucene does the same).
 */
import { ByteWriter } from './bytes.js';
import { BLOCK_SIZE, NO_MORE_DOCS, type PostingsCursor } from './types.js';

/** Appends one term's postings (docs ascending, freqs ≥ 1, positions flat, per doc ascending). */
export function encodeTermPostings(
  docs: ArrayLike<number>,
  freqs: ArrayLike<number>,
  positions: ArrayLike<number> | null,
  lengths: ArrayLike<number>,
  out: ByteWriter,
  posOut: ByteWriter,
  scratch: ByteWriter,
): { maxFreq: number; minLength: number } {
  const n = docs.length;
  const nBlocks = Math.ceil(n / BLOCK_SIZE);
  scratch.length = 0;
  let termMaxFreq = 0;
  let termMinLength = 0xffffffff;
  let prevLast = -1;
  let p = 0; // index into positions
  const skip: number[] = [];
  for (let b = 0; b < nBlocks; b++) {
    const from = b * BLOCK_SIZE;
    const to = Math.min(n, from + BLOCK_SIZE);
    const docStart = scratch.length;
    const posStart = posOut.length;
    let prev = prevLast;
    let maxFreq = 0;
    let minLength = 0xffffffff;
    for (let i = from; i < to; i++) {
      const d = docs[i]!;
      const f = freqs[i]!;
      const delta = d - prev;
      prev = d;
      if (f === 1) scratch.varint(delta * 2 + 1);
      else {
        scratch.varint(delta * 2);
        scratch.varint(f);
      }
      if (f > maxFreq) maxFreq = f;
      const len = lengths[d]!;
      if (len < minLength) minLength = len;
      if (positions !== null) {
        let last = 0;
        for (let k = 0; k < f; k++) {
          const pos = positions[p++]!;
          posOut.varint(pos - last);
          last = pos;
        }
      }
    }
    skip.push(prev - prevLast, scratch.length - docStart, posOut.length - posStart, maxFreq, minLength);
    prevLast = prev;
    if (maxFreq > termMaxFreq) termMaxFreq = maxFreq;
    if (minLength < termMinLength) termMinLength = minLength;
  }
  if (nBlocks > 1) for (const v of skip) out.varint(v); // a single block's summary is the term's own
  out.bytes(scratch.view());
  return { maxFreq: termMaxFreq, minLength: termMinLength };
}

const EMPTY_POSITIONS = new Int32Array(0);

/** A cursor over one term's postings, decoding one block at a time. */
export class BlockPostingsCursor implements PostingsCursor {
  readonly docFreq: number;
  readonly maxFreq: number;
  readonly minLength: number;

  private readonly nBlocks: number;
  private readonly lastDocs: Int32Array;
  private readonly docStarts: Float64Array;
  private readonly posStarts: Float64Array;
  private readonly blockMaxF: Int32Array;
  private readonly blockMinL: Int32Array;

  private block = -1;
  private readonly docs = new Int32Array(BLOCK_SIZE);
  private readonly freqs = new Int32Array(BLOCK_SIZE);
  private count = 0;
  private i = -1;
  private cur = -1;
  private shallow = 0;

  // positions: posPtr is where the positions of doc index posIdx of the current block start
  private posPtr = 0;
  private posIdx = 0;
  private lastPositions: Int32Array | null = null;

  constructor(
    private readonly data: Uint8Array,
    start: number,
    docFreq: number,
    maxFreq: number,
    minLength: number,
    private readonly posData: Uint8Array | null,
    posStart: number,
  ) {
    this.docFreq = docFreq;
    this.maxFreq = maxFreq;
    this.minLength = minLength;
    const nBlocks = Math.ceil(docFreq / BLOCK_SIZE);
    this.nBlocks = nBlocks;
    this.lastDocs = new Int32Array(nBlocks);
    this.docStarts = new Float64Array(nBlocks);
    this.posStarts = new Float64Array(nBlocks);
    this.blockMaxF = new Int32Array(nBlocks);
    this.blockMinL = new Int32Array(nBlocks);
    if (nBlocks === 1) {
      // no skip table: the term's summary is the block's; decode it now to learn its last doc
      this.docStarts[0] = start;
      this.posStarts[0] = posStart;
      this.blockMaxF[0] = maxFreq;
      this.blockMinL[0] = minLength;
      this.decodeBlock(0);
      this.lastDocs[0] = this.docs[this.count - 1]!;
      return;
    }
    const b = data;
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
          case 0: last += x; this.lastDocs[k] = last; break;
          case 1: docBytes[k] = x; break;
          case 2: this.posStarts[k] = posAt; posAt += x; break;
          case 3: this.blockMaxF[k] = x; break;
          default: this.blockMinL[k] = x;
        }
      }
    }
    for (let k = 0; k < nBlocks; k++) {
      this.docStarts[k] = p;
      p += docBytes[k]!;
    }
  }

  doc(): number {
    return this.cur;
  }

  freq(): number {
    return this.freqs[this.i]!;
  }

  private decodeBlock(k: number): void {
    const b = this.data;
    let p = this.docStarts[k]!;
    let prev = k === 0 ? -1 : this.lastDocs[k - 1]!;
    const n = k === this.nBlocks - 1 ? this.docFreq - k * BLOCK_SIZE : BLOCK_SIZE;
    const docs = this.docs;
    const freqs = this.freqs;
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
    this.count = n;
    this.i = -1;
    if (k > this.shallow) this.shallow = k;
    this.posPtr = this.posStarts[k]!;
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

  positions(): Int32Array {
    const posData = this.posData;
    if (posData === null || this.i < 0 || this.cur === NO_MORE_DOCS) return EMPTY_POSITIONS;
    if (this.posIdx === this.i + 1 && this.lastPositions !== null) return this.lastPositions;
    const b = posData;
    let p = this.posPtr;
    const freqs = this.freqs;
    // skip the positions of the docs between the last decoded one and the current one
    for (let j = this.posIdx; j < this.i; j++) {
      let f = freqs[j]!;
      while (f > 0) {
        if (b[p++]! < 0x80) f--;
      }
    }
    const f = freqs[this.i]!;
    const out = new Int32Array(f);
    let last = 0;
    for (let k = 0; k < f; k++) {
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
      last += x;
      out[k] = last;
    }
    this.posPtr = p;
    this.posIdx = this.i + 1;
    this.lastPositions = out;
    return out;
  }

  shallowAdvance(target: number): number {
    const last = this.lastDocs;
    let lo = 0;
    let hi = this.nBlocks;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (last[mid]! < target) lo = mid + 1;
      else hi = mid;
    }
    this.shallow = lo;
    return lo < this.nBlocks ? last[lo]! : NO_MORE_DOCS;
  }

  blockMaxFreq(): number {
    return this.shallow < this.nBlocks ? this.blockMaxF[this.shallow]! : 0;
  }

  blockMinLength(): number {
    return this.shallow < this.nBlocks ? this.blockMinL[this.shallow]! : 0x7fffffff;
  }
}
