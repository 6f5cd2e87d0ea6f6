/**
 * The thread that writes a merge's stored text (stored-merge.ts): opens the sources' `.sto` files, runs
 * `mergeStored` into the new file and commits it; cancelled or failed, it removes its temporary.
 */
import { join } from 'node:path';
import { workerData } from 'node:worker_threads';
import { mergeStored } from './merge.js';
import { SegmentFile } from './segment-file.js';
import type { StoredMergeInput } from './stored-merge.js';
import { StoredReader } from './store.js';
import { runThreadJob, runWithCheckpoints } from './thread-job.js';

runThreadJob<StoredMergeInput>(workerData, (job, checkpoint) => {
  const stores: StoredReader[] = [];
  try {
    const sources = job.sources.map(({ file, deleted }) => {
      const store = new StoredReader(join(job.dir, file));
      stores.push(store);
      return { store, deleted };
    });
    const file = new SegmentFile(job.dir, job.file);
    try {
      runWithCheckpoints(mergeStored(sources, job.store, file), checkpoint);
      file.commit();
    } catch (err) {
      file.abort();
      throw err;
    }
  } finally {
    for (const s of stores) s.close();
  }
});
