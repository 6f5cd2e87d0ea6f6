/**
 * The thread that writes a segment (segment-flush.ts): builds it when it was given documents, encodes
 * it into its two files and commits them; cancelled or failed, it removes its temporaries.
 */
import { workerData } from 'node:worker_threads';
import type { FlushInput } from './segment-flush.js';
import { buildSegment, encodeSegment, writeSegmentFiles, type IndexedDocument, type SealedSegment } from './segment-writer.js';
import { runThreadJob, runWithCheckpoints } from './thread-job.js';

runThreadJob<FlushInput>(workerData, ({ dir, name, segment, store }, checkpoint) => {
  const sealed = Array.isArray(segment) ? runWithCheckpoints(buildSegment(segment as IndexedDocument[]), checkpoint) : (segment as SealedSegment);
  runWithCheckpoints(writeSegmentFiles(dir, name, (files) => encodeSegment(sealed, store, files)), checkpoint);
});
