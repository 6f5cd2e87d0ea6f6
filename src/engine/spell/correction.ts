/**
 * Spelling correction (CONTRACT §2 `did_you_mean`) over a snapshot's surface dictionary: a depth-first
 * walk of the dictionary's implicit trie (its sorted forms) carrying one row of the edit-distance matrix
 * per depth; when every cell of a row exceeds the allowed budget, no form under that prefix can come back
 * within it, and the walk jumps past the prefix's whole range (jump tables for the first levels, else a
 * galloping search). Two walks, one over the forms and one over the reversed forms, each strict near its
 * root, find exactly the forms within the distance (see `WalkForms.search`). Distance 1 is tried first;
 * distance 2 only when it finds nothing. The walks read the dictionary's packed forms (one Uint16Array)
 * and packed reversed copies, built on the first correction.
 *
 * A commit changes the dictionary (new forms, dfs, forms gone), and rebuilding what the walks read is a
 * pass over every form: at a million documents' 1.4 M forms, ~110 ms to carry the reversed forms over and
 * ~60 ms for the jump tables, paid by the next query that needs a correction. So the walks' structures
 * come in two tiers, as an LSM tree's runs: the *anchor*, built over the dictionary of some earlier
 * commit and kept as it is, and the *recent* forms, those of the current dictionary the anchor lacks,
 * small and rebuilt (carried over) at each commit. Each tier maps its forms to their index in the current
 * dictionary (−1 for an anchor form since gone); a commit only composes the anchor's map with the
 * update's (an integer array pass) and updates the recent tier. When the recent forms or the anchor's
 * dead ones pass 1/FOLD_LIMIT of the dictionary, the tiers fold into one anchor over the current
 * dictionary. The walks' results and the choice made from them are the same whatever the tiers.
 *
 * Distance is the optimal-string-alignment variant of Damerau–Levenshtein (insert, delete, substitute,
 * transpose two adjacent characters, no substring edited twice) — the "restricted" distance that Lucene's
 * fuzzy automata also implement. It differs from the unrestricted distance only when a transposed pair is
 * edited again (`ca`→`abc` is 3 here, 2 unrestricted), which a one- or two-typo correction never needs.
 * Characters are UTF-16 code units, lengths too: analyzed forms are folded to letters and digits, which
 * are one code unit for every script outside the supplementary planes.
 *
 * One `Correction` per dictionary.
 */
import { gallopEnd, SurfaceDictionary, type DictionaryUpdate } from '../surface/index.js';

/** Longest word `correct` looks at; longer tokens are identifiers or noise, not typos. */
const MAX_CORRECT_LENGTH = 48;

/** Whether `correct` looks at a word of `length` characters (CONTRACT §2: 4 or more). */
function correctable(length: number): boolean {
  return length >= 4 && length <= MAX_CORRECT_LENGTH;
}

/** The most edits a correction of a word of `length` characters may make (CONTRACT §2: 2 from 9 characters). */
function correctionDistance(length: number): number {
  return length >= 9 ? 2 : 1;
}

/** A word is "rare" when it is in at most this fraction of the documents (CONTRACT §2: 0.1%). */
const RARE_FRACTION = 0.001;

/** Whether a word in `df` of `totalDocs` documents is rare (only a rare word is corrected). */
function rare(df: number, totalDocs: number): boolean {
  return df <= RARE_FRACTION * totalDocs;
}

/**
 * `WalkForms.after` carries the reversed forms over when at most 1/CARRY_LIMIT of the forms are new;
 * beyond that they are rebuilt (lazily) with the multikey sort, which is faster on many forms.
 */
const CARRY_LIMIT = 8;

/**
 * The tiers fold into one when the recent forms, or the anchor's forms since gone, are more than
 * 1/FOLD_LIMIT of the dictionary: a commit's work on the recent tier stays under 1/FOLD_LIMIT of a fold's,
 * and the walks never cross more than that share of dead forms.
 */
const FOLD_LIMIT = 16;

/** What `WalkForms.after` follows of a dictionary's update: where the forms went and which are new. */
type FormsUpdate = Pick<DictionaryUpdate, 'base' | 'dictionary' | 'moved' | 'inserted'>;

/** Forms the walks read, and where each is in the current dictionary (`toCurrent[i]`, −1 when gone; identity when undefined). */
interface Tier {
  forms: WalkForms;
  toCurrent: Int32Array | undefined;
}

/** The recent tier: its forms are all current, at ascending indices. */
interface RecentTier extends Tier {
  toCurrent: Int32Array;
}

export class Correction {
  /** The tier of an earlier (or this) dictionary's forms, kept across commits. */
  private readonly anchor: Tier;
  /** The current forms the anchor lacks; absent when there are none. */
  private readonly recent: RecentTier | undefined;

  /** A correction over `dictionary` alone; the tiers are `after`'s. */
  constructor(readonly dictionary: SurfaceDictionary, tiers?: { anchor: Tier; recent?: RecentTier | undefined }) {
    this.anchor = tiers?.anchor ?? { forms: new WalkForms(dictionary), toCurrent: undefined };
    this.recent = tiers?.recent;
  }

  /** The anchor, then the recent tier when there is one. */
  private get tiers(): Tier[] {
    return this.recent === undefined ? [this.anchor] : [this.anchor, this.recent];
  }

  /**
   * The correction of the dictionary `update` made from `previous`'s. When `previous` had built its walks'
   * structures, its anchor is kept with its map composed with the update's, and the recent tier takes the
   * new forms (its own structures carried over); past the fold limit the tiers become one anchor over the
   * new dictionary, whose reversed forms are carried over from the anchor's when few forms are new.
   * `foldLimit` is FOLD_LIMIT but in tests.
   */
  static after(previous: Correction | undefined, update: DictionaryUpdate, foldLimit = FOLD_LIMIT): Correction {
    const dictionary = update.dictionary;
    if (previous === undefined) return new Correction(dictionary);
    if (previous.dictionary !== update.base) throw new Error('the update was not made from this correction\'s dictionary');
    const { anchor, recent } = previous;
    if (!anchor.forms.built) return new Correction(dictionary);
    const moved = update.moved;
    const size = anchor.forms.dictionary.size;
    const toCurrent = new Int32Array(size);
    let dead = 0;
    for (let i = 0; i < size; i++) {
      const was = anchor.toCurrent === undefined ? i : anchor.toCurrent[i]!;
      const now = was < 0 ? -1 : moved[was]!;
      toCurrent[i] = now;
      if (now < 0) dead++;
    }
    // the forms the anchor lacks: the recent ones that stayed and the inserted ones, two ascending lists
    // of distinct forms (an inserted form was not in the dictionary before, so not among the recent)
    /** Per recent form, its position among the new recent forms, −1 when gone. */
    const recentMoved = new Int32Array(recent === undefined ? 0 : recent.toCurrent.length);
    const inserted = update.inserted;
    const fresh = new Int32Array(recentMoved.length + inserted.length);
    const freshInserted: number[] = [];
    let count = 0;
    let k = 0;
    for (let j = 0; j < recentMoved.length; j++) {
      const now = moved[recent!.toCurrent[j]!]!;
      if (now < 0) {
        recentMoved[j] = -1;
        continue;
      }
      while (k < inserted.length && inserted[k]! < now) {
        freshInserted.push(count);
        fresh[count++] = inserted[k++]!;
      }
      recentMoved[j] = count;
      fresh[count++] = now;
    }
    while (k < inserted.length) {
      freshInserted.push(count);
      fresh[count++] = inserted[k++]!;
    }
    const recentForms = fresh.subarray(0, count);
    if ((count + dead) * foldLimit > dictionary.size) {
      const folded = WalkForms.after(anchor.forms, { base: anchor.forms.dictionary, dictionary, moved: toCurrent, inserted: Array.from(recentForms) });
      return new Correction(dictionary, { anchor: { forms: folded, toCurrent: undefined } });
    }
    if (count === 0) return new Correction(dictionary, { anchor: { forms: anchor.forms, toCurrent } });
    const recentDictionary = SurfaceDictionary.subset(dictionary, recentForms);
    const forms = recent !== undefined
      ? WalkForms.after(recent.forms, { base: recent.forms.dictionary, dictionary: recentDictionary, moved: recentMoved, inserted: freshInserted })
      : new WalkForms(recentDictionary);
    return new Correction(dictionary, { anchor: { forms: anchor.forms, toCurrent }, recent: { forms, toCurrent: recentForms.slice() } });
  }

  /**
   * Checks the invariants the walks rely on and throws an `Error` naming the first one broken: each tier's
   * (see `WalkForms.verify`), and every form of the dictionary named by exactly one tier form equal to it.
   */
  verify(): void {
    const { chars, offsets, size } = this.dictionary;
    const seen = new Uint8Array(size);
    for (const tier of this.tiers) {
      tier.forms.verify();
      const own = tier.forms.dictionary;
      if (tier.toCurrent === undefined && own !== this.dictionary) throw new Error('a tier over another dictionary has no map');
      if (tier.toCurrent !== undefined && tier.toCurrent.length !== own.size) throw new Error(`a tier of ${own.size} forms maps ${tier.toCurrent.length}`);
      for (let i = 0; i < own.size; i++) {
        const c = tier.toCurrent === undefined ? i : tier.toCurrent[i]!;
        if (c < 0) continue;
        if (c >= size || seen[c]++) throw new Error(`form ${c} named twice or out of range`);
        const len = own.offsets[i + 1]! - own.offsets[i]!;
        let same = offsets[c + 1]! - offsets[c]! === len;
        for (let u = 0; same && u < len; u++) same = own.chars[own.offsets[i]! + u] === chars[offsets[c]! + u];
        if (!same) throw new Error(`tier form ${i} is not form ${c}`);
      }
    }
    const missing = seen.indexOf(0);
    if (missing >= 0) throw new Error(`form ${missing} is in no tier`);
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
    if (!correctable(m)) return undefined;
    const dfs = this.dictionary.dfs;
    const own = this.dictionary.df(word);
    if (!rare(own, totalDocs)) return undefined;
    let best = -1;
    let bestDist = Infinity;
    const consider = (i: number, d: number) => {
      const df = dfs[i]!;
      if (df <= own || d === 0) return;
      if (d < bestDist || (d === bestDist && (df > dfs[best]! || (df === dfs[best]! && i < best)))) {
        best = i;
        bestDist = d;
      }
    };
    // smallest distance first: a candidate at distance 1 beats every one at 2, so the (far costlier)
    // distance-2 search runs only when distance 1 offers none
    this.search(word, 1, consider);
    if (best < 0 && correctionDistance(m) === 2) this.search(word, 2, consider);
    return best < 0 ? undefined : this.dictionary.form(best);
  }

  /**
   * Whether `correct(word, totalNow)` here answers what `correct(word, totalBefore)` answered over an
   * earlier dictionary, given `changes`, a correction over every form whose df differs between the two
   * (`DictionaryUpdate.changed`, merged over several updates): it does when no changed form is within
   * the word's correction distance (the word itself, at distance 0, included), so its own df and every
   * candidate's are as they were, and the word is rare under both totals or under neither.
   */
  answersAsBefore(word: string, totalBefore: number, totalNow: number, changes: Correction): boolean {
    if (!correctable(word.length)) return true;
    let near = false;
    changes.search(word, correctionDistance(word.length), () => { near = true; });
    if (near) return false;
    const own = this.dictionary.df(word);
    return rare(own, totalBefore) === rare(own, totalNow);
  }

  /** Every form within `maxDist` (OSA distance) of `word`, with its distance, in ascending order. */
  within(word: string, maxDist: number): { form: string; df: number; distance: number }[] {
    const hits = new Map<number, number>();
    this.search(word, maxDist, (i, d) => hits.set(i, d));
    return [...hits].sort((a, b) => a[0] - b[0]).map(([i, d]) => ({ form: this.dictionary.form(i), df: this.dictionary.dfs[i]!, distance: d }));
  }

  /** Calls `found(index, distance)` for every form within `maxDist` of `word` (some possibly twice), by current index. */
  private search(word: string, maxDist: number, found: (index: number, distance: number) => void): void {
    for (const tier of this.tiers) {
      const map = tier.toCurrent;
      tier.forms.search(word, maxDist, map === undefined ? found : (i, d) => {
        const c = map[i]!;
        if (c >= 0) found(c, d);
      });
    }
  }
}

/**
 * What the walks read over one dictionary's forms: the packed forms with their jump tables, and the
 * reversed forms, each made on first use (or the reversed ones carried over, `after`).
 */
class WalkForms {
  /** The forms reversed and sorted, for the backward half of the search; built lazily. */
  private reversed: ReversedForms | undefined;
  /** The dictionary's packed forms with their jump tables (see `PackedForms`); built lazily. */
  private packed: PackedForms | undefined;

  constructor(readonly dictionary: SurfaceDictionary) {}

  /** Whether a walk has built anything (else there is nothing to carry over). */
  get built(): boolean {
    return this.packed !== undefined || this.reversed !== undefined;
  }

  /**
   * The forms of the dictionary `update` made from `previous`'s: the reversed forms are carried over when
   * `previous` had built them and few forms are new (the new ones are sorted with a comparison sort:
   * worth it for a few, not for a new vocabulary); otherwise they are built on first use.
   */
  static after(previous: WalkForms, update: FormsUpdate): WalkForms {
    if (previous.dictionary !== update.base) throw new Error('the update was not made from these forms\' dictionary');
    const next = new WalkForms(update.dictionary);
    if (previous.reversed !== undefined && update.inserted.length <= update.dictionary.size / CARRY_LIMIT) {
      next.reversed = next.reversedFrom(previous.reversed, update.moved, update.inserted);
    }
    return next;
  }

  /**
   * Checks the invariants the walks rely on and throws an `Error` naming the first one broken: the
   * reversed forms, when built, a permutation of the forms in strictly ascending reversed order, each
   * packed as its form reversed. (The walks would still find every form in a misordered array, only
   * slower: tests check the order.)
   */
  verify(): void {
    const { chars, offsets } = this.dictionary;
    const size = this.dictionary.size;
    if (this.reversed === undefined) return;
    const index = this.reversed.index;
    const seen = new Uint8Array(size);
    if (index.length !== size) throw new Error(`${index.length} reversed forms for ${size} forms`);
    for (let k = 0; k < index.length; k++) {
      const i = index[k]!;
      if (!(i >= 0 && i < size) || seen[i]++) throw new Error(`reversed form ${k} names form ${i} twice or out of range`);
      if (k > 0 && compareReversed(index[k - 1]!, i, chars, offsets) >= 0) throw new Error(`reversed forms out of order at ${k}`);
      const r = this.reversed.packed;
      const len = offsets[i + 1]! - offsets[i]!;
      let same = r.offsets[k + 1]! - r.offsets[k]! === len;
      for (let c = 0; same && c < len; c++) same = r.chars[r.offsets[k]! + c] === chars[offsets[i + 1]! - 1 - c];
      if (!same) throw new Error(`reversed form ${k} is not form ${i} reversed`);
    }
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
  search(word: string, maxDist: number, found: (index: number, distance: number) => void): void {
    const span = word.length - maxDist - 1;
    const forward = this.packedForms();
    if (maxDist === 0 || span <= 0) {
      this.walkWithin(forward, word, maxDist, 0, 0, found);
      return;
    }
    const a = (span + 1) >> 1;
    this.walkWithin(forward, word, maxDist, a, maxDist - 1, found);
    const reversed = this.reversedForms();
    this.walkWithin(reversed.packed, reverse(word), maxDist, span - a, 0, (k, d) => found(reversed.index[k]!, d));
  }

  /** The dictionary's packed forms with their jump tables, made on first use. */
  private packedForms(): PackedForms {
    const { chars, offsets } = this.dictionary;
    return this.packed ??= { chars, offsets, ends: jumpTables(chars, offsets) };
  }

  /** The forms reversed (code unit by code unit), sorted, with each one's index in `forms`; built once. */
  private reversedForms(): ReversedForms {
    if (this.reversed === undefined) {
      const { chars, offsets } = this.packedForms();
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
      multikeySort(index, rchars, offsets);
      const sortedChars = new Uint16Array(chars.length);
      const sortedOffsets = new Int32Array(n + 1);
      let at = 0;
      for (let k = 0; k < n; k++) {
        const i = index[k]!;
        sortedOffsets[k] = at;
        // a loop, not `set` of a subarray: forms are a few units long, and a view per form is an object
        for (let c = offsets[i]!, end = offsets[i + 1]!; c < end; c++) sortedChars[at++] = rchars[c]!;
      }
      sortedOffsets[n] = at;
      this.reversed = { packed: { chars: sortedChars, offsets: sortedOffsets, ends: jumpTables(sortedChars, sortedOffsets) }, index };
    }
    return this.reversed;
  }

  /**
   * The reversed forms from those of the dictionary this one's was updated from: the reversed order is
   * the old one renumbered through `moved` (the removed dropped: the rest keep their order), merged with
   * the order of the `inserted` forms, which alone are sorted; the code units of the forms that stayed
   * are copied from the old arrays a run at a time.
   */
  private reversedFrom(oldReversed: ReversedForms, moved: Int32Array, inserted: readonly number[]): ReversedForms {
    const n = this.dictionary.size;
    const { chars, offsets } = this.dictionary;
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
 * Sorts `index` by the code units of the forms they name (chars from `offsets[i]` to `offsets[i + 1]`),
 * in code-unit order with a prefix first — JavaScript's string order. Multikey quicksort (Bentley &
 * Sedgewick): three-way partition on the code unit at the range's depth (−1 past a form's end), recurse on
 * the smaller and larger parts, continue one unit deeper on the equal part; short ranges by insertion
 * sort. Each range's code units at its depth are read once into `keys`, beside the indices and swapped with
 * them (Sinha, Ring & Zobel's copying: a partition pass then reads two sequential arrays, not the forms
 * scattered in memory), and read again only when a range goes one unit deeper.
 */
function multikeySort(index: Int32Array, chars: Uint16Array, offsets: Int32Array): void {
  const keys = new Int32Array(index.length);
  const fill = (lo: number, hi: number, depth: number) => {
    for (let k = lo; k < hi; k++) {
      const i = index[k]!;
      const at = offsets[i]! + depth;
      keys[k] = at < offsets[i + 1]! ? chars[at]! : -1;
    }
  };
  fill(0, index.length, 0);
  sortRange(index, keys, 0, index.length, 0, chars, offsets, fill);
}

/** `multikeySort` of `index[lo..hi)`, whose forms agree before `depth` and whose `keys` hold their units at `depth`. */
function sortRange(index: Int32Array, keys: Int32Array, lo: number, hi: number, depth: number, chars: Uint16Array,
  offsets: Int32Array, fill: (lo: number, hi: number, depth: number) => void): void {
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
    const pivot = keys[lo + ((hi - lo) >> 1)]!;
    let lt = lo;
    let gt = hi - 1;
    let k = lo;
    while (k <= gt) {
      const v = keys[k]!;
      if (v < pivot) {
        // keys[k] is left stale: the unit moved there equals the pivot, and the equal part is filled
        // again one unit deeper before it is read
        const t = index[lt]!; index[lt] = index[k]!; index[k] = t;
        keys[lt] = v;
        lt++;
        k++;
      } else if (v > pivot) {
        const t = index[gt]!; index[gt] = index[k]!; index[k] = t;
        keys[k] = keys[gt]!; keys[gt] = v;
        gt--;
      } else {
        k++;
      }
    }
    sortRange(index, keys, lo, lt, depth, chars, offsets, fill);
    sortRange(index, keys, gt + 1, hi, depth, chars, offsets, fill);
    if (pivot < 0) return; // the equal part ended at this depth: nothing left to order
    lo = lt;
    hi = gt + 1;
    depth++;
    fill(lo, hi, depth);
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

/** `s` reversed code unit by code unit (surrogate pairs are reversed too: only compared, never shown). */
function reverse(s: string): string {
  let out = '';
  for (let i = s.length - 1; i >= 0; i--) out += s[i];
  return out;
}
