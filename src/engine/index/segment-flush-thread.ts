/**
 * The thread that writes a flushed segment (segment-flush.ts): encodes the sealed segment into its two
 * files and commits them; cancelled or failed, it removes its temporaries.
 */
import { workerData } from 'node:worker_threads';
import type { FlushInput } from './segment-flush.js';
import { encodeSegment, writeSegmentFiles } from './segment-writer.js';
import { runThreadJob, runWithCheckpoints } from './thread-job.js';

runThreadJob<FlushInput>(workerData, ({ dir, name, segment, store }, checkpoint) => {
  runWithCheckpoints(writeSegmentFiles(dir, name, (files) => encodeSegment(segment, store, files)), checkpoint);
});
