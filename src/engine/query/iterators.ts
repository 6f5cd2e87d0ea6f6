/**
 * Document iterators over one segment: the matching half of a scorer. Every iterator here is *exact*: it
 * stops only on documents its clause matches (a phrase iterator checks positions before stopping), so a
 * clause matches document d exactly when, advanced to d, it sits on d. Deleted documents are included;
 * the executor checks liveness once per candidate.
 *
 * Contract (the same as PostingsCursor's): `doc()` is -1 before the first move; `advance(target)` needs
 * target > doc() and lands on the first match ≥ target; NO_MORE_DOCS once exhausted, and moving after
 * that is legal and stays there.
 */
import { NO_MORE_DOCS, type PostingsCursor } from '../index/types.js';
import { checkDeadline } from './deadline.js';

export interface DocIterator {
  doc(): number;
  nextDoc(): number;
  advance(target: number): number;
  /** An estimate of how many documents it visits (for ordering conjunctions and choosing plans). */
  readonly cost: number;
  /**
   * The one postings list whose documents are exactly its matches, when it is one: a term's, or the pair
   * term that alone decides a two-word phrase. Its length counts the matches (deleted ones included).
   */
  readonly list?: PostingsCursor | undefined;
}

/** Positions a clause iterator on `doc` if it can be; true when it matches `doc`. For increasing docs only. */
export function matchesAt(it: DocIterator, doc: number): boolean {
  let d = it.doc();
  if (d < doc) d = it.advance(doc);
  return d === doc;
}

/** Matches nothing. */
export const EMPTY: DocIterator = {
  doc: () => NO_MORE_DOCS,
  nextDoc: () => NO_MORE_DOCS,
  advance: () => NO_MORE_DOCS,
  cost: 0,
};

/** A term's postings. */
export class TermIterator implements DocIterator {
  readonly cost: number;
  constructor(readonly list: PostingsCursor) { this.cost = list.docFreq; }
  doc(): number { return this.list.doc(); }
  nextDoc(): number { return this.list.nextDoc(); }
  advance(target: number): number { return this.list.advance(target); }
}

/**
 * Documents where the phrase's terms occur at consecutive positions. `cursors` holds one cursor per
 * *distinct* term (opened with positions unless `exact`) and `slots[i]` is the cursor of the term at
 * offset i, so a repeated term (`"the the the …"`) is decoded once however often the phrase repeats it.
 *
 * `grams` are the cursors of the phrase's common-word pair terms (analysis/common-grams.ts): every
 * matching document has them all, so they join the conjunction (usually leading it: a pair is rarer than
 * either word). `exact` says the grams alone decide the match — a two-word phrase whose pair is a gram:
 * then the grams alone are intersected, no position is read, and the term cursors are left where they
 * are (a scorer advances them to the matches it scores).
 */
export class PhraseIterator implements DocIterator {
  readonly cost: number;
  readonly list: PostingsCursor | undefined;
  private current = -1;
  /** Term and gram cursors sorted by docFreq ascending, for the conjunction. */
  private readonly byCost: PostingsCursor[];
  constructor(
    readonly cursors: PostingsCursor[], private readonly slots: Int32Array,
    grams: PostingsCursor[] = [], private readonly exact = false,
  ) {
    this.byCost = (exact ? [...grams] : [...grams, ...cursors]).sort((a, b) => a.docFreq - b.docFreq);
    this.cost = this.byCost[0]!.docFreq;
    this.list = exact && grams.length === 1 ? grams[0] : undefined;
  }
  doc(): number { return this.current; }
  nextDoc(): number { return this.advance(this.current + 1); }
  advance(target: number): number {
    if (this.current === NO_MORE_DOCS) return NO_MORE_DOCS;
    const lead = this.byCost[0]!;
    let d = lead.doc() >= target ? lead.doc() : lead.advance(target);
    for (;;) {
      if (d === NO_MORE_DOCS) return (this.current = NO_MORE_DOCS);
      let agreed = true;
      for (let i = 1; i < this.byCost.length; i++) {
        const c = this.byCost[i]!;
        let cd = c.doc();
        if (cd < d) cd = c.advance(d);
        if (cd > d) { d = lead.advance(cd); agreed = false; break; }
      }
      if (agreed) {
        checkDeadline(); // reading and matching positions is the costly step of a phrase
        if (this.exact || this.positionsMatch()) return (this.current = d);
        d = lead.nextDoc();
      }
    }
  }
  /** Is there p with p + i in positions(slots[i]) for every offset i? */
  private positionsMatch(): boolean {
    const slots = this.slots;
    const n = slots.length;
    if (n === 1) return true;
    const byCursor = this.cursors.map((c) => c.positions());
    const idx = new Int32Array(n);
    const first = byCursor[slots[0]!]!;
    outer: for (let k = 0; k < first.length; k++) {
      const p = first[k]!;
      for (let i = 1; i < n; i++) {
        const list = byCursor[slots[i]!]!;
        const want = p + i;
        let j = idx[i]!;
        while (j < list.length && list[j]! < want) j++;
        idx[i] = j;
        if (j >= list.length) return false;
        if (list[j] !== want) continue outer;
      }
      return true;
    }
    return false;
  }
}

/** Documents every sub-iterator matches (leap-frog from the cheapest). */
export class ConjunctionIterator implements DocIterator {
  readonly cost: number;
  private readonly subs: DocIterator[];
  private current = -1;
  constructor(subs: DocIterator[]) {
    this.subs = [...subs].sort((a, b) => a.cost - b.cost);
    this.cost = this.subs[0]!.cost;
  }
  doc(): number { return this.current; }
  nextDoc(): number { return this.advance(this.current + 1); }
  advance(target: number): number {
    if (this.current === NO_MORE_DOCS) return NO_MORE_DOCS;
    const lead = this.subs[0]!;
    let d = lead.doc() >= target ? lead.doc() : lead.advance(target);
    for (;;) {
      if (d === NO_MORE_DOCS) return (this.current = NO_MORE_DOCS);
      let agreed = true;
      for (let i = 1; i < this.subs.length; i++) {
        const s = this.subs[i]!;
        let sd = s.doc();
        if (sd < d) sd = s.advance(d);
        if (sd > d) { d = lead.advance(sd); agreed = false; break; }
      }
      if (agreed) return (this.current = d);
    }
  }
}

/** Above this many sub-iterators a union keeps them in a heap rather than scanning them all per doc. */
export const UNION_HEAP_THRESHOLD = 8;

/**
 * Documents any sub-iterator matches. Invariant after every move: each sub sits on a doc ≥ doc(), and the
 * subs on exactly doc() are the ones that match it (`subs[i].doc() === doc()`). Few subs are scanned per
 * move; many (long queries) are kept in a binary min-heap by current doc, so a move costs O(log n) per
 * sub that actually moves instead of O(n).
 */
export class UnionIterator implements DocIterator {
  readonly cost: number;
  private current = -1;
  /** Heap of sub indexes by current doc (only when subs.length > UNION_HEAP_THRESHOLD). */
  private readonly heap: Int32Array | undefined;
  constructor(readonly subs: DocIterator[]) {
    let c = 0;
    for (const s of subs) c += s.cost;
    this.cost = c;
    if (subs.length > UNION_HEAP_THRESHOLD) this.heap = Int32Array.from(subs, (_, i) => i); // all at -1: a valid heap
  }
  doc(): number { return this.current; }
  nextDoc(): number { return this.advance(this.current + 1); }
  advance(target: number): number {
    if (this.current === NO_MORE_DOCS) return NO_MORE_DOCS;
    const heap = this.heap;
    if (heap === undefined) {
      let min = NO_MORE_DOCS;
      for (const s of this.subs) {
        let d = s.doc();
        if (d < target) d = s.advance(target);
        if (d < min) min = d;
      }
      return (this.current = min);
    }
    const subs = this.subs;
    for (;;) {
      const top = subs[heap[0]!]!;
      if (top.doc() >= target) return (this.current = top.doc());
      top.advance(target);
      this.siftDown(heap, subs);
    }
  }
  private siftDown(heap: Int32Array, subs: DocIterator[]): void {
    const n = heap.length;
    let i = 0;
    const x = heap[0]!;
    const xd = subs[x]!.doc();
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      let c = l;
      let cd = subs[heap[l]!]!.doc();
      if (l + 1 < n) {
        const rd = subs[heap[l + 1]!]!.doc();
        if (rd < cd) { c = l + 1; cd = rd; }
      }
      if (cd >= xd) break;
      heap[i] = heap[c]!;
      i = c;
    }
    heap[i] = x;
  }
}

/** Builds the cheapest exact iterator for an AND of `subs` (one sub is itself; none is EMPTY's opposite: undefined). */
export function conjunction(subs: DocIterator[]): DocIterator | undefined {
  if (subs.length === 0) return undefined;
  if (subs.length === 1) return subs[0];
  return new ConjunctionIterator(subs);
}
