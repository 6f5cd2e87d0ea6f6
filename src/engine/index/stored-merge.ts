/**
 * A merge's stored text written in a thread of its own while the merging thread writes the postings. The
 * `.sto` is re-coded from the sources' `.sto` files alone (merge.ts `mergeStored`), so the two files of a
 * merged segment can be written at once: a large merge takes about as long as its `.idx` (two thirds of a
 * merge's time on the Wikipedia extract), not as long as both. The thread opens the sources' `.sto` files
 * itself and makes the new one durable under its name; its memory is its own heap, beside the postings
 * merge's rather than before it.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { threadModule } from '../../kernel/thread-module.js';
import type { DeletedBits } from './segment-reader.js';
import type { StoreOptions } from './store.js';
import { ThreadJob } from './thread-job.js';

export const STORED_MERGE_THREAD = threadModule(import.meta.url, 'stored-merge-thread');

/** What the thread is given: the directory, the file to write, the sources in merge order. */
export interface StoredMergeInput {
  dir: string;
  file: string;
  sources: { file: string; deleted: DeletedBits | null }[];
  store: StoreOptions;
}

export class StoredMerge {
  readonly #job: ThreadJob;
  readonly #path: string;

  /** Starts writing `dir/file`, the merged stored text of `sources`. */
  constructor(input: StoredMergeInput) {
    this.#path = join(input.dir, input.file);
    this.#job = new ThreadJob(STORED_MERGE_THREAD, input, [], `Merging stored text into ${this.#path}`);
  }

  /** Resolves once the file is durable under its name; rejects when the thread failed. */
  finished(): Promise<void> {
    return this.#job.wait();
  }

  /** Stops the thread, waits for it, and removes the file whether or not it had been committed. */
  async cancel(): Promise<void> {
    await this.#job.cancel();
    rmSync(this.#path, { force: true });
  }
}
