/**
 * Strings kept as UTF-8 bytes: `PackedStrings`, a table of them with one offset each (a segment's surface
 * forms when read: one string object per form only when asked for), and the byte helpers of the term
 * dictionary (term-dictionary.ts).
 *
 * Tables are sorted by UTF-16 code units (JS string order). UTF-8 byte order is code-point order,
 * which differs from it only between U+E000–U+FFFF and the supplementary planes (surrogate pairs sort
 * below U+E000); `compareUtf8` ranks the lead bytes 0xEE and 0xEF above the 4-byte leads, so byte
 * comparison gives the tables' order. Continuation bytes never meet a lead byte at the first difference
 * of two well-formed strings, so only lead bytes need the correction.
 */
import { InternalError } from '../../kernel/errors.js';

const rank = (b: number): number => (b === 0xee || b === 0xef ? b + 0x10 : b);

/** Compares the `len` bytes at `at` of `bytes` with `key[0, klen)`, in UTF-16 code-unit order of the
 *  strings they encode: negative, zero or positive. */
export function compareUtf8(bytes: Uint8Array, at: number, len: number, key: Uint8Array, klen: number): number {
  const n = len < klen ? len : klen;
  for (let i = 0; i < n; i++) {
    const x = bytes[at + i]!;
    const y = key[i]!;
    if (x !== y) return rank(x) - rank(y);
  }
  return len - klen;
}

let scratch = Buffer.allocUnsafe(256);

/** `s` as UTF-8 in a scratch buffer (valid until the next call) and its length. */
export function encodeKey(s: string): [Buffer, number] {
  if (scratch.length < s.length * 3) scratch = Buffer.allocUnsafe(s.length * 3);
  return [scratch, scratch.write(s, 0, 'utf8')];
}

/** Bytes of the string of `units` UTF-16 code units whose UTF-8 starts at `at` of `text`. */
export function utf8Length(text: Uint8Array, at: number, units: number, name: string): number {
  let end = at;
  while (units > 0 && end < text.length) {
    const b = text[end]!;
    if (b < 0x80) {
      end += 1;
      units -= 1;
    } else if (b < 0xe0) {
      end += 2;
      units -= 1;
    } else if (b < 0xf0) {
      end += 3;
      units -= 1;
    } else {
      end += 4;
      units -= 2;
    }
  }
  if (units !== 0) throw new InternalError(`Segment ${name}: string table lengths do not add up.`);
  return end - at;
}

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
      at += utf8Length(text, at, utf16Length(i), name);
    }
    offsets[count] = at;
    if (at !== text.length) throw new InternalError(`Segment ${name}: string table lengths do not add up.`);
    return new PackedStrings(Buffer.from(text), offsets);
  }

  at(i: number): string {
    return this.bytes.toString('utf8', this.offsets[i]!, this.offsets[i + 1]!);
  }

  *[Symbol.iterator](): Iterator<string> {
    for (let i = 0; i < this.length; i++) yield this.at(i);
  }
}
