/**
 * Result snippets (CONTRACT §2): plain text of at most `maxChars` characters, the window of the document
 * text that holds the most distinct query terms, white space collapsed, `…` where the text was cut.
 *
 * Decisions:
 * - Characters are UTF-16 code units (JavaScript's `length`), ellipses included in the budget. That bound
 *   is the stricter one: a snippet of ≤ 240 code units also has ≤ 240 code points. A surrogate pair is
 *   never split.
 * - Terms are found with the one analyzer (`tokenize`), whose offsets point into the original text, so
 *   the cut is made on the original characters, not on a normalized copy.
 * - Window choice: among the spans of term occurrences that fit the budget, the one with the most distinct
 *   terms; ties go to the one with more occurrences, then the earliest. The span is then widened on both
 *   sides with context (a little before, the rest after) and its ends moved to word boundaries when one is
 *   close enough not to waste the budget.
 * - Only the first `SCAN_LIMIT` code units are analyzed: tokenizing and stemming a 1 MiB document for
 *   each of 20 hits would cost more than the query. Beyond the limit a document shows its best window
 *   from its first 64 Ki characters, or its start.
 * - No occurrence: the start of the text.
 * - Only tokens that can stem to a query term are built and stemmed (the rest of a scan is a walk over
 *   the characters; a token that starts with no term's key is never sliced out of the text): Porter2
 *   rewrites suffixes only, so a stem minus its last letter (at most its first three letters) is a prefix
 *   of every word that stems to it — except the three exceptional forms dying, lying, tying (→ die, lie,
 *   tie), for which the first letter is the key. The tokenizer shows each token's first folded letters
 *   before it builds the token (a `PrefixFilter`), and the keys are compared with them as numbers.
 * - A result page prepares its query's keys once (`Snippets`) and cuts every hit's snippet with them.
 */
import { FILTER_PREFIX_UNITS, stemSurface, tokenize, type PrefixFilter } from '../analysis/analyzer.js';

/** Code units of a document analyzed to find the window (see the header). */
export const SCAN_LIMIT = 64 * 1024;

/** The ellipsis that marks a cut. */
const ELLIPSIS = '\u2026';

/** A word-boundary cut may give up at most this fraction of the budget; beyond it, cut mid-word. */
const BOUNDARY_SLACK = 0.25;

/** Context kept before the first term of the window, at most (code units of collapsed text). */
const LEAD_IN = 40;

/** The snippet of `text` for the stemmed `queryTerms`, at most `maxChars` UTF-16 code units long. */
export function makeSnippet(text: string, queryTerms: ReadonlySet<string>, maxChars = 240): string {
  return new Snippets(queryTerms, maxChars).of(text);
}

/** Porter2 stems whose words may not start with the stem minus its last letter (see the header). */
const EXCEPTIONAL_STEMS = new Set(['die', 'lie', 'tie']);

/**
 * A term's key: the letters every word that stems to it starts with (see the header), and for each count
 * m of a token's first units a `PrefixFilter` may be shown, the key's first min(m, its length) units packed
 * as the filter packs a token's, or −1 when they cannot be (a unit after the first that is not ASCII: a
 * token shown more than one unit has only ASCII ones there, so it cannot match).
 */
interface StemKey {
  text: string;
  /** Index m − 1 for m = 1…FILTER_PREFIX_UNITS. */
  packed: number[];
}

function stemKey(text: string): StemKey {
  const packed: number[] = [];
  for (let m = 1; m <= FILTER_PREFIX_UNITS; m++) {
    let p = text.charCodeAt(0);
    for (let i = 1; i < Math.min(m, text.length); i++) {
      const u = text.charCodeAt(i);
      p = u < 128 && p >= 0 ? (p << 7) | u : -1;
    }
    packed.push(p);
  }
  return { text, packed };
}

/** The snippets of one query: its terms' keys prepared once, then any number of texts cut with them. */
export class Snippets {
  readonly #terms: ReadonlySet<string>;
  readonly #maxChars: number;
  /** Term → its index among the terms (a window counts distinct terms by index). */
  readonly #ids = new Map<string, number>();
  readonly #keys: StemKey[] = [];
  readonly #wants: PrefixFilter;

  constructor(queryTerms: ReadonlySet<string>, maxChars = 240) {
    this.#terms = queryTerms;
    this.#maxChars = maxChars;
    for (const t of queryTerms) {
      this.#ids.set(t, this.#ids.size);
      if (t === '') continue;
      const text = EXCEPTIONAL_STEMS.has(t) ? t.slice(0, 1) : t.slice(0, Math.max(1, Math.min(t.length - 1, FILTER_PREFIX_UNITS)));
      if (!this.#keys.some((k) => k.text === text)) this.#keys.push(stemKey(text));
    }
    const keys = this.#keys;
    const firsts = keys.map((k) => k.text.charCodeAt(0));
    const lengths = keys.map((k) => k.text.length);
    // true when the token's known units agree with a key as far as both go: a key longer than what is
    // known may still match, and the built token is checked against it (startsWithKey). Most tokens are
    // refused by their first unit alone.
    this.#wants = (prefix, units) => {
      const first = prefix >> (7 * (units - 1));
      for (let i = 0; i < firsts.length; i++) {
        if (firsts[i] !== first) continue;
        const m = Math.min(units, lengths[i]!);
        if (keys[i]!.packed[m - 1] === prefix >> (7 * (units - m))) return true;
      }
      return false;
    };
  }

  /** The snippet of `text`. */
  of(text: string): string {
    const maxChars = this.#maxChars;
    if (maxChars <= 0) return '';
    const window = this.#terms.size === 0 ? undefined : this.#bestWindow(text, maxChars - 2);
    if (window === undefined) return render(text, 0, maxChars);
    const [s, e] = window;
    const span = e - s;
    // context before the window: up to LEAD_IN, or half the spare budget when the window is short
    const spare = Math.max(0, maxChars - 2 - span);
    const lead = Math.min(LEAD_IN, spare >> 1);
    let start = Math.max(0, s - lead);
    if (start > 0) start = wordStartNear(text, start, s);
    if (cutPoint(text, start) !== start) start++; // inside a surrogate pair: start after it, not on its half
    return render(text, start, maxChars);
  }

  /**
   * [start, end) of the best run of term occurrences in the scanned part of `text` whose original extent
   * is ≤ budget code units (collapsing white space only shortens it), or undefined when no term occurs.
   */
  #bestWindow(text: string, budget: number): [number, number] | undefined {
    const scanned = text.length > SCAN_LIMIT ? text.slice(0, cutPoint(text, SCAN_LIMIT)) : text;
    const starts: number[] = [];
    const ends: number[] = [];
    const ids: number[] = [];
    const terms = this.#ids;
    const keys = this.#keys;
    tokenize(scanned, (_unstemmed, surface, _position, start, end) => {
      if (!startsWithKey(surface, keys)) return;
      const id = terms.get(stemSurface(surface));
      if (id === undefined) return;
      starts.push(start);
      ends.push(end);
      ids.push(id);
    }, 0, false, this.#wants);
    const n = starts.length;
    if (n === 0) return undefined;
    // two pointers: for each right end r, the smallest l whose span fits; count distinct ids in [l, r]
    const counts = new Int32Array(terms.size);
    let distinct = 0;
    let best: [number, number] = [starts[0]!, Math.min(ends[0]!, starts[0]! + budget)];
    let bestDistinct = 0;
    let bestOccurrences = 0;
    let l = 0;
    for (let r = 0; r < n; r++) {
      if (counts[ids[r]!]++ === 0) distinct++;
      while (l < r && ends[r]! - starts[l]! > budget) {
        if (--counts[ids[l]!] === 0) distinct--;
        l++;
      }
      const occurrences = r - l + 1;
      if (distinct > bestDistinct || (distinct === bestDistinct && occurrences > bestOccurrences)) {
        bestDistinct = distinct;
        bestOccurrences = occurrences;
        best = [starts[l]!, Math.min(ends[r]!, starts[l]! + budget)];
      }
    }
    return best;
  }
}

/** Whether `surface` starts with one of `keys`. */
function startsWithKey(surface: string, keys: readonly StemKey[]): boolean {
  for (const k of keys) if (surface.startsWith(k.text)) return true;
  return false;
}

/**
 * The collapsed text from `start`, cut to fit `maxChars` with its ellipses: a leading `…` when text
 * precedes `start`, a trailing one when text follows the cut.
 */
function render(text: string, start: number, maxChars: number): string {
  // skip leading white space: it would collapse to nothing at the start of a snippet
  while (start < text.length && isSpace(text.charCodeAt(start))) start++;
  const leading = start > 0 && hasNonSpaceBefore(text, start);
  const budget = maxChars - (leading ? 1 : 0);
  // walk up to budget+1 collapsed code units (one more than fits tells whether the text continues) to
  // `end`, just after the last non-space one, then collapse that stretch in one replace
  let units = 0;
  let pendingSpace = false;
  let i = start;
  let end = start;
  for (; i < text.length && units <= budget; i++) {
    if (isSpace(text.charCodeAt(i))) {
      pendingSpace = true;
      continue;
    }
    if (pendingSpace) {
      units++;
      pendingSpace = false;
    }
    units++;
    end = i + 1;
  }
  const out = text.slice(start, end).replace(WHITE_SPACE_RUN, ' ');
  const continues = out.length > budget || (i < text.length && hasNonSpaceFrom(text, i));
  if (!continues) return (leading ? ELLIPSIS : '') + out.trimEnd();
  // cut to leave room for the trailing ellipsis, preferably at a word boundary
  let cut = budget - 1;
  if (cut <= 0) return (leading ? ELLIPSIS : '') + ELLIPSIS.slice(0, Math.max(0, budget));
  if (isWordChar(out, cut - 1) && isWordChar(out, cut)) {
    let p = cut - 1;
    const stop = cut - budget * BOUNDARY_SLACK;
    while (p > 0 && p >= stop && !(isWordChar(out, p) && !isWordChar(out, p - 1))) p--;
    if (p > 0 && p >= stop) cut = p;
  }
  cut = cutPoint(out, cut);
  return (leading ? ELLIPSIS : '') + out.slice(0, cut).trimEnd() + ELLIPSIS;
}

/** A start at or after `from` (and ≤ `limit`) that begins a word, when one is near; else `from`. */
function wordStartNear(text: string, from: number, limit: number): number {
  if (isSpace(text.charCodeAt(from - 1))) return from;
  for (let i = from; i < limit; i++) {
    if (isSpace(text.charCodeAt(i))) return i + 1;
  }
  return from;
}

/** `at` moved back off the low half of a surrogate pair, so a cut never splits a character. */
function cutPoint(s: string, at: number): number {
  if (at > 0 && at < s.length) {
    const c = s.charCodeAt(at);
    if (c >= 0xdc00 && c <= 0xdfff) {
      const p = s.charCodeAt(at - 1);
      if (p >= 0xd800 && p <= 0xdbff) return at - 1;
    }
  }
  return at;
}

function hasNonSpaceBefore(text: string, at: number): boolean {
  for (let i = at - 1; i >= 0; i--) if (!isSpace(text.charCodeAt(i))) return true;
  return false;
}

function hasNonSpaceFrom(text: string, at: number): boolean {
  for (let i = at; i < text.length; i++) if (!isSpace(text.charCodeAt(i))) return true;
  return false;
}

const WORD_CHAR = /[\p{L}\p{N}\p{M}]/u;
/** Whether the code unit at `i` belongs to a word (a letter, digit or mark; a surrogate counts as one). */
function isWordChar(s: string, i: number): boolean {
  if (i < 0 || i >= s.length) return false;
  const c = s.charCodeAt(i);
  if (c < 128) return (c >= 48 && c <= 57) || ((c | 32) >= 97 && (c | 32) <= 122);
  if (c >= 0xd800 && c <= 0xdfff) return true;
  return WORD_CHAR.test(s[i]!);
}

/** A run of white space as `isSpace` sees it (`\s` is the same set). */
const WHITE_SPACE_RUN = /\s+/g;

/** White space as `\s` sees it (ASCII tab to CR and space, NBSP, the Unicode spaces, line separators, BOM). */
function isSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029
    || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}
