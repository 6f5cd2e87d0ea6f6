/**
 * A segment written in a thread of its own while the writer goes on adding documents, from one of two
 * inputs. A full write buffer: the writer seals it (segment-writer.ts `SealedSegment`) and hands it over,
 * its arrays moved, not copied, and the thread sorts, encodes and writes the segment's two files (about a
 * third of a flush's work on the Wikipedia extract; the rest, inverting documents as they are added,
 * overlaps it). Or a batch of documents, copied to the thread, which also inverts them: in a bulk
 * load the writer's thread and this one each build segments of their own.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { threadModule } from '../../kernel/thread-module.js';
import { IDX_EXT, STO_EXT } from './segment-reader.js';
import { sealedSegmentBuffers, type IndexedDocument, type SealedSegment } from './segment-writer.js';
import type { StoreOptions } from './store.js';
import { ThreadJob } from './thread-job.js';

export const FLUSH_THREAD = threadModule(import.meta.url, 'segment-flush-thread');

/** What the thread is given: where to write segment `name`, and of what: a sealed buffer or documents to add in order. */
export interface FlushInput {
  dir: string;
  name: string;
  segment: SealedSegment | readonly IndexedDocument[];
  store: StoreOptions;
}

export class FlushInThread {
  readonly #job: ThreadJob;
  readonly #input: Omit<FlushInput, 'segment'>;

  /** Starts writing segment `name` of `segment`, which the caller gives up. */
  constructor(input: FlushInput) {
    const { segment, ...rest } = input;
    this.#input = rest;
    const transfer = Array.isArray(segment) ? [] : sealedSegmentBuffers(segment as SealedSegment);
    this.#job = new ThreadJob(FLUSH_THREAD, input, transfer, `Writing segment ${join(input.dir, input.name)}`);
  }

  get name(): string {
    return this.#input.name;
  }

  /** Whether the thread has ended (`waitSync` then returns or throws at once). */
  get ended(): boolean {
    return this.#job.ended;
  }

  /** Blocks until the segment's files are durable under their names; throws when the thread failed. */
  waitSync(): void {
    this.#job.waitSync();
  }

  /** As `waitSync`, letting the event loop turn meanwhile. */
  wait(): Promise<void> {
    return this.#job.wait();
  }

  /** Stops the thread, waits for it, and removes the segment's files whether or not they were committed. */
  async cancel(): Promise<void> {
    await this.#job.cancel();
    for (const ext of [IDX_EXT, STO_EXT]) rmSync(join(this.#input.dir, this.#input.name + ext), { force: true });
  }
}
