/**
 * A merge's stored text written in a thread of its own while the merging thread writes the postings. The
 * `.sto` is re-coded from the sources' `.sto` files alone (merge.ts `mergeStored`), so the two files of a
 * merged segment can be written at once: a large merge takes about as long as its `.idx` (two thirds of a
 * merge's time on the Wikipedia extract), not as long as both. The thread opens the sources' `.sto` files
 * itself and makes the new one durable under its name; its memory is its own heap, beside the postings
 * merge's rather than before it.
 *
 * The thread stops at its next checkpoint (~20 ms of work) when cancelled through a shared flag, removing
 * what it wrote; `cancel` waits for that and removes the file if it had already been committed.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { InternalError } from '../../kernel/errors.js';
import { threadModule } from '../../kernel/thread-module.js';
import type { DeletedBits } from './segment-reader.js';
import type { StoreOptions } from './store.js';

const THREAD_MODULE = threadModule(import.meta.url, 'stored-merge-thread');

/** What the thread is given: the directory, the file to write, the sources in merge order. */
export interface StoredMergeJob {
  dir: string;
  file: string;
  sources: { file: string; deleted: DeletedBits | null }[];
  store: StoreOptions;
  /** Set to 1 to cancel; the thread reads it at every checkpoint. */
  cancel: Int32Array;
}

/** What the thread posts when it ends: nothing when `file` is durable, else why not. */
export interface StoredMergeEnd {
  error?: { message: string; stack?: string };
}

export class StoredMerge {
  readonly #job: StoredMergeJob;
  readonly #ended: Promise<StoredMergeEnd>;

  /** Starts writing `dir/file`, the merged stored text of `sources`. */
  constructor(dir: string, file: string, sources: StoredMergeJob['sources'], store: StoreOptions) {
    this.#job = { dir, file, sources, store, cancel: new Int32Array(new SharedArrayBuffer(4)) };
    const worker = new Worker(THREAD_MODULE, { workerData: this.#job });
    this.#ended = new Promise((resolve) => {
      let end: StoredMergeEnd | undefined;
      worker.once('message', (m: StoredMergeEnd) => (end = m));
      worker.once('error', (err) => (end ??= { error: { message: err.message, stack: err.stack } }));
      worker.once('exit', (code) => resolve(end ?? { error: { message: `the thread exited with code ${code} before it finished` } }));
    });
  }

  /** Resolves once the file is durable under its name; rejects when the thread failed. */
  async finished(): Promise<void> {
    const { error } = await this.#ended;
    if (error !== undefined) {
      const cause = Object.assign(new Error(error.message), { stack: error.stack });
      throw new InternalError(`Merging stored text into ${join(this.#job.dir, this.#job.file)} failed: ${error.message}`, { cause });
    }
  }

  /** Stops the thread, waits for it, and removes the file whether or not it had been committed. */
  async cancel(): Promise<void> {
    Atomics.store(this.#job.cancel, 0, 1);
    await this.#ended;
    rmSync(join(this.#job.dir, this.#job.file), { force: true });
  }
}
