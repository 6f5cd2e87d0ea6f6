/**
 * A sorted string table kept as its UTF-8 bytes and one offset per string, instead of one JS string per
 * entry: a segment's term and surface dictionaries (hundreds of thousands of mostly rare terms) cost
 * their bytes plus 4 bytes each, not a string object each. Strings are decoded only when asked for.
 *
 * The table is sorted by UTF-16 code units (JS string order). UTF-8 byte order is code-point order,
 * which differs from it only between U+E000–U+FFFF and the supplementary planes (surrogate pairs sort
 * below U+E000); `find` ranks the lead bytes 0xEE and 0xEF above the 4-byte leads, so byte comparison
 * gives the table's order. Continuation bytes never meet a lead byte at the first difference of two
 * well-formed strings, so only lead bytes need the correction.
 */
import { InternalError } from '../../kernel/errors.js';

const rank = (b: number): number => (b === 0xee || b === 0xef ? b + 0x10 : b);

let scratch = Buffer.allocUnsafe(256);

export class PackedStrings implements Iterable<string> {
  readonly length: number;

  private constructor(private readonly bytes: Buffer, private readonly offsets: Uint32Array) {
    this.length = offsets.length - 1;
  }

  /**
   * The table of `count` strings whose UTF-8 is concatenated in `text`, `utf16Length()` giving each one's
   * length in UTF-16 code units (called once per string, in order, so it may read the string's other
   * metadata too). Copies `text`.
   */
  static fromUtf16Lengths(text: Uint8Array, count: number, utf16Length: (i: number) => number, name: string): PackedStrings {
    const offsets = new Uint32Array(count + 1);
    let at = 0;
    for (let i = 0; i < count; i++) {
      offsets[i] = at;
      let units = utf16Length(i);
      while (units > 0 && at < text.length) {
        const b = text[at]!;
        if (b < 0x80) {
          at += 1;
          units -= 1;
        } else if (b < 0xe0) {
          at += 2;
          units -= 1;
        } else if (b < 0xf0) {
          at += 3;
          units -= 1;
        } else {
          at += 4;
          units -= 2;
        }
      }
      if (units !== 0) throw new InternalError(`Segment ${name}: string table lengths do not add up.`);
    }
    offsets[count] = at;
    if (at !== text.length) throw new InternalError(`Segment ${name}: string table lengths do not add up.`);
    return new PackedStrings(Buffer.from(text), offsets);
  }

  /** Bytes held (text and offsets). */
  get byteSize(): number {
    return this.bytes.length + this.offsets.byteLength;
  }

  at(i: number): string {
    return this.bytes.toString('utf8', this.offsets[i]!, this.offsets[i + 1]!);
  }

  /** Index of `s`, or −1. */
  find(s: string): number {
    if (scratch.length < s.length * 3) scratch = Buffer.allocUnsafe(s.length * 3);
    const key = scratch;
    const klen = key.write(s, 0, 'utf8');
    const bytes = this.bytes;
    const offsets = this.offsets;
    let lo = 0;
    let hi = this.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const a = offsets[mid]!;
      const len = offsets[mid + 1]! - a;
      const n = len < klen ? len : klen;
      let c = 0;
      for (let i = 0; i < n; i++) {
        const x = bytes[a + i]!;
        const y = key[i]!;
        if (x !== y) {
          c = rank(x) - rank(y);
          break;
        }
      }
      if (c === 0) c = len - klen;
      if (c < 0) lo = mid + 1;
      else if (c > 0) hi = mid - 1;
      else return mid;
    }
    return -1;
  }

  *[Symbol.iterator](): Iterator<string> {
    for (let i = 0; i < this.length; i++) yield this.at(i);
  }
}
