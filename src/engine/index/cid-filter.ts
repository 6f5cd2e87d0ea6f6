/**
 * A Bloom filter of a segment's cids. A writer checks every cid it replaces or deletes against every
 * segment it holds, and a bulk load holds more segments as it goes (hundreds at five million documents,
 * merged only at its commit): the checks grow with the square of the documents, and each was a binary
 * search comparing bigints. Almost all of them miss, and a filter answers a miss with a few bit reads on
 * numbers: only a possible hit goes on to the exact lookup.
 *
 * A cid is taken as its two 32-bit halves, read from the cids' own buffer without making a bigint.
 */

/** Bits of the filter per cid (rounded up to a power of two in all): ~3 % false positives with 3 probes. */
const BITS_PER_CID = 8;
const PROBES = 3;

/** Whether a Uint32Array over a BigUint64Array's buffer holds each value's low half first. */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** The low and high 32-bit halves of cids, in parallel arrays: what `CidFilter.mayHold` takes. */
export interface CidHalves {
  readonly lo: Uint32Array;
  readonly hi: Uint32Array;
}

/** The halves of `cids`, in their order. */
export function halvesOf(cids: Iterable<bigint>, count: number): CidHalves {
  const lo = new Uint32Array(count);
  const hi = new Uint32Array(count);
  let i = 0;
  for (const cid of cids) {
    lo[i] = Number(cid & 0xffff_ffffn);
    hi[i++] = Number(cid >> 32n);
  }
  return { lo, hi };
}

/** Two independent 32-bit hashes of a cid's halves (murmur3's finalizer over a mix of the two). */
function hash1(lo: number, hi: number): number {
  let h = lo ^ Math.imul(hi, 0x9e3779b1);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

function hash2(lo: number, hi: number): number {
  let h = hi ^ Math.imul(lo, 0x27d4eb2f);
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  h = Math.imul(h ^ (h >>> 12), 0x297a2d39);
  return (h ^ (h >>> 15)) | 1;
}

export class CidFilter {
  private constructor(private readonly bits: Uint32Array, private readonly mask: number) {}

  /** The filter of every value of `cids`. */
  static of(cids: BigUint64Array): CidFilter {
    let size = 32;
    while (size < cids.length * BITS_PER_CID) size *= 2;
    const filter = new CidFilter(new Uint32Array(size >>> 5), size - 1);
    const words = new Uint32Array(cids.buffer, cids.byteOffset, cids.length * 2);
    const [l, h] = LITTLE_ENDIAN ? [0, 1] : [1, 0];
    for (let i = 0; i < cids.length; i++) filter.add(words[2 * i + l]!, words[2 * i + h]!);
    return filter;
  }

  private add(lo: number, hi: number): void {
    const { bits, mask } = this;
    const step = hash2(lo, hi);
    for (let p = 0, at = hash1(lo, hi); p < PROBES; p++, at = (at + step) | 0) {
      const bit = at & mask;
      bits[bit >>> 5]! |= 1 << (bit & 31);
    }
  }

  /** False when the cid whose halves are `lo` and `hi` is certainly not in the filter. */
  mayHold(lo: number, hi: number): boolean {
    const { bits, mask } = this;
    const step = hash2(lo, hi);
    for (let p = 0, at = hash1(lo, hi); p < PROBES; p++, at = (at + step) | 0) {
      const bit = at & mask;
      if ((bits[bit >>> 5]! & (1 << (bit & 31))) === 0) return false;
    }
    return true;
  }
}
