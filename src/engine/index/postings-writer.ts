/**
 * Writes the postings format (postings-format.ts has the layout): a term's docs, freqs and positions in
 * blocks, full blocks bit-packed, positions Rice-coded, and the skip table when there is more than one
 * block.
 */
import { ByteWriter } from './bytes.js';
import { RICE_ESCAPE, readBits, riceParameter, type CodedPositions } from './postings-format.js';
import type { ByteSink } from './segment-file.js';
import { stepClock, type Steps } from './steps.js';
import { BLOCK_SIZE, hasPositions } from './types.js';

/** Writes bits MSB first into a ByteWriter. Callers `reserve` room first: writes do not check it. */
class BitWriter {
  private acc = 0;
  private n = 0;
  constructor(private readonly out: ByteWriter) {}

  /** Room for `codes` more Rice codes (an escaped code is at most 52 bits). */
  reserve(codes: number): void {
    this.out.reserve(codes * 7 + 8);
  }

  /** Writes the low `bits` (≤ 31) bits of `v`. */
  writeWide(v: number, bits: number): void {
    if (bits > 24) {
      this.write(v >>> 16, bits - 16);
      this.write(v & 0xffff, 16);
    } else this.write(v, bits);
  }

  /** Writes the low `bits` (≤ 24) bits of `v`. */
  write(v: number, bits: number): void {
    let acc = (this.acc << bits) | v;
    let n = this.n + bits;
    if (n >= 8) {
      const out = this.out;
      const buf = out.buf;
      let len = out.length;
      do {
        n -= 8;
        buf[len++] = (acc >>> n) & 0xff;
      } while (n >= 8);
      out.length = len;
      acc &= (1 << n) - 1;
    }
    this.acc = acc;
    this.n = n;
  }

  rice(v: number, k: number): void {
    const q = v >>> k;
    if (q < RICE_ESCAPE) {
      const unary = ((1 << q) - 1) << 1; // q ones, then a zero
      if (q + 1 + k <= 24) this.write(k > 0 ? (unary << k) | (v & ((1 << k) - 1)) : unary, q + 1 + k);
      else {
        this.write(unary, q + 1);
        this.write(v & ((1 << k) - 1), k);
      }
    } else {
      this.write((1 << RICE_ESCAPE) - 1, RICE_ESCAPE);
      const b = 32 - Math.clz32(v);
      this.write(b, 5);
      if (b > 16) {
        this.write(v >>> 16, b - 16);
        this.write(v & 0xffff, 16);
      } else this.write(v, b);
    }
  }

  /** Appends bits `[from, to)` of `src`: the pending byte completed, then whole bytes, then the rest. */
  copy(src: Uint8Array, from: number, to: number): void {
    const out = this.out;
    out.reserve(((to - from) >>> 3) + 8);
    let p = from;
    if (this.n > 0 && p < to) {
      const m = Math.min(8 - this.n, to - p);
      this.write(readBits(src, p, m), m);
      p += m;
    }
    const bytes = (to - p) >>> 3;
    if (bytes > 0) {
      // the pending byte is empty here: whole bytes of the source, shifted by its bit offset
      const buf = out.buf;
      let len = out.length;
      let i = p >>> 3;
      const s = p & 7;
      if (s === 0) {
        buf.set(src.subarray(i, i + bytes), len);
        len += bytes;
      } else {
        for (const end = len + bytes; len < end; i++) buf[len++] = (src[i]! << s) | (src[i + 1]! >>> (8 - s));
      }
      out.length = len;
      p += bytes * 8;
    }
    if (p < to) this.write(readBits(src, p, to - p), to - p);
  }

  /** Pads the last byte with zeros. */
  flush(): void {
    if (this.n > 0) this.write(0, 8 - this.n);
  }
}

/** Bits needed for `v` (0 for 0). */
function bitWidth(v: number): number {
  return 32 - Math.clz32(v);
}

/** A full block's gaps and `freq − 1`s while it is packed. */
const blockGaps = new Int32Array(BLOCK_SIZE);
const blockFreqs = new Int32Array(BLOCK_SIZE);
const widthCounts = new Int32Array(33);

/**
 * A full block, bit-packed as a patched frame of reference: `u8 gapHead · u8 freqHead`, then 128 gaps
 * `doc − previous − 1`, their exceptions, 128 `freq − 1`, their exceptions. A head is `width | exceptions
 * << 5`: each value's low `width` bits are packed MSB first (128 of them fill whole bytes), and each
 * exception, a value wider than that, adds `u8 index · u8 high bits` (at most 7 of them, at most 8 high
 * bits). One doc far from the previous one, or one freq of hundreds, no longer widens the whole run.
 */
function packFullBlock(docs: ArrayLike<number>, freqs: ArrayLike<number>, from: number, prevLast: number, out: ByteWriter): void {
  let prev = prevLast;
  for (let i = 0; i < BLOCK_SIZE; i++) {
    blockGaps[i] = docs[from + i]! - prev - 1;
    prev = docs[from + i]!;
    blockFreqs[i] = freqs[from + i]! - 1;
  }
  const gapHead = patchedHead(blockGaps, GAP_PATCH_MIN_SAVING);
  const freqHead = patchedHead(blockFreqs, 1);
  out.reserve(2 + 16 * ((gapHead & 31) + (freqHead & 31)) + 4 * MAX_EXCEPTIONS);
  out.byte(gapHead);
  out.byte(freqHead);
  packRun(blockGaps, gapHead, out);
  packRun(blockFreqs, freqHead, out);
}

/** Exceptions a run may have, and the high bits one may carry: a head keeps the count in 3 bits, a patch the bits in a byte. */
const MAX_EXCEPTIONS = 7;
const MAX_EXCEPTION_BITS = 8;

/**
 * Bytes a block's gaps must save to be patched. Patching a gap moves every doc after it, one more pass over
 * the block's docs as it is read (a freq's patch is one write): on the Wikipedia extract, 90 % of the full
 * blocks saved 5 MB of 44 by patching, most of them by 2–14 bytes, and 1–3-word queries took 3–4 % longer;
 * the blocks that save two or more bits of width (a third of them) hold 2.8 MB of the 5.
 */
const GAP_PATCH_MIN_SAVING = 16;

/**
 * The head (`width | exceptions << 5`) that packs 128 values in the fewest bytes (16 per bit of width, 2
 * per exception), if that saves at least `minSaving` bytes over a plain run as wide as the widest value.
 */
function patchedHead(values: Int32Array, minSaving: number): number {
  const counts = widthCounts.fill(0);
  let maxBits = 0;
  for (let i = 0; i < BLOCK_SIZE; i++) {
    const w = bitWidth(values[i]!);
    counts[w]!++;
    if (w > maxBits) maxBits = w;
  }
  let width = maxBits;
  let exceptions = 0;
  let best = 16 * maxBits - minSaving + 1;
  let wider = 0;
  for (let w = maxBits - 1; w >= 0 && maxBits - w <= MAX_EXCEPTION_BITS; w--) {
    wider += counts[w + 1]!;
    if (wider > MAX_EXCEPTIONS) break;
    const cost = 16 * w + 2 * wider;
    if (cost < best) {
      best = cost;
      width = w;
      exceptions = wider;
    }
  }
  return width | (exceptions << 5);
}

/** 128 values' low bits at the head's width (whole bytes), then the exceptions' index and high bits. */
function packRun(values: Int32Array, head: number, out: ByteWriter): void {
  const width = head & 31;
  if (width > 0) {
    const mask = 0xffffffff >>> (32 - width);
    const w = new BitWriter(out);
    for (let i = 0; i < BLOCK_SIZE; i++) w.writeWide(values[i]! & mask, width);
  }
  if (head >>> 5 === 0) return;
  for (let i = 0; i < BLOCK_SIZE; i++) {
    const high = values[i]! >>> width;
    if (high > 0) {
      out.byte(i);
      out.byte(high);
    }
  }
}

/**
 * Writes terms' postings one document at a time, so that what it holds is a term's compressed blocks and
 * one block of docs and freqs, never a term's postings whole: at a million documents the most common
 * word has tens of millions of positions, which as an array were hundreds of MB of a merge's memory. A
 * document's positions are Rice-coded into the positions stream as it is added; its doc and freq wait
 * in the block, which is coded when full (or at the term's end) into the term's block data; the skip
 * table, which precedes the blocks, is written with them when the term ends.
 */
export class TermPostingsWriter {
  private readonly docs = new Int32Array(BLOCK_SIZE);
  private readonly freqs = new Int32Array(BLOCK_SIZE);
  /** Docs in the current block. */
  private n = 0;
  private readonly blocks = new ByteWriter(1 << 12);
  private readonly skip: number[] = [];
  private readonly bits: BitWriter;
  private withPositions = false;
  private docFreq = 0;
  private prevLast = -1;
  private posStart = 0;
  private blockMaxFreq = 0;
  private blockMinLength = 0xffffffff;
  private termMaxFreq = 0;
  private termMinLength = 0xffffffff;
  /**
   * Positions copied as coded and not yet written: bits `[pendingFrom, pendingTo)` of `pendingData`. A
   * merge copies a source's documents one after another, whose codes lie end to end within a block of
   * the source, so they are written in one copy per run instead of one per document.
   */
  private pendingData: Uint8Array | null = null;
  private pendingFrom = 0;
  private pendingTo = 0;

  /**
   * `lengths`: every document's length (the Rice parameters and the block bounds read them); `out`
   * takes each term's postings at its end, `posOut` its positions as they come. `drainPositions` is
   * called between blocks, when `posOut` may be emptied to its file.
   */
  constructor(
    private readonly lengths: ArrayLike<number>,
    private readonly out: ByteWriter,
    private readonly posOut: ByteWriter,
    private readonly drainPositions: () => void = () => {},
  ) {
    this.bits = new BitWriter(posOut);
  }

  /** Starts `term` (whose positions are kept unless it is a `site:` or `gram:` term, types.ts `hasPositions`). */
  begin(term: string): void {
    this.withPositions = hasPositions(term);
    this.pendingData = null;
    this.n = 0;
    this.docFreq = 0;
    this.prevLast = -1;
    this.blocks.length = 0;
    this.skip.length = 0;
    this.termMaxFreq = 0;
    this.termMinLength = 0xffffffff;
    this.startBlock();
  }

  /** Adds the term's next document (ascending), with its positions `positions[from, from + freq)` (ascending; ignored without positions). */
  add(doc: number, freq: number, positions: ArrayLike<number>, from: number): void {
    if (this.withPositions) {
      this.writePending();
      const bits = this.bits;
      bits.reserve(freq);
      const k = riceParameter(this.lengths[doc]!, freq);
      let last = -1;
      for (let j = from, end = from + freq; j < end; j++) {
        const pos = positions[j]!;
        bits.rice(pos - last - 1, k);
        last = pos;
      }
    }
    this.addDoc(doc, freq);
  }

  /**
   * Adds the term's next document with its positions as another segment coded them (`CodedPositions`:
   * the same length and freq, so the same codes), copied rather than decoded and coded again: when they
   * follow the last document's in the same data, the two are copied together, at the block's end or
   * when a document's codes lie elsewhere.
   */
  addCoded(doc: number, freq: number, positions: CodedPositions): void {
    if (this.withPositions) {
      if (positions.data === this.pendingData && positions.from === this.pendingTo) this.pendingTo = positions.to;
      else {
        this.writePending();
        this.pendingData = positions.data;
        this.pendingFrom = positions.from;
        this.pendingTo = positions.to;
      }
    }
    this.addDoc(doc, freq);
  }

  /** Writes the positions copied and not yet written. */
  private writePending(): void {
    if (this.pendingData === null) return;
    this.bits.copy(this.pendingData, this.pendingFrom, this.pendingTo);
    this.pendingData = null;
  }

  private addDoc(doc: number, freq: number): void {
    const len = this.lengths[doc]!;
    if (freq > this.blockMaxFreq) this.blockMaxFreq = freq;
    if (len < this.blockMinLength) this.blockMinLength = len;
    this.docs[this.n] = doc;
    this.freqs[this.n] = freq;
    this.docFreq++;
    if (++this.n === BLOCK_SIZE) this.endBlock();
  }

  /**
   * Ends the term: writes its skip table (when it has more than one block) and its blocks to `out`.
   * Returns its document count (0: nothing was written) and the bounds its dictionary entry keeps.
   */
  finish(): { docFreq: number; maxFreq: number; minLength: number } {
    if (this.n > 0) this.endBlock();
    const out = this.out;
    if (this.skip.length > 5) for (const v of this.skip) out.varint(v); // a single block's summary is the term's own
    out.bytes(this.blocks.view());
    return { docFreq: this.docFreq, maxFreq: this.termMaxFreq, minLength: this.termMinLength };
  }

  private startBlock(): void {
    this.posStart = this.posOut.length;
    this.blockMaxFreq = 0;
    this.blockMinLength = 0xffffffff;
  }

  /** Codes the block's docs and freqs, closes its positions, and records its skip entry. */
  private endBlock(): void {
    const { docs, freqs, n, blocks } = this;
    const docStart = blocks.length;
    if (n === BLOCK_SIZE) packFullBlock(docs, freqs, 0, this.prevLast, blocks);
    else {
      let prev = this.prevLast;
      for (let i = 0; i < n; i++) {
        const delta = docs[i]! - prev;
        prev = docs[i]!;
        if (freqs[i] === 1) blocks.varint(delta * 2 + 1);
        else {
          blocks.varint(delta * 2);
          blocks.varint(freqs[i]!);
        }
      }
    }
    this.writePending();
    this.bits.flush();
    const last = docs[n - 1]!;
    this.skip.push(last - this.prevLast, blocks.length - docStart, this.posOut.length - this.posStart, this.blockMaxFreq, this.blockMinLength);
    this.prevLast = last;
    if (this.blockMaxFreq > this.termMaxFreq) this.termMaxFreq = this.blockMaxFreq;
    if (this.blockMinLength < this.termMinLength) this.termMinLength = this.blockMinLength;
    this.n = 0;
    this.drainPositions();
    this.startBlock();
  }
}

/**
 * Terms written in order: each term's postings to one sink and its positions to another, and its entry of
 * the term dictionary (segment-writer.ts, `termText` and `termMeta`), which holds the term's byte counts
 * rather than offsets. Terms written by two of these, one after the other's range, therefore concatenate:
 * the postings, the positions and the two dictionary parts each appended to the first's.
 */
export class TermsWriter {
  /** UTF-8 of the terms written, concatenated. */
  readonly text = new ByteWriter(1 << 16);
  /** Per term: `utf16Length · docFreq · postingsBytes · positionsBytes · maxFreq · minLength`. */
  readonly meta: ByteWriter;
  /** Terms written (a term none of whose documents was added is left out). */
  count = 0;
  readonly #postings: TermPostingsWriter;

  /** `lengths` as for TermPostingsWriter; `expectedTerms` sizes the metadata's first buffer. */
  constructor(lengths: ArrayLike<number>, private readonly postings: ByteSink, private readonly positions: ByteSink, expectedTerms: number) {
    this.meta = new ByteWriter(expectedTerms * 8 + 16);
    this.#postings = new TermPostingsWriter(lengths, postings.out, positions.out, () => positions.drain());
  }

  /**
   * Writes the terms `produce` yields, in ascending code-unit order: for each, the producer begins it
   * on the postings writer it is given, adds its documents in order, then yields it.
   */
  *write(produce: (w: TermPostingsWriter) => Iterable<string>): Steps<void> {
    const due = stepClock();
    const { postings, positions, text, meta } = this;
    let seen = 0;
    let p0 = postings.position;
    let q0 = positions.position;
    for (const t of produce(this.#postings)) {
      const { docFreq, maxFreq, minLength } = this.#postings.finish();
      if (docFreq > 0) {
        text.utf8(t);
        meta.varint(t.length);
        meta.varint(docFreq);
        meta.varint(postings.position - p0);
        meta.varint(positions.position - q0);
        meta.varint(maxFreq);
        meta.varint(minLength);
        this.count++;
      }
      postings.drain();
      positions.drain();
      p0 = postings.position;
      q0 = positions.position;
      if ((++seen & 255) === 0 && due()) yield;
    }
  }
}
