/**
 * Stored text (`<segment>.sto`): each document's text, coded with its segment's vocabulary of words
 * and separators (word-codes.ts) and compressed with Brotli in blocks of about `storedBlockBytes` of
 * codes, so a hit's text costs one small decompression and the file stays a fraction of the text. The
 * file is read lazily through a descriptor kept open for the segment's life (on Linux the descriptor
 * keeps an unlinked file readable). Decompressed blocks go to a `BlockCache` bounded in bytes and shared
 * by the segments of one index (`storedCacheBytes`): a result page with snippets otherwise decompresses
 * one whole block per hit, which was 46 % of a SciFact page.
 *
 *   blocks (Brotli) · vocabulary (Brotli) · index: varint blockCount, per block varint docCount ·
 *   compressedBytes · rawBytes · u32 indexBytes · footer (QSTW)
 *
 * A document record: varint codeBytes · codes. Segments written before the word model have no
 * vocabulary, records of UTF-8 text and the footer QSTO; they are read as they are and re-coded when
 * merged. Title, url and host live in the `.idx` (heads.ts): a result page needs them for every hit, the
 * text only for snippets and `doc`.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { constants as zc, brotliCompressSync, brotliDecompressSync } from 'node:zlib';
import { InternalError } from '../../kernel/errors.js';
import { ByteReader, ByteWriter, IntBuffer, utf8Decoder, utf8Encoder } from './bytes.js';
import { FOOTER_BYTES, MAGIC, readFooter } from './footer.js';
import type { SegmentFile } from './segment-file.js';
import { LruCache } from './lru.js';
import { stepClock, type Steps } from './steps.js';
import { tokenCounts, VocabularyBuilder, vocabularyBuffers, type Vocabulary, type VocabularyBuilderState, WordModel, writeRank } from './word-codes.js';


export interface StoreOptions {
  /** Raw bytes per compressed block. Larger compresses better but costs more per fetched document. */
  blockBytes: number;
  /** Brotli quality 0–11: index-build speed against file size. */
  quality: number;
}

export function writeString(w: ByteWriter, s: string): void {
  const b = utf8Encoder.encode(s);
  w.varint(b.length);
  w.bytes(b);
}

/** A string that may be absent: varint (bytes + 1) then UTF-8, or a single 0. */
export function writeOptional(w: ByteWriter, s: string | undefined): void {
  if (s === undefined) {
    w.varint(0);
    return;
  }
  const b = utf8Encoder.encode(s);
  w.varint(b.length + 1);
  w.bytes(b);
}

/**
 * Writes a `.sto` file: each document's text is coded with the segment's vocabulary (word-codes.ts) and
 * appended to a raw block that is compressed when it passes `blockBytes` of codes; the vocabulary
 * follows the blocks.
 */
export class StoreWriter {
  private readonly index: number[] = [];
  private readonly raw: ByteWriter;
  private readonly record = new ByteWriter(4096);
  private inBlock = 0;
  docCount = 0;

  /** Writes into `file`, block by block, coding texts with `vocabulary` (which has counted them all). */
  constructor(private readonly options: StoreOptions, private readonly file: SegmentFile, private readonly vocabulary: Vocabulary) {
    this.raw = new ByteWriter(options.blockBytes + 4096);
  }

  add(text: string): void {
    this.record.length = 0;
    this.vocabulary.writeText(this.record, text);
    this.append();
  }

  /**
   * Adds a document given as tokens of another numbering, `ids[from, to)`, with `rank` mapping them to
   * this vocabulary's ranks: a merge's source ranks, or the ids the vocabulary's builder gave out.
   */
  addMapped(ids: Int32Array, from: number, to: number, rank: Int32Array): void {
    const rec = this.record;
    rec.length = 0;
    for (let i = from; i < to; i++) {
      const r = rank[ids[i]!]!;
      // a source's vocabulary that recorded no occurrence of a token its live text uses
      if (r < 0) throw new InternalError(`A stored text being merged uses a token its segment's vocabulary did not count (a malformed source).`);
      writeRank(rec, r);
    }
    this.append();
  }

  private append(): void {
    const raw = this.raw;
    raw.varint(this.record.length);
    raw.bytes(this.record.view());
    this.inBlock++;
    this.docCount++;
    if (raw.length >= this.options.blockBytes) this.flush();
  }

  private flush(): void {
    if (this.inBlock === 0) return;
    const raw = this.raw;
    const compressed = brotliCompressSync(raw.view(), {
      params: {
        [zc.BROTLI_PARAM_QUALITY]: this.options.quality,
        [zc.BROTLI_PARAM_SIZE_HINT]: raw.length,
      },
    });
    this.file.bytes(compressed);
    this.index.push(this.inBlock, compressed.length, raw.length);
    raw.length = 0;
    this.inBlock = 0;
  }

  /** Writes the vocabulary, the block index and the footer. */
  finish(): void {
    this.flush();
    const model = this.vocabulary.encodeModel();
    this.file.bytes(
      brotliCompressSync(model, {
        params: {
          [zc.BROTLI_PARAM_QUALITY]: this.options.quality,
          [zc.BROTLI_PARAM_LGWIN]: 24,
          [zc.BROTLI_PARAM_SIZE_HINT]: model.length,
        },
      }),
    );
    const file = this.file;
    const indexStart = file.position;
    file.out.varint(this.index.length / 3);
    for (const v of this.index) {
      file.out.varint(v);
      file.drain();
    }
    file.out.u32(file.position - indexStart);
    file.footer(MAGIC.wordStored);
  }
}

/**
 * The texts of a segment being built, scanned into their tokens as they are added: each text's token ids
 * are kept as varints (about a quarter of the text's size) until the vocabulary is ranked, so the text
 * itself need not be kept nor scanned again. The segment's writer reads the analyzer's tokens from the
 * same ids (stored-token-analysis.ts).
 */
export class StoredTextsBuilder {
  private readonly counts = new VocabularyBuilder();
  private readonly scanned = new ByteWriter(1 << 16);
  private readonly ends: number[] = [];

  /** Adds the next document's text; returns its token ids, in a buffer the next call reuses. */
  add(text: string): Readonly<IntBuffer> {
    const ids = this.counts.addText(text, this.scanned);
    this.ends.push(this.scanned.length);
    return ids;
  }

  /** The distinct tokens of the texts added so far. */
  get tokens(): Pick<VocabularyBuilder, 'token' | 'isWord'> {
    return this.counts;
  }

  /** Bytes of memory the texts take: their token ids and the distinct tokens with their counts. */
  get bytes(): number {
    return this.scanned.length + this.counts.memoryBytes;
  }

  /** The texts as plain arrays, for `encodeStoredTexts` here or in another thread; the builder is not used after. */
  seal(): SealedTexts {
    return { vocabulary: this.counts.state(), scanned: this.scanned.view(), ends: Int32Array.from(this.ends) };
  }
}

/** A segment's texts as scanned tokens, sealed for encoding (`StoredTextsBuilder.seal`). */
export interface SealedTexts {
  vocabulary: VocabularyBuilderState;
  /** Each text's token ids as varints, one text after another. */
  scanned: Uint8Array<ArrayBuffer>;
  /** Where each text's ids end in `scanned`. */
  ends: Int32Array<ArrayBuffer>;
}

/** The buffers of `texts`, to transfer rather than copy to another thread. */
export function sealedTextsBuffers(texts: SealedTexts): ArrayBuffer[] {
  return [...vocabularyBuffers(texts.vocabulary), texts.scanned.buffer, texts.ends.buffer];
}

/** Writes the complete `.sto` file of sealed texts, in their order. */
export function* encodeStoredTexts(texts: SealedTexts, options: StoreOptions, file: SegmentFile): Steps<void> {
  const due = stepClock();
  const vocabulary = new VocabularyBuilder(texts.vocabulary).rank();
  const w = new StoreWriter(options, file, vocabulary);
  const bytes = texts.scanned;
  const ends = texts.ends;
  const ids = new IntBuffer();
  let p = 0;
  for (let i = 0; i < ends.length; i++) {
    const end = ends[i]!;
    ids.reserve(end - p);
    const a = ids.a;
    let n = 0;
    while (p < end) {
      // varints `add` wrote, so short and well formed
      let b = bytes[p++]!;
      let v = b & 0x7f;
      for (let shift = 7; b >= 0x80; shift += 7) {
        b = bytes[p++]!;
        v |= (b & 0x7f) << shift;
      }
      a[n++] = v;
    }
    w.addMapped(a, 0, n, vocabulary.rankOfId);
    if ((i & 63) === 0 && due()) yield;
  }
  w.finish();
}

/** The magic a `.sto` file's footer should hold, from bytes ending with it: word-coded or UTF-8. */
export function storeMagic(endingWithFooter: Uint8Array): number {
  const n = endingWithFooter.length;
  if (n < FOOTER_BYTES) return MAGIC.stored;
  const b = endingWithFooter;
  const m = (b[n - FOOTER_BYTES]! | (b[n - FOOTER_BYTES + 1]! << 8) | (b[n - FOOTER_BYTES + 2]! << 16) | (b[n - FOOTER_BYTES + 3]! << 24)) >>> 0;
  return m === MAGIC.wordStored ? MAGIC.wordStored : MAGIC.stored;
}

interface CachedBlock {
  /** The block's raw bytes, or a prefix of them holding its first `docs` documents whole. */
  raw: Uint8Array;
  starts: Int32Array;
  docs: number;
}

/**
 * A least-recently-used cache of decompressed text blocks, bounded by their raw bytes, shared by every
 * `StoredReader` of one index (so the bound is per index, not per segment). A page with snippets reads
 * one block per hit; repeated and popular documents then cost no decompression. A bound of 0 still
 * keeps the block last read (the next hit is often in the same block).
 */
export class BlockCache extends LruCache<CachedBlock> {
  private nextReader = 1;

  constructor(maxBytes: number) {
    super(maxBytes, (b) => b.raw.length);
  }

  /** A fresh key space for one reader: keys are `reader · 2^26 + block` (blocks < 2^26, readers < 2^27). */
  readerId(): number {
    return this.nextReader++ % 2 ** 27;
  }

  /** Drops the blocks of reader `id` (its file is closed). */
  dropReader(id: number): void {
    this.dropRange(id * 2 ** 26, (id + 1) * 2 ** 26);
  }
}

/** Default `storedCacheBytes`: holds SciFact's whole text (7.7 MB) or ~500 blocks of 64 KiB. */
export const DEFAULT_STORED_CACHE_BYTES = 32 * 1024 * 1024;

export interface Block {
  offset: number;
  compressed: number;
  raw: number;
  firstDoc: number;
  docs: number;
}

/**
 * Fetches documents from one `.sto` file: word-coded (`QSTW`, what writers make) or, from segments
 * written before the word model, UTF-8 text (`QSTO`). Owns a file descriptor until `close()`.
 */
export class StoredReader {
  private fd: number;
  private readonly blocks: Block[] = [];
  private readonly cache: BlockCache;
  private readonly cacheId: number;
  /** Where the vocabulary lies, for a word-coded file; `model` holds it once read. */
  private readonly modelAt: { offset: number; bytes: number } | undefined;
  private model: WordModel | undefined;
  /** The block an in-order walk (`ranks`) is in. */
  private walked: { k: number; block: CachedBlock } | undefined;
  /** A document among the first this fraction of its block's is read from a decompressed prefix. */
  static readonly PARTIAL_FRACTION = 0.75;
  /** Compressed bytes read for a prefix, as a multiple of the proportional share. */
  static readonly PARTIAL_MARGIN = 1.2;
  readonly bytes: number;
  readonly docCount: number;

  /** `cache`: the index's shared block cache; without one, a private cache holding one block. */
  constructor(readonly path: string, cache?: BlockCache) {
    this.cache = cache ?? new BlockCache(0);
    this.cacheId = this.cache.readerId();
    this.fd = openSync(path, 'r');
    try {
      const size = fstatSync(this.fd).size;
      this.bytes = size;
      if (size < FOOTER_BYTES + 4) throw new InternalError(`Stored-fields file ${path} is truncated.`);
      const tail = Buffer.alloc(FOOTER_BYTES + 4);
      readSync(this.fd, tail, 0, tail.length, size - tail.length);
      const words = storeMagic(tail) === MAGIC.wordStored;
      readFooter(tail, words ? MAGIC.wordStored : MAGIC.stored, path);
      const indexBytes = tail.readUInt32LE(0);
      const indexStart = size - FOOTER_BYTES - 4 - indexBytes;
      if (indexStart < 0) throw new InternalError(`Stored-fields file ${path} has a bad block index length.`);
      const idx = Buffer.alloc(indexBytes);
      readSync(this.fd, idx, 0, indexBytes, indexStart);
      const r = new ByteReader(idx);
      const n = r.varint();
      let offset = 0;
      let firstDoc = 0;
      for (let k = 0; k < n; k++) {
        const docs = r.varint();
        const compressed = r.varint();
        const raw = r.varint();
        this.blocks.push({ offset, compressed, raw, firstDoc, docs });
        offset += compressed;
        firstDoc += docs;
      }
      if (words ? offset >= indexStart : offset !== indexStart) throw new InternalError(`Stored-fields file ${path}: blocks do not end where the ${words ? 'vocabulary' : 'index'} starts.`);
      this.modelAt = words ? { offset, bytes: indexStart - offset } : undefined;
      this.docCount = firstDoc;
    } catch (err) {
      closeSync(this.fd);
      throw err;
    }
  }

  /**
   * The vocabulary that codes this file's texts, read on first use and kept unless `keep` is false (a
   * merge, which holds it only while it re-codes the texts); undefined for a UTF-8 file.
   */
  wordModel(keep = true): WordModel | undefined {
    if (this.model !== undefined || this.modelAt === undefined) return this.model;
    const model = this.readModel((m) => new WordModel(m));
    if (keep) this.model = model;
    return model;
  }

  /** The occurrences of each rank of the vocabulary in the segment's texts, deleted ones included. */
  tokenCounts(): Float64Array | undefined {
    return this.modelAt === undefined ? undefined : this.readModel(tokenCounts);
  }

  private readModel<T>(parse: (model: Uint8Array) => T): T {
    const { offset, bytes } = this.modelAt!;
    const compressed = this.readAt(offset, bytes, 'its vocabulary');
    try {
      return parse(brotliDecompressSync(compressed));
    } catch (err) {
      throw new InternalError(`Stored-fields file ${this.path} has a malformed vocabulary.`, { cause: err });
    }
  }

  /** `bytes` of the file from `offset`. */
  private readAt(offset: number, bytes: number, what: string): Buffer {
    const out = Buffer.allocUnsafe(bytes);
    let got = 0;
    while (got < bytes) {
      const n = readSync(this.fd, out, got, bytes - got, offset + got);
      if (n === 0) throw new InternalError(`Stored-fields file ${this.path} ends inside ${what}.`);
      got += n;
    }
    return out;
  }

  /** The compressed bytes of block `k`, as stored (only the first `bytes` of them when given). */
  private readCompressed(k: number, bytes?: number): Buffer {
    const b = this.blocks[k]!;
    return this.readAt(b.offset, bytes === undefined ? b.compressed : Math.min(bytes, b.compressed), `block ${k}`);
  }

  /**
   * Block `k` decompressed at least through its document `need`. A document in the first part of a
   * block (`PARTIAL_FRACTION` of its documents) is read by decompressing a proportional prefix of the
   * compressed bytes (Brotli flushes what a truncated stream decodes to), so a cold fetch costs about
   * half a block on average instead of a whole one; the partial block is cached for the documents it
   * holds, and replaced by the whole block when a later one is asked for.
   */
  private block(k: number, need: number): CachedBlock {
    const key = this.cacheId * 2 ** 26 + k;
    const hit = this.cache.get(key);
    if (hit !== undefined && need < hit.docs) return hit;
    const b = this.blocks[k]!;
    const fraction = (need + 1) / b.docs;
    if (fraction <= StoredReader.PARTIAL_FRACTION && (hit === undefined || hit.raw.length < b.raw)) {
      // Documents differ in size, so read a margin beyond the proportional share (slack for short blocks).
      const want = Math.ceil(b.compressed * fraction * StoredReader.PARTIAL_MARGIN) + 512;
      if (want < b.compressed) {
        let part: Buffer | undefined;
        try {
          // Output about proportional to the input read: one buffer of that size, grown only if short.
          const expect = Math.min(b.raw, Math.ceil((b.raw * want) / b.compressed));
          part = brotliDecompressSync(this.readCompressed(k, want), { finishFlush: zc.BROTLI_OPERATION_FLUSH, chunkSize: Math.max(64, expect + 64) });
        } catch {
          part = undefined; // the whole block below decides whether the file is damaged
        }
        if (part !== undefined && part.length < b.raw) {
          const entry = this.parse(part, b, k, false);
          if (need < entry.docs) {
            if (k < 2 ** 26) this.cache.set(key, entry);
            return entry;
          }
        }
      }
    }
    const entry = this.wholeBlock(k);
    if (k < 2 ** 26) this.cache.set(key, entry);
    return entry;
  }

  /** Block `k` decompressed whole and parsed. */
  private wholeBlock(k: number): CachedBlock {
    const b = this.blocks[k]!;
    // The raw size is known: one output buffer of that size, instead of 16 KiB chunks concatenated
    // (25-35 % less CPU per 64 KiB block, measured on Debian documentation blocks).
    const raw = brotliDecompressSync(this.readCompressed(k), { chunkSize: Math.max(64, b.raw + 64) });
    if (raw.length !== b.raw) throw new InternalError(`Stored-fields file ${this.path}: block ${k} decompresses to ${raw.length} bytes, expected ${b.raw}.`);
    return this.parse(raw, b, k, true);
  }

  /** Record starts of the documents wholly inside `raw` (all of them when `whole`, else a prefix). */
  private parse(raw: Uint8Array, b: Block, k: number, whole: boolean): CachedBlock {
    const starts = new Int32Array(b.docs);
    const r = new ByteReader(raw);
    let docs = 0;
    for (; docs < b.docs; docs++) {
      if (!whole && r.pos >= raw.length) break;
      const at = r.pos;
      let n: number;
      try {
        n = r.varint();
      } catch (err) {
        if (whole) throw new InternalError(`Stored-fields file ${this.path}: block ${k} is malformed.`, { cause: err });
        break;
      }
      if (r.pos + n > raw.length) {
        if (whole) throw new InternalError(`Stored-fields file ${this.path}: block ${k} has a record past its end.`);
        break;
      }
      starts[docs] = at;
      r.pos += n;
    }
    if (whole && r.pos !== raw.length) throw new InternalError(`Stored-fields file ${this.path}: block ${k} has trailing bytes.`);
    return { raw, starts, docs };
  }

  /**
   * Block `k` whole, for a walk of the documents in order (a merge): decompressed once, kept until the
   * walk moves on, and kept out of the shared cache, whose blocks are the searches'.
   */
  private sequentialBlock(k: number): CachedBlock {
    const held = this.walked;
    if (held !== undefined && held.k === k) return held.block;
    const block = this.wholeBlock(k);
    this.walked = { k, block };
    return block;
  }

  /** Where `doc`'s record lies: its coded bytes are `raw[start, end)`; `sequential` as for `ranks`. */
  private record(doc: number, sequential = false): { raw: Uint8Array; start: number; end: number } {
    const blocks = this.blocks;
    let lo = 0;
    let hi = blocks.length - 1;
    if (doc < 0 || doc >= this.docCount) throw new InternalError(`Stored document ${doc} is out of range in ${this.path}.`);
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (blocks[mid]!.firstDoc <= doc) lo = mid;
      else hi = mid - 1;
    }
    const i = doc - blocks[lo]!.firstDoc;
    const { raw, starts } = sequential ? this.sequentialBlock(lo) : this.block(lo, i);
    const r = new ByteReader(raw, starts[i]!);
    const n = r.varint();
    return { raw, start: r.pos, end: r.pos + n };
  }

  /** The text of `doc`. */
  get(doc: number): string {
    const { raw, start, end } = this.record(doc);
    const model = this.wordModel();
    if (model === undefined) return utf8Decoder.decode(raw.subarray(start, end));
    try {
      return model.decode(raw, start, end);
    } catch (err) {
      throw new InternalError(`Stored-fields file ${this.path}: document ${doc} is malformed.`, { cause: err });
    }
  }

  /**
   * Appends the vocabulary ranks of `doc`'s tokens to `out` (a word-coded file only), so a merge
   * re-codes a document without decoding its text. Meant for walking the documents in order: blocks are
   * decompressed whole and not cached (see `sequentialBlock`).
   */
  ranks(doc: number, model: WordModel, out: IntBuffer): void {
    const { raw, start, end } = this.record(doc, true);
    try {
      model.ranks(raw, start, end, out);
    } catch (err) {
      throw new InternalError(`Stored-fields file ${this.path}: document ${doc} is malformed.`, { cause: err });
    }
  }

  close(): void {
    if (this.fd >= 0) {
      closeSync(this.fd);
      this.fd = -1;
      this.walked = undefined;
      this.cache.dropReader(this.cacheId);
    }
  }
}
