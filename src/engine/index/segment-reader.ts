/**
 * Reading a segment: `SegmentCore` is the immutable content of one segment's files; `SegmentView` pairs
 * a core with the deleted-docs bitset of one generation and is what the query side sees as a
 * `SegmentReader`. Cores are shared by every generation that lists the segment, so a refresh that only
 * adds a segment or changes deletes loads only what changed.
 *
 * A core holds in memory only what every query needs per document or per term: lengths and cids from
 * its open, heads and the term dictionary packed in blocks (`TermDictionary`) from their first use;
 * surface forms stay in the file until read.
 * Postings and positions stay in the `.idx` file and are read at their offsets, one term at a time,
 * through a descriptor the core keeps open and the index's `TermBytesCache`, as the `.sto`'s text
 * blocks are read through its `BlockCache`.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { brotliDecompressSync, crc32 } from 'node:zlib';
import { InternalError } from '../../kernel/errors.js';
import { ByteReader, utf8Decoder } from './bytes.js';
import { CidFilter } from './cid-filter.js';
import { FOOTER_BYTES, MAGIC, readFooter } from './footer.js';
import { LruCache } from './lru.js';
import { PackedStrings } from './packed-strings.js';
import { newTermInfo, TermDictionary, type TermInfo, type TermKeys } from './term-dictionary.js';
import { BlockPostingsCursor, decodeSkipTable, type SkipTable } from './postings-reader.js';
import { HeadsReader } from './heads.js';
import { StoredReader, type BlockCache } from './store.js';
import { BLOCK_SIZE, shortLengths, type DocId, type PostingsCursor, type SegmentReader, type StoredDocument, type StoredHead } from './types.js';

export const IDX_EXT = '.idx';
export const STO_EXT = '.sto';

/** Bytes read at once when a merge or the check walks a segment's terms in order. */
const SEQUENTIAL_READ_BYTES = 1 << 18;
/** Chunk of the checksum pass at open. */
const CRC_CHUNK_BYTES = 1 << 20;

/** The open descriptors of a core's files (and its cached term bytes), released when the core is
 *  closed or collected. */
interface Files { idx: number; store: StoredReader; cache: TermBytesCache | undefined; cacheKey: number }
const finalizer = new FinalizationRegistry<Files>((f) => closeFiles(f));
function closeFiles(f: Files): void {
  if (f.idx >= 0) closeSync(f.idx);
  f.idx = -1;
  f.store.close();
  f.cache?.drop(f.cacheKey);
}

/** Reads `length` bytes at `offset` of `fd`, all of them, into a buffer of their own (not a slice of
 *  Node's shared pool, which a cached term would keep alive). */
export function readAt(fd: number, offset: number, length: number, name: string): Buffer {
  const out = Buffer.allocUnsafeSlow(length);
  let got = 0;
  while (got < length) {
    const n = readSync(fd, out, got, length - got, offset + got);
    if (n === 0) throw new InternalError(`Segment ${name}: the file ends before byte ${offset + length}.`);
    got += n;
  }
  return out;
}

/** Default `postingsCacheBytes`: the least bound of a cache that grows with the index. */
export const DEFAULT_POSTINGS_CACHE_BYTES = 16 * 1024 * 1024;

/**
 * A growing term cache holds this fraction of its open segments' postings and positions bytes (1/n).
 * What a stream of queries reads of an index grows with it, term by term: the scale bench's 1,028
 * queries read 10–11 % of those bytes at 1M and at 5M documents (docs/benchmarks.md), so a bound that
 * grows with the index keeps the hit rate a fixed one loses as the index grows.
 */
export const POSTINGS_CACHE_SHARE = 8;

/**
 * Postings and positions of recently read terms, an LRU bounded in bytes and shared by the segments of
 * one index. Keys are `core · 2^32 + 2 · ord + section` (core numbers cycle through 2^21, keeping keys
 * exact integers); a core drops its entries when it is closed or collected, long before its number
 * comes round again.
 */
export class TermBytesCache extends LruCache<Uint8Array> {
  private nextCore = 1;

  /** `grows`: the bound follows the index (`fitTo`); otherwise `maxBytes` is fixed. */
  constructor(maxBytes: number, private readonly grows = false) {
    super(maxBytes, (b) => b.length + 64); // with the buffer's own overhead
  }

  /**
   * Raises a growing cache's bound to 1/POSTINGS_CACHE_SHARE of `postingsBytes`, the postings and
   * positions bytes of the segments now open. It never lowers it: the segments a merge replaced held
   * the same terms, and what was read of them is dropped with them.
   */
  fitTo(postingsBytes: number): void {
    if (this.grows) this.atLeast(Math.ceil(postingsBytes / POSTINGS_CACHE_SHARE));
  }

  coreKey(): number {
    return (this.nextCore++ % 2 ** 21) * 2 ** 32;
  }

  override set(key: number, bytes: Uint8Array): void {
    if (bytes.length * 8 <= this.maxBytes) super.set(key, bytes); // a term may take an eighth of the cache at most
  }

  /** Drops the entries of the core whose key base is `core`. */
  drop(core: number): void {
    this.dropRange(core, core + 2 ** 32);
  }
}

/** Where `terms` and `heads` are in the `.idx` ([offset, bytes]), to be decoded on first use. */
interface LazyParts {
  /** The compressed dictionary section, its decompressed size and its term parts (offsets within it). */
  dict: [number, number];
  dictBytes: number;
  termText: [number, number];
  termMeta: [number, number];
  termCount: number;
  heads: [number, number];
  headsBytes: number;
  cids: [number, number];
  /** The postings and positions sections' sizes, which the term metadata must add up to. */
  postingsBytes: number;
  positionsBytes: number;
}

/** A window of a file section read ahead for in-order walks (merges, the check). */
interface Window { from: number; bytes: Buffer }

export class SegmentCore {
  readonly maxDoc: number;
  readonly lengths: Uint32Array;
  private short: Uint16Array | undefined;
  #cids: BigUint64Array | undefined;
  /** Surface forms and their dfs, decoded when read (suggestions and spelling build their own
   *  dictionary from them once per snapshot). */
  readonly surfaces: SurfaceSource;
  /** The text of every doc, read lazily. */
  readonly store: StoredReader;
  /** Size of the segment's files. */
  readonly bytes: number;
  /** The segment indexes common-word pairs (meta `commonGrams`; absent in segments written before them). */
  readonly commonGrams: boolean;
  private readonly files: Files;
  /** File offsets of the postings and positions sections. */
  private readonly postingsAt: number;
  private readonly positionsAt: number;
  private readonly windows: [Window | undefined, Window | undefined] = [undefined, undefined];
  private cidOrder: Uint32Array | undefined;
  private cidFilter: CidFilter | undefined;
  /** Skip tables of the multi-block terms queried so far (decoded once; at most ~36 bytes per block of
   *  the segment, i.e. about 0.3 bytes per posting when every term has been queried). */
  private readonly skipTables = new Map<number, SkipTable>();
  private readonly info = newTermInfo();
  private readonly lazy: LazyParts;
  private termDictionary: TermDictionary | undefined;
  private headsReader: HeadsReader | undefined;

  /** Opens `<dir>/<name>.idx` (checksummed in one streaming pass, unless `checked`: a segment its process
   *  has opened already, read again by a merge's thread) and `<name>.sto`, whose decompressed blocks go
   *  to `blockCache` (the index's; none = a private one-block cache). Throws ENOENT errors as they are
   *  (refresh retries). */
  constructor(dir: string, readonly name: string, blockCache?: BlockCache, termCache?: TermBytesCache, { checked = false } = {}) {
    const file = name + IDX_EXT;
    const fd = openSync(join(dir, file), 'r');
    let store: StoredReader | undefined;
    try {
      const size = fstatSync(fd).size;
      if (size < FOOTER_BYTES + 4) throw new InternalError(`Index file ${file} is too short to hold a footer.`);
      const tail = readAt(fd, size - FOOTER_BYTES - 4, FOOTER_BYTES + 4, name);
      const storedCrc = readFooter(tail, MAGIC.terms, file);
      if (!checked) {
        let crc = 0;
        const chunk = Buffer.allocUnsafe(Math.min(CRC_CHUNK_BYTES, size));
        for (let at = 0; at < size - 4; ) {
          const n = readSync(fd, chunk, 0, Math.min(chunk.length, size - 4 - at), at);
          if (n === 0) throw new InternalError(`Segment ${name}: the file ends early.`);
          crc = crc32(chunk.subarray(0, n), crc);
          at += n;
        }
        if (crc >>> 0 !== storedCrc) throw new InternalError(`Index file ${file} fails its checksum (stored ${storedCrc.toString(16)}, computed ${(crc >>> 0).toString(16)}).`);
      }
      const payloadBytes = size - FOOTER_BYTES;
      const metaLen = tail.readUInt32LE(0);
      if (metaLen > payloadBytes - 4) throw new InternalError(`Segment ${name}: its table of contents overruns the file.`);
      const meta = JSON.parse(utf8Decoder.decode(readAt(fd, payloadBytes - 4 - metaLen, metaLen, name))) as {
        maxDoc: number;
        terms: number;
        surfaces: number;
        sections: Record<string, [number, number]>;
        dict: { bytes: number; sections: Record<string, [number, number]> };
        heads: { bytes: number };
        commonGrams?: boolean;
      };
      const range = (s: string): [number, number] => {
        const r = meta.sections[s];
        if (r === undefined || r[0] < 0 || r[1] < 0 || r[0] + r[1] > payloadBytes) throw new InternalError(`Segment ${name} lacks its ${s} section.`);
        return r;
      };
      const sec = (s: string): Buffer => readAt(fd, range(s)[0], range(s)[1], name);
      const dictRange = (s: string): [number, number] => {
        const r = meta.dict.sections[s];
        if (r === undefined || r[0] < 0 || r[1] < 0 || r[0] + r[1] > meta.dict.bytes) throw new InternalError(`Segment ${name} lacks its ${s} dictionary section.`);
        return r;
      };
      const aligned = (u: Buffer): ArrayBuffer => u.buffer.slice(u.byteOffset, u.byteOffset + u.byteLength) as ArrayBuffer;
      this.maxDoc = meta.maxDoc;
      this.commonGrams = meta.commonGrams === true;
      this.lengths = new Uint32Array(aligned(sec('lengths')));
      const cids = range('cids');
      if (this.lengths.length !== this.maxDoc || cids[1] !== 8 * this.maxDoc) throw new InternalError(`Segment ${name}: per-document arrays disagree with maxDoc.`);
      const [postingsAt, postingsBytes] = range('postings');
      const [positionsAt, positionsBytes] = range('positions');
      this.postingsAt = postingsAt;
      this.positionsAt = positionsAt;
      const dict = range('dict');
      this.lazy = {
        dict, dictBytes: meta.dict.bytes, termText: dictRange('termText'), termMeta: dictRange('termMeta'), termCount: meta.terms,
        heads: range('heads'), headsBytes: meta.heads.bytes, cids, postingsBytes, positionsBytes,
      };
      // Through the core: a reader of the forms keeps the core, and so its descriptor, alive.
      this.surfaces = new SurfaceSource(() => this.readIdx(dict[0], dict[1]), meta.dict.bytes, dictRange('surfText'), dictRange('surfMeta'), meta.surfaces, name);
      store = new StoredReader(join(dir, name + STO_EXT), blockCache);
      if (store.docCount !== this.maxDoc) throw new InternalError(`Segment ${name}: stored fields hold ${store.docCount} documents, the index ${this.maxDoc}.`);
      this.store = store;
      this.bytes = size + store.bytes;
    } catch (err) {
      closeSync(fd);
      store?.close();
      if (err instanceof InternalError || (err as NodeJS.ErrnoException).code === 'ENOENT') throw err;
      throw new InternalError(`Segment ${name} is malformed: ${(err as Error).message}`, { cause: err });
    }
    this.files = { idx: fd, store: this.store, cache: termCache, cacheKey: termCache?.coreKey() ?? 0 };
    finalizer.register(this, this.files, this);
  }

  /**
   * The term dictionary, decompressed and packed on first use, then held. A segment its process only
   * writes (the server's writer, when searches run on worker threads) never holds it: merges read it
   * with `termsOnce`, so a writer's memory does not grow with the vocabulary of every segment it keeps
   * open.
   */
  get terms(): TermDictionary {
    return this.termDictionary ?? this.decodeTerms(true);
  }

  /**
   * The term dictionary for one walk of the terms in order (a merge): the held one, else decoded
   * (holding only the terms of `keys`, when given: a merge thread's share of them) and not held. A
   * forced merge in rounds reads every segment of an index that is still open until its commit: held,
   * their dictionaries would add up to the vocabulary of every round.
   */
  termsOnce(keys?: TermKeys): TermDictionary {
    return this.termDictionary ?? this.decodeTerms(false, keys);
  }

  /** Bytes of the term and surface dictionary decompressed: what a merge holds of the segment while it runs. */
  get dictionaryBytes(): number {
    return this.lazy.dictBytes;
  }

  /** Bytes of the postings and positions sections: what merging the segment's terms reads. */
  get postingsAndPositionsBytes(): number {
    return this.lazy.postingsBytes + this.lazy.positionsBytes;
  }

  /** Title, url and host of every doc, decompressed on first use, then held. */
  get heads(): HeadsReader {
    return (this.headsReader ??= this.decodeHeads());
  }

  /** The heads for one pass (a merge copying them): the held ones, else decoded and not held. */
  headsOnce(): HeadsReader {
    return this.headsReader ?? this.decodeHeads();
  }

  private decodeTerms(keep: boolean, keys?: TermKeys): TermDictionary {
    const l = this.lazy;
    const decoded = this.decoding('dictionary', () => {
      const dict = brotliDecompressSync(this.readIdx(l.dict[0], l.dict[1]));
      if (dict.length !== l.dictBytes) throw new InternalError(`Segment ${this.name}: the dictionary decompresses to ${dict.length} bytes, expected ${l.dictBytes}.`);
      const part = ([at, bytes]: [number, number]) => dict.subarray(at, at + bytes);
      const terms = new TermDictionary(part(l.termText), new ByteReader(part(l.termMeta)), l.termCount, this.name, keys);
      if (terms.postingsBytes !== l.postingsBytes || terms.positionsBytes !== l.positionsBytes) throw new InternalError(`Segment ${this.name}: term metadata does not cover the postings.`);
      return terms;
    });
    if (keep) this.termDictionary = decoded;
    return decoded;
  }

  private decodeHeads(): HeadsReader {
    const [at, bytes] = this.lazy.heads;
    return this.decoding('heads', () => new HeadsReader(this.readIdx(at, bytes), this.lazy.headsBytes, this.maxDoc, this.name));
  }

  /** Decodes now what `terms` and `heads` would decode on first use. */
  warm(): void {
    void this.terms;
    void this.heads;
  }

  /** `decode()`, its failures reported as the segment's (a file that passed its checksum at open). */
  private decoding<T>(what: string, decode: () => T): T {
    try {
      return decode();
    } catch (err) {
      if (err instanceof InternalError) throw err;
      throw new InternalError(`Segment ${this.name}: its ${what} is malformed: ${(err as Error).message}`, { cause: err });
    }
  }

  /** Ordinal of `term`, or −1. */
  termOrd(term: string): number {
    return this.terms.find(term);
  }

  /**
   * `length` bytes at `offset` of the postings (`section` 0) or positions (1) of term `ord`, from the
   * index's term cache when it holds them. `sequential`: the caller walks terms in order (a merge, the
   * check), so a larger window is read ahead, later terms are served from it, and the cache is left alone.
   */
  private read(section: 0 | 1, ord: number, offset: number, length: number, sequential: boolean): Uint8Array {
    const { cache, cacheKey } = this.files;
    if (cache === undefined || sequential) return this.readFile(section, offset, length, sequential);
    const key = cacheKey + 2 * ord + section;
    let bytes = cache.get(key);
    if (bytes === undefined) {
      bytes = this.readFile(section, offset, length, false);
      cache.set(key, bytes);
    }
    return bytes;
  }

  /**
   * Every doc's cid, read on first use: a merge's part thread opens its sources for their postings
   * alone, and at 5M documents their cids would be 40 MB of its memory.
   */
  get cids(): BigUint64Array {
    if (this.#cids === undefined) {
      const [at, bytes] = this.lazy.cids;
      const u = this.readIdx(at, bytes);
      this.#cids = new BigUint64Array(u.buffer.slice(u.byteOffset, u.byteOffset + u.byteLength));
    }
    return this.#cids;
  }

  /** `length` bytes at `offset` of the `.idx`. */
  private readIdx(offset: number, length: number): Buffer {
    if (this.files.idx < 0) throw new InternalError(`Segment ${this.name} is closed.`);
    return readAt(this.files.idx, offset, length, this.name);
  }

  /** `read` from the file (a sequential read from the window read ahead, when it covers the range; never
   *  another read, so that a cached term holds no window alive). */
  private readFile(section: 0 | 1, offset: number, length: number, sequential: boolean): Uint8Array {
    const base = section === 0 ? this.postingsAt : this.positionsAt;
    if (!sequential) return this.readIdx(base + offset, length);
    const w = this.windows[section];
    if (w !== undefined && offset >= w.from && offset + length <= w.from + w.bytes.length) return w.bytes.subarray(offset - w.from, offset - w.from + length);
    const end = section === 0 ? this.lazy.postingsBytes : this.lazy.positionsBytes;
    const bytes = this.readIdx(base + offset, Math.min(end - offset, Math.max(length, SEQUENTIAL_READ_BYTES)));
    this.windows[section] = { from: offset, bytes };
    return bytes.subarray(0, length);
  }

  /** Drops the windows read ahead for an in-order walk (call when the walk is over). */
  endSequential(): void {
    this.windows[0] = undefined;
    this.windows[1] = undefined;
  }

  /** Metadata of term `ord` (in a scratch object, valid until the next call). */
  termInfo(ord: number): TermInfo {
    return this.terms.info(ord, this.info);
  }

  /** `lengths` in 16 bits (types.ts `shortLengths`), built on first use. */
  shortLengths(): Uint16Array {
    return (this.short ??= shortLengths(this.lengths));
  }

  /**
   * A cursor over the postings of term `ord` of `terms` (this segment's dictionary, as `terms` or
   * `termsOnce` gave it); `sequential` as for `read`. `reuse`, a cursor of this segment its caller is
   * done with, is moved to the term and returned instead of a new one (unless the term's skip table is
   * kept for sharing).
   */
  cursor(ord: number, positions: boolean, sequential = false, terms: TermDictionary = this.terms, reuse?: BlockPostingsCursor): BlockPostingsCursor {
    const t = terms.info(ord, this.info);
    const { docFreq, maxFreq, minLength, positionsStart, positionsEnd } = t;
    // a term has positions when it has position bytes: the writer keeps none for `site:` and `gram:` terms
    // (types.ts `hasPositions`) and at least one per document of any other (and the term's text need not
    // be decoded to tell)
    const withPositions = positions && positionsEnd > positionsStart;
    const data = this.read(0, ord, t.postingsStart, t.postingsEnd - t.postingsStart, sequential);
    const pos = withPositions ? this.read(1, ord, positionsStart, positionsEnd - positionsStart, sequential) : null;
    let skip: SkipTable | undefined;
    // a walk in order (a merge, the check) visits each term once: its skip tables are not kept (at a
    // million documents a merge's sources hold hundreds of MB of them)
    if (docFreq > BLOCK_SIZE && !sequential) {
      skip = this.skipTables.get(ord);
      if (skip === undefined) {
        skip = decodeSkipTable(data, 0, docFreq, 0);
        this.skipTables.set(ord, skip);
      }
    }
    if (reuse !== undefined && skip === undefined) {
      reuse.retarget(data, 0, docFreq, maxFreq, minLength, pos, 0);
      return reuse;
    }
    return new BlockPostingsCursor(data, 0, docFreq, maxFreq, minLength, pos, 0, this.lengths, skip);
  }

  /**
   * False when no doc slot holds the cid whose halves (cid-filter.ts) are `lo` and `hi`; true when one may,
   * for `docForCidAnyState` to say. Its filter is made on first use (1–2 bytes a document).
   */
  mayHoldCid(lo: number, hi: number): boolean {
    this.cidFilter ??= CidFilter.of(this.cids);
    return this.cidFilter.mayHold(lo, hi);
  }

  /** Doc slot holding `cid`, deleted or not: the last one when a batch upserted it twice (the earlier
   *  slot is deleted at birth). */
  docForCidAnyState(cid: bigint): number | undefined {
    const cids = this.cids;
    if (this.cidOrder === undefined) {
      // doc slots sorted by cid: 4 bytes per doc, where a Map of bigints costs ~20 times that
      const order = new Uint32Array(cids.length);
      for (let i = 0; i < order.length; i++) order[i] = i;
      order.sort((a, b) => (cids[a]! < cids[b]! ? -1 : cids[a]! > cids[b]! ? 1 : a - b));
      this.cidOrder = order;
    }
    const order = this.cidOrder;
    let lo = 0;
    let hi = order.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const c = cids[order[mid]!]!;
      if (c < cid) lo = mid + 1;
      else if (c > cid) hi = mid - 1;
      else {
        let last = mid;
        while (last + 1 < order.length && cids[order[last + 1]!] === cid) last++;
        return order[last];
      }
    }
    return undefined;
  }

  close(): void {
    finalizer.unregister(this);
    closeFiles(this.files);
  }
}

/**
 * A segment's surface forms, read from the file's compressed dictionary section and decoded on each
 * read: only a snapshot's first suggestion or correction, a merge and the check read them, and each keeps
 * what it needs. Holding the section instead cost a serving process ~2% of the indexed text.
 *
 * A searcher's surface dictionary keeps the sources of its segments (`share`), to subtract the forms of
 * those a merge removed when the next snapshot updates it. Such a source, once its index has dropped the
 * segment (`detach`), reads the section once and lets go of the core, whose descriptor (and the unlinked
 * files behind it) would otherwise live as long as some dictionary remembered the segment. A source no
 * dictionary holds is left alone: it dies with its core, and a writer that serves no suggestions (the
 * server's, whose searches run on workers) reads nothing when its merges drop segments.
 */
export class SurfaceSource {
  #readCompressed: () => Uint8Array;
  #shared = false;
  #dropped = false;

  constructor(
    readCompressed: () => Uint8Array,
    private readonly rawBytes: number,
    private readonly text: [number, number],
    private readonly meta: [number, number],
    readonly length: number,
    private readonly name: string,
  ) {
    this.#readCompressed = readCompressed;
  }

  /** The source, marked as kept beyond its segment's life (a searcher's surface dictionary holds it). */
  share(): this {
    this.#shared = true;
    if (this.#dropped) this.#hold();
    return this;
  }

  /** Its index dropped the segment: a shared source holds the compressed section from now on. */
  detach(): void {
    this.#dropped = true;
    if (this.#shared) this.#hold();
  }

  #hold(): void {
    let compressed: Uint8Array;
    try {
      compressed = this.#readCompressed();
    } catch {
      return; // unreadable now: it keeps reading through the core, which stays open as long as it is needed
    }
    this.#readCompressed = () => compressed;
  }

  /** The forms (ascending) and their dfs. */
  read(): { forms: PackedStrings; dfs: Uint32Array } {
    const dict = brotliDecompressSync(this.#readCompressed());
    if (dict.length !== this.rawBytes) throw new InternalError(`Segment ${this.name}: the dictionary decompresses to ${dict.length} bytes, expected ${this.rawBytes}.`);
    const m = new ByteReader(dict.subarray(this.meta[0], this.meta[0] + this.meta[1]));
    const dfs = new Uint32Array(this.length);
    const forms = PackedStrings.fromUtf16Lengths(dict.subarray(this.text[0], this.text[0] + this.text[1]), this.length, (i) => {
      const len = m.varint();
      dfs[i] = m.varint();
      return len;
    }, this.name);
    return { forms, dfs };
  }

  *[Symbol.iterator](): Iterator<[form: string, docFreq: number]> {
    const { forms, dfs } = this.read();
    for (let i = 0; i < forms.length; i++) yield [forms.at(i), dfs[i]!];
  }
}

/** A bitset of deleted docs: bit set ⇔ deleted. */
export type DeletedBits = Uint8Array;

export function isDeleted(bits: DeletedBits | null, doc: number): boolean {
  return bits !== null && (bits[doc >>> 3]! & (1 << (doc & 7))) !== 0;
}

/** One segment as seen at one generation. */
export class SegmentView implements SegmentReader {
  readonly name: string;
  readonly maxDoc: number;
  readonly liveDocs: number;
  readonly liveLengthSum: number;
  readonly commonGrams: boolean;

  constructor(readonly core: SegmentCore, readonly deleted: DeletedBits | null) {
    this.name = core.name;
    this.maxDoc = core.maxDoc;
    this.commonGrams = core.commonGrams;
    let live = 0;
    let sum = 0;
    const lengths = core.lengths;
    for (let d = 0; d < core.maxDoc; d++) {
      if (!isDeleted(deleted, d)) {
        live++;
        sum += lengths[d]!;
      }
    }
    this.liveDocs = live;
    this.liveLengthSum = sum;
  }

  isLive(doc: DocId): boolean {
    return doc >= 0 && doc < this.maxDoc && !isDeleted(this.deleted, doc);
  }

  docFreq(term: string): number {
    const ord = this.core.termOrd(term);
    return ord < 0 ? 0 : this.core.termInfo(ord).docFreq;
  }

  postings(term: string, options?: { positions?: boolean }): PostingsCursor | undefined {
    const ord = this.core.termOrd(term);
    return ord < 0 ? undefined : this.core.cursor(ord, options?.positions === true);
  }

  length(doc: DocId): number {
    return this.core.lengths[doc]!;
  }

  shortLengths(): Uint16Array {
    return this.core.shortLengths();
  }

  cid(doc: DocId): bigint {
    return this.core.cids[doc]!;
  }

  docForCid(cid: bigint): DocId | undefined {
    const d = this.core.docForCidAnyState(cid);
    return d !== undefined && !isDeleted(this.deleted, d) ? d : undefined;
  }

  /** The whole stored document, as one plain object: its head and its text (one block decompressed). */
  stored(doc: DocId): StoredDocument {
    const { cid, title, url, host } = this.head(doc);
    const out: StoredDocument = { cid, title, text: this.text(doc) };
    if (url !== undefined) out.url = url;
    if (host !== undefined) out.host = host;
    return out;
  }

  /** Title, url and host from the heads held in memory; a result page reads these of every hit. */
  head(doc: DocId): StoredHead {
    const core = this.coreOf(doc);
    const h = core.heads.get(doc);
    const out: StoredHead = { cid: core.cids[doc]!, title: h.title };
    if (h.url !== undefined) out.url = h.url;
    if (h.host !== undefined) out.host = h.host;
    return out;
  }

  /** The text from the stored blocks (only snippets and `doc` need it). */
  text(doc: DocId): string {
    return this.coreOf(doc).store.get(doc);
  }

  /** The core, once `doc` is known to be one of its documents. */
  private coreOf(doc: DocId): SegmentCore {
    const core = this.core;
    if (doc < 0 || doc >= core.maxDoc) throw new InternalError(`Segment ${core.name} has no doc ${doc}.`);
    return core;
  }

  surfaceForms(): Iterable<[form: string, docFreq: number]> {
    // a searcher keeps the source after the segment is merged away (SurfaceSource.share)
    return this.core.surfaces.share();
  }

  /** The segment's terms in ascending order (for prefix and fuzzy expansion). */
  terms(): Iterable<string> {
    return this.core.terms;
  }
}
