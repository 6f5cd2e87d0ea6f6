/**
 * Writes the postings format (postings-format.ts has the layout): a term's docs, freqs and positions in
 * blocks, full blocks bit-packed, positions Rice-coded, and the skip table when there is more than one
 * block.
 */
import { ByteWriter } from './bytes.js';
import { RICE_ESCAPE, riceParameter } from './postings-format.js';
import { BLOCK_SIZE } from './types.js';

/** Writes bits MSB first into a ByteWriter. Callers `reserve` room first: writes do not check it. */
class BitWriter {
  private acc = 0;
  private n = 0;
  constructor(private readonly out: ByteWriter) {}

  /** Room for `codes` more Rice codes (an escaped code is at most 52 bits). */
  reserve(codes: number): void {
    this.out.reserve(codes * 7 + 8);
  }

  reserveBytes(n: number): void {
    this.out.reserve(n);
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

  /** Pads the last byte with zeros. */
  flush(): void {
    if (this.n > 0) this.write(0, 8 - this.n);
  }
}

/** Bits needed for `v` (0 for 0). */
function bitWidth(v: number): number {
  return 32 - Math.clz32(v);
}

/**
 * A full block, bit-packed (frame of reference): `u8 gapBits · u8 freqBits`, then 128 gaps
 * `doc − previous − 1` of gapBits each, then 128 `freq − 1` of freqBits each, MSB first, padded to a byte.
 */
function packFullBlock(docs: ArrayLike<number>, freqs: ArrayLike<number>, from: number, prevLast: number, out: ByteWriter): void {
  let maxGap = 0;
  let maxF = 0;
  let prev = prevLast;
  for (let i = from; i < from + BLOCK_SIZE; i++) {
    const gap = docs[i]! - prev - 1;
    prev = docs[i]!;
    if (gap > maxGap) maxGap = gap;
    if (freqs[i]! - 1 > maxF) maxF = freqs[i]! - 1;
  }
  const gapBits = bitWidth(maxGap);
  const freqBits = bitWidth(maxF);
  out.byte(gapBits);
  out.byte(freqBits);
  const w = new BitWriter(out);
  w.reserveBytes(Math.ceil((BLOCK_SIZE * (gapBits + freqBits)) / 8) + 8);
  prev = prevLast;
  if (gapBits > 0) {
    for (let i = from; i < from + BLOCK_SIZE; i++) {
      w.writeWide(docs[i]! - prev - 1, gapBits);
      prev = docs[i]!;
    }
  }
  if (freqBits > 0) for (let i = from; i < from + BLOCK_SIZE; i++) w.writeWide(freqs[i]! - 1, freqBits);
  w.flush();
}

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
  const bits = new BitWriter(posOut);
  for (let b = 0; b < nBlocks; b++) {
    const from = b * BLOCK_SIZE;
    const to = Math.min(n, from + BLOCK_SIZE);
    const docStart = scratch.length;
    const posStart = posOut.length;
    let prev = prevLast;
    let maxFreq = 0;
    let minLength = 0xffffffff;
    if (to - from === BLOCK_SIZE) packFullBlock(docs, freqs, from, prevLast, scratch);
    for (let i = from; i < to; i++) {
      const d = docs[i]!;
      const f = freqs[i]!;
      const delta = d - prev;
      prev = d;
      if (to - from < BLOCK_SIZE) {
        if (f === 1) scratch.varint(delta * 2 + 1);
        else {
          scratch.varint(delta * 2);
          scratch.varint(f);
        }
      }
      if (f > maxFreq) maxFreq = f;
      const len = lengths[d]!;
      if (len < minLength) minLength = len;
      if (positions !== null) {
        bits.reserve(f);
        const k = riceParameter(len, f);
        let last = -1;
        for (let j = 0; j < f; j++) {
          const pos = positions[p++]!;
          bits.rice(pos - last - 1, k);
          last = pos;
        }
      }
    }
    bits.flush();
    skip.push(prev - prevLast, scratch.length - docStart, posOut.length - posStart, maxFreq, minLength);
    prevLast = prev;
    if (maxFreq > termMaxFreq) termMaxFreq = maxFreq;
    if (minLength < termMinLength) termMinLength = minLength;
  }
  if (nBlocks > 1) for (const v of skip) out.varint(v); // a single block's summary is the term's own
  out.bytes(scratch.view());
  return { maxFreq: termMaxFreq, minLength: termMinLength };
}
