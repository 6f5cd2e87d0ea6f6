/**
 * A segment's term dictionary as a serving process holds it: terms and their metadata packed in blocks
 * of 16 entries, decoded on lookup. An entry is `varint textBytes · UTF-8 text · varint docFreq ·
 * postingsBytes · positionsBytes · maxFreq · minLength`; per block the memory holds only its byte
 * offset and where its first term's postings and positions start. About 16 bytes per term on the
 * synthetic Wikipedia-like corpus, where a string and five typed-array slots per term took ~60.
 *
 * `find` binary-searches the blocks by their first term and scans one block. Terms are sorted in UTF-16
 * code-unit order and compared as UTF-8 bytes with the lead-byte correction of `PackedStrings`. The last
 * entry decoded is remembered, so a walk in order (a merge, the check) decodes each entry once.
 */
import { InternalError } from '../../kernel/errors.js';
import { ByteWriter, type ByteReader } from './bytes.js';
import { compareUtf8, encodeKey, utf8Length } from './packed-strings.js';

const BLOCK_SHIFT = 4;
const BLOCK = 1 << BLOCK_SHIFT;

/** Lookups a dictionary remembers (`find`): a few queries' terms, ~100 KB at most. */
const RECENT_TERMS = 1024;

/** One term's metadata, as `TermDictionary.info` fills it. */
export interface TermInfo {
  docFreq: number;
  postingsStart: number;
  postingsEnd: number;
  positionsStart: number;
  positionsEnd: number;
  maxFreq: number;
  minLength: number;
}

export const newTermInfo = (): TermInfo => ({ docFreq: 0, postingsStart: 0, postingsEnd: 0, positionsStart: 0, positionsEnd: 0, maxFreq: 0, minLength: 0 });

/** The terms a dictionary holds: those from `from` (inclusive) to `to` (exclusive), in code-unit order. */
export interface TermKeys {
  from?: string;
  to?: string;
}

export class TermDictionary implements Iterable<string> {
  /** Terms of the segment: ordinals run from 0 to `length`, whether or not they are held. */
  readonly length: number;
  /** The ordinals held, [first, end): all of them unless the dictionary was decoded for a range of keys. */
  readonly first: number;
  readonly end: number;
  /** Total bytes of the postings and positions sections the entries cover (all of them, held or not). */
  readonly postingsBytes: number;
  readonly positionsBytes: number;
  private readonly data: Buffer;
  private readonly blockAt: Uint32Array;
  private readonly blockPostings: Float64Array;
  private readonly blockPositions: Float64Array;
  // the entry last positioned on: its ordinal, byte offset, and postings / positions starts
  private ord = -1;
  private entryAt = 0;
  private p = 0;
  private q = 0;
  // fields of the entry at `at`, filled by `parse`
  private textAt = 0;
  private textBytes = 0;
  private next = 0;
  private docFreq = 0;
  private pBytes = 0;
  private qBytes = 0;
  private maxFreq = 0;
  private minLength = 0;
  /** Terms looked up lately and their ordinals (−1: absent), up to RECENT_TERMS. */
  private readonly recent = new Map<string, number>();

  /**
   * Decodes the written form: `text` the terms' UTF-8 concatenated, `meta` per term varints
   * `utf16Length · docFreq · postingsBytes · positionsBytes · maxFreq · minLength`. With `keys`, only the
   * terms in that range are held (a merge thread's share of the terms); every entry is still read, so
   * ordinals and offsets are the segment's.
   */
  constructor(text: Uint8Array, meta: ByteReader, count: number, name: string, keys: TermKeys = {}) {
    const fromKey = keys.from === undefined ? undefined : Buffer.from(keys.from, 'utf8');
    const toKey = keys.to === undefined ? undefined : Buffer.from(keys.to, 'utf8');
    // all of it, or a share of unknown size (grown as needed)
    const out = new ByteWriter(fromKey === undefined && toKey === undefined ? Math.max(1024, text.length + 6 * count) : 1 << 16);
    const blockAt: number[] = [];
    const blockPostings: number[] = [];
    const blockPositions: number[] = [];
    let first = fromKey === undefined ? 0 : -1;
    let end = count;
    let at = 0;
    let p = 0;
    let q = 0;
    for (let i = 0; i < count; i++) {
      const units = meta.varint();
      const bytes = utf8Length(text, at, units, name);
      if (first < 0 && compareUtf8(text, at, bytes, fromKey!, fromKey!.length) >= 0) first = i;
      if (first >= 0 && end === count && toKey !== undefined && compareUtf8(text, at, bytes, toKey, toKey.length) >= 0) end = i;
      const held = first >= 0 && i < end;
      if (held && ((i - first) & (BLOCK - 1)) === 0) {
        blockAt.push(out.length);
        blockPostings.push(p);
        blockPositions.push(q);
      }
      const docFreq = meta.varint();
      const pb = meta.varint();
      const qb = meta.varint();
      const maxFreq = meta.varint();
      const minLength = meta.varint();
      if (held) {
        out.varint(bytes);
        out.bytes(text.subarray(at, at + bytes));
        out.varint(docFreq);
        out.varint(pb);
        out.varint(qb);
        out.varint(maxFreq);
        out.varint(minLength);
      }
      at += bytes;
      p += pb;
      q += qb;
    }
    if (at !== text.length) throw new InternalError(`Segment ${name}: string table lengths do not add up.`);
    if (first < 0) first = count;
    this.length = count;
    this.first = first;
    this.end = Math.max(first, end);
    this.blockAt = Uint32Array.from(blockAt);
    this.blockPostings = Float64Array.from(blockPostings);
    this.blockPositions = Float64Array.from(blockPositions);
    this.postingsBytes = p;
    this.positionsBytes = q;
    this.data = Buffer.from(out.view());
  }

  private varint(): number {
    const d = this.data;
    let b = d[this.next++]!;
    if (b < 0x80) return b;
    let v = b & 0x7f;
    let mul = 0x80;
    for (;;) {
      b = d[this.next++]!;
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 0x80;
    }
  }

  /** Reads the text of the entry at byte `at` into the fields. */
  private parseText(at: number): void {
    this.next = at;
    this.textBytes = this.varint();
    this.textAt = this.next;
    this.next += this.textBytes;
  }

  /** Reads the entry at byte `at` into the fields. */
  private parse(at: number): void {
    this.parseText(at);
    this.docFreq = this.varint();
    this.pBytes = this.varint();
    this.qBytes = this.varint();
    this.maxFreq = this.varint();
    this.minLength = this.varint();
  }

  /** Positions on entry `ord` (parsed), which must be held. */
  private seek(ord: number): void {
    if (ord < this.first || ord >= this.end) throw new InternalError(`No term ${ord} among the ${this.first}–${this.end} held of a dictionary of ${this.length}.`);
    if (ord === this.ord) {
      this.parse(this.entryAt);
      return;
    }
    if (ord === this.ord + 1 && ((ord - this.first) & (BLOCK - 1)) !== 0) {
      this.parse(this.entryAt);
      this.p += this.pBytes;
      this.q += this.qBytes;
      this.entryAt = this.next;
    } else {
      this.toBlock((ord - this.first) >>> BLOCK_SHIFT);
      for (let i = this.ord; i < ord; i++) {
        this.parse(this.entryAt);
        this.p += this.pBytes;
        this.q += this.qBytes;
        this.entryAt = this.next;
      }
    }
    this.ord = ord;
    this.parse(this.entryAt);
  }

  /** Positions on the first entry of block `b` (of the held entries). */
  private toBlock(b: number): void {
    this.ord = this.first + (b << BLOCK_SHIFT);
    this.entryAt = this.blockAt[b]!;
    this.p = this.blockPostings[b]!;
    this.q = this.blockPositions[b]!;
  }

  /** Fills `out` with the metadata of term `ord`. */
  info(ord: number, out: TermInfo): TermInfo {
    this.seek(ord);
    out.docFreq = this.docFreq;
    out.postingsStart = this.p;
    out.postingsEnd = this.p + this.pBytes;
    out.positionsStart = this.q;
    out.positionsEnd = this.q + this.qBytes;
    out.maxFreq = this.maxFreq;
    out.minLength = this.minLength;
    return out;
  }

  at(ord: number): string {
    this.seek(ord);
    return this.data.toString('utf8', this.textAt, this.textAt + this.textBytes);
  }

  /** Ordinal of `term`, or −1 (also when it is not among the held terms). */
  find(term: string): number {
    // a query looks each of its terms up several times (its df, its bitset, its postings to count and
    // again to rank), and queries share terms: a lookup is otherwise a UTF-8 encoding and a search
    let ord = this.recent.get(term);
    if (ord === undefined) {
      ord = this.search(term);
      if (this.recent.size >= RECENT_TERMS) this.recent.clear();
      this.recent.set(term, ord);
    }
    return ord;
  }

  /** Ordinal of the first held term not below `term` in code-unit order (`end` if none). */
  ceiling(term: string): number {
    const [key, klen] = encodeKey(term);
    return this.lowerBound(key, klen)[0];
  }

  private search(term: string): number {
    const [key, klen] = encodeKey(term);
    const [ord, equal] = this.lowerBound(key, klen);
    return equal ? ord : -1;
  }

  /**
   * The first held ordinal whose term is not below the UTF-8 `key[0, klen)`, and whether its term is the
   * key: the blocks' first terms binary-searched, then one block scanned.
   */
  private lowerBound(key: Uint8Array, klen: number): [ord: number, equal: boolean] {
    const data = this.data;
    let lo = 0;
    let hi = this.blockAt.length - 1;
    let block = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      this.parseText(this.blockAt[mid]!);
      const c = compareUtf8(data, this.textAt, this.textBytes, key, klen);
      if (c === 0) {
        this.toBlock(mid);
        return [this.ord, true];
      }
      if (c < 0) {
        block = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (block < 0) return [this.first, false];
    this.toBlock(block);
    const end = Math.min(this.end, this.ord + BLOCK);
    for (let ord = this.ord + 1; ord < end; ord++) {
      this.seek(ord);
      const c = compareUtf8(data, this.textAt, this.textBytes, key, klen);
      if (c >= 0) return [ord, c === 0];
    }
    return [end, false];
  }

  /** The held terms, in order. */
  *[Symbol.iterator](): Iterator<string> {
    for (let i = this.first; i < this.end; i++) yield this.at(i);
  }
}
