/**
 * The word model of stored text. A text is cut into tokens, maximal runs of word characters and of
 * other characters, so words and separators alternate; the single space between two words is implied
 * rather than coded (the "spaceless word model"). Each token is written as its rank in its segment's
 * vocabulary, most frequent first, in an end-tagged dense code: a byte ≥ 128 ends a code and bytes below
 * it lead, so the 128 most frequent tokens take one byte, the next 16,384 two, the next 2,097,152 three.
 *
 * store.ts compresses these codes with Brotli in blocks. Brotli over word ranks still finds repeated
 * phrases, while the spelling of words and most spaces are out of its way and its window spans about
 * three times as much text: the Wikipedia extract's text takes ~26 % of its bytes this way with the
 * vocabulary, against 37 % with Brotli over the text (docs/index-format.md, `seg_N.sto`).
 *
 * Which characters are word characters only affects the ratio, never the text: a token's kind is stored
 * with it in the vocabulary, and the decoder puts a space exactly between two consecutive words.
 */
import { InternalError } from '../../kernel/errors.js';
import { ByteReader, ByteWriter, IntBuffer } from './bytes.js';
import { splitsWordsAt } from './stored-token-analysis.js';

/**
 * Per UTF-16 unit, 1 if it is part of a word: ASCII letters and digits, and non-ASCII except those of
 * Latin-1's punctuation and symbols (no-break space … ¿) and of General Punctuation (dashes, quotes, …)
 * that the analyzer splits words at. The others of those ranges it reads as part of a word (`²` and `½`
 * fold to digits, `º` and `µ` to letters): as separators they would make
 * the text that holds them be tokenized whole by its writer (stored-token-analysis.ts), which on the
 * Wikipedia extract was 1 text in 150, "km²" and "½" mostly, and 2.5 % of its characters.
 */
const WORD_UNIT = new Uint8Array(65536).fill(1);
for (let c = 0; c < 0xc0; c++) {
  if (!((c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122))) WORD_UNIT[c] = 0;
}
WORD_UNIT.fill(0, 0x2000, 0x2070);
for (const [from, to] of [[0xa0, 0xc0], [0x2000, 0x2070]] as const) {
  for (let c = from; c < to; c++) if (!splitsWordsAt(String.fromCharCode(c))) WORD_UNIT[c] = 1;
}

const SPACE = 32;

/**
 * The distinct tokens of a segment's texts, each with an id in first-seen order: an open-addressing
 * table hashed while the text is scanned, so a token already seen costs no string (a `Map` keyed by
 * sliced strings made counting the tokens as slow as compressing the text). Tokens are kept as UTF-16 code
 * units in one pool, not as strings: a slice of a text would keep the whole text alive, and a probe
 * compares within two typed arrays.
 */
class TokenTable {
  /** Per slot, where the token's entry starts in `units` + 1 (0 when empty) and the token's hash beside it; at most half the slots are full. */
  private slots = new Int32Array(2 << 12);
  /**
   * Every token's entry, in id order: its length and its id (`ENTRY_HEADER_UNITS`), then its code units.
   * Token `id`'s entry is `units[starts[id], starts[id + 1])`.
   */
  private units = new Uint16Array(1 << 16);
  private starts = new Int32Array(1 << 11);
  word = new Uint8Array(1 << 11);
  size = 0;
  /** The text or token being scanned, as code units (read from a typed array, not with `charCodeAt`: see analyzer.ts `codeUnits`). */
  private text = new Uint16Array(1 << 14);
  /**
   * Tokens of up to `RECENT_UNITS` code units last found, one per slot of `RECENT_SLOTS` chosen by hash,
   * each with its units packed beside it: hash, length, id, then the units two a word. The table's slots
   * and entries take a cache miss each per token once a segment holds ~10^6 tokens; the few
   * thousand frequent ones that make most of a text are found here without touching them.
   */
  private readonly recent = new Int32Array(RECENT_SLOTS * RECENT_STRIDE);

  /**
   * Appends the ids of `text`'s coded tokens to `out`, in order, adding tokens not seen before. A single
   * space between two words is not a token (the decoder restores it); a space at the end of the text,
   * or between a word and a separator, is.
   */
  scan(text: string, out: IntBuffer): void {
    const n = text.length;
    const t = this.load(text);
    out.length = 0;
    let i = 0;
    let prevWord = 0;
    while (i < n) {
      let c = t[i]!;
      const word = WORD_UNIT[c]!;
      let h = Math.imul(0x811c9dc5 ^ c, 0x01000193);
      let j = i + 1;
      for (; j < n; j++) {
        c = t[j]!;
        if (WORD_UNIT[c] !== word) break;
        h = Math.imul(h ^ c, 0x01000193);
      }
      // a lone space after a word and before the next one (a separator run ends at a word or the end)
      if (word === 0 && prevWord === 1 && j === i + 1 && j < n && t[i] === SPACE) {
        prevWord = 0;
        i = j;
        continue;
      }
      out.push(this.id(t, i, j, h, word));
      prevWord = word;
      i = j;
    }
  }

  /** The id of `token`, added if new; `word` is its kind. */
  intern(token: string, word: boolean): number {
    if (token.length === 0) throw new InternalError('An empty stored-text token.');
    return this.internUnits(this.load(token), token.length, word);
  }

  /**
   * The id of the token whose UTF-8 is `utf8[from, to)`, added if new. ASCII, most of a vocabulary, is
   * read as code units directly; other tokens go through a string.
   */
  internUtf8(utf8: Uint8Array, from: number, to: number, word: boolean): number {
    const n = to - from;
    if (n === 0) throw new InternalError('An empty stored-text token.');
    const t = this.scratch(n);
    for (let k = 0; k < n; k++) {
      const b = utf8[from + k]!;
      if (b >= 0x80) return this.intern(Buffer.from(utf8.buffer, utf8.byteOffset + from, n).toString('utf8'), word);
      t[k] = b;
    }
    return this.internUnits(t, n, word);
  }

  /** The id of the token `t[0, n)`, added if new. */
  private internUnits(t: Uint16Array, n: number, word: boolean): number {
    let h = Math.imul(0x811c9dc5 ^ t[0]!, 0x01000193);
    for (let k = 1; k < n; k++) h = Math.imul(h ^ t[k]!, 0x01000193);
    return this.id(t, 0, n, h, word ? 1 : 0);
  }

  /**
   * Bytes of memory the tokens take: per token two slots of 8 bytes (the table is at most half full), its
   * start and kind, and 2 bytes a unit of its entry. Arrays allocated ahead of use are not counted.
   */
  get memoryBytes(): number {
    return 21 * this.size + 2 * this.starts[this.size]!;
  }

  /** The token of `id`. */
  token(id: number): string {
    const from = this.starts[id]! + ENTRY_HEADER_UNITS;
    const to = this.starts[id + 1]!;
    let s = '';
    for (let k = from; k < to; k += 4096) s += String.fromCharCode.apply(null, this.units.subarray(k, Math.min(k + 4096, to)) as unknown as number[]);
    return s;
  }

  /** `text`'s code units, in the reused scratch array. */
  private load(text: string): Uint16Array {
    const t = this.scratch(text.length);
    Buffer.from(t.buffer, 0, text.length * 2).write(text, 0, 'utf16le');
    return t;
  }

  /** The scratch array of code units, grown to hold at least `n`. */
  private scratch(n: number): Uint16Array {
    if (n > this.text.length) this.text = new Uint16Array(Math.max(n, this.text.length * 2));
    return this.text;
  }

  /** The id of `t[i, j)`, whose hash is `h`, added if new. */
  private id(t: Uint16Array, i: number, j: number, h: number, word: number): number {
    const len = j - i;
    if (len > RECENT_UNITS) return this.lookup(t, i, j, h, word);
    const recent = this.recent;
    const r = (h & (RECENT_SLOTS - 1)) * RECENT_STRIDE;
    if (recent[r] === h && recent[r + 1] === len) {
      let k = 0;
      while (k < len && recent[r + 3 + (k >> 1)] === unitPair(t, i + k, j)) k += 2;
      if (k >= len) return recent[r + 2]!;
    }
    const id = this.lookup(t, i, j, h, word);
    recent[r] = h;
    recent[r + 1] = len;
    recent[r + 2] = id;
    for (let k = 0; k < len; k += 2) recent[r + 3 + (k >> 1)] = unitPair(t, i + k, j);
    return id;
  }

  /**
   * `id` in the table itself. A slot leads to the token's entry in `units` (its length, its id, its
   * units), so a probe that finds it reads two places in memory, not three.
   */
  private lookup(t: Uint16Array, i: number, j: number, h: number, word: number): number {
    const len = j - i;
    const units = this.units;
    const slots = this.slots;
    const mask = slots.length - 2;
    let s = (h << 1) & mask;
    for (;;) {
      const e = slots[s]!;
      if (e === 0) break;
      if (slots[s + 1] === h) {
        const at = e - 1;
        if (units[at] === (len & 0xffff) && units[at + 1] === len >>> 16) {
          const from = at + ENTRY_HEADER_UNITS;
          let k = 0;
          while (k < len && units[from + k] === t[i + k]) k++;
          if (k === len) return units[at + 2]! | (units[at + 3]! << 16);
        }
      }
      s = (s + 2) & mask;
    }
    const id = this.size++;
    if (id + 2 > this.starts.length) {
      const grown = new Int32Array(this.starts.length * 2);
      grown.set(this.starts);
      this.starts = grown;
      const kinds = new Uint8Array(grown.length);
      kinds.set(this.word);
      this.word = kinds;
    }
    const at = this.starts[id]!;
    const end = at + ENTRY_HEADER_UNITS + len;
    if (end > units.length) {
      let size = units.length * 2;
      while (size < end) size *= 2;
      const grown = new Uint16Array(size);
      grown.set(units.subarray(0, at));
      this.units = grown;
    }
    const entry = this.units;
    entry[at] = len & 0xffff;
    entry[at + 1] = len >>> 16;
    entry[at + 2] = id & 0xffff;
    entry[at + 3] = id >>> 16;
    entry.set(t.subarray(i, j), at + ENTRY_HEADER_UNITS);
    this.starts[id + 1] = end;
    this.word[id] = word;
    slots[s] = at + 1;
    slots[s + 1] = h;
    if ((id + 1) * 4 > slots.length) this.grow();
    return id;
  }

  /** The table's arrays, for another thread (`restore`); the table must not be used after. */
  state(): TokenTableState {
    return { slots: this.slots, units: this.units, starts: this.starts, word: this.word, size: this.size };
  }

  /** A table with the contents of `state` (the recent tokens start empty). */
  static restore(state: TokenTableState): TokenTable {
    const t = new TokenTable();
    t.slots = state.slots;
    t.units = state.units;
    t.starts = state.starts;
    t.word = state.word;
    t.size = state.size;
    return t;
  }

  /** Doubles the slots and re-inserts every id. */
  private grow(): void {
    const old = this.slots;
    const slots = new Int32Array(old.length * 2);
    const mask = slots.length - 2;
    for (let o = 0; o < old.length; o += 2) {
      if (old[o] === 0) continue;
      let s = (old[o + 1]! << 1) & mask;
      while (slots[s] !== 0) s = (s + 2) & mask;
      slots[s] = old[o]!;
      slots[s + 1] = old[o + 1]!;
    }
    this.slots = slots;
  }
}

/** A token table's contents as plain arrays, which a thread can be handed (`TokenTable.state`). */
export interface TokenTableState {
  slots: Int32Array<ArrayBuffer>;
  units: Uint16Array<ArrayBuffer>;
  starts: Int32Array<ArrayBuffer>;
  word: Uint8Array<ArrayBuffer>;
  size: number;
}

/** A vocabulary builder's contents as plain arrays (`VocabularyBuilder.state`). */
export interface VocabularyBuilderState {
  table: TokenTableState;
  counts: Float64Array<ArrayBuffer>;
}

/** The buffers of `state`, to transfer rather than copy to another thread. */
export function vocabularyBuffers(state: VocabularyBuilderState): ArrayBuffer[] {
  const t = state.table;
  return [t.slots.buffer, t.units.buffer, t.starts.buffer, t.word.buffer, state.counts.buffer];
}

/** Code units before a token's own in its entry of `TokenTable.units`: its length, then its id, each as two units. */
const ENTRY_HEADER_UNITS = 4;

/** Slots of `TokenTable.recent`, and their tokens' most code units (8: most English words and separators). */
const RECENT_SLOTS = 4096;
const RECENT_UNITS = 8;
const RECENT_STRIDE = 3 + RECENT_UNITS / 2;

/** The code units `t[at]` and `t[at + 1]` in one int32, the second 0 when `at + 1` is `end`. */
function unitPair(t: Uint16Array, at: number, end: number): number {
  return t[at]! | ((at + 1 < end ? t[at + 1]! : 0) << 16);
}

/** First rank coded with 1, 2, 3, 4 bytes (end-tagged dense code, base 128). */
const BASE = [0, 128, 128 + 128 ** 2, 128 + 128 ** 2 + 128 ** 3, 128 + 128 ** 2 + 128 ** 3 + 128 ** 4];

/** The most tokens a vocabulary may hold (four-byte codes). */
export const MAX_VOCABULARY = BASE[4]!;

/** Appends the code of `rank` to `w`. */
export function writeRank(w: ByteWriter, rank: number): void {
  w.reserve(4);
  const b = w.buf;
  let n = w.length;
  if (rank < BASE[1]!) {
    b[n++] = 0x80 | rank;
  } else if (rank < BASE[2]!) {
    const x = rank - BASE[1]!;
    b[n++] = x >>> 7;
    b[n++] = 0x80 | (x & 0x7f);
  } else if (rank < BASE[3]!) {
    const x = rank - BASE[2]!;
    b[n++] = x >>> 14;
    b[n++] = (x >>> 7) & 0x7f;
    b[n++] = 0x80 | (x & 0x7f);
  } else if (rank < BASE[4]!) {
    const x = rank - BASE[3]!;
    b[n++] = x >>> 21;
    b[n++] = (x >>> 14) & 0x7f;
    b[n++] = (x >>> 7) & 0x7f;
    b[n++] = 0x80 | (x & 0x7f);
  } else {
    throw new InternalError(`Word rank ${rank} is beyond the stored-text code's ${MAX_VOCABULARY} tokens.`);
  }
  w.length = n;
}

/** Counts the tokens of the texts a segment will store, then ranks them. */
export class VocabularyBuilder {
  private readonly table: TokenTable;
  private counts: Float64Array<ArrayBuffer>;
  private readonly ids = new IntBuffer();

  /** An empty builder, or one with the contents another thread's builder handed over (`state`). */
  constructor(state?: VocabularyBuilderState) {
    this.table = state === undefined ? new TokenTable() : TokenTable.restore(state.table);
    this.counts = state?.counts ?? new Float64Array(1 << 11);
  }

  /** The builder's arrays, for another thread; the builder must not be used after. */
  state(): VocabularyBuilderState {
    return { table: this.table.state(), counts: this.counts };
  }

  /**
   * Counts the tokens of `text`; appends their ids to `ids` (as varints) when given, so the text need
   * not be scanned again to code it (`Vocabulary.rankOfId`). Returns the text's token ids in order, in a
   * buffer that the next call reuses.
   */
  addText(text: string, ids?: ByteWriter): Readonly<IntBuffer> {
    const scanned = this.ids;
    this.table.scan(text, scanned);
    if (this.table.size > this.counts.length) this.growCounts();
    const counts = this.counts;
    const a = scanned.a;
    for (let k = 0; k < scanned.length; k++) counts[a[k]!]!++;
    if (ids !== undefined) for (let k = 0; k < scanned.length; k++) ids.varint(a[k]!);
    return scanned;
  }

  /** Bytes of memory the tokens and their counts take (as `TokenTable.memoryBytes`). */
  get memoryBytes(): number {
    return this.table.memoryBytes + 8 * this.table.size;
  }

  /** The token of id `id` (as `addText` returned it). */
  token(id: number): string {
    return this.table.token(id);
  }

  /** Whether token `id` is a run of word characters (else of other characters). */
  isWord(id: number): boolean {
    return this.table.word[id] === 1;
  }

  /**
   * Counts `count` occurrences of the token of `rank` in another segment's `model` (a merge carries its
   * sources' counts over); returns its id here. The token is read from the model's UTF-8, not as a string.
   */
  addFrom(model: WordModel, rank: number, count: number): number {
    const id = this.table.internUtf8(model.utf8, model.starts[rank]!, model.starts[rank + 1]!, model.isWord(rank));
    if (id === this.counts.length) this.growCounts();
    this.counts[id]! += count;
    return id;
  }

  /** Makes room for a count per token seen. */
  private growCounts(): void {
    let size = this.counts.length * 2;
    while (size < this.table.size) size *= 2;
    const next = new Float64Array(size);
    next.set(this.counts);
    this.counts = next;
  }

  /** The vocabulary, most frequent token first (ties in first-seen order, so a build is reproducible). */
  rank(): Vocabulary {
    const n = this.table.size;
    if (n > MAX_VOCABULARY) throw new InternalError(`A segment's stored text has ${n} distinct tokens, more than ${MAX_VOCABULARY}.`);
    const counts = this.counts;
    const byRank = Array.from({ length: n }, (_, id) => id).sort((a, b) => counts[b]! - counts[a]! || a - b);
    const rankOfId = new Int32Array(n);
    for (let r = 0; r < n; r++) rankOfId[byRank[r]!] = r;
    return new Vocabulary(this.table, rankOfId, byRank, counts);
  }
}

/** A segment's ranked tokens, as the writer codes texts with them. */
export class Vocabulary {
  private readonly ids = new IntBuffer();

  constructor(
    private readonly table: TokenTable,
    /** The rank of each token id the builder gave out. */
    readonly rankOfId: Int32Array,
    /** Token ids in rank order. */
    private readonly byRank: readonly number[],
    /** Occurrences of each token id. */
    private readonly counts: Float64Array,
  ) {}

  get size(): number {
    return this.byRank.length;
  }

  /** Appends the codes of `text`'s tokens to `w` (every token must have been counted). */
  writeText(w: ByteWriter, text: string): void {
    const ids = this.ids;
    this.table.scan(text, ids);
    const a = ids.a;
    const rankOfId = this.rankOfId;
    for (let k = 0; k < ids.length; k++) {
      const id = a[k]!;
      if (id >= rankOfId.length) throw new InternalError('A stored text has a token its segment did not count.');
      writeRank(w, rankOfId[id]!);
    }
  }

  /**
   * The model section: varint tokenCount, per rank varint (utf8Bytes · 2 + isWord) · UTF-8, then per
   * rank varint occurrences (capped at 2^32 − 1), which a merge adds up instead of recounting.
   */
  encodeModel(): Uint8Array {
    const w = new ByteWriter(1 << 16);
    const table = this.table;
    const token = new ByteWriter(1 << 10);
    w.varint(this.byRank.length);
    for (const id of this.byRank) {
      token.length = 0;
      token.utf8(table.token(id));
      w.varint(token.length * 2 + table.word[id]!);
      w.bytes(token.view());
    }
    for (const id of this.byRank) w.varint(Math.min(this.counts[id]!, 0xffffffff));
    return w.view();
  }
}

/** The occurrences of each rank of a model section (see `Vocabulary.encodeModel`). */
export function tokenCounts(model: Uint8Array): Float64Array {
  const r = new ByteReader(model);
  const n = r.varint();
  if (n > MAX_VOCABULARY) throw new RangeError(`model of ${n} tokens`);
  for (let k = 0; k < n; k++) {
    const bytes = Math.floor(r.varint() / 2);
    r.pos += bytes;
  }
  const counts = new Float64Array(n);
  for (let k = 0; k < n; k++) counts[k] = r.varint();
  if (r.pos !== model.length) throw new RangeError('model has trailing bytes');
  return counts;
}

/** Scratch ranks and output of `WordModel.decode`, grown as needed (decoding is synchronous, so one of each suffices). */
const scratchRanks = new IntBuffer();
let scratch = Buffer.allocUnsafe(1 << 16);

/** A segment's vocabulary as the reader decodes with it: every token's UTF-8 in one buffer. */
export class WordModel {
  /** UTF-8 of every token, in rank order. */
  readonly utf8: Uint8Array;
  /** Where each rank's bytes start in `utf8`; `starts[size]` is the end. */
  readonly starts: Uint32Array;
  private readonly word: Uint8Array;
  readonly size: number;

  /** Reads a model section (see `Vocabulary.encodeModel`). */
  constructor(model: Uint8Array) {
    const r = new ByteReader(model);
    const n = r.varint();
    if (n > MAX_VOCABULARY) throw new RangeError(`model of ${n} tokens`);
    this.size = n;
    this.starts = new Uint32Array(n + 1);
    this.word = new Uint8Array(n);
    const bytes = new Uint8Array(model.length);
    let at = 0;
    for (let k = 0; k < n; k++) {
      const v = r.varint();
      const len = Math.floor(v / 2);
      this.word[k] = v & 1;
      bytes.set(r.bytes(len), at);
      this.starts[k] = at;
      at += len;
    }
    this.starts[n] = at;
    for (let k = 0; k < n; k++) r.varint(); // the occurrences, for merges (`tokenCounts`)
    if (r.pos !== model.length) throw new RangeError('model has trailing bytes');
    this.utf8 = bytes.subarray(0, at);
  }

  /** Bytes of memory the model holds. */
  get memoryBytes(): number {
    return this.utf8.length + this.starts.byteLength + this.word.length;
  }

  /** The token of `rank`. */
  token(rank: number): string {
    return Buffer.from(this.utf8.buffer, this.utf8.byteOffset + this.starts[rank]!, this.starts[rank + 1]! - this.starts[rank]!).toString('utf8');
  }

  isWord(rank: number): boolean {
    return this.word[rank] === 1;
  }

  /** The text coded in `codes[start, end)`. Throws a RangeError on a malformed code. */
  decode(codes: Uint8Array, start: number, end: number): string {
    const bytes = this.utf8;
    const starts = this.starts;
    const word = this.word;
    const ranks = scratchRanks;
    ranks.length = 0;
    this.ranks(codes, start, end, ranks);
    const r = ranks.a;
    let out = scratch;
    let n = 0;
    let prevWord = 0;
    for (let i = 0; i < ranks.length; i++) {
      const rank = r[i]!;
      const from = starts[rank]!;
      const to = starts[rank + 1]!;
      const w = word[rank]!;
      if (n + (to - from) + 1 > out.length) {
        const next = Buffer.allocUnsafe(Math.max(out.length * 2, n + (to - from) + 1));
        out.copy(next, 0, 0, n);
        scratch = out = next;
      }
      if (w === 1 && prevWord === 1) out[n++] = SPACE;
      if (to - from < 16) for (let k = from; k < to; k++) out[n++] = bytes[k]!;
      else {
        out.set(bytes.subarray(from, to), n);
        n += to - from;
      }
      prevWord = w;
    }
    return out.toString('utf8', 0, n);
  }

  /** Appends the ranks coded in `codes[start, end)` to `out`'s array from `out.length`. */
  ranks(codes: Uint8Array, start: number, end: number, out: { a: Int32Array; length: number; reserve(n: number): void }): void {
    out.reserve(end - start);
    const a = out.a;
    let n = out.length;
    let p = start;
    while (p < end) {
      let b = codes[p++]!;
      if (b >= 0x80) {
        if (b - 0x80 >= this.size) throw new RangeError(`word rank ${b - 0x80} beyond the model's ${this.size}`);
        a[n++] = b - 0x80;
      } else {
        let x = b;
        let len = 1;
        for (;;) {
          if (p >= end || len > 3) throw new RangeError('word code past its record');
          b = codes[p++]!;
          if (b >= 0x80) break;
          x = x * 128 + b;
          len++;
        }
        const rank = x * 128 + (b - 0x80) + BASE[len]!;
        if (rank >= this.size) throw new RangeError(`word rank ${rank} beyond the model's ${this.size}`);
        a[n++] = rank;
      }
    }
    out.length = n;
  }
}
