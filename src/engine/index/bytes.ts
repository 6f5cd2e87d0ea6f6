/**
 * Byte-level encoding shared by every index file: a growable little-endian byte writer and the LEB128
 * varint reader the postings decoder inlines. Varints (not bit-packing) because JS decodes them at
 * several hundred MB/s with no table, and most postings deltas and frequencies fit in one byte.
 */

/** A growable output buffer. Values written as varints must be integers in [0, 2^32). */
export class ByteWriter {
  buf: Uint8Array<ArrayBuffer>;
  length = 0;

  constructor(initialCapacity = 1024) {
    this.buf = new Uint8Array(Math.max(16, initialCapacity));
  }

  /** Makes room for `need` more bytes, so a caller may then write `buf` directly. */
  reserve(need: number): void {
    if (this.length + need > this.buf.length) this.grow(need);
  }

  private grow(need: number): void {
    let cap = this.buf.length * 2;
    while (cap < this.length + need) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }

  varint(v: number): void {
    if (this.length + 5 > this.buf.length) this.grow(5);
    const b = this.buf;
    let n = this.length;
    v >>>= 0;
    while (v >= 0x80) {
      b[n++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    b[n++] = v;
    this.length = n;
  }

  byte(v: number): void {
    if (this.length + 1 > this.buf.length) this.grow(1);
    this.buf[this.length++] = v;
  }

  u32(v: number): void {
    if (this.length + 4 > this.buf.length) this.grow(4);
    const b = this.buf;
    const n = this.length;
    b[n] = v & 0xff;
    b[n + 1] = (v >>> 8) & 0xff;
    b[n + 2] = (v >>> 16) & 0xff;
    b[n + 3] = (v >>> 24) & 0xff;
    this.length = n + 4;
  }

  bytes(src: Uint8Array): void {
    if (this.length + src.length > this.buf.length) this.grow(src.length);
    this.buf.set(src, this.length);
    this.length += src.length;
  }

  /** Appends `s` as UTF-8, a lone surrogate as U+FFFD (as `TextEncoder` would encode `s` on its own). */
  utf8(s: string): void {
    this.reserve(s.length * 3);
    this.length += utf8Encoder.encodeInto(s, this.buf.subarray(this.length)).written;
  }

  /** Pads with zeros to a multiple of `n` (so typed-array sections can be viewed in place). */
  align(n: number): void {
    while (this.length % n !== 0) {
      if (this.length + 1 > this.buf.length) this.grow(1);
      this.buf[this.length++] = 0;
    }
  }

  /** A view of the written bytes (shares memory with the writer until it grows again). */
  view(): Uint8Array<ArrayBuffer> {
    return this.buf.subarray(0, this.length);
  }
}

/** A growable Int32Array. */
export class IntBuffer {
  a: Int32Array<ArrayBuffer> = new Int32Array(1024);
  length = 0;
  push(v: number): void {
    if (this.length === this.a.length) this.reserve(1);
    this.a[this.length++] = v;
  }

  /** Makes room for `n` more values after `length` (`a` may be replaced). */
  reserve(n: number): void {
    if (this.length + n <= this.a.length) return;
    let size = this.a.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Int32Array(size);
    next.set(this.a.subarray(0, this.length));
    this.a = next;
  }

  /** The values pushed (shares memory until the buffer grows again). */
  view(): Int32Array<ArrayBuffer> {
    return this.a.subarray(0, this.length);
  }
}

/** A cursor over bytes for the non-hot paths (metadata, skip tables, stored documents). */
export class ByteReader {
  pos: number;
  constructor(readonly buf: Uint8Array, pos = 0, readonly end = buf.length) {
    this.pos = pos;
  }

  varint(): number {
    const b = this.buf;
    let p = this.pos;
    if (p >= this.end) throw new RangeError('varint past the end of its section');
    let x = b[p++]!;
    if (x < 0x80) {
      this.pos = p;
      return x;
    }
    x &= 0x7f;
    let shift = 7;
    for (;;) {
      if (p >= this.end) throw new RangeError('varint past the end of its section');
      const c = b[p++]!;
      x += (c & 0x7f) * 2 ** shift;
      if (c < 0x80) break;
      shift += 7;
      if (shift > 35) throw new RangeError('varint longer than 5 bytes');
    }
    this.pos = p;
    return x;
  }

  u32(): number {
    const b = this.buf;
    const p = this.pos;
    if (p + 4 > this.end) throw new RangeError('u32 past the end of its section');
    this.pos = p + 4;
    return (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;
  }

  bytes(n: number): Uint8Array {
    if (n < 0 || this.pos + n > this.end) throw new RangeError('byte run past the end of its section');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
}

export const utf8Encoder = new TextEncoder();
export const utf8Decoder = new TextDecoder('utf-8', { fatal: false });
