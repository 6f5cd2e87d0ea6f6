/**
 * Set bits of 32-bit words, for counting matches in bitsets: two lookups in a table of the 65,536
 * 16-bit counts. The table (64 KiB) stays in cache through a count's pass over a segment's words: two
 * sets of a million documents' words ORed and counted in 53 µs, against 68 with the arithmetic population
 * count in the same loop. (Where each query meets caches the others filled, as in the scale bench's single
 * pass, the two are level.)
 */
const COUNTS16 = new Uint8Array(65536);
for (let i = 1; i < 65536; i++) COUNTS16[i] = (i & 1) + COUNTS16[i >>> 1]!;

/** Set bits of `x` (a 32-bit word). */
export function popcount(x: number): number {
  return COUNTS16[x & 0xffff]! + COUNTS16[x >>> 16]!;
}
