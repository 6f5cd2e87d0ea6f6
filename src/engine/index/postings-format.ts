/**
 * The postings format: one term's documents, frequencies and positions, in blocks of `BLOCK_SIZE` docs.
 *
 * Layout of one term in the postings stream (all varints):
 *
 *   skip table, one entry per block:  lastDocDelta · docBytes · posBytes · maxFreq · minLength
 *                                     (absent when the term has a single block: most terms)
 *   block data, concatenated:         a full block (128 docs) bit-packed, a patched frame of reference
 *                                     (postings-writer.ts packFullBlock);
 *                                     a partial one per doc: (docDelta << 1 | freq == 1) [· freq when > 1]
 *
 * and in the positions stream, per block a bit stream (MSB first, padded to a byte at the block's end)
 * holding, per doc in order, `freq` gaps `position − previous − 1` (previous = −1 before the first),
 * each Rice-coded with a parameter derived from what the decoder already knows — the doc's length and
 * the term's freq in it, `k = ⌊log2((length + gap + 1) / (freq + 1))⌋` — so no parameter is stored.
 * A gap's quotient is unary when below 16, else 16 ones, 5 bits of bit length and the gap in binary.
 * Rice codes positions in about 0.7× the bytes of varints (Debian documentation: 0.9 vs 1.3 bytes per
 * position; positions are the largest part of the index), and positions are only decoded for phrases.
 * None for the synthetic `site:` terms.
 *
 * `lastDocDelta` is relative to the previous block's last doc (−1 before the first), so the skip table
 * alone locates any block in both streams: `advance` and `shallowAdvance` jump over blocks without
 * decoding them, and positions are decoded only when asked for. Folding "freq is 1" into the delta's low
 * bit saves a byte on most postings of natural text (Lucene does the same).
 *
 * postings-writer.ts writes it, postings-reader.ts reads it; what both need of it is here.
 */
import { TITLE_TEXT_POSITION_GAP } from './types.js';

/** Rice parameter of a doc's position gaps: the mean gap is about span / (freq + 1). */
export function riceParameter(length: number, freq: number): number {
  const mean = (length + TITLE_TEXT_POSITION_GAP + 1) / (freq + 1);
  return mean < 2 ? 0 : Math.min(24, 31 - Math.clz32(mean));
}

/** A gap's Rice quotient at or above this is escaped: that many ones, 5 bits of bit length, the gap in binary. */
export const RICE_ESCAPE = 16;

/** `bits` (≤ 25) bits of `b` from bit `bp`, MSB first (bytes past the end read as 0). */
export function readBits(b: Uint8Array, bp: number, bits: number): number {
  const at = bp >>> 3;
  const w = ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) << (bp & 7);
  return w >>> (32 - bits);
}

/** The bit after `count` Rice codes of parameter `k` that start at bit `bp` of `b`: their end, found without decoding them. */
export function skipRiceCodes(b: Uint8Array, bp: number, count: number, k: number): number {
  for (let n = 0; n < count; n++) {
    const at = bp >>> 3;
    const w = ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) << (bp & 7);
    const q = Math.clz32(~w);
    if (q < RICE_ESCAPE) bp += q + 1 + k;
    else bp += RICE_ESCAPE + 5 + readBits(b, bp + RICE_ESCAPE, 5);
  }
  return bp;
}

/**
 * One document's positions as coded: bits `[from, to)` of `data`. Their codes depend only on the positions
 * and on the Rice parameter, which depends only on the document's length and freq; a merge, which
 * changes neither, copies the bits instead of decoding and coding them again.
 */
export interface CodedPositions {
  data: Uint8Array;
  from: number;
  to: number;
}
