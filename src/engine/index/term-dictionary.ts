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

export class TermDictionary implements Iterable<string> {
  readonly length: number;
  /** Total bytes of the postings and positions sections the entries cover. */
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

  /** Decodes the written form: `text` the terms' UTF-8 concatenated, `meta` per term varints
   *  `utf16Length · docFreq · postingsBytes · positionsBytes · maxFreq · minLength`. */
  constructor(text: Uint8Array, meta: ByteReader, count: number, name: string) {
    const out = new ByteWriter(Math.max(1024, text.length + 6 * count));
    const blocks = (count + BLOCK - 1) >>> BLOCK_SHIFT;
    this.blockAt = new Uint32Array(blocks);
    this.blockPostings = new Float64Array(blocks);
    this.blockPositions = new Float64Array(blocks);
    let at = 0;
    let p = 0;
    let q = 0;
    for (let i = 0; i < count; i++) {
      if ((i & (BLOCK - 1)) === 0) {
        const b = i >>> BLOCK_SHIFT;
        this.blockAt[b] = out.length;
        this.blockPostings[b] = p;
        this.blockPositions[b] = q;
      }
      const bytes = utf8Length(text, at, meta.varint(), name);
      out.varint(bytes);
      out.bytes(text.subarray(at, at + bytes));
      at += bytes;
      out.varint(meta.varint());
      const pb = meta.varint();
      const qb = meta.varint();
      out.varint(pb);
      out.varint(qb);
      p += pb;
      q += qb;
      out.varint(meta.varint());
      out.varint(meta.varint());
    }
    if (at !== text.length) throw new InternalError(`Segment ${name}: string table lengths do not add up.`);
    this.length = count;
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

  /** Positions on entry `ord` (parsed). */
  private seek(ord: number): void {
    if (ord === this.ord) {
      this.parse(this.entryAt);
      return;
    }
    if (ord === this.ord + 1 && (ord & (BLOCK - 1)) !== 0) {
      this.parse(this.entryAt);
      this.p += this.pBytes;
      this.q += this.qBytes;
      this.entryAt = this.next;
    } else {
      this.toBlock(ord >>> BLOCK_SHIFT);
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

  /** Positions on the first entry of block `b`. */
  private toBlock(b: number): void {
    this.ord = b << BLOCK_SHIFT;
    this.entryAt = this.blockAt[b]!;
    this.p = this.blockPostings[b]!;
    this.q = this.blockPositions[b]!;
  }

  /** Fills `out` with the metadata of term `ord`. */
  info(ord: number, out: TermInfo): TermInfo {
    if (ord < 0 || ord >= this.length) throw new InternalError(`No term ${ord} in a dictionary of ${this.length}.`);
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

  /** Ordinal of `term`, or −1. */
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

  private search(term: string): number {
    const [key, klen] = encodeKey(term);
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
        return this.ord;
      }
      if (c < 0) {
        block = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (block < 0) return -1;
    this.toBlock(block);
    const first = block << BLOCK_SHIFT;
    const end = Math.min(this.length, first + BLOCK);
    for (let ord = first + 1; ord < end; ord++) {
      this.seek(ord);
      const c = compareUtf8(data, this.textAt, this.textBytes, key, klen);
      if (c === 0) return ord;
      if (c > 0) return -1;
    }
    return -1;
  }

  *[Symbol.iterator](): Iterator<string> {
    for (let i = 0; i < this.length; i++) yield this.at(i);
  }
}
