/** Completion (CONTRACT §2 /api/suggest): prefixes completed from the snapshot's surface dictionary. */
export { Completion } from './completion.js';
