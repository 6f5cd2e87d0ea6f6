/**
 * The thread that writes a merge's stored text (stored-merge.ts): opens the sources' `.sto` files, runs
 * `mergeStored` into the new file, commits it, and posts how it ended. Before it starts and at every
 * checkpoint it reads the cancel flag; cancelled or failed, it removes its temporary.
 */
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { mergeStored } from './merge.js';
import { SegmentFile } from './segment-file.js';
import type { StoredMergeEnd, StoredMergeJob } from './stored-merge.js';
import { StoredReader } from './store.js';

function run(job: StoredMergeJob): StoredMergeEnd {
  const stores: StoredReader[] = [];
  let file: SegmentFile | undefined;
  try {
    const sources = job.sources.map(({ file, deleted }) => {
      const store = new StoredReader(join(job.dir, file));
      stores.push(store);
      return { store, deleted };
    });
    file = new SegmentFile(job.dir, job.file);
    const steps = mergeStored(sources, job.store, file);
    do {
      if (Atomics.load(job.cancel, 0) !== 0) throw new Error('cancelled');
    } while (!steps.next().done);
    file.commit();
    return {};
  } catch (err) {
    file?.abort();
    const e = err instanceof Error ? err : new Error(String(err));
    return { error: { message: e.message, stack: e.stack } };
  } finally {
    for (const s of stores) s.close();
  }
}

parentPort!.postMessage(run(workerData as StoredMergeJob));
