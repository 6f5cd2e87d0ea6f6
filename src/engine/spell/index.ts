/** Spelling correction (CONTRACT §2 did_you_mean): candidates from the snapshot's surface dictionary. */
export { Correction } from './correction.js';
