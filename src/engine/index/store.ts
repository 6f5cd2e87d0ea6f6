/**
 * Stored text (`<segment>.sto`): each document's text, compressed with Brotli in
 * blocks of about `storedBlockBytes` of raw text, so a hit's fields cost one small decompression and
 * the file stays a fraction of the text. The file is read lazily through a descriptor kept open for the
 * segment's life (on Linux the descriptor keeps an unlinked file readable). Decompressed blocks go to a
 * `BlockCache` bounded in bytes and shared by the segments of one index (`storedCacheBytes`): a result
 * page with snippets otherwise decompresses one whole block per hit, which was 46 % of a SciFact page.
 *
 *   blocks (Brotli) · index: varint blockCount, per block varint docCount · compressedBytes · rawBytes
 *   · u32 indexBytes · footer (QSTO)
 *
 * A document record: varint textBytes · text (UTF-8). Title, url and host live in the `.idx` (heads.ts):
 * a result page needs them for every hit, the text only for snippets and `doc`.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { constants as zc, brotliCompressSync, brotliDecompressSync } from 'node:zlib';
import { InternalError } from '../../kernel/errors.js';
import { ByteReader, ByteWriter, utf8Decoder, utf8Encoder } from './bytes.js';
import { FOOTER_BYTES, MAGIC, readFooter } from './footer.js';
import type { SegmentFile } from './segment-file.js';
import { LruCache } from './lru.js';
import { stepClock, type Steps } from './steps.js';


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
 * Writes a `.sto` file: documents are appended to a raw block that is compressed when it passes
 * `blockBytes`; a merge may also copy a source's compressed block verbatim (its documents all live).
 */
export class StoreWriter {
  private readonly index: number[] = [];
  private readonly raw: ByteWriter;
  private inBlock = 0;
  docCount = 0;

  /** Writes into `file`, block by block. */
  constructor(private readonly options: StoreOptions, private readonly file: SegmentFile) {
    this.raw = new ByteWriter(options.blockBytes + 4096);
  }

  add(text: string): void {
    const raw = this.raw;
    writeString(raw, text);
    this.inBlock++;
    this.docCount++;
    if (raw.length >= this.options.blockBytes) this.flush();
  }

  /** Appends an already compressed block of `docs` documents decompressing to `rawBytes`. */
  copyBlock(compressed: Uint8Array, docs: number, rawBytes: number): void {
    this.flush();
    this.file.bytes(compressed);
    this.index.push(docs, compressed.length, rawBytes);
    this.docCount += docs;
  }

  private flush(): void {
    if (this.inBlock === 0) return;
    const raw = this.raw;
    const compressed = brotliCompressSync(raw.view(), {
      params: {
        [zc.BROTLI_PARAM_QUALITY]: this.options.quality,
        [zc.BROTLI_PARAM_MODE]: zc.BROTLI_MODE_TEXT,
        [zc.BROTLI_PARAM_SIZE_HINT]: raw.length,
      },
    });
    this.file.bytes(compressed);
    this.index.push(this.inBlock, compressed.length, raw.length);
    raw.length = 0;
    this.inBlock = 0;
  }

  /** Writes the block index and the footer. */
  finish(): void {
    this.flush();
    const file = this.file;
    const indexStart = file.position;
    file.out.varint(this.index.length / 3);
    for (const v of this.index) {
      file.out.varint(v);
      file.drain();
    }
    file.out.u32(file.position - indexStart);
    file.footer(MAGIC.stored);
  }
}

/** Encodes the stored fields of `docs` (in doc order) into a complete `.sto` file. */
export function* encodeStore(texts: readonly string[], options: StoreOptions, file: SegmentFile): Steps<void> {
  const w = new StoreWriter(options, file);
  const due = stepClock();
  for (let i = 0; i < texts.length; i++) {
    w.add(texts[i]!);
    if ((i & 63) === 0 && due()) yield;
  }
  w.finish();
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

/** Fetches documents from one `.sto` file. Owns a file descriptor until `close()`. */
export class StoredReader {
  private fd: number;
  private readonly blocks: Block[] = [];
  private readonly cache: BlockCache;
  private readonly cacheId: number;
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
      readFooter(tail, MAGIC.stored, path);
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
      if (offset !== indexStart) throw new InternalError(`Stored-fields file ${path}: blocks do not end where the index starts.`);
      this.docCount = firstDoc;
    } catch (err) {
      closeSync(this.fd);
      throw err;
    }
  }

  get blockCount(): number {
    return this.blocks.length;
  }

  /** Where block `k` lies: its first doc, document count and sizes. */
  blockInfo(k: number): Readonly<Block> {
    return this.blocks[k]!;
  }

  /** The compressed bytes of block `k`, as stored (only the first `bytes` of them when given). */
  readCompressed(k: number, bytes?: number): Buffer {
    const b = this.blocks[k]!;
    const size = bytes === undefined ? b.compressed : Math.min(bytes, b.compressed);
    const compressed = Buffer.allocUnsafe(size);
    let got = 0;
    while (got < size) {
      const n = readSync(this.fd, compressed, got, size - got, b.offset + got);
      if (n === 0) throw new InternalError(`Stored-fields file ${this.path} ends inside block ${k}.`);
      got += n;
    }
    return compressed;
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
    // The raw size is known: one output buffer of that size, instead of 16 KiB chunks concatenated
    // (25-35 % less CPU per 64 KiB block, measured on Debian documentation blocks).
    const raw = brotliDecompressSync(this.readCompressed(k), { chunkSize: Math.max(64, b.raw + 64) });
    if (raw.length !== b.raw) throw new InternalError(`Stored-fields file ${this.path}: block ${k} decompresses to ${raw.length} bytes, expected ${b.raw}.`);
    const entry = this.parse(raw, b, k, true);
    if (k < 2 ** 26) this.cache.set(key, entry);
    return entry;
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

  /** The text of `doc`. */
  get(doc: number): string {
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
    const { raw, starts } = this.block(lo, i);
    const r = new ByteReader(raw, starts[i]!);
    return utf8Decoder.decode(r.bytes(r.varint()));
  }

  close(): void {
    if (this.fd >= 0) {
      closeSync(this.fd);
      this.fd = -1;
      this.cache.dropReader(this.cacheId);
    }
  }
}
