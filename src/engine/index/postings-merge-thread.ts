/**
 * The thread that writes the second half of a merge's terms (postings-merge.ts): opens the sources, runs
 * `mergeTermsFrom` into the part and a scratch file for its positions, and ends the part; cancelled or
 * failed, it removes both.
 */
import { workerData } from 'node:worker_threads';
import { tempName } from './directory.js';
import { mergeTermsFrom, type MergeSource } from './merge.js';
import { finishPart, type PostingsMergeInput } from './postings-merge.js';
import { Spill } from './segment-file.js';
import { SegmentCore } from './segment-reader.js';
import { runThreadJob, runWithCheckpoints } from './thread-job.js';

runThreadJob<PostingsMergeInput>(workerData, (job, checkpoint) => {
  const cores: SegmentCore[] = [];
  try {
    const sources: MergeSource[] = job.sources.map(({ name, deleted }) => {
      const core = new SegmentCore(job.dir, name, undefined, undefined, { checked: true });
      cores.push(core);
      return { core, deleted };
    });
    const part = new Spill(job.part);
    const positions = new Spill(tempName(job.part));
    try {
      const terms = runWithCheckpoints(mergeTermsFrom(sources, job.from, part, positions), checkpoint);
      finishPart(part, positions, terms);
    } catch (err) {
      part.dispose();
      throw err;
    } finally {
      positions.dispose();
    }
  } finally {
    for (const c of cores) c.close();
  }
});
