/**
 * Exact counting of a disjunction's matches without scoring: the union of the optional terms' postings
 * as a bitset over the segment's doc numbers, intersected with the `site:` filters and the live documents,
 * minus the exclusions, then a population count. Each posting is touched once in a tight loop; no heap, no
 * scores. This is what lets MaxScore skip documents for the top k while `total` stays exact. A member of
 * the union may come as a ready bitset (a common term's, cached by the snapshot): it is ORed word by word.
 * A sparse union is walked instead (`SPARSE_RATIO`); one postings list alone, in a segment without
 * deletes and with nothing filtered, is not walked at all: its length is the count; unfiltered ready
 * bitsets are counted in one pass, and the lists' documents outside them added (`countBesideBitsets`);
 * unfiltered lists alone are counted as their bits are first set, in a bitset reused from one count to
 * the next (`fillCounting`): no pass over the words and no allocation, which were half of counting two
 * lists of ~10k documents among a million (a did-you-mean correction's count, mostly).
 */
import { NO_MORE_DOCS, type SegmentReader } from '../index/types.js';
import { matchesAt, UnionIterator, type DocIterator } from './iterators.js';
import { popcount } from './bit-count.js';

function fill(bits: Uint32Array, it: DocIterator): void {
  for (let d = it.nextDoc(); d !== NO_MORE_DOCS; d = it.nextDoc()) bits[d >>> 5]! |= 1 << (d & 31);
}

/**
 * A bitset reused by every count: `fillCounting`'s (zeroed before each) and the sets past the third of
 * `unionCount`'s union; a search is synchronous, so one serves all.
 */
let scratch = new Uint32Array(0);

const NO_SETS: readonly Uint32Array[] = [];

/**
 * Sets the bits of `it`'s documents; returns how many of them were not set before, are live and are in
 * none of `beside`.
 */
function fillCounting(bits: Uint32Array, it: DocIterator, live: Uint32Array | undefined, beside = NO_SETS): number {
  let n = 0;
  next: for (let d = it.nextDoc(); d !== NO_MORE_DOCS; d = it.nextDoc()) {
    const i = d >>> 5;
    const m = 1 << (d & 31);
    const w = bits[i]!;
    if ((w & m) !== 0) continue;
    bits[i] = w | m;
    if (live !== undefined && (live[i]! & m) === 0) continue;
    for (let j = 0; j < beside.length; j++) if ((beside[j]![i]! & m) !== 0) continue next;
    n++;
  }
  return n;
}

/** The scratch bitset, at least `words` long, its contents as the last count left them. */
function scratchOf(words: number): Uint32Array {
  if (scratch.length < words) scratch = new Uint32Array(words);
  return scratch;
}

/** The scratch bitset, zeroed over a segment's `words`. */
function zeroedScratch(words: number): Uint32Array {
  return scratchOf(words).fill(0, 0, words);
}

/**
 * Live documents of the union of `sets` (every live when `live` is undefined), in one pass over their
 * words. One to three sets, the common cases, have loops of their own: a loop over the sets inside the
 * loop over the words took twice as long (two sets of a million documents' words: 122 µs against 53 with
 * bit-count.ts's table, 68 without).
 * More are ORed from the third on into the scratch set first.
 */
function unionCount(sets: readonly Uint32Array[], live: Uint32Array | undefined): number {
  const a = sets[0]!;
  const words = a.length;
  let n = 0;
  if (sets.length === 1) {
    if (live === undefined) for (let i = 0; i < words; i++) n += popcount(a[i]!);
    else for (let i = 0; i < words; i++) n += popcount(a[i]! & live[i]!);
    return n;
  }
  const b = sets[1]!;
  if (sets.length === 2) {
    if (live === undefined) for (let i = 0; i < words; i++) n += popcount(a[i]! | b[i]!);
    else for (let i = 0; i < words; i++) n += popcount((a[i]! | b[i]!) & live[i]!);
    return n;
  }
  let c = sets[2]!;
  if (sets.length > 3) {
    c = scratchOf(words).subarray(0, words);
    c.set(sets[2]!);
    for (let j = 3; j < sets.length; j++) {
      const s = sets[j]!;
      for (let i = 0; i < words; i++) c[i]! |= s[i]!;
    }
  }
  if (live === undefined) for (let i = 0; i < words; i++) n += popcount(a[i]! | b[i]! | c[i]!);
  else for (let i = 0; i < words; i++) n += popcount((a[i]! | b[i]! | c[i]!) & live[i]!);
  return n;
}

/**
 * Live documents (every one when `live` is undefined) held by every one of `sets`: the count of a
 * conjunction of words that all have bitsets, in one pass over their words and no posting decoded.
 */
export function intersectionCount(sets: readonly Uint32Array[], live: Uint32Array | undefined): number {
  const a = sets[0]!;
  const words = a.length;
  let n = 0;
  if (sets.length === 2 && live === undefined) {
    const b = sets[1]!;
    for (let i = 0; i < words; i++) n += popcount(a[i]! & b[i]!);
    return n;
  }
  for (let i = 0; i < words; i++) {
    let w = live === undefined ? a[i]! : a[i]! & live[i]!;
    for (let j = 1; j < sets.length && w !== 0; j++) w &= sets[j]![i]!;
    n += popcount(w);
  }
  return n;
}

/**
 * A union with no ready bitset whose postings number less than 1/SPARSE_RATIO of the segment's bitset
 * words is counted by walking it: a bitset costs a pass over all its words whatever the postings, which
 * was most of a rare word's query (~50 µs on 292k documents against ~10 µs for the rest).
 */
export const SPARSE_RATIO = 4;

/** A member of a counted union: its iterator and, when the snapshot keeps one, the same documents as a bitset. */
export interface UnionMember {
  it: DocIterator;
  bits?: Uint32Array | undefined;
}

/** Live documents of `seg` matching any of `union`, every one of `filters` and none of `exclusions`. Consumes the iterators. */
export function countDisjunction(
  seg: SegmentReader, union: UnionMember[], filters: DocIterator[], exclusions: DocIterator[], live: Uint32Array | undefined,
): number {
  // one bare postings list, every document live, nothing filtered: its length is the count
  const only = union.length === 1 ? union[0]!.it.list : undefined;
  if (only !== undefined && filters.length === 0 && exclusions.length === 0 && live === undefined) return only.docFreq;
  const ready = union.filter((u) => u.bits !== undefined);
  if (ready.length > 0 && filters.length === 0 && exclusions.length === 0) {
    return countBesideBitsets(ready, union.filter((u) => u.bits === undefined).map((u) => u.it), live);
  }
  const words = (seg.maxDoc + 31) >>> 5;
  let postings = 0;
  for (const u of union) postings += u.bits !== undefined ? Infinity : u.it.cost;
  if (postings * SPARSE_RATIO < words) return countByWalking(union.map((u) => u.it), filters, exclusions.map((it) => ({ it })), live);
  if (filters.length === 0 && exclusions.length === 0) {
    // postings lists alone (ready bitsets were counted above): a document is counted as its bit is first
    // set, so no pass over the words is needed to count them
    const bits = zeroedScratch(words);
    let n = 0;
    for (const u of union) n += fillCounting(bits, u.it, live);
    return n;
  }
  const bits = new Uint32Array(words);
  for (const u of union) {
    const set = u.bits;
    if (set !== undefined) for (let i = 0; i < words; i++) bits[i]! |= set[i]!;
    else fill(bits, u.it);
  }
  if (filters.length > 0) {
    const f = new Uint32Array(words);
    for (const it of filters) {
      f.fill(0);
      fill(f, it);
      for (let i = 0; i < words; i++) bits[i]! &= f[i]!;
    }
  }
  for (const it of exclusions) {
    for (let d = it.nextDoc(); d !== NO_MORE_DOCS; d = it.nextDoc()) bits[d >>> 5]! &= ~(1 << (d & 31));
  }
  let n = 0;
  if (live) for (let i = 0; i < words; i++) n += popcount(bits[i]! & live[i]!);
  else for (let i = 0; i < words; i++) n += popcount(bits[i]!);
  return n;
}

/**
 * `countDisjunction` of ready bitsets and postings lists, unfiltered: the live documents of the bitsets'
 * union (a lone term's length when every document is live), counted in one pass over their words, plus
 * the lists' live documents none of them holds. No union bitset is built: that took a zeroed allocation
 * and a pass over every word of the segment per member and one to count.
 */
function countBesideBitsets(ready: UnionMember[], rest: DocIterator[], live: Uint32Array | undefined): number {
  const sets = ready.map((u) => u.bits!);
  const k = sets.length;
  const lone = k === 1 ? ready[0]!.it.list : undefined;
  let n = lone !== undefined && live === undefined ? lone.docFreq : unionCount(sets, live);
  if (rest.length === 0) return n;
  const words = sets[0]!.length;
  let postings = 0;
  for (const it of rest) postings += it.cost;
  if (rest.length > 1 && postings * SPARSE_RATIO >= words) {
    // several lists, long enough to pay for zeroing a bitset: each walked on its own and its documents
    // told apart from the others' by their bits, not merged in a union's heap (two fifths of a six-word title's count)
    const bits = zeroedScratch(words);
    for (const it of rest) n += fillCounting(bits, it, live, sets);
    return n;
  }
  const it: DocIterator = rest.length === 1 ? rest[0]! : new UnionIterator(rest);
  next: for (let d = it.nextDoc(); d !== NO_MORE_DOCS; d = it.nextDoc()) {
    const word = d >>> 5;
    const bit = 1 << (d & 31);
    if (live !== undefined && (live[word]! & bit) === 0) continue;
    for (let j = 0; j < k; j++) if ((sets[j]![word]! & bit) !== 0) continue next;
    n++;
  }
  return n;
}

/**
 * Live documents of `union` matching every one of `filters` and none of `exclusions` (each read from its
 * bitset when it has one, else by advancing its iterator), walked one document at a time: `countDisjunction`
 * of a sparse union. The walk stops once the count exceeds `stopAbove`, and returns that count. Consumes
 * the iterators.
 */
export function countByWalking(
  union: DocIterator[], filters: DocIterator[], exclusions: UnionMember[], live: Uint32Array | undefined, stopAbove = Infinity,
): number {
  if (union.length === 0) return 0;
  const it: DocIterator = union.length === 1 ? union[0]! : new UnionIterator(union);
  const sets = exclusions.flatMap((e) => (e.bits !== undefined ? [e.bits] : []));
  const walked = exclusions.flatMap((e) => (e.bits === undefined ? [e.it] : []));
  let n = 0;
  next: for (let d = it.nextDoc(); d !== NO_MORE_DOCS; d = it.nextDoc()) {
    const word = d >>> 5;
    const bit = 1 << (d & 31);
    if (live !== undefined && (live[word]! & bit) === 0) continue;
    for (const f of filters) if (!matchesAt(f, d)) continue next;
    for (const s of sets) if ((s[word]! & bit) !== 0) continue next;
    for (const e of walked) if (matchesAt(e, d)) continue next;
    if (++n > stopAbove) break;
  }
  return n;
}
