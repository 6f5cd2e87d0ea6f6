/**
 * The surface dictionary: every surface form of a searcher snapshot (analyzed, folded, NOT stemmed) with
 * the number of documents that contain it. Suggest (CONTRACT §2 `/api/suggest`) completes prefixes from
 * it and did-you-mean (CONTRACT §2 `did_you_mean`) looks for corrections in it.
 *
 * It is two parallel arrays, forms in ascending UTF-16 code-unit order and their dfs, because a sorted
 * array is already an implicit trie: the forms sharing a prefix are one contiguous range, found by binary
 * search. That one layout serves both operations without a second structure per form (a node-per-char
 * trie over ~1M forms costs hundreds of MB in JS objects):
 *
 * - completion: the prefix's range by binary search, then the top `limit` dfs of the range through a
 *   segment tree of range-argmax (a heap of sub-ranges, O(limit · log n)), so a one-letter prefix with
 *   100k forms costs no more than a long one;
 * - correction: a depth-first walk of that implicit trie carrying one row of the edit-distance matrix per
 *   depth; when every cell of a row exceeds the allowed budget, no form under that prefix can come back
 *   within it, and the walk jumps past the prefix's whole range (jump tables for the first levels, else
 *   a galloping search). Two walks, one over the forms and one over the reversed forms, each strict near
 *   its root, find exactly the forms within the distance (see `search`). Distance 1 is tried first;
 *   distance 2 only when it finds nothing. The walks read packed copies of the forms (one Uint16Array),
 *   built with the reversed forms on the first correction.
 *
 * Distance is the optimal-string-alignment variant of Damerau–Levenshtein (insert, delete, substitute,
 * transpose two adjacent characters, no substring edited twice) — the "restricted" distance that Lucene's
 * fuzzy automata also implement. It differs from the unrestricted distance only when a transposed pair is
 * edited again (`ca`→`abc` is 3 here, 2 unrestricted), which a one- or two-typo correction never needs.
 * Characters are UTF-16 code units, lengths too: analyzed forms are folded to letters and digits, which
 * are one code unit for every script outside the supplementary planes.
 *
 * Immutable once built; one per searcher snapshot.
 */

/** Longest word `correct` looks at; longer tokens are identifiers or noise, not typos. */
const MAX_CORRECT_LENGTH = 48;

/** A word is "rare" when it is in at most this fraction of the documents (CONTRACT §2: 0.1%). */
const RARE_FRACTION = 0.001;

/**
 * `update` carries the reversed forms over when at most 1/CARRY_LIMIT of the forms are new; beyond that
 * they are rebuilt (lazily) with the multikey sort, which is faster on many forms.
 */
const CARRY_LIMIT = 8;

export class SurfaceDictionary {
  /** Ascending, distinct. */
  private readonly forms: string[];
  /** `dfs[i]` = documents containing `forms[i]`. */
  private readonly dfs: Uint32Array;
  /** Segment tree of range-argmax over `dfs` (ties to the smaller index: alphabetical); built lazily. */
  private tree: Int32Array | undefined;
  private treeSize = 0;
  /** The forms reversed and sorted, for the backward half of the correction search; built lazily. */
  private reversed: ReversedForms | undefined;
  /** The forms packed for the correction walk (see `PackedForms`); built lazily. */
  private packed: PackedForms | undefined;

  private constructor(forms: string[], dfs: Uint32Array) {
    this.forms = forms;
    this.dfs = dfs;
  }

  /** An empty dictionary (an empty index). */
  static empty(): SurfaceDictionary {
    return new SurfaceDictionary([], new Uint32Array(0));
  }

  /**
   * Merges per-segment sources, each ascending in code-unit order as `SegmentReader.surfaceForms()`
   * yields them; the dfs of a form present in several sources are summed. A source out of order throws
   * (an `Error`: it is a bug in the index, never caused by input).
   */
  static merge(sources: Iterable<readonly [form: string, df: number]>[]): SurfaceDictionary {
    const forms: string[] = [];
    let dfs = new Uint32Array(1024);
    const push = (form: string, df: number) => {
      const n = forms.length;
      if (n > 0 && forms[n - 1] === form) {
        dfs[n - 1]! += df;
        return;
      }
      if (n > 0 && forms[n - 1]! > form) throw new Error(`surface forms out of order: ${JSON.stringify(forms[n - 1])} before ${JSON.stringify(form)}`);
      if (n === dfs.length) {
        const grown = new Uint32Array(n * 2);
        grown.set(dfs);
        dfs = grown;
      }
      forms.push(form);
      dfs[n] = df;
    };

    const iterators = sources.map((s) => s[Symbol.iterator]());
    if (iterators.length === 1) {
      for (let r = iterators[0]!.next(); !r.done; r = iterators[0]!.next()) push(r.value[0], r.value[1]);
    } else if (iterators.length > 1) {
      // k-way merge through a binary min-heap of the sources' current heads
      const heads: (readonly [string, number])[] = [];
      const heap: number[] = [];
      const less = (a: number, b: number) => heads[a]![0] < heads[b]![0] || (heads[a]![0] === heads[b]![0] && a < b);
      const siftDown = (i: number) => {
        const n = heap.length;
        for (;;) {
          const l = 2 * i + 1;
          if (l >= n) return;
          const c = l + 1 < n && less(heap[l + 1]!, heap[l]!) ? l + 1 : l;
          if (!less(heap[c]!, heap[i]!)) return;
          [heap[c], heap[i]] = [heap[i]!, heap[c]!];
          i = c;
        }
      };
      iterators.forEach((it, k) => {
        const r = it.next();
        heads[k] = r.done ? ['', 0] : r.value;
        if (!r.done) heap.push(k);
      });
      for (let i = (heap.length >> 1) - 1; i >= 0; i--) siftDown(i);
      while (heap.length > 0) {
        const k = heap[0]!;
        const [form, df] = heads[k]!;
        push(form, df);
        const r = iterators[k]!.next();
        if (r.done) {
          heap[0] = heap[heap.length - 1]!;
          heap.pop();
        } else {
          if (r.value[0] < form) throw new Error(`surface forms out of order: ${JSON.stringify(form)} before ${JSON.stringify(r.value[0])}`);
          heads[k] = r.value;
        }
        if (heap.length > 0) siftDown(0);
      }
    }
    return new SurfaceDictionary(forms, dfs.slice(0, forms.length));
  }

  /**
   * The dictionary of `base`'s sources without `removed` and with `added` (each ascending, as for
   * `merge`): equal to `merge` of the new set of sources, in time linear in `base`'s size plus the
   * changes, with no sort of the whole vocabulary. A commit that adds a small segment, or a merge that
   * replaces segments by one with the same forms, thus costs a pass over the arrays instead of a rebuild;
   * the reversed forms of the correction search are carried over too when `base` had built them and few
   * forms are new.
   * A form removed more often than it was added throws (an `Error`: the sources are not base's).
   */
  static update(base: SurfaceDictionary, removed: Iterable<readonly [form: string, df: number]>[],
    added: Iterable<readonly [form: string, df: number]>[]): SurfaceDictionary {
    const plus = SurfaceDictionary.merge(added);
    const minus = SurfaceDictionary.merge(removed);
    const n = base.forms.length;
    const forms: string[] = [];
    const dfs = new Uint32Array(n + plus.forms.length);
    /** Each base form's index in the new dictionary, −1 when it is gone. */
    const moved = new Int32Array(n);
    /** New indices of the forms base did not have, ascending. */
    const inserted: number[] = [];
    let i = 0;
    let p = 0;
    let q = 0;
    for (;;) {
      const a = plus.forms[p];
      const b = minus.forms[q];
      const next = a === undefined ? b : b === undefined || a < b ? a : b;
      // base's forms before the next change come over as they are
      const stop = next === undefined ? n : base.lowerBound(next, i, n);
      for (; i < stop; i++) {
        moved[i] = forms.length;
        dfs[forms.length] = base.dfs[i]!;
        forms.push(base.forms[i]!);
      }
      if (next === undefined) break;
      const inBase = i < n && base.forms[i] === next;
      let df = inBase ? base.dfs[i]! : 0;
      if (next === a) df += plus.dfs[p++]!;
      if (next === b) df -= minus.dfs[q++]!;
      if (df < 0) throw new Error(`surface form ${JSON.stringify(next)} removed more often than it was added`);
      if (df > 0) {
        if (inBase) moved[i] = forms.length;
        else inserted.push(forms.length);
        dfs[forms.length] = df;
        forms.push(next);
      } else if (inBase) {
        moved[i] = -1;
      }
      if (inBase) i++;
    }
    const dict = new SurfaceDictionary(forms, dfs.slice(0, forms.length));
    // the new forms are sorted with a comparison sort: worth it for a few, not for a new vocabulary
    if (base.reversed !== undefined && inserted.length <= forms.length / CARRY_LIMIT) {
      dict.reversed = dict.reversedFrom(base.packed!, base.reversed, moved, inserted);
    }
    return dict;
  }

  /**
   * Checks the invariants the searches rely on and throws an `Error` naming the first one broken: forms
   * strictly ascending with positive dfs, packed as they are; the reversed forms, when built, a
   * permutation of the forms in strictly ascending reversed order, each packed as its form reversed.
   * (The walks would still find every form in a misordered array, only slower: tests check the order.)
   */
  verify(): void {
    const { forms, dfs } = this;
    for (let i = 0; i < forms.length; i++) {
      if (i > 0 && !(forms[i - 1]! < forms[i]!)) throw new Error(`forms out of order at ${i}`);
      if (!(dfs[i]! > 0)) throw new Error(`form ${JSON.stringify(forms[i])} has df ${dfs[i]}`);
    }
    const { chars, offsets } = this.packed ??= pack(forms);
    for (let i = 0; i < forms.length; i++) {
      const f = forms[i]!;
      let same = offsets[i + 1]! - offsets[i]! === f.length;
      for (let c = 0; same && c < f.length; c++) same = chars[offsets[i]! + c] === f.charCodeAt(c);
      if (!same) throw new Error(`packed form ${i} is not ${JSON.stringify(f)}`);
    }
    if (this.reversed === undefined) return;
    const index = this.reversed.index;
    const seen = new Uint8Array(forms.length);
    if (index.length !== forms.length) throw new Error(`${index.length} reversed forms for ${forms.length} forms`);
    for (let k = 0; k < index.length; k++) {
      const i = index[k]!;
      if (!(i >= 0 && i < forms.length) || seen[i]++) throw new Error(`reversed form ${k} names form ${i} twice or out of range`);
      if (k > 0 && compareReversed(index[k - 1]!, i, chars, offsets) >= 0) throw new Error(`reversed forms out of order at ${k}`);
      const r = this.reversed.packed;
      const len = offsets[i + 1]! - offsets[i]!;
      let same = r.offsets[k + 1]! - r.offsets[k]! === len;
      for (let c = 0; same && c < len; c++) same = r.chars[r.offsets[k]! + c] === chars[offsets[i + 1]! - 1 - c];
      if (!same) throw new Error(`reversed form ${k} is not form ${i} reversed`);
    }
  }

  /** Number of distinct forms. */
  get size(): number {
    return this.forms.length;
  }

  /** Documents containing `form` (0 when absent). */
  df(form: string): number {
    const i = this.lowerBound(form, 0, this.forms.length);
    return i < this.forms.length && this.forms[i] === form ? this.dfs[i]! : 0;
  }

  /**
   * Forms starting with `prefix` (the prefix itself included when it is a form), by df descending then
   * alphabetically (code-unit order), at most `limit`.
   */
  complete(prefix: string, limit = 10): string[] {
    if (limit <= 0) return [];
    const lo = this.lowerBound(prefix, 0, this.forms.length);
    const hi = prefixEnd(this.forms, prefix, prefix.length, lo);
    if (hi - lo <= limit) return this.sortedByDf(lo, hi);
    if (hi - lo <= 64) return this.sortedByDf(lo, hi).slice(0, limit);
    // Best-first over sub-ranges: each heap entry is a range and its argmax; popping the best emits it and
    // pushes the two halves around it. Ties between equal dfs go to the smaller index (alphabetical).
    const heap: { lo: number; hi: number; at: number }[] = [];
    const better = (a: number, b: number) => this.dfs[a]! > this.dfs[b]! || (this.dfs[a]! === this.dfs[b]! && a < b);
    const push = (l: number, h: number) => {
      if (l >= h) return;
      const e = { lo: l, hi: h, at: this.argmax(l, h) };
      heap.push(e);
      let i = heap.length - 1;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!better(heap[i]!.at, heap[p]!.at)) break;
        [heap[i], heap[p]] = [heap[p]!, heap[i]!];
        i = p;
      }
    };
    const pop = () => {
      const top = heap[0]!;
      const last = heap.pop()!;
      if (heap.length > 0) {
        heap[0] = last;
        let i = 0;
        for (;;) {
          const l = 2 * i + 1;
          if (l >= heap.length) break;
          const c = l + 1 < heap.length && better(heap[l + 1]!.at, heap[l]!.at) ? l + 1 : l;
          if (!better(heap[c]!.at, heap[i]!.at)) break;
          [heap[c], heap[i]] = [heap[i]!, heap[c]!];
          i = c;
        }
      }
      return top;
    };
    const out: string[] = [];
    push(lo, hi);
    while (out.length < limit && heap.length > 0) {
      const { lo: l, hi: h, at } = pop();
      out.push(this.forms[at]!);
      push(l, at);
      push(at + 1, h);
    }
    return out;
  }

  /**
   * The did-you-mean replacement for one analyzed (unstemmed) word, or undefined (CONTRACT §2):
   * a word of ≥ 4 characters in at most 0.1% of `totalDocs` documents is replaced by the best form within
   * distance 1 (length 4–8) or 2 (length ≥ 9) found in more documents than the word itself — smallest
   * distance, then highest df, then alphabetical. Candidates are filtered by df before choosing, so a
   * closer but rarer form never hides a useful one. Whether the corrected query matches more documents is
   * the caller's check.
   */
  correct(word: string, totalDocs: number): string | undefined {
    const m = word.length;
    if (m < 4 || m > MAX_CORRECT_LENGTH) return undefined;
    const own = this.df(word);
    if (own > RARE_FRACTION * totalDocs) return undefined;
    let best = -1;
    let bestDist = Infinity;
    const consider = (i: number, d: number) => {
      const df = this.dfs[i]!;
      if (df <= own || d === 0) return;
      if (d < bestDist || (d === bestDist && (df > this.dfs[best]! || (df === this.dfs[best]! && i < best)))) {
        best = i;
        bestDist = d;
      }
    };
    // smallest distance first: a candidate at distance 1 beats every one at 2, so the (far costlier)
    // distance-2 search runs only when distance 1 offers none
    this.search(word, 1, consider);
    if (best < 0 && m >= 9) this.search(word, 2, consider);
    return best < 0 ? undefined : this.forms[best];
  }

  /** Every form within `maxDist` (OSA distance) of `word`, with its distance, in ascending order. */
  within(word: string, maxDist: number): { form: string; df: number; distance: number }[] {
    const hits = new Map<number, number>();
    this.search(word, maxDist, (i, d) => hits.set(i, d));
    return [...hits].sort((a, b) => a[0] - b[0]).map(([i, d]) => ({ form: this.forms[i]!, df: this.dfs[i]!, distance: d }));
  }

  /**
   * Calls `found(index, distance)` for every form within `maxDist` of `word` (some possibly twice).
   *
   * A plain walk of the implicit trie prunes nothing at depths ≤ maxDist (any prefix that short is within
   * maxDist of the empty prefix) and little just below, so with distance 2 it touches a good part of a
   * large dictionary. Instead, two walks with a stricter budget near the root:
   * - walk F over the forms allows only maxDist − 1 edits in candidate prefixes of length ≤ a;
   * - walk R over the reversed forms, with the reversed word, allows no edit in the first a' characters;
   * with a + a' = m − maxDist − 1. Charge each edit of an optimal alignment to the shortest prefix whose
   * row accounts for it: at depth t forward and t' backward, with t + t' ≥ |form| ≥ m − maxDist. If no
   * edit has t' ≤ a', walk R finds the form. Otherwise that edit has t ≥ m − maxDist − a' > a, so at most
   * maxDist − 1 edits fall at depths ≤ a and walk F finds it. So the union is exact; walk R follows one
   * exact suffix, walk F prefixes with at most maxDist − 1 typos. (fast-check compares it with a naive
   * scan.)
   */
  private search(word: string, maxDist: number, found: (index: number, distance: number) => void): void {
    const span = word.length - maxDist - 1;
    const forward = this.packed ??= pack(this.forms);
    if (maxDist === 0 || span <= 0) {
      this.walkWithin(forward, word, maxDist, 0, 0, found);
      return;
    }
    const a = (span + 1) >> 1;
    this.walkWithin(forward, word, maxDist, a, maxDist - 1, found);
    const reversed = this.reversedForms();
    this.walkWithin(reversed.packed, reverse(word), maxDist, span - a, 0, (k, d) => found(reversed.index[k]!, d));
  }

  /** The forms reversed (code unit by code unit), sorted, with each one's index in `forms`; built once. */
  private reversedForms(): ReversedForms {
    if (this.reversed === undefined) {
      const { chars, offsets } = this.packed ??= pack(this.forms);
      const n = offsets.length - 1;
      // each form's code units reversed in place of its own, then the forms' order sorted by them: no
      // string is built, and the sort compares integers (multikey quicksort, not string comparisons)
      const rchars = new Uint16Array(chars.length);
      for (let i = 0; i < n; i++) {
        const from = offsets[i]!;
        const to = offsets[i + 1]!;
        for (let k = 0; k < to - from; k++) rchars[from + k] = chars[to - 1 - k]!;
      }
      const index = new Int32Array(n);
      for (let i = 0; i < n; i++) index[i] = i;
      multikeySort(index, 0, n, 0, rchars, offsets);
      const sortedChars = new Uint16Array(chars.length);
      const sortedOffsets = new Int32Array(n + 1);
      let at = 0;
      for (let k = 0; k < n; k++) {
        const i = index[k]!;
        sortedOffsets[k] = at;
        sortedChars.set(rchars.subarray(offsets[i]!, offsets[i + 1]!), at);
        at += offsets[i + 1]! - offsets[i]!;
      }
      sortedOffsets[n] = at;
      this.reversed = { packed: { chars: sortedChars, offsets: sortedOffsets, ends: jumpTables(sortedChars, sortedOffsets) }, index };
    }
    return this.reversed;
  }

  /**
   * The packed and reversed forms from those of the dictionary this one was updated from (`update`):
   * the reversed order is the old one renumbered through `moved` (the removed dropped: the rest keep
   * their order), merged with the order of the `inserted` forms, which alone are sorted; the code units
   * of the forms that stayed are copied from the old arrays a run at a time.
   */
  private reversedFrom(oldPacked: PackedForms, oldReversed: ReversedForms, moved: Int32Array, inserted: readonly number[]): ReversedForms {
    const n = this.forms.length;
    /** For each form, its index in the old dictionary, −1 when new. */
    const was = new Int32Array(n).fill(-1);
    for (let i = 0; i < moved.length; i++) if (moved[i]! >= 0) was[moved[i]!] = i;
    const forms = this.forms;
    const packed = this.packed = repack(oldPacked, was, (j) => forms[j]!.length, (j, out, at) => {
      const f = forms[j]!;
      for (let c = 0; c < f.length; c++) out[at + c] = f.charCodeAt(c);
    });
    const { chars, offsets } = packed;
    const cmp = (a: number, b: number) => compareReversed(a, b, chars, offsets);
    const fresh = Int32Array.from(inserted).sort(cmp);
    const oldOrder = oldReversed.index;
    const index = new Int32Array(n);
    /** For each reversed position, the old reversed position of its form, −1 when new. */
    const wasAt = new Int32Array(n);
    let k = 0;
    let f = 0;
    for (let o = 0; o < oldOrder.length; o++) {
      const i = moved[oldOrder[o]!]!;
      if (i < 0) continue;
      while (f < fresh.length && cmp(fresh[f]!, i) < 0) {
        wasAt[k] = -1;
        index[k++] = fresh[f++]!;
      }
      wasAt[k] = o;
      index[k++] = i;
    }
    while (f < fresh.length) {
      wasAt[k] = -1;
      index[k++] = fresh[f++]!;
    }
    const reversedPacked = repack(oldReversed.packed, wasAt, (r) => offsets[index[r]! + 1]! - offsets[index[r]!]!, (r, out, at) => {
      const j = index[r]!;
      for (let c = offsets[j + 1]! - 1; c >= offsets[j]!; c--) out[at++] = chars[c]!;
    });
    return { packed: reversedPacked, index };
  }

  /**
   * Calls `found(index, distance)` for every form of the sorted array `forms` within `maxDist` of `word`
   * whose prefixes of length ≤ `strictDepth` are each within `strictBudget` of some prefix of the word, in
   * ascending order. The walk
   * keeps `rows[d]` = the distance row of the candidate prefix of length d against every prefix of `word`
   * (row[j] = distance(prefix, word[0..j))); rows up to the common prefix with the previous form are
   * reused. Pruning is sound for OSA because a transposition cell D[d+1][j+1] = D[d-1][j-1] + 1 is never
   * below D[d][j], so once a whole row exceeds maxDist every deeper row does too.
   */
  private walkWithin(forms: PackedForms, word: string, maxDist: number, strictDepth: number, strictBudget: number,
    found: (index: number, distance: number) => void): void {
    const m = word.length;
    const width = m + 1;
    const maxDepth = m + maxDist;
    // Only the band |d − j| ≤ maxDist of each row is computed (a cell outside it is > maxDist); values are
    // capped at maxDist + 1, which changes no decision (every operation adds 0 or 1). The cells just
    // outside a row's band hold the cap, so the next row reads a correct bound there.
    const cap = maxDist + 1;
    const rows = new Int32Array((maxDepth + 1) * width).fill(cap);
    for (let j = 0; j <= Math.min(m, maxDist); j++) rows[j] = j;
    const { chars, offsets, ends } = forms;
    const n = offsets.length - 1;
    // the candidate prefix whose rows 1..pathLen are valid: the first pathLen code units of the form
    // starting at chars[pathAt]
    let pathAt = 0;
    let pathLen = 0;
    let i = 0;
    while (i < n) {
      const at = offsets[i]!;
      const len = offsets[i + 1]! - at;
      let l = 0;
      const lim = pathLen < len ? pathLen : len;
      while (l < lim && chars[pathAt + l] === chars[at + l]) l++;
      let d = l + 1;
      let pruned = -1;
      const depthLimit = len < maxDepth ? len : maxDepth;
      for (; d <= depthLimit; d++) {
        const c = chars[at + d - 1]!;
        const cur = d * width;
        const prev = cur - width;
        const lo = d > maxDist ? d - maxDist : 1;
        const hi = d + maxDist < m ? d + maxDist : m;
        rows[cur] = d < cap ? d : cap;
        if (lo > 1) rows[cur + lo - 1] = cap;
        if (hi < m) rows[cur + hi + 1] = cap;
        let rowMin = lo === 1 ? rows[cur]! : cap;
        const before = d > 1 ? chars[at + d - 2]! : -1;
        for (let j = lo; j <= hi; j++) {
          const wc = word.charCodeAt(j - 1);
          let v = rows[prev + j - 1]! + (wc === c ? 0 : 1);
          const del = rows[prev + j]! + 1;
          if (del < v) v = del;
          const ins = rows[cur + j - 1]! + 1;
          if (ins < v) v = ins;
          if (j > 1 && before === wc && c === word.charCodeAt(j - 2)) {
            const t = rows[prev - width + j - 2]! + 1;
            if (t < v) v = t;
          }
          if (v > cap) v = cap;
          rows[cur + j] = v;
          if (v < rowMin) rowMin = v;
        }
        if (rowMin > (d <= strictDepth ? strictBudget : maxDist)) {
          pruned = d;
          break;
        }
      }
      pathAt = at;
      if (pruned > 0) {
        // nothing under this form's first `pruned` code units can come back within the budget: skip them
        pathLen = pruned - 1;
        i = pruned <= JUMP_DEPTH ? ends[pruned - 1]![i]! : packedPrefixEnd(forms, at, pruned, i);
      } else if (len <= maxDepth) {
        pathLen = len;
        if (len >= m - maxDist) {
          const dist = rows[len * width + m]!;
          if (dist <= maxDist) found(i, dist);
        }
        i++;
      } else {
        // deeper than any match can be, and so is everything under its first maxDepth+1 code units
        pathLen = maxDepth;
        i = maxDepth + 1 <= JUMP_DEPTH ? ends[maxDepth]![i]! : packedPrefixEnd(forms, at, maxDepth + 1, i);
      }
    }
  }

  /** First index in [lo, hi) whose form is ≥ `key`. */
  private lowerBound(key: string, lo: number, hi: number): number {
    const forms = this.forms;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (forms[mid]! < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private sortedByDf(lo: number, hi: number): string[] {
    const idx: number[] = [];
    for (let i = lo; i < hi; i++) idx.push(i);
    idx.sort((a, b) => this.dfs[b]! - this.dfs[a]! || a - b);
    return idx.map((i) => this.forms[i]!);
  }

  /** Index of the largest df in [lo, hi), the smallest index among ties. */
  private argmax(lo: number, hi: number): number {
    if (this.tree === undefined) this.buildTree();
    const tree = this.tree!;
    const dfs = this.dfs;
    let best = -1;
    const take = (i: number) => {
      if (best < 0 || dfs[i]! > dfs[best]! || (dfs[i]! === dfs[best]! && i < best)) best = i;
    };
    // iterative bottom-up segment tree query over [lo, hi)
    let l = lo + this.treeSize;
    let r = hi + this.treeSize;
    while (l < r) {
      if (l & 1) take(tree[l++]!);
      if (r & 1) take(tree[--r]!);
      l >>= 1;
      r >>= 1;
    }
    return best;
  }

  private buildTree(): void {
    const n = this.forms.length;
    let size = 1;
    while (size < n) size <<= 1;
    const tree = new Int32Array(2 * size).fill(-1);
    for (let i = 0; i < n; i++) tree[size + i] = i;
    const dfs = this.dfs;
    for (let p = size - 1; p >= 1; p--) {
      const a = tree[2 * p]!;
      const b = tree[2 * p + 1]!;
      tree[p] = b < 0 ? a : a < 0 ? b : dfs[b]! > dfs[a]! ? b : a; // a < b always: ties keep a
    }
    this.tree = tree;
    this.treeSize = size;
  }
}

/**
 * Depth of the jump tables: most of the correction walk's skips happen within the first few characters,
 * where ranges are large and a search for their end costs dozens of comparisons each. 4·JUMP_DEPTH bytes
 * per form and direction.
 */
const JUMP_DEPTH = 4;

/**
 * The forms as the correction walk reads them: every form's code units in one `Uint16Array` (`offsets[i]`
 * to `offsets[i + 1]`), so the walk's inner loops read a typed array instead of strings of several
 * representations (one-byte, two-byte, sliced), and `ends`, the jump tables:
 * `ends[d - 1][i]` = the first index after i whose form does not share form i's first d code units, for
 * d = 1..JUMP_DEPTH and form i at least d long (other entries unused) — the end of the range the walk
 * skips when it prunes at depth d, in O(1).
 */
interface PackedForms {
  chars: Uint16Array;
  offsets: Int32Array;
  ends: Int32Array[];
}

function pack(forms: readonly string[]): PackedForms {
  const n = forms.length;
  const offsets = new Int32Array(n + 1);
  let total = 0;
  for (let i = 0; i < n; i++) {
    offsets[i] = total;
    total += forms[i]!.length;
  }
  offsets[n] = total;
  const chars = new Uint16Array(total);
  for (let i = 0; i < n; i++) {
    const f = forms[i]!;
    const at = offsets[i]!;
    for (let c = 0; c < f.length; c++) chars[at + c] = f.charCodeAt(c);
  }
  return { chars, offsets, ends: jumpTables(chars, offsets) };
}

/**
 * The jump tables of packed forms (see `PackedForms`): the common prefix of each form with the next
 * (up to JUMP_DEPTH code units) in one pass, then one backward scan of those lengths per depth.
 */
function jumpTables(chars: Uint16Array, offsets: Int32Array): Int32Array[] {
  const n = offsets.length - 1;
  const shared = new Uint8Array(n);
  for (let i = 0; i + 1 < n; i++) {
    const a = offsets[i]!;
    const b = offsets[i + 1]!;
    const limit = Math.min(JUMP_DEPTH, b - a, offsets[i + 2]! - b);
    let l = 0;
    while (l < limit && chars[a + l] === chars[b + l]) l++;
    shared[i] = l;
  }
  const ends: Int32Array[] = [];
  for (let d = 1; d <= JUMP_DEPTH; d++) {
    const e = new Int32Array(n);
    for (let i = n - 1; i >= 0; i--) e[i] = shared[i]! >= d ? e[i + 1]! : i + 1;
    ends.push(e);
  }
  return ends;
}

/**
 * Sorts `index[lo..hi)` by the code units of the forms they name (chars from `offsets[i]` to
 * `offsets[i + 1]`), all equal before `depth`, in code-unit order with a prefix first — JavaScript's
 * string order. Multikey quicksort (Bentley & Sedgewick): three-way partition on the code unit at
 * `depth` (−1 past a form's end), recurse on the smaller and larger parts, continue one unit deeper on
 * the equal part; short ranges by insertion sort.
 */
function multikeySort(index: Int32Array, lo: number, hi: number, depth: number, chars: Uint16Array, offsets: Int32Array): void {
  const key = (i: number, d: number) => (offsets[i]! + d < offsets[i + 1]! ? chars[offsets[i]! + d]! : -1);
  while (hi - lo > 1) {
    if (hi - lo <= 12) {
      for (let k = lo + 1; k < hi; k++) {
        const x = index[k]!;
        let j = k - 1;
        while (j >= lo && compareFrom(index[j]!, x, depth, chars, offsets) > 0) {
          index[j + 1] = index[j]!;
          j--;
        }
        index[j + 1] = x;
      }
      return;
    }
    const pivot = key(index[lo + ((hi - lo) >> 1)]!, depth);
    let lt = lo;
    let gt = hi - 1;
    let k = lo;
    while (k <= gt) {
      const v = key(index[k]!, depth);
      if (v < pivot) {
        const t = index[lt]!; index[lt] = index[k]!; index[k] = t;
        lt++;
        k++;
      } else if (v > pivot) {
        const t = index[gt]!; index[gt] = index[k]!; index[k] = t;
        gt--;
      } else {
        k++;
      }
    }
    multikeySort(index, lo, lt, depth, chars, offsets);
    multikeySort(index, gt + 1, hi, depth, chars, offsets);
    if (pivot < 0) return; // the equal part ended at this depth: nothing left to order
    lo = lt;
    hi = gt + 1;
    depth++;
  }
}

/** The forms reversed and sorted (`packed`), and `index[k]` = the index in `forms` of the k-th of them. */
interface ReversedForms {
  packed: PackedForms;
  index: Int32Array;
}

/**
 * Packed forms made from `old`: form j is old form `from[j]` when that is ≥ 0 (its code units copied,
 * runs of consecutive old forms at once), else `length(j)` code units that `write(j, chars, at)` puts at
 * `at`.
 */
function repack(old: PackedForms, from: Int32Array, length: (j: number) => number,
  write: (j: number, chars: Uint16Array, at: number) => void): PackedForms {
  const n = from.length;
  const offsets = new Int32Array(n + 1);
  let total = 0;
  for (let j = 0; j < n; j++) {
    offsets[j] = total;
    const o = from[j]!;
    total += o >= 0 ? old.offsets[o + 1]! - old.offsets[o]! : length(j);
  }
  offsets[n] = total;
  const chars = new Uint16Array(total);
  for (let j = 0; j < n;) {
    const o = from[j]!;
    if (o < 0) {
      write(j, chars, offsets[j]!);
      j++;
      continue;
    }
    let end = j + 1;
    while (end < n && from[end] === from[end - 1]! + 1) end++;
    chars.set(old.chars.subarray(old.offsets[o]!, old.offsets[o + end - j]!), offsets[j]!);
    j = end;
  }
  return { chars, offsets, ends: jumpTables(chars, offsets) };
}

/** Code-unit comparison of forms a and b read backwards, from their last code unit (a suffix first). */
function compareReversed(a: number, b: number, chars: Uint16Array, offsets: Int32Array): number {
  const sa = offsets[a]!;
  const sb = offsets[b]!;
  let pa = offsets[a + 1]! - 1;
  let pb = offsets[b + 1]! - 1;
  for (;; pa--, pb--) {
    if (pa < sa) return pb < sb ? 0 : -1;
    if (pb < sb) return 1;
    const diff = chars[pa]! - chars[pb]!;
    if (diff !== 0) return diff;
  }
}

/** Code-unit comparison of forms a and b from `depth` on (a prefix first). */
function compareFrom(a: number, b: number, depth: number, chars: Uint16Array, offsets: Int32Array): number {
  const pa = offsets[a]!;
  const la = offsets[a + 1]! - pa;
  const pb = offsets[b]!;
  const lb = offsets[b + 1]! - pb;
  for (let d = depth; ; d++) {
    if (d >= la) return d >= lb ? 0 : -1;
    if (d >= lb) return 1;
    const diff = chars[pa + d]! - chars[pb + d]!;
    if (diff !== 0) return diff;
  }
}

/**
 * First index ≥ `from` whose form does not start with the `len` code units at chars[keyAt], given that
 * the forms from `from` on are ≥ that prefix.
 */
function packedPrefixEnd(forms: PackedForms, keyAt: number, len: number, from: number): number {
  const { chars, offsets } = forms;
  const n = offsets.length - 1;
  const has = (k: number) => {
    const at = offsets[k]!;
    if (offsets[k + 1]! - at < len) return false;
    for (let c = 0; c < len; c++) if (chars[at + c] !== chars[keyAt + c]) return false;
    return true;
  };
  return gallopEnd(from, n, has);
}

/**
 * First index ≥ `from` whose form does not start with the first `len` code units of `key`, given that the
 * forms from `from` on are ≥ that prefix.
 */
function prefixEnd(forms: readonly string[], key: string, len: number, from: number): number {
  const n = forms.length;
  const has = (k: number) => {
    const f = forms[k]!;
    if (f.length < len) return false;
    for (let c = len - 1; c >= 0; c--) if (f.charCodeAt(c) !== key.charCodeAt(c)) return false;
    return true;
  };
  return gallopEnd(from, n, has);
}

/**
 * First index in [from, n] where `has` fails, given that it holds on a prefix of [from, n) and fails on
 * the rest. Gallops from `from` before bisecting: the walk's skips are mostly short.
 */
function gallopEnd(from: number, n: number, has: (k: number) => boolean): number {
  let lo = from;
  let step = 1;
  let hi = from + 1;
  while (hi < n && has(hi)) {
    lo = hi;
    step <<= 1;
    hi = from + step;
  }
  if (hi > n) hi = n;
  // every index before lo has it; hi does not (or hi = n)
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (has(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** `s` reversed code unit by code unit (surrogate pairs are reversed too: only compared, never shown). */
function reverse(s: string): string {
  let out = '';
  for (let i = s.length - 1; i >= 0; i--) out += s[i];
  return out;
}
