/** The on-disk index: segments, deletes, manifest commits, merges, refresh and the consistency check. */
export { toCid } from '../../kernel/cid.js';
export { Index, type IndexSnapshot } from './disk-index.js';
export type { ResolvedIndexOptions } from './options.js';
export type { IndexWriter } from './index-writer.js';
export { checkIndex, type CheckReport } from './check.js';
export { siteTerms } from './segment-writer.js';
export type { SegmentView } from './segment-reader.js';
export * from './types.js';
