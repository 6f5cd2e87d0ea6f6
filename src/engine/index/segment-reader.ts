/**
 * Reading a segment: `SegmentCore` is the immutable content of one segment's files (the `.idx` loaded
 * whole and CRC-checked, the `.sto` read lazily through a descriptor); `SegmentView` pairs a core with
 * the deleted-docs bitset of one generation and is what the query side sees as a `SegmentReader`.
 * Cores are shared by every generation that lists the segment, so a refresh that only adds a segment
 * or changes deletes loads only what changed.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { InternalError } from '../../kernel/errors.js';
import { ByteReader, utf8Decoder } from './bytes.js';
import { MAGIC, verifiedPayload } from './footer.js';
import { BlockPostingsCursor, decodeSkipTable, type SkipTable } from './postings.js';
import { HeadsReader } from './heads.js';
import { StoredReader, type BlockCache } from './store.js';
import { BLOCK_SIZE, hasPositions, type DocId, type PostingsCursor, type SegmentReader, type StoredDocument } from './types.js';

export const IDX_EXT = '.idx';
export const STO_EXT = '.sto';

function decodeStrings(text: Uint8Array, meta: ByteReader, count: number, perEntry: (i: number) => void, name: string): string[] {
  const all = utf8Decoder.decode(text);
  const out = new Array<string>(count);
  let at = 0;
  for (let i = 0; i < count; i++) {
    const len = meta.varint();
    out[i] = all.slice(at, at + len);
    at += len;
    perEntry(i);
  }
  if (at !== all.length) throw new InternalError(`Segment ${name}: string table lengths do not add up.`);
  return out;
}

/** Releases a core's descriptor when its last user is collected, if nothing closed it first. */
const finalizer = new FinalizationRegistry<StoredReader>((store) => store.close());

export class SegmentCore {
  readonly maxDoc: number;
  readonly lengths: Uint32Array;
  readonly cids: BigUint64Array;
  readonly terms: string[];
  readonly docFreqs: Uint32Array;
  readonly postingsStart: Float64Array;
  readonly positionsStart: Float64Array;
  readonly maxFreqs: Uint32Array;
  readonly minLengths: Uint32Array;
  readonly postingsData: Uint8Array;
  readonly positionsData: Uint8Array;
  readonly surfaces: string[];
  readonly surfaceDocFreqs: Uint32Array;
  /** Title, url and host of every doc, in memory. */
  readonly heads: HeadsReader;
  /** The text of every doc, read lazily. */
  readonly store: StoredReader;
  /** Size of the segment's files. */
  readonly bytes: number;
  /** The segment indexes common-word pairs (meta `commonGrams`; absent in segments written before them). */
  readonly commonGrams: boolean;
  private cidMap: Map<bigint, number> | undefined;
  /** Skip tables of the multi-block terms queried so far (decoded once; at most ~36 bytes per block of
   *  the segment, i.e. about 0.3 bytes per posting when every term has been queried). */
  private readonly skipTables = new Map<number, SkipTable>();

  /** Loads `<dir>/<name>.idx` and opens `<name>.sto`, whose decompressed blocks go to `blockCache` (the
   *  index's; none = a private one-block cache). Throws ENOENT errors as they are (refresh retries). */
  constructor(dir: string, readonly name: string, blockCache?: BlockCache) {
    const file = readFileSync(join(dir, name + IDX_EXT));
    const payload = verifiedPayload(file, MAGIC.terms, name + IDX_EXT);
    try {
      const metaLen = Buffer.from(payload.buffer, payload.byteOffset + payload.length - 4, 4).readUInt32LE(0);
      const meta = JSON.parse(utf8Decoder.decode(payload.subarray(payload.length - 4 - metaLen, payload.length - 4))) as {
        maxDoc: number;
        terms: number;
        surfaces: number;
        sections: Record<string, [number, number]>;
        dict: { bytes: number; sections: Record<string, [number, number]> };
        heads: { bytes: number };
        commonGrams?: boolean;
      };
      const sec = (s: string): Uint8Array => {
        const r = meta.sections[s];
        if (r === undefined) throw new InternalError(`Segment ${name} lacks its ${s} section.`);
        return payload.subarray(r[0], r[0] + r[1]);
      };
      const dict = brotliDecompressSync(sec('dict'));
      if (dict.length !== meta.dict.bytes) throw new InternalError(`Segment ${name}: the dictionary decompresses to ${dict.length} bytes, expected ${meta.dict.bytes}.`);
      const dictSec = (s: string): Uint8Array => {
        const r = meta.dict.sections[s];
        if (r === undefined || r[0] + r[1] > dict.length) throw new InternalError(`Segment ${name} lacks its ${s} dictionary section.`);
        return dict.subarray(r[0], r[0] + r[1]);
      };
      const copy = (u: Uint8Array): ArrayBuffer => u.buffer.slice(u.byteOffset, u.byteOffset + u.byteLength) as ArrayBuffer;
      this.maxDoc = meta.maxDoc;
      this.commonGrams = meta.commonGrams === true;
      this.lengths = new Uint32Array(copy(sec('lengths')));
      this.cids = new BigUint64Array(copy(sec('cids')));
      if (this.lengths.length !== this.maxDoc || this.cids.length !== this.maxDoc) throw new InternalError(`Segment ${name}: per-document arrays disagree with maxDoc.`);
      const n = meta.terms;
      this.docFreqs = new Uint32Array(n);
      this.postingsStart = new Float64Array(n + 1);
      this.positionsStart = new Float64Array(n + 1);
      this.maxFreqs = new Uint32Array(n);
      this.minLengths = new Uint32Array(n);
      const tm = new ByteReader(dictSec('termMeta'));
      let p = 0;
      let q = 0;
      this.terms = decodeStrings(dictSec('termText'), tm, n, (i) => {
        this.docFreqs[i] = tm.varint();
        this.postingsStart[i] = p;
        p += tm.varint();
        this.positionsStart[i] = q;
        q += tm.varint();
        this.maxFreqs[i] = tm.varint();
        this.minLengths[i] = tm.varint();
      }, name);
      this.postingsStart[n] = p;
      this.positionsStart[n] = q;
      this.postingsData = sec('postings');
      this.positionsData = sec('positions');
      if (p !== this.postingsData.length || q !== this.positionsData.length) throw new InternalError(`Segment ${name}: term metadata does not cover the postings.`);
      this.heads = new HeadsReader(sec('heads'), meta.heads.bytes, this.maxDoc, name);
      const sm = new ByteReader(dictSec('surfMeta'));
      this.surfaceDocFreqs = new Uint32Array(meta.surfaces);
      this.surfaces = decodeStrings(dictSec('surfText'), sm, meta.surfaces, (i) => {
        this.surfaceDocFreqs[i] = sm.varint();
      }, name);
    } catch (err) {
      if (err instanceof InternalError) throw err;
      throw new InternalError(`Segment ${name} is malformed: ${(err as Error).message}`, { cause: err });
    }
    this.store = new StoredReader(join(dir, name + STO_EXT), blockCache);
    if (this.store.docCount !== this.maxDoc) {
      this.store.close();
      throw new InternalError(`Segment ${name}: stored fields hold ${this.store.docCount} documents, the index ${this.maxDoc}.`);
    }
    this.bytes = file.length + this.store.bytes;
    finalizer.register(this, this.store, this);
  }

  /** Ordinal of `term`, or −1. */
  termOrd(term: string): number {
    const terms = this.terms;
    let lo = 0;
    let hi = terms.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const t = terms[mid]!;
      if (t < term) lo = mid + 1;
      else if (t > term) hi = mid - 1;
      else return mid;
    }
    return -1;
  }

  cursor(ord: number, positions: boolean): BlockPostingsCursor {
    const withPositions = positions && hasPositions(this.terms[ord]!);
    let skip: SkipTable | undefined;
    if (this.docFreqs[ord]! > BLOCK_SIZE) {
      skip = this.skipTables.get(ord);
      if (skip === undefined) {
        skip = decodeSkipTable(this.postingsData, this.postingsStart[ord]!, this.docFreqs[ord]!, this.positionsStart[ord]!);
        this.skipTables.set(ord, skip);
      }
    }
    return new BlockPostingsCursor(
      this.postingsData,
      this.postingsStart[ord]!,
      this.docFreqs[ord]!,
      this.maxFreqs[ord]!,
      this.minLengths[ord]!,
      withPositions ? this.positionsData : null,
      this.positionsStart[ord]!,
      this.lengths,
      skip,
    );
  }

  /** Doc slot holding `cid` (deleted or not: a cid occurs at most once per segment). */
  docForCidAnyState(cid: bigint): number | undefined {
    if (this.cidMap === undefined) {
      const m = new Map<bigint, number>();
      const cids = this.cids;
      for (let i = 0; i < cids.length; i++) m.set(cids[i]!, i);
      this.cidMap = m;
    }
    return this.cidMap.get(cid);
  }

  close(): void {
    finalizer.unregister(this);
    this.store.close();
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
    return ord < 0 ? 0 : this.core.docFreqs[ord]!;
  }

  postings(term: string, options?: { positions?: boolean }): PostingsCursor | undefined {
    const ord = this.core.termOrd(term);
    return ord < 0 ? undefined : this.core.cursor(ord, options?.positions === true);
  }

  length(doc: DocId): number {
    return this.core.lengths[doc]!;
  }

  cid(doc: DocId): bigint {
    return this.core.cids[doc]!;
  }

  docForCid(cid: bigint): DocId | undefined {
    const d = this.core.docForCidAnyState(cid);
    return d !== undefined && !isDeleted(this.deleted, d) ? d : undefined;
  }

  /**
   * The stored document. `text` is read (one block decompressed) only when the property is first read:
   * a result page reads title, url and host of every hit but text only for snippets.
   */
  stored(doc: DocId): StoredDocument {
    const core = this.core;
    if (doc < 0 || doc >= core.maxDoc) throw new InternalError(`Segment ${core.name} has no doc ${doc}.`);
    const h = core.heads.get(doc);
    const out = { cid: core.cids[doc]!, title: h.title } as StoredDocument;
    let text: string | undefined;
    Object.defineProperty(out, 'text', {
      enumerable: true,
      configurable: true,
      get: () => (text ??= core.store.get(doc)),
      set: (v: string) => {
        text = v;
      },
    });
    if (h.url !== undefined) out.url = h.url;
    if (h.host !== undefined) out.host = h.host;
    return out;
  }

  surfaceForms(): Iterable<[form: string, docFreq: number]> {
    // an iterable over the two arrays alone: a searcher keeps it after the segment is merged away
    const forms = this.core.surfaces;
    const dfs = this.core.surfaceDocFreqs;
    return {
      *[Symbol.iterator]() {
        for (let i = 0; i < forms.length; i++) yield [forms[i]!, dfs[i]!];
      },
    };
  }

  /** The segment's terms in ascending order (for prefix and fuzzy expansion). */
  terms(): readonly string[] {
    return this.core.terms;
  }
}
