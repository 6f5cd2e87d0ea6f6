/** The on-disk index: segments, deletes, manifest commits, merges, refresh and the consistency check. */
export { toCid } from '../../kernel/cid.js';
export { Index, type IndexWriter, type IndexSnapshot, type ResolvedIndexOptions } from './disk-index.js';
export { checkIndex, type CheckReport } from './check.js';
export { siteTerms } from './segment-writer.js';
export type { SegmentView } from './segment-reader.js';
export * from './types.js';
