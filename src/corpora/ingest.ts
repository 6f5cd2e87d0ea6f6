/**
 * The ingest pipeline: readers (own sources, JSONL, WARC) yield `ReadItem`s; this assigns each document
 * its cid (./cid.ts), upserts it into an index writer and commits every `commitEveryDocs` documents or
 * `commitEverySeconds` seconds, so a server reading the same index sees new documents after each commit.
 *
 * Durability contract: a commit is *acknowledged* when `onCommit` is called, after the writer's commit
 * has returned (the engine has made it durable: new files fsynced, manifest switched by rename). A crash
 * at any instant loses at most the documents after the last acknowledged commit; re-running the same
 * import is idempotent (same keys → same cids → upserts).
 *
 * The writer is structural (`DocSink`), so this module does not depend on the engine's internals.
 */
import type { Cid } from '../kernel/cid.js';
import type { DocumentRecord } from '../kernel/document.js';
import type { CidRegistry } from './cid.js';

/** A document as readers produce it, before it has a cid: its canonical key decides the cid. */
export type IngestDoc = Omit<DocumentRecord, 'cid'> & {
  key: string;
  /** The document of this key is to be deleted (a crawled page gone or no longer indexable); title and text are ignored. */
  deleted?: boolean;
};

/** One item of a reader: a document, or a record that was skipped (reported, never fatal). */
export type ReadItem = { ok: true; doc: IngestDoc } | { ok: false; where: string; reason: string };

export type DocSinkInput = DocumentRecord;
export interface SinkCommit { generation: number; docs: number; segments?: number }

/** What the pipeline needs of an index writer (the engine's `IndexWriter` is one). */
export interface DocSink {
  upsert(doc: DocSinkInput): void;
  delete(cid: Cid): void;
  commit(): Promise<SinkCommit>;
}

export interface IngestProgress {
  /** Documents upserted (or deleted, for `deleted` items) so far. */
  docs: number;
  skipped: number;
  /** Documents acknowledged by a commit so far. */
  committed: number;
}

export interface AckedCommit extends SinkCommit {
  /** Documents of this ingest acknowledged so far, this commit included. */
  committedDocs: number;
}

export interface IngestOptions {
  /** Commit after this many upserts (≥ 1). */
  commitEveryDocs: number;
  /** Commit when this many seconds have passed since the last one and a document arrives. */
  commitEverySeconds: number;
  /** Text longer than this is cut. */
  maxTextChars: number;
  /** Keys whose documents are to be deleted first (own sources that disappeared). */
  deleteKeys?: readonly string[];
  onCommit?: (commit: AckedCommit) => void;
  onSkip?: (where: string, reason: string) => void;
  /** Called after every document; throttle in the callee. */
  onProgress?: (progress: IngestProgress) => void;
  /** Stops reading; what was upserted is committed, then the ingest returns. */
  signal?: AbortSignal;
}

export interface IngestReport extends IngestProgress {
  commits: AckedCommit[];
  /** The signal stopped the reading early (what was read is committed). */
  aborted: boolean;
}

/** Cids are assigned in batches of this many keys: one state-database transaction per batch. */
export const CID_BATCH = 256;

/**
 * Runs one ingest into `sink`. Commits at the end even when nothing is pending (so the caller gets one
 * acknowledged generation), unless nothing at all was written.
 */
export async function ingest(
  sink: DocSink,
  registry: CidRegistry,
  items: AsyncIterable<ReadItem> | Iterable<ReadItem>,
  options: IngestOptions,
): Promise<IngestReport> {
  const progress: IngestProgress = { docs: 0, skipped: 0, committed: 0 };
  const commits: AckedCommit[] = [];
  let pending = 0;
  let lastCommit = Date.now();
  let batch: IngestDoc[] = [];
  let wrote = false;

  const commit = async () => {
    const info = await sink.commit();
    progress.committed += pending;
    pending = 0;
    lastCommit = Date.now();
    const acked: AckedCommit = { ...info, committedDocs: progress.committed };
    commits.push(acked);
    options.onCommit?.(acked);
  };

  const flushBatch = async () => {
    if (batch.length === 0) return;
    const cids = registry.assignMany(batch.map((d) => d.key));
    for (let i = 0; i < batch.length; i++) {
      const d = batch[i]!;
      if (d.deleted) {
        sink.delete(cids[i]!);
      } else {
        const text = d.text.length > options.maxTextChars ? d.text.slice(0, options.maxTextChars) : d.text;
        const input: DocSinkInput = { cid: cids[i]!, title: d.title, text };
        if (d.url !== undefined) input.url = d.url;
        if (d.host !== undefined) input.host = d.host;
        sink.upsert(input);
      }
      wrote = true;
      pending++;
      progress.docs++;
      options.onProgress?.(progress);
      if (pending >= options.commitEveryDocs || (Date.now() - lastCommit) / 1000 >= options.commitEverySeconds) await commit();
    }
    batch = [];
  };

  if (options.deleteKeys?.length) {
    for (const key of options.deleteKeys) {
      // Deleting needs the cid the key had; assigning it again is a lookup that finds the recorded one.
      sink.delete(registry.assign(key));
      wrote = true;
      pending++;
    }
  }

  let aborted = false;
  for await (const item of items) {
    if (options.signal?.aborted) { aborted = true; break; }
    if (!item.ok) {
      progress.skipped++;
      options.onSkip?.(item.where, item.reason);
      options.onProgress?.(progress);
      continue;
    }
    batch.push(item.doc);
    // A slow source must not hold documents back from a time-based commit: flush small batches then.
    if (batch.length >= CID_BATCH || (Date.now() - lastCommit) / 1000 >= options.commitEverySeconds) await flushBatch();
  }
  await flushBatch();
  if (pending > 0 || (wrote && commits.length === 0)) await commit();
  return { ...progress, commits, aborted };
}
