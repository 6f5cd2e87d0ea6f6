/**
 * Near-duplicate detection: a 64-bit SimHash (Charikar) over word 3-shingles of a page's text, and an
 * index that finds an earlier page within `k ≤ 3` differing bits. Mirrors and pages that differ only in
 * a date or a navigation line land within a few bits of each other; unrelated pages differ in ~32.
 *
 * The index splits the 64 bits into 4 bands of 16: two hashes within 3 bits agree exactly on at least
 * one band (pigeonhole), so a lookup compares only against the pages sharing a band value.
 */
import { createHash } from 'node:crypto';

/** A 32-bit hash of a string (FNV-1a with `seed`, then murmur3's finaliser so every bit depends on every input bit). */
function hash32(s: string, seed: number): number {
  let h = seed >>> 0;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  h ^= h >>> 16; h = Math.imul(h, 0x85ebca6b); h ^= h >>> 13; h = Math.imul(h, 0xc2b2ae35); h ^= h >>> 16;
  return h >>> 0;
}

/** Words of a text for shingling: lower-cased runs of letters and digits. */
function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** The SimHash of `text` as a signed 64-bit value (what SQLite stores); 0n for a text without words. */
export function simhash(text: string): bigint {
  const w = words(text);
  if (w.length === 0) return 0n;
  const counts = new Int32Array(64);
  const k = Math.min(3, w.length);
  for (let i = 0; i + k <= w.length; i++) {
    const shingle = k === 3 ? `${w[i]} ${w[i + 1]} ${w[i + 2]}` : w.slice(i, i + k).join(' ');
    let lo = hash32(shingle, 0x811c9dc5);
    let hi = hash32(shingle, 0x9e3779b9);
    for (let b = 0; b < 32; b++) {
      counts[b]! += (lo & 1) ? 1 : -1;
      counts[b + 32]! += (hi & 1) ? 1 : -1;
      lo >>>= 1; hi >>>= 1;
    }
  }
  let out = 0n;
  for (let b = 63; b >= 0; b--) out = (out << 1n) | (counts[b]! > 0 ? 1n : 0n);
  return BigInt.asIntN(64, out);
}

/** Bits in which two SimHashes differ. */
export function hammingDistance(a: bigint, b: bigint): number {
  let x = BigInt.asUintN(64, a ^ b);
  let n = 0;
  while (x !== 0n) { x &= x - 1n; n++; }
  return n;
}

/** A digest of the exact text, for exact duplicates and for "did the page change" on revisits. */
export function contentHash(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 22);
}

/** SimHashes of the indexed pages, by band, for near-duplicate lookups. */
export class SimhashIndex {
  readonly #bands = [new Map<number, { id: number; hash: bigint }[]>(), new Map(), new Map(), new Map()] as Map<number, { id: number; hash: bigint }[]>[];
  readonly #maxDistance: number;

  constructor(maxDistance: number) {
    this.#maxDistance = Math.min(3, Math.max(0, maxDistance));
  }

  static #band(hash: bigint, i: number): number {
    return Number((BigInt.asUintN(64, hash) >> BigInt(16 * i)) & 0xffffn);
  }

  add(id: number, hash: bigint): void {
    for (let i = 0; i < 4; i++) {
      const key = SimhashIndex.#band(hash, i);
      let list = this.#bands[i]!.get(key);
      if (!list) this.#bands[i]!.set(key, (list = []));
      list.push({ id, hash });
    }
  }

  /** An earlier page (not `self`) within the distance, if any. */
  find(hash: bigint, self?: number): number | undefined {
    for (let i = 0; i < 4; i++) {
      for (const e of this.#bands[i]!.get(SimhashIndex.#band(hash, i)) ?? []) {
        if (e.id !== self && hammingDistance(e.hash, hash) <= this.#maxDistance) return e.id;
      }
    }
    return undefined;
  }
}
