/**
 * Result snippets (CONTRACT §2): plain text of at most `maxChars` characters, the window of the document
 * text that holds the most distinct query terms, white space collapsed, `…` where the text was cut.
 *
 * Decisions:
 * - Characters are UTF-16 code units (JavaScript's `length`), ellipses included in the budget. That bound
 *   is the stricter one: a snippet of ≤ 240 code units also has ≤ 240 code points. A surrogate pair is
 *   never split.
 * - Terms are found with the one analyzer (its `PrefixScanner`), whose offsets point into the original text, so
 *   the cut is made on the original characters, not on a normalized copy.
 * - Window choice: among the spans of term occurrences that fit the budget, the one with the most distinct
 *   terms; ties go to the one with more occurrences, then the earliest. The span is then widened on both
 *   sides with context (a little before, the rest after) and its ends moved to word boundaries when one is
 *   close enough not to waste the budget.
 * - Only the first `SCAN_LIMIT` code units are analyzed: tokenizing and stemming a 1 MiB document for
 *   each of 20 hits would cost more than the query. Beyond the limit a document shows its best window
 *   from its first 64 Ki characters, or its start.
 * - No occurrence: the start of the text.
 * - Only tokens that can stem to a query term are built and stemmed: Porter2 rewrites suffixes only, and
 *   each of its rewrites keeps all but the last letter of what it writes (`biliti` → `ble` is followed by
 *   step 5's removal of that `e`), so a stem minus its last letter is a prefix of every word that stems
 *   to it — except the three exceptional forms dying, lying, tying (→ die, lie, tie), for which the first
 *   letter is the key. The analyzer's `PrefixScanner` finds the tokens that start with a key without
 *   walking the rest of the text token by token.
 * - A result page prepares its query's keys once (`Snippets`) and cuts every hit's snippet with them.
 */
import { PrefixScanner, stemSurface } from '../analysis/analyzer.js';

/** Code units of a document analyzed to find the window (see the header). */
export const SCAN_LIMIT = 64 * 1024;

/** Occurrences a page's `Snippets` has room for before its buffers grow. */
const OCCURRENCES_AT_FIRST = 256;

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

/** The letters every word that stems to `term` starts with (see the header). */
function stemKey(term: string): string {
  return EXCEPTIONAL_STEMS.has(term) ? term.slice(0, 1) : term.slice(0, Math.max(1, term.length - 1));
}

/** The snippets of one query: its terms' keys prepared once, then any number of texts cut with them. */
export class Snippets {
  readonly #terms: ReadonlySet<string>;
  readonly #maxChars: number;
  /** Term → its index among the terms (a window counts distinct terms by index). */
  readonly #ids = new Map<string, number>();
  /** The tokens that may stem to a term: those that start with a term's key. */
  readonly #scanner: PrefixScanner;
  /** The occurrences of terms in the text being cut: their spans and terms' indices, the first `#hits`. */
  #starts = new Int32Array(OCCURRENCES_AT_FIRST);
  #ends = new Int32Array(OCCURRENCES_AT_FIRST);
  #termIds = new Int32Array(OCCURRENCES_AT_FIRST);
  #hits = 0;
  /** Occurrences per term within the window (see #bestWindow). */
  readonly #counts: Int32Array;

  constructor(queryTerms: ReadonlySet<string>, maxChars = 240) {
    this.#terms = queryTerms;
    this.#maxChars = maxChars;
    const keys: string[] = [];
    for (const t of queryTerms) {
      this.#ids.set(t, this.#ids.size);
      if (t !== '') keys.push(stemKey(t));
    }
    this.#scanner = new PrefixScanner(keys);
    this.#counts = new Int32Array(this.#ids.size);
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
    this.#hits = 0;
    this.#scanner.scan(scanned, this.#found);
    const n = this.#hits;
    if (n === 0) return undefined;
    const starts = this.#starts;
    const ends = this.#ends;
    const ids = this.#termIds;
    // two pointers: for each right end r, the smallest l whose span fits; count distinct ids in [l, r]
    const counts = this.#counts.fill(0);
    let distinct = 0;
    let bestStart = starts[0]!;
    let bestEnd = Math.min(ends[0]!, starts[0]! + budget);
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
        bestStart = starts[l]!;
        bestEnd = Math.min(ends[r]!, bestStart + budget);
      }
    }
    return [bestStart, bestEnd];
  }

  /** The scan's sink: records an occurrence of a query term (the page's texts share the buffers). */
  readonly #found = (surface: string, start: number, end: number): void => {
    const id = this.#ids.get(stemSurface(surface));
    if (id === undefined) return;
    const k = this.#hits++;
    if (k === this.#starts.length) {
      this.#starts = grown(this.#starts);
      this.#ends = grown(this.#ends);
      this.#termIds = grown(this.#termIds);
    }
    this.#starts[k] = start;
    this.#ends[k] = end;
    this.#termIds[k] = id;
  };
}

/** `a` copied into one twice as long. */
function grown(a: Int32Array): Int32Array<ArrayBuffer> {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
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
  // `end`, just after the last non-space one, then collapse that stretch in one replace (when it has
  // anything to collapse)
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
  const stretch = text.slice(start, end);
  const out = COLLAPSIBLE.test(stretch) ? stretch.replace(WHITE_SPACE_RUN, ' ') : stretch;
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
/** Text that collapsing changes: two white-space units in a row, or one other than a space (most cut text has neither, and is kept as it is). */
const COLLAPSIBLE = /\s\s|[^\S ]/;

/** White space as `\s` sees it (ASCII tab to CR and space, NBSP, the Unicode spaces, line separators, BOM). */
function isSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029
    || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}
