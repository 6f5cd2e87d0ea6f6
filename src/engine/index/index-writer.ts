/**
 * `IndexWriter`: the single writer of an `Index` (disk-index.ts), which holds its directory's lock. It
 * buffers upserts and deletes in a segment builder, writes a segment when the buffer is full or at commit,
 * applies deletes to older segments, merges by the merge policy, and commits by switching the manifest
 * (the protocol in disk-index.ts and docs/index-format.md). The `Index` opens it and installs what it
 * commits; the writer reaches the index only through `WriterHost`, the steps the index offers it.
 */
import { join } from 'node:path';
import { toCid } from '../../kernel/cid.js';
import { BadRequestError, ConflictError, InternalError } from '../../kernel/errors.js';
import { halvesOf } from './cid-filter.js';
import { countDeleted, deletesFileName, encodeDeletes } from './deletes.js';
import { fsyncDir, faultPoint, tempName, writeFileDurable } from './directory.js';
import type { WriterLock } from './lock.js';
import { manifestFiles, segmentName, writeManifest, type Manifest, type ManifestSegment } from './manifest.js';
import { findMerges, nextForcedMerge } from './merge-policy.js';
import { mergeIndex, mergeSegments } from './merge.js';
import type { ResolvedIndexOptions } from './options.js';
import { runCooperatively, runSync, type Steps } from './steps.js';
import { SegmentFile } from './segment-file.js';
import { FLUSH_THREAD, FlushInThread } from './segment-flush.js';
import { STORED_MERGE_THREAD, StoredMerge } from './stored-merge.js';
import { POSTINGS_MERGE_THREAD, PostingsMerge } from './postings-merge.js';
import { ThreadJob } from './thread-job.js';
import type { StoreOptions } from './store.js';
import { IDX_EXT, isDeleted, SegmentView, STO_EXT, type DeletedBits, type SegmentCore } from './segment-reader.js';
import { encodeSegment, SegmentBuilder, writeSegmentFiles, type IndexedDocument, type SealedSegment, type SegmentFiles } from './segment-writer.js';
import type { CommitInfo, DocInput } from './types.js';

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

/**
 * The most documents a merge splits its terms across two threads for. The part thread opens the sources
 * again and holds their dictionaries for its range, its own lengths and heap: ~120 MB more at the peak of
 * a 1M-document forced merge, which stays under the adding phase's; the last merge of a 5M-document
 * bulk load with it peaked at 1.63 GB, over the build's 1.5 GB aim. Larger merges run their terms in one
 * thread (beside the stored text's).
 */
const PART_THREAD_MAX_DOCS = 2_000_000;

/** UTF-16 units of a document's strings. */
function units(d: IndexedDocument): number {
  return d.title.length + d.text.length + (d.url?.length ?? 0) + (d.host?.length ?? 0);
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** What the writer needs of its index (disk-index.ts `Index`); the `…Locked` steps run under the writer's lock. */
export interface WriterHost {
  readonly dir: string;
  readonly options: ResolvedIndexOptions;
  /** The committed manifest and its segments, as the writer starts from them. */
  currentLocked(): { manifest: Manifest; views: SegmentView[] };
  /** Opens a segment the writer has just written. */
  loadCoreLocked(name: string): SegmentCore;
  /**
   * Closes and forgets a segment the writer wrote and has merged away or dropped before any commit named
   * it (no snapshot can hold it); one the current commit names is left to the commit that drops it.
   */
  releaseUncommittedLocked(name: string): void;
  /** Makes a manifest the writer has made durable the index's current commit. */
  installLocked(manifest: Manifest, views: SegmentView[]): CommitInfo;
  /** Removes the index's files named neither by the current manifest nor in `keep`. */
  collectGarbage(keep: Set<string>): void;
  /** The writer has closed: the index may open another. */
  writerClosedLocked(writer: IndexWriter): void;
}

export interface IndexWriter {
  /** Adds `doc`, replacing at commit any document with the same cid. BadCidError / BadRequestError on bad input. */
  upsert(doc: DocInput): void;
  delete(cid: bigint): void;
  /** Operations since the last commit. */
  readonly pending: number;
  /** Durable when it resolves; `searcher()` sees it after. */
  commit(): Promise<CommitInfo>;
  /**
   * Commits as `commit()` does, leaving at most `maxSegments` segments and none with deleted documents,
   * past the merge policy's size bound: for an index built in bulk and then only read, where every query
   * pays per segment. Rewrites the postings of every document it merges.
   */
  forceMerge(maxSegments: number): Promise<CommitInfo>;
  /** Abandons uncommitted changes and releases the lock. Idempotent. */
  close(): Promise<void>;
}

/**
 * Documents on their way to a segment that is not installed yet (a buffer, a batch, a segment a thread is
 * writing). A later upsert or delete of one of their cids marks the document here, to be deleted in its
 * segment once that is installed: segments built side by side are installed in the order they are done,
 * not in their documents' order, so a replacement cannot wait for the next segment's deletes.
 */
class PendingDocs {
  /** Doc id in the coming segment of each cid whose document is still the newest. */
  readonly live = new Map<bigint, number>();
  /** Doc ids of documents replaced or deleted since they were added. */
  readonly replaced: number[] = [];

  /** Marks `cid`'s document replaced, if it is one of these; returns whether it was. */
  replace(cid: bigint): boolean {
    const d = this.live.get(cid);
    if (d === undefined) return false;
    this.live.delete(cid);
    this.replaced.push(d);
    return true;
  }
}

/** A write buffer taken out of the writer (`takeBufferLocked`), on its way to becoming a segment. */
interface Taken {
  /** What the buffer held (`SegmentBuilder.bytes`). */
  bytes: number;
  /** Its documents, or undefined when it had none. */
  segment: SealedSegment | undefined;
  docs: PendingDocs;
}

/** A segment a thread is writing, not yet installed. */
interface InThread {
  docs: PendingDocs;
  flush: FlushInThread;
}

/** Documents collected for a thread that builds a segment of them. */
interface Batch {
  documents: IndexedDocument[];
  /** UTF-16 units of their strings. */
  units: number;
  docs: PendingDocs;
}

interface WorkingSegment {
  core: SegmentCore;
  deleted: DeletedBits | null;
  /** Deleted docs changed since the deletes file `deletesFile` was written. */
  dirty: boolean;
  deletesFile: string | null;
  /**
   * The reader the last commit installed for it; the next commit installs it again while `deleted` is
   * still its bits (they are copied before a change), so that what queries keep per reader outlives the commit.
   */
  view?: SegmentView;
}

export class DiskIndexWriter implements IndexWriter {
  private builder = new SegmentBuilder();
  private builderDocs = new PendingDocs();
  /**
   * Cids upserted or deleted since a segment was last installed: their documents in the installed
   * segments are deleted at the next install (or commit), before the new segment joins them.
   */
  private pendingDeletes = new Set<bigint>();
  private working: WorkingSegment[];
  private nextSegment: number;
  private closed = false;
  private failure: unknown;
  private committing = false;
  private inFlight: Promise<void> = Promise.resolve();
  /** The buffer a thread is writing as a segment, not yet installed. */
  private background: InThread | undefined;
  /**
   * Set once this commit's buffer has held `threadBytes` (a bulk load): documents then go to batches
   * that threads build segments of while a thread is free (`buildThreads`), else to the buffer.
   */
  private bulk = false;
  /** UTF-16 units of the documents in the buffer, and the buffer's bytes per unit when it was last measured. */
  private builderUnits = 0;
  private bytesPerUnit = 4;
  private batch: Batch | undefined;
  /** Segments threads are building from batches. */
  private building: InThread[] = [];
  pending = 0;

  constructor(private readonly index: WriterHost, private readonly lock: WriterLock) {
    const { manifest, views } = index.currentLocked();
    this.nextSegment = manifest.nextSegment;
    this.working = views.map((v, i) => ({ core: v.core, deleted: v.deleted, dirty: false, deletesFile: manifest.segments[i]!.deletes, view: v }));
  }

  private assertUsable(): void {
    if (this.closed) throw new ConflictError(`The writer of ${this.index.dir} is closed.`);
    if (this.committing) throw new ConflictError(`The writer of ${this.index.dir} is committing; wait for commit() to resolve.`);
    if (this.failure !== undefined) throw new InternalError(`The writer of ${this.index.dir} failed in a commit and must be reopened.`, { cause: this.failure });
  }

  upsert(doc: DocInput): void {
    this.assertUsable();
    const d = toDocument(doc);
    this.replaceLocked(d.cid);
    this.pending++;
    const o = this.index.options;
    try {
      this.installBuiltLocked();
      if (this.bulk && this.building.length < o.buildThreads) {
        this.batchLocked(d);
        return;
      }
      this.builderDocs.live.set(d.cid, this.builder.add(d));
      this.builderUnits += units(d);
      const bytes = this.builder.bytes;
      this.bytesPerUnit = bytes / this.builderUnits;
      if (!this.bulk && bytes >= o.threadBytes && o.buildThreads > 0 && ThreadJob.available(FLUSH_THREAD)) this.bulk = true;
      if (bytes >= o.maxBufferedBytes) this.flushLocked();
    } catch (err) {
      this.failure = err;
      throw err;
    }
  }

  delete(cid: bigint): void {
    this.assertUsable();
    this.replaceLocked(toCid(cid));
    this.pending++;
  }

  /** Marks the newest document of `cid`, wherever it is, as replaced or deleted. */
  private replaceLocked(cid: bigint): void {
    this.pendingDeletes.add(cid);
    if (this.builderDocs.replace(cid) || this.background?.docs.replace(cid) || this.batch?.docs.replace(cid)) return;
    for (const b of this.building) if (b.docs.replace(cid)) return;
  }

  /**
   * Adds `d` to the batch being collected, and hands the batch to a thread once a builder would hold half
   * a buffer of it, going by the writer's own buffer (its documents are of the same load).
   */
  private batchLocked(d: IndexedDocument): void {
    const b = (this.batch ??= { documents: [], units: 0, docs: new PendingDocs() });
    b.docs.live.set(d.cid, b.documents.length);
    b.documents.push(d);
    b.units += units(d);
    if (2 * b.units * this.bytesPerUnit >= this.index.options.maxBufferedBytes) this.buildBatchLocked();
  }

  /** Hands the collected batch, if any, to a thread that builds and writes its segment. */
  private buildBatchLocked(): void {
    const b = this.batch;
    if (b === undefined) return;
    this.batch = undefined;
    const name = segmentName(this.nextSegment++);
    this.building.push({ docs: b.docs, flush: new FlushInThread({ dir: this.index.dir, name, segment: b.documents, store: this.storeOptions() }) });
  }

  /** Installs the segments threads have finished building from batches; throws when one of them failed. */
  private installBuiltLocked(): void {
    for (let i = 0; i < this.building.length;) {
      const b = this.building[i]!;
      if (!b.flush.ended) {
        i++;
        continue;
      }
      b.flush.waitSync();
      this.building.splice(i, 1);
      this.installWrittenLocked(b);
    }
  }

  private applyDeletesLocked(cids: Set<bigint>): void {
    if (cids.size === 0) return;
    const all = [...cids];
    const { lo, hi } = halvesOf(all, all.length);
    for (const ws of this.working) {
      for (let i = 0; i < all.length; i++) {
        // most cids are in no segment but their own: the filter answers those without a lookup
        if (!ws.core.mayHoldCid(lo[i]!, hi[i]!)) continue;
        const d = ws.core.docForCidAnyState(all[i]!);
        if (d === undefined || isDeleted(ws.deleted, d)) continue;
        if (!ws.dirty) {
          ws.deleted = ws.deleted === null ? new Uint8Array(Math.ceil(ws.core.maxDoc / 8)) : ws.deleted.slice();
          ws.dirty = true;
        }
        ws.deleted![d >>> 3]! |= 1 << (d & 7);
      }
    }
  }

  /** How this index compresses stored text. */
  private storeOptions(): StoreOptions {
    return { blockBytes: this.index.options.storedBlockBytes, quality: this.index.options.storedQuality };
  }

  /** Writes a new segment with `encode` and loads it. */
  private *segmentLocked(encode: (files: SegmentFiles) => Steps<unknown>): Steps<SegmentCore> {
    const name = segmentName(this.nextSegment++);
    yield* writeSegmentFiles(this.index.dir, name, encode);
    return this.loadWrittenLocked(name);
  }

  /** Opens a segment whose files are written (the crash point between a segment's files and its use). */
  private loadWrittenLocked(name: string): SegmentCore {
    faultPoint('segment-written');
    return this.index.loadCoreLocked(name);
  }

  /** Takes the buffered documents out of the writer, to become a segment. */
  private takeBufferLocked(): Taken {
    const builder = this.builder;
    const taken: Taken = { bytes: builder.bytes, segment: builder.maxDoc > 0 ? builder.seal() : undefined, docs: this.builderDocs };
    this.builder = new SegmentBuilder();
    this.builderDocs = new PendingDocs();
    this.builderUnits = 0;
    return taken;
  }

  /**
   * From `upsert`, its buffer full: installs the segment a thread has been writing (waiting for it if it
   * is not done), then writes this buffer's: in a thread of its own when it holds `threadBytes`, so that
   * documents go on being added meanwhile, else here. One buffer at a time is in a thread, so the
   * buffers held are at most two.
   */
  private flushLocked(): void {
    const b = this.background;
    if (b !== undefined) {
      b.flush.waitSync();
      this.background = undefined;
      this.installWrittenLocked(b);
    }
    const taken = this.takeBufferLocked();
    if (taken.segment !== undefined && taken.bytes >= this.index.options.threadBytes && ThreadJob.available(FLUSH_THREAD)) {
      const name = segmentName(this.nextSegment++);
      this.background = { docs: taken.docs, flush: new FlushInThread({ dir: this.index.dir, name, segment: taken.segment, store: this.storeOptions() }) };
      return;
    }
    this.installSegmentLocked(taken.docs, taken.segment && runSync(this.flushSteps(taken.segment)));
  }

  /**
   * In `commit()`, yielding to the event loop: the batch being collected handed to a thread (a batch is
   * only collected while a thread is free), the buffer a thread is writing installed, the buffer written
   * here, then the segments threads are building installed.
   */
  private async flushCooperativelyLocked(): Promise<void> {
    this.buildBatchLocked();
    this.bulk = false;
    const b = this.background;
    if (b !== undefined) {
      await b.flush.wait();
      this.background = undefined;
      this.installWrittenLocked(b);
    }
    const taken = this.takeBufferLocked();
    this.installSegmentLocked(taken.docs, taken.segment && await runCooperatively(this.flushSteps(taken.segment)));
    while (this.building.length > 0) {
      const b = this.building[0]!;
      await b.flush.wait(); // one that failed stays for close() to remove
      this.building.shift();
      this.installWrittenLocked(b);
    }
  }

  private flushSteps(segment: SealedSegment): Steps<SegmentCore> {
    return this.segmentLocked((files) => encodeSegment(segment, this.storeOptions(), files));
  }

  /** Installs the segment a thread has written. */
  private installWrittenLocked(b: InThread): void {
    this.installSegmentLocked(b.docs, this.loadWrittenLocked(b.flush.name));
  }

  /**
   * Applies the deletes pending for the installed segments, then adds `core` (a segment of `docs`, if they
   * were any) with the documents replaced since they were added deleted.
   */
  private installSegmentLocked(docs: PendingDocs, core: SegmentCore | undefined): void {
    this.applyDeletesLocked(this.pendingDeletes);
    this.pendingDeletes = new Set();
    if (core === undefined) return;
    let deleted: DeletedBits | null = null;
    if (docs.replaced.length > 0) {
      deleted = new Uint8Array(Math.ceil(core.maxDoc / 8));
      for (const d of docs.replaced) deleted[d >>> 3]! |= 1 << (d & 7);
    }
    this.working.push({ core, deleted, dirty: deleted !== null, deletesFile: null });
  }

  private entry(ws: WorkingSegment): ManifestSegment {
    const deleted = ws.deleted === null ? 0 : countDeleted(ws.deleted);
    return { name: ws.core.name, maxDoc: ws.core.maxDoc, deleted, deletes: ws.deletesFile, bytes: ws.core.bytes };
  }

  private async mergeLocked(): Promise<void> {
    const o = this.index.options;
    for (let round = 0; round < 16; round++) {
      this.dropEmptyLocked();
      const merges = findMerges(this.working.map((ws) => this.entry(ws)), { mergeFactor: o.mergeFactor, floorBytes: o.mergeFloorBytes, maxMergedBytes: o.maxMergedBytes });
      if (merges.length === 0) return;
      for (const group of merges) await this.mergeGroupLocked(group);
    }
  }

  /** Segments whose every document is deleted leave the commit without a merge. */
  private dropEmptyLocked(): void {
    const empty = this.working.filter((ws) => ws.deleted !== null && countDeleted(ws.deleted) === ws.core.maxDoc);
    if (empty.length === 0) return;
    this.working = this.working.filter((ws) => !empty.includes(ws));
    for (const ws of empty) this.index.releaseUncommittedLocked(ws.core.name);
  }

  async commit(): Promise<CommitInfo> {
    return this.startCommit(undefined);
  }

  async forceMerge(maxSegments: number): Promise<CommitInfo> {
    if (!Number.isSafeInteger(maxSegments) || maxSegments < 1) throw new BadRequestError(`forceMerge takes a number of segments ≥ 1, got ${String(maxSegments)}.`, 'maxSegments');
    return this.startCommit(maxSegments);
  }

  private startCommit(maxSegments: number | undefined): Promise<CommitInfo> {
    this.assertUsable();
    this.committing = true;
    const run = this.commitLocked(maxSegments);
    this.inFlight = run.then(() => undefined, () => undefined);
    return run;
  }

  /** Merges `group` (names of working segments) into one segment, which takes the place of the first. */
  private async mergeGroupLocked(group: readonly string[]): Promise<void> {
    const names = new Set(group);
    const sources = this.working.filter((ws) => names.has(ws.core.name));
    const core = await this.mergedSegmentLocked(sources);
    const at = this.working.findIndex((ws) => names.has(ws.core.name));
    this.working = this.working.filter((ws) => !names.has(ws.core.name));
    this.working.splice(at, 0, { core, deleted: null, dirty: false, deletesFile: null });
    // a forced merge in rounds would otherwise keep every source of every round open, with the term
    // dictionary the merge decoded, until the commit
    for (const name of group) this.index.releaseUncommittedLocked(name);
    await yieldToEventLoop();
  }

  /**
   * Writes the merge of `sources` and loads it. Its stored text is written in a thread of its own beside
   * the postings (stored-merge.ts) once the sources hold `threadBytes` of it, enough to pay for
   * starting a thread; a smaller merge writes both here.
   */
  private async mergedSegmentLocked(sources: readonly WorkingSegment[]): Promise<SegmentCore> {
    const storedBytes = sources.reduce((n, ws) => n + ws.core.store.bytes, 0);
    if (storedBytes < this.index.options.threadBytes || !ThreadJob.available(STORED_MERGE_THREAD)) {
      return runCooperatively(this.segmentLocked((files) => mergeSegments(sources, this.storeOptions(), files)));
    }
    const name = segmentName(this.nextSegment++);
    const dir = this.index.dir;
    const stored = new StoredMerge({ dir, file: name + STO_EXT, sources: sources.map((ws) => ({ file: ws.core.name + STO_EXT, deleted: ws.deleted })), store: this.storeOptions() });
    let postings: PostingsMerge | undefined;
    // the second half of the terms in a thread of its own too, when there is one to run and the merge is
    // not so large that the thread's memory (its own view of the sources and their dictionaries) would
    // set the build's peak: at 5M documents the last merge with it peaked at 1.63 GB
    const docs = sources.reduce((n, ws) => n + ws.core.maxDoc, 0);
    const elsewhere = ThreadJob.available(POSTINGS_MERGE_THREAD) && docs <= PART_THREAD_MAX_DOCS ? (from: string) => {
      postings = new PostingsMerge({ dir, part: tempName(join(dir, name + IDX_EXT)), sources: sources.map((ws) => ({ name: ws.core.name, deleted: ws.deleted })), from });
      const p = postings;
      return () => p.part();
    } : undefined;
    let idx: SegmentFile | undefined;
    try {
      idx = new SegmentFile(dir, name + IDX_EXT);
      await runCooperatively(mergeIndex(sources, idx, elsewhere));
      await stored.finished();
      idx.commit();
    } catch (err) {
      idx?.abort();
      await stored.cancel();
      throw err;
    } finally {
      await postings?.close();
    }
    return this.loadWrittenLocked(name);
  }

  /**
   * The smallest segments merged, at most `maxMergeAtOnce` at a time (the last merge more when their
   * dictionaries take at most `maxMergeDictionaryBytes`: merge-policy.ts), until at most `maxSegments`
   * remain; then every segment with deletes rewritten.
   */
  private async forceMergeLocked(maxSegments: number): Promise<void> {
    this.dropEmptyLocked();
    for (;;) {
      const { maxMergeAtOnce, maxMergeDictionaryBytes } = this.index.options;
      const segments = this.working.map((ws) => ({ ...this.entry(ws), dictionaryBytes: ws.core.dictionaryBytes }));
      const group = nextForcedMerge(segments, maxSegments, { maxSources: maxMergeAtOnce, maxDictionaryBytes: maxMergeDictionaryBytes });
      if (group === undefined) break;
      await this.mergeGroupLocked(group);
    }
    for (const ws of this.working.filter((w) => w.deleted !== null && countDeleted(w.deleted) > 0)) await this.mergeGroupLocked([ws.core.name]);
  }

  private async commitLocked(maxSegments: number | undefined): Promise<CommitInfo> {
    try {
      await this.flushCooperativelyLocked(); // a large commit must not stall queries served by this process
      await yieldToEventLoop();
      if (maxSegments === undefined) await this.mergeLocked();
      else await this.forceMergeLocked(maxSegments);
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
      const views = this.working.map((ws) => (ws.view = ws.view?.deleted === ws.deleted ? ws.view : new SegmentView(ws.core, ws.deleted)));
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
    await this.background?.flush.cancel();
    this.background = undefined;
    for (const b of this.building) await b.flush.cancel();
    this.building = [];
    this.batch = undefined;
    this.builder = new SegmentBuilder();
    this.lock.release();
    this.index.writerClosedLocked(this);
  }
}
