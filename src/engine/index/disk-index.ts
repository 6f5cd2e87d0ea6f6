/**
 * `Index`: one directory holding one index — immutable segments, per-commit deletes files and the
 * `MANIFEST` commit point — opened by any number of readers and by one `IndexWriter` (index-writer.ts),
 * which adds segments, records deletes, merges and switches the manifest. Readers take snapshots
 * (`snapshot()`) that never change; `refresh()` adopts a commit made by another process; `onCommit` tells
 * listeners of both. Searchers are the query side's: `query/reader.ts` extends this class with them (the
 * engine exports that one).
 *
 * Commit protocol (docs/index-format.md): new segment files and deletes files are written tmp → fsync →
 * rename, the directory is fsynced, then the manifest is written the same way and the directory fsynced
 * again. Only then are files no longer named by the new or the previous manifest unlinked. A crash at
 * any point leaves the previous or the new manifest, each naming only complete, durable files.
 */
import { mkdirSync, readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { UnavailableError } from '../../kernel/errors.js';
import { readDeletes } from './deletes.js';
import { isTempName } from './directory.js';
import { WriterLock } from './lock.js';
import { EMPTY_MANIFEST, isSegmentFile, manifestFiles, readManifest, type Manifest } from './manifest.js';
import { BlockCache } from './store.js';
import { SegmentCore, SegmentView, TermBytesCache } from './segment-reader.js';
import { DiskIndexWriter, type IndexWriter, type WriterHost } from './index-writer.js';
import { checkIndex, type CheckReport } from './check.js';
import { resolveIndexOptions, type ResolvedIndexOptions } from './options.js';
import type { CommitInfo, IndexOptions, SegmentReader } from './types.js';

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

/** Whether a file name is one this index manages (and may garbage-collect). */
function isIndexFile(name: string): boolean {
  return isSegmentFile(name) || isTempName(name);
}

export class Index implements WriterHost {
  private state: State;
  private readonly cores = new Map<string, SegmentCore>();
  private readonly listeners = new Set<(info: CommitInfo) => void>();
  private writer: DiskIndexWriter | undefined;
  private closed = false;
  readonly options: ResolvedIndexOptions;
  /** Decompressed text blocks of every segment, bounded by `storedCacheBytes`. */
  private readonly blockCache: BlockCache;
  /** Postings and positions of recently read terms, bounded by `postingsCacheBytes` or grown with the index. */
  private readonly termCache: TermBytesCache;

  protected constructor(readonly dir: string, options: ResolvedIndexOptions) {
    this.options = options;
    this.blockCache = new BlockCache(options.storedCacheBytes);
    this.termCache = new TermBytesCache(options.postingsCacheBytes, options.postingsCacheGrows);
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

  /**
   * Decodes now what queries read of every current segment (term dictionaries, heads), which a segment
   * otherwise decodes on first use: a reader about to serve searches calls it after opening or
   * refreshing, so that no query pays for a new segment.
   */
  warm(): void {
    this.assertOpen();
    for (const v of this.state.views) v.core.warm();
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
    let postingsBytes = 0;
    for (const v of views) {
      docs += v.liveDocs;
      bytes += v.core.bytes;
      postingsBytes += v.core.postingsAndPositionsBytes;
    }
    this.termCache.fitTo(postingsBytes);
    const snapshot: IndexSnapshot = Object.freeze({ generation: m.generation, segments: Object.freeze(views.slice()), docs, bytes });
    this.state = { manifest: m, views, snapshot };
    const names = new Set(m.segments.map((s) => s.name));
    for (const [name, core] of [...this.cores]) {
      if (names.has(name)) continue;
      core.surfaces.detach();
      this.cores.delete(name); // descriptor closed when unreferenced
    }
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
  /** @internal */ releaseUncommittedLocked(name: string): void {
    const core = this.cores.get(name);
    if (core === undefined || this.state.manifest.segments.some((s) => s.name === name)) return;
    this.cores.delete(name);
    core.close();
  }
  /** @internal */ installLocked(m: Manifest, views: SegmentView[]): CommitInfo {
    this.writerCommitLocked();
    return this.install(m, views);
  }
  /** Called under the writer lock just before this process's writer makes a commit current (a hook). */
  protected writerCommitLocked(): void {}
  /** @internal */ writerClosedLocked(w: IndexWriter): void {
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
