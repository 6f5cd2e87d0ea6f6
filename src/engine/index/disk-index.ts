/**
 * `Index`: one directory holding one index — immutable segments, per-commit deletes files and the
 * `MANIFEST` commit point — and `IndexWriter`, the single writer that adds segments, records deletes,
 * merges and switches the manifest. Readers take snapshots (`snapshot()`) that never change;
 * `refresh()` adopts a commit made by another process; `onCommit` tells listeners of both. Searchers are
 * the query side's: `query/reader.ts` extends this class with them (the engine exports that one).
 *
 * Commit protocol (docs/index-format.md): new segment files and deletes files are written tmp → fsync →
 * rename, the directory is fsynced, then the manifest is written the same way and the directory fsynced
 * again. Only then are files no longer named by the new or the previous manifest unlinked. A crash at
 * any point leaves the previous or the new manifest, each naming only complete, durable files.
 */
import { mkdirSync, readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { toCid } from '../../kernel/cid.js';
import { BadRequestError, ConflictError, InternalError, UnavailableError } from '../../kernel/errors.js';
import { countDeleted, deletesFileName, encodeDeletes, readDeletes } from './deletes.js';
import { fsyncDir, faultPoint, isTempName, writeFileDurable } from './directory.js';
import { WriterLock } from './lock.js';
import { EMPTY_MANIFEST, manifestFiles, readManifest, writeManifest, type Manifest, type ManifestSegment } from './manifest.js';
import { findMerges } from './merge-policy.js';
import { mergeSegments } from './merge.js';
import { runCooperatively, runSync } from './steps.js';
import { BlockCache, DEFAULT_STORED_CACHE_BYTES, type StoreOptions } from './store.js';
import { DEFAULT_POSTINGS_CACHE_BYTES, IDX_EXT, isDeleted, SegmentCore, SegmentView, STO_EXT, TermBytesCache, type DeletedBits } from './segment-reader.js';
import { SegmentBuilder, type IndexedDocument } from './segment-writer.js';
import { checkIndex, type CheckReport } from './check.js';
import type { CommitInfo, DocInput, IndexOptions, SegmentReader } from './types.js';

export interface ResolvedIndexOptions {
  maxBufferedBytes: number;
  mergeFactor: number;
  mergeFloorBytes: number;
  maxMergedBytes: number;
  storedBlockBytes: number;
  storedQuality: number;
  storedCacheBytes: number;
  postingsCacheBytes: number;
}

export function resolveIndexOptions(o: IndexOptions = {}): ResolvedIndexOptions {
  const r: ResolvedIndexOptions = {
    maxBufferedBytes: o.maxBufferedBytes ?? 256 * 1024 * 1024,
    mergeFactor: o.mergeFactor ?? 8,
    mergeFloorBytes: o.mergeFloorBytes ?? 2 * 1024 * 1024,
    maxMergedBytes: o.maxMergedBytes ?? 512 * 1024 * 1024,
    storedBlockBytes: o.storedBlockBytes ?? 64 * 1024,
    storedQuality: o.storedQuality ?? 5,
    storedCacheBytes: o.storedCacheBytes ?? DEFAULT_STORED_CACHE_BYTES,
    postingsCacheBytes: o.postingsCacheBytes ?? DEFAULT_POSTINGS_CACHE_BYTES,
  };
  const positive = (k: keyof ResolvedIndexOptions, min: number, max = Number.MAX_SAFE_INTEGER) => {
    const v = r[k];
    if (!Number.isSafeInteger(v) || v < min || v > max) throw new BadRequestError(`Index option ${k} must be an integer in [${min}, ${max}], got ${String(v)}.`, k);
  };
  positive('maxBufferedBytes', 1);
  positive('mergeFactor', 2);
  positive('mergeFloorBytes', 1);
  positive('maxMergedBytes', 0);
  positive('storedBlockBytes', 1);
  positive('storedQuality', 0, 11);
  positive('storedCacheBytes', 0);
  positive('postingsCacheBytes', 0);
  return r;
}

/** A consistent view of one generation: what searchers are built from. */
export interface IndexSnapshot {
  readonly generation: number;
  readonly segments: readonly SegmentReader[];
  /** Live documents. */
  readonly docs: number;
  /** Bytes of the generation's segment files. */
  readonly bytes: number;
}

interface State {
  manifest: Manifest;
  views: SegmentView[];
  snapshot: IndexSnapshot;
}

function toDocument(doc: unknown): IndexedDocument {
  if (typeof doc !== 'object' || doc === null) throw new BadRequestError('A document must be an object with cid, title and text.', 'doc');
  const d = doc as Record<string, unknown>;
  const cid = toCid(d.cid);
  if (typeof d.title !== 'string') throw new BadRequestError(`Document ${cid}: title must be a string, got ${d.title === null ? 'null' : typeof d.title}.`, 'title');
  if (typeof d.text !== 'string') throw new BadRequestError(`Document ${cid}: text must be a string, got ${d.text === null ? 'null' : typeof d.text}.`, 'text');
  const out: IndexedDocument = { cid, title: d.title, text: d.text };
  for (const k of ['url', 'host'] as const) {
    const v = d[k];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') throw new BadRequestError(`Document ${cid}: ${k} must be a string when present, got ${typeof v}.`, k);
    out[k] = v;
  }
  return out;
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function segmentName(n: number): string {
  return `seg_${String(n).padStart(6, '0')}`;
}

/** Whether a file name is one this index manages (and may garbage-collect). */
function isIndexFile(name: string): boolean {
  return name.startsWith('seg_') || isTempName(name);
}

export class Index {
  private state: State;
  private readonly cores = new Map<string, SegmentCore>();
  private readonly listeners = new Set<(info: CommitInfo) => void>();
  private writer: DiskIndexWriter | undefined;
  private closed = false;
  readonly options: ResolvedIndexOptions;
  /** Decompressed text blocks of every segment, bounded by `storedCacheBytes`. */
  private readonly blockCache: BlockCache;
  /** Postings and positions of recently read terms, bounded by `postingsCacheBytes`. */
  private readonly termCache: TermBytesCache;

  protected constructor(readonly dir: string, options: ResolvedIndexOptions) {
    this.options = options;
    this.blockCache = new BlockCache(options.storedCacheBytes);
    this.termCache = new TermBytesCache(options.postingsCacheBytes);
    this.state = { manifest: EMPTY_MANIFEST, views: [], snapshot: { generation: 0, segments: [], docs: 0, bytes: 0 } };
  }

  /** Opens the index in `dir`, creating the directory (and an empty index, generation 0) when none. */
  static async open(dir: string, options?: IndexOptions): Promise<Index> {
    return Index.openAs(dir, options, (d, o) => new Index(d, o));
  }

  /** `open` for a subclass: `make` constructs the instance. */
  protected static async openAs<T extends Index>(dir: string, options: IndexOptions | undefined, make: (dir: string, options: ResolvedIndexOptions) => T): Promise<T> {
    const resolved = resolveIndexOptions(options);
    mkdirSync(dir, { recursive: true });
    const index = make(dir, resolved);
    await index.refresh();
    return index;
  }

  protected assertOpen(): void {
    if (this.closed) throw new UnavailableError(`The index at ${this.dir} is closed.`);
  }

  get generation(): number {
    return this.state.manifest.generation;
  }

  /** The newest commit known here, as an immutable set of segment readers. */
  snapshot(): IndexSnapshot {
    this.assertOpen();
    return this.state.snapshot;
  }

  /** Adopts the newest manifest on disk (another process's commit); true when the generation changed. */
  async refresh(): Promise<boolean> {
    this.assertOpen();
    for (let attempt = 0; ; attempt++) {
      const m = readManifest(this.dir) ?? EMPTY_MANIFEST;
      if (m.generation === this.state.manifest.generation) return false;
      try {
        this.install(m, this.loadViews(m));
        return true;
      } catch (err) {
        // The writer may have collected a file between our reading the manifest and opening it: reread.
        if ((err as NodeJS.ErrnoException).code === 'ENOENT' && attempt < 10) continue;
        throw err;
      }
    }
  }

  private core(name: string): SegmentCore {
    let c = this.cores.get(name);
    if (c === undefined) {
      c = new SegmentCore(this.dir, name, this.blockCache, this.termCache);
      this.cores.set(name, c);
    }
    return c;
  }

  private loadViews(m: Manifest): SegmentView[] {
    const previous = new Map(this.state.manifest.segments.map((s, i) => [s.name, { entry: s, view: this.state.views[i]! }]));
    return m.segments.map((s) => {
      const prev = previous.get(s.name);
      if (prev !== undefined && prev.entry.deletes === s.deletes) return prev.view;
      const core = this.core(s.name);
      const bits = s.deletes === null ? null : readDeletes(this.dir, s.deletes, core.maxDoc);
      return new SegmentView(core, bits);
    });
  }

  /** Makes `m` (already durable) the current state and tells listeners. */
  private install(m: Manifest, views: SegmentView[]): CommitInfo {
    let docs = 0;
    let bytes = 0;
    for (const v of views) {
      docs += v.liveDocs;
      bytes += v.core.bytes;
    }
    const snapshot: IndexSnapshot = Object.freeze({ generation: m.generation, segments: Object.freeze(views.slice()), docs, bytes });
    this.state = { manifest: m, views, snapshot };
    const names = new Set(m.segments.map((s) => s.name));
    for (const name of [...this.cores.keys()]) if (!names.has(name)) this.cores.delete(name); // descriptor closed when unreferenced
    const info: CommitInfo = { generation: m.generation, docs, segments: views.length };
    for (const fn of [...this.listeners]) {
      try {
        fn(info);
      } catch {
        // a listener's failure is its own; the commit stands
      }
    }
    return info;
  }

  /** The exclusive writer. A live writer elsewhere (this process or another) → ConflictError. */
  async openWriter(): Promise<IndexWriter> {
    this.assertOpen();
    const lock = WriterLock.acquire(this.dir);
    try {
      await this.refresh();
      this.collectGarbage(new Set());
    } catch (err) {
      lock.release();
      throw err;
    }
    this.writer = new DiskIndexWriter(this, lock);
    return this.writer;
  }

  onCommit(fn: (info: CommitInfo) => void): () => void {
    this.listeners.add(fn);
    return () => {
      this.listeners.delete(fn);
    };
  }

  /** Verifies every file and invariant of the current commit on disk (see check.ts). */
  check(): CheckReport {
    return checkIndex(this.dir);
  }

  stats(): { docs: number; segments: number; generation: number; bytes: number } {
    const s = this.snapshot();
    return { docs: s.docs, segments: s.segments.length, generation: s.generation, bytes: s.bytes };
  }

  /** Closes the writer (abandoning uncommitted changes) and every file. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    if (this.writer !== undefined) await this.writer.close();
    this.closed = true;
    for (const c of this.cores.values()) c.close();
    this.cores.clear();
    this.listeners.clear();
  }

  // ---- used by the writer, only under the writer lock ----

  /** @internal */ currentLocked(): { manifest: Manifest; views: SegmentView[] } {
    return { manifest: this.state.manifest, views: this.state.views };
  }
  /** @internal */ loadCoreLocked(name: string): SegmentCore {
    return this.core(name);
  }
  /** @internal */ installLocked(m: Manifest, views: SegmentView[]): CommitInfo {
    this.writerCommitLocked();
    return this.install(m, views);
  }
  /** Called under the writer lock just before this process's writer makes a commit current (a hook). */
  protected writerCommitLocked(): void {}
  /** @internal */ writerClosedLocked(w: DiskIndexWriter): void {
    if (this.writer === w) this.writer = undefined;
  }
  /** Unlinks index files named by neither the current nor the `keep` set. @internal */
  collectGarbage(keep: Set<string>): void {
    const live = manifestFiles(this.state.manifest);
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return;
    }
    for (const name of names) {
      if (!isIndexFile(name) || live.has(name) || keep.has(name)) continue;
      try {
        unlinkSync(join(this.dir, name));
      } catch {
        // already gone, or not ours to remove: harmless
      }
    }
  }
}

export interface IndexWriter {
  /** Adds `doc`, replacing at commit any document with the same cid. BadCidError / BadRequestError on bad input. */
  upsert(doc: DocInput): void;
  delete(cid: bigint): void;
  /** Operations since the last commit. */
  readonly pending: number;
  /** Durable when it resolves; `searcher()` sees it after. */
  commit(): Promise<CommitInfo>;
  /** Abandons uncommitted changes and releases the lock. Idempotent. */
  close(): Promise<void>;
}

interface WorkingSegment {
  core: SegmentCore;
  deleted: DeletedBits | null;
  /** Deleted docs changed since the deletes file `deletesFile` was written. */
  dirty: boolean;
  deletesFile: string | null;
}

class DiskIndexWriter implements IndexWriter {
  private builder = new SegmentBuilder();
  private builderDocs = new Map<bigint, number>();
  private builderDeleted: number[] = [];
  /** Cids to delete from every segment older than the builder. */
  private pendingDeletes = new Set<bigint>();
  private working: WorkingSegment[];
  private nextSegment: number;
  private closed = false;
  private failure: unknown;
  private committing = false;
  private inFlight: Promise<void> = Promise.resolve();
  pending = 0;

  constructor(private readonly index: Index, private readonly lock: WriterLock) {
    const { manifest, views } = index.currentLocked();
    this.nextSegment = manifest.nextSegment;
    this.working = views.map((v, i) => ({ core: v.core, deleted: v.deleted, dirty: false, deletesFile: manifest.segments[i]!.deletes }));
  }

  private assertUsable(): void {
    if (this.closed) throw new ConflictError(`The writer of ${this.index.dir} is closed.`);
    if (this.committing) throw new ConflictError(`The writer of ${this.index.dir} is committing; wait for commit() to resolve.`);
    if (this.failure !== undefined) throw new InternalError(`The writer of ${this.index.dir} failed in a commit and must be reopened.`, { cause: this.failure });
  }

  upsert(doc: DocInput): void {
    this.assertUsable();
    const d = toDocument(doc);
    const old = this.builderDocs.get(d.cid);
    if (old !== undefined) this.builderDeleted.push(old);
    this.pendingDeletes.add(d.cid);
    this.builderDocs.set(d.cid, this.builder.add(d));
    this.pending++;
    if (this.builder.bytes >= this.index.options.maxBufferedBytes) {
      try {
        this.flushLocked();
      } catch (err) {
        this.failure = err;
        throw err;
      }
    }
  }

  delete(cid: bigint): void {
    this.assertUsable();
    const c = toCid(cid);
    const old = this.builderDocs.get(c);
    if (old !== undefined) {
      this.builderDeleted.push(old);
      this.builderDocs.delete(c);
    }
    this.pendingDeletes.add(c);
    this.pending++;
  }

  private applyDeletesLocked(cids: Set<bigint>): void {
    if (cids.size === 0) return;
    for (const ws of this.working) {
      for (const cid of cids) {
        const d = ws.core.docForCidAnyState(cid);
        if (d === undefined || isDeleted(ws.deleted, d)) continue;
        if (!ws.dirty) {
          ws.deleted = ws.deleted === null ? new Uint8Array(Math.ceil(ws.core.maxDoc / 8)) : ws.deleted.slice();
          ws.dirty = true;
        }
        ws.deleted![d >>> 3]! |= 1 << (d & 7);
      }
    }
  }

  /** Writes a builder as a new segment (files durable, directory not yet fsynced). */
  private storeOptions(): StoreOptions {
    return { blockBytes: this.index.options.storedBlockBytes, quality: this.index.options.storedQuality };
  }

  /** Writes an encoded segment's files (durable, directory not yet fsynced) and loads it. */
  private writeSegmentLocked({ idx, sto }: { idx: Buffer; sto: Buffer }): SegmentCore {
    const name = segmentName(this.nextSegment++);
    writeFileDurable(this.index.dir, name + STO_EXT, sto);
    writeFileDurable(this.index.dir, name + IDX_EXT, idx);
    faultPoint('segment-written');
    return this.index.loadCoreLocked(name);
  }

  /**
   * Turns the buffered documents into a segment and applies their deletes to the older segments:
   * synchronously when `upsert` overflows the buffer, cooperatively (yielding to the event loop) in
   * `commit()`.
   */
  private flushLocked(): void {
    this.installFlushLocked(this.builder.maxDoc > 0 ? runSync(this.builder.encode(this.storeOptions())) : undefined);
  }

  private async flushCooperativelyLocked(): Promise<void> {
    this.installFlushLocked(this.builder.maxDoc > 0 ? await runCooperatively(this.builder.encode(this.storeOptions())) : undefined);
  }

  private installFlushLocked(encoded: { idx: Buffer; sto: Buffer } | undefined): void {
    this.applyDeletesLocked(this.pendingDeletes);
    this.pendingDeletes = new Set();
    if (encoded !== undefined) {
      const core = this.writeSegmentLocked(encoded);
      let deleted: DeletedBits | null = null;
      if (this.builderDeleted.length > 0) {
        deleted = new Uint8Array(Math.ceil(core.maxDoc / 8));
        for (const d of this.builderDeleted) deleted[d >>> 3]! |= 1 << (d & 7);
      }
      this.working.push({ core, deleted, dirty: deleted !== null, deletesFile: null });
    }
    this.builder = new SegmentBuilder();
    this.builderDocs = new Map();
    this.builderDeleted = [];
  }

  private entry(ws: WorkingSegment): ManifestSegment {
    const deleted = ws.deleted === null ? 0 : countDeleted(ws.deleted);
    return { name: ws.core.name, maxDoc: ws.core.maxDoc, deleted, deletes: ws.deletesFile, bytes: ws.core.bytes };
  }

  private async mergeLocked(): Promise<void> {
    const o = this.index.options;
    for (let round = 0; round < 16; round++) {
      this.working = this.working.filter((ws) => ws.deleted === null || countDeleted(ws.deleted) < ws.core.maxDoc);
      const merges = findMerges(this.working.map((ws) => this.entry(ws)), { mergeFactor: o.mergeFactor, floorBytes: o.mergeFloorBytes, maxMergedBytes: o.maxMergedBytes });
      if (merges.length === 0) return;
      for (const group of merges) {
        const names = new Set(group);
        const sources = this.working.filter((ws) => names.has(ws.core.name));
        const core = this.writeSegmentLocked(await runCooperatively(mergeSegments(sources, this.storeOptions())));
        const at = this.working.findIndex((ws) => names.has(ws.core.name));
        this.working = this.working.filter((ws) => !names.has(ws.core.name));
        this.working.splice(at, 0, { core, deleted: null, dirty: false, deletesFile: null });
        await yieldToEventLoop();
      }
    }
  }

  async commit(): Promise<CommitInfo> {
    this.assertUsable();
    this.committing = true;
    const run = this.commitLocked();
    this.inFlight = run.then(() => undefined, () => undefined);
    return run;
  }

  private async commitLocked(): Promise<CommitInfo> {
    try {
      await this.flushCooperativelyLocked(); // a large commit must not stall queries served by this process
      await yieldToEventLoop();
      await this.mergeLocked();
      const { manifest: prev } = this.index.currentLocked();
      const generation = prev.generation + 1;
      for (const ws of this.working) {
        if (!ws.dirty) continue;
        const file = deletesFileName(ws.core.name, generation);
        writeFileDurable(this.index.dir, file, encodeDeletes(ws.deleted!, ws.core.maxDoc));
        ws.deletesFile = file;
        ws.dirty = false;
      }
      fsyncDir(this.index.dir);
      faultPoint('before-manifest');
      const segments = this.working.map((ws) => this.entry(ws));
      const manifest: Manifest = {
        generation,
        nextSegment: this.nextSegment,
        segments,
        docs: segments.reduce((n, s) => n + s.maxDoc - s.deleted, 0),
      };
      writeManifest(this.index.dir, manifest);
      const views = this.working.map((ws) => new SegmentView(ws.core, ws.deleted));
      const info = this.index.installLocked(manifest, views);
      this.index.collectGarbage(manifestFiles(prev));
      this.pending = 0;
      return info;
    } catch (err) {
      this.failure = err;
      throw err;
    } finally {
      this.committing = false;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.inFlight; // a commit in flight completes (or fails) before the lock is released
    this.builder = new SegmentBuilder();
    this.lock.release();
    this.index.writerClosedLocked(this);
  }
}
