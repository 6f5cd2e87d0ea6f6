/**
 * The analyzer (CONTRACT §2): one function for index and query time, so a query term and a document
 * token meet exactly when their analyses do.
 *
 *   Unicode NFKC → lower case → diacritics folded (NFD, combining marks dropped) → split on anything
 *   that is not a letter or digit → Porter2 (English Snowball) stemming.
 *
 * Normalization is applied per code point (through a cache), not to the whole string, so every token
 * keeps the UTF-16 offsets of the original text it came from (snippets cut the original). The two differ
 * only for canonical composition sequences (a base letter followed by a combining mark), and since marks
 * are dropped after decomposition, both give the same letters. A combining mark in the original never
 * splits a token; a character whose folded form is several letters (`ﬁ` → `fi`, `ß` stays `ß`) yields
 * them all; a character that folds to a non-alphanumeric (`½` → `1⁄2`) splits where the fold does.
 *
 * Stemming is porter2's; it expects lower-case input. Numbers and other words porter2 leaves alone pass
 * through unchanged.
 */
import { stem as porter2 } from 'porter2';

/** Called once per token, in order. `surface` is folded but unstemmed; `term` is the stemmed form. */
export type TokenSink = (term: string, surface: string, position: number, start: number, end: number) => void;

export interface Token {
  /** Stemmed, folded form: what the index stores and queries match. */
  term: string;
  /** Folded, unstemmed form: what suggestions and spelling corrections show. */
  surface: string;
  /** 0-based token position (consecutive positions make phrases). */
  position: number;
  /** UTF-16 offsets of the token in the original text: `text.slice(start, end)`. */
  start: number;
  end: number;
}

// ASCII fast path: 0 = separator, otherwise the lower-cased char code.
const ASCII = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  if (c >= 48 && c <= 57) ASCII[c] = c;
  else if (c >= 97 && c <= 122) ASCII[c] = c;
  else if (c >= 65 && c <= 90) ASCII[c] = c + 32;
}

const ALNUM = /[\p{L}\p{N}]/u;
const MARK = /^\p{M}+$/u;
/**
 * Folded form of one non-ASCII code point: a string where every char is a letter/digit or the separator
 * marker '\u0000'; '' for a code point that folds to nothing (a combining mark: part of the current token).
 */
const foldCache = new Map<number, string>();
function foldCodePoint(cp: number): string {
  let f = foldCache.get(cp);
  if (f !== undefined) return f;
  const ch = String.fromCodePoint(cp);
  if (MARK.test(ch)) {
    f = '';
  } else {
    const decomposed = ch.normalize('NFKC').toLowerCase().normalize('NFD');
    let out = '';
    for (const c of decomposed) {
      if (MARK.test(c)) continue;
      out += ALNUM.test(c) ? c : '\u0000';
    }
    f = out === '' ? '\u0000' : out; // a symbol that folds away entirely still separates
  }
  if (foldCache.size < 65_536) foldCache.set(cp, f);
  return f;
}

const stemCache = new Map<string, string>();
/**
 * Porter2 stem of a folded surface form (cached: natural text repeats its words).
 *
 * A surface is usually a slice of the text it was read from, and V8 represents a slice of 13 or more
 * characters as a view that keeps the whole text alive. The cache outlives that text, so it keeps a copy
 * of such a form (and the stem, often a slice of the form, refers to the copy): otherwise every long word it
 * holds would pin a document, up to 200,000 of them at once (measured: a search worker held 1,207 SciFact
 * texts this way after 3,300 searches).
 */
export function stemSurface(surface: string): string {
  let s = stemCache.get(surface);
  if (s === undefined) {
    const own = surface.length >= SLICE_MIN_LENGTH ? (' ' + surface).slice(1) : surface;
    s = stemForm(own);
    if (stemCache.size > 200_000) stemCache.clear();
    stemCache.set(own, s);
  }
  return s;
}

/**
 * Porter2 stem of a folded surface form, not cached: for a caller that stems each distinct form once
 * (a segment's writer), to which the cache is only lookups that miss (a segment of Wikipedia articles
 * holds a few hundred thousand forms, more than the cache keeps).
 */
export function stemForm(surface: string): string {
  return porter2(surface);
}

/**
 * V8's shortest slice kept as a view of its parent; shorter ones are copies. Concatenating a space makes a
 * new string of the form's length + 1, and slicing it flattens that into a string of its own.
 */
const SLICE_MIN_LENGTH = 13;

/**
 * Which tokens a caller wants, judged by the start of a token's folded form before the token is built:
 * `prefix` packs its first `units` (1–3) folded code units, seven bits each after the first
 * (`u1·2¹⁴ + u2·2⁷ + u3` for three; a small integer, so no number is boxed per token). More than one is
 * known only when the token begins with a run of ASCII letters and digits that long, so the units after the
 * first are ASCII; otherwise only the first is, and a filter must answer true when what it needs lies
 * beyond the units it is shown. A refused token still takes its position, but is never built nor passed
 * to the sink: a caller that looks for a few terms in a long text (snippets) skips most of its tokens
 * unread.
 */
export type PrefixFilter = (prefix: number, units: number) => boolean;

/** Folded code units a `PrefixFilter` is shown at most. */
export const FILTER_PREFIX_UNITS = 3;

/**
 * The tokenizer reads `text` through a copy of its UTF-16 code units in a typed array, not with
 * `charCodeAt`: the strings it is given come in several representations (flat one- and two-byte, sliced,
 * concatenated), and once its optimized code has seen several, every `charCodeAt` takes the generic path,
 * which measured 2.5× slower per character than the copy and typed-array loads (bench: SciFact hits after
 * query parsing). The copy is one native write into a buffer reused while texts fit it.
 */
const SCRATCH_UNITS = 64 * 1024;
let scratch: Uint16Array | undefined = new Uint16Array(SCRATCH_UNITS);

/** `text`'s code units: the reused scratch (taken until released) or, for a long text or a nested call, a new array. */
function codeUnits(text: string): Uint16Array {
  let units: Uint16Array;
  if (scratch !== undefined && text.length <= SCRATCH_UNITS) {
    units = scratch;
    scratch = undefined; // a sink that tokenizes gets an array of its own
  } else {
    units = new Uint16Array(text.length);
  }
  Buffer.from(units.buffer, units.byteOffset, text.length * 2).write(text, 0, 'utf16le');
  return units;
}

function releaseCodeUnits(units: Uint16Array): void {
  if (units.length === SCRATCH_UNITS) scratch = units;
}

/**
 * Streams the tokens of `text` to `sink`, positions starting at `firstPosition`. Returns the number of
 * tokens emitted. This is the one tokenizer; `analyze` and `analyzeTerms` are conveniences over it.
 * `stem = false` passes the surface form as `term` too, for callers that stem only the few tokens they
 * need (snippets look for a handful of query terms in a whole document); `wants` drops tokens unbuilt.
 */
export function tokenize(text: string, sink: TokenSink, firstPosition = 0, stem = true, wants?: PrefixFilter): number {
  const units = codeUnits(text);
  try {
    return walk(text, units, sink, firstPosition, stem, wants);
  } finally {
    releaseCodeUnits(units);
  }
}

/** `tokenize` over `units`, the code units of `text`. */
function walk(text: string, units: Uint16Array, sink: TokenSink, firstPosition: number, stem: boolean, wants: PrefixFilter | undefined): number {
  let position = firstPosition;
  // The token in progress: where it started (-1 between tokens), whether `wants` refused it (its chars
  // are then only walked over) and, if not, its folded chars so far. A run of ASCII letters and digits is
  // taken as one slice, lower-cased only if it holds an upper-case letter. The state stays in locals, and
  // each of the three places a token ends updates it inline: closures over it measured ~10% slower per
  // character (their context variables are memory accesses).
  let start = -1;
  let skipping = false;
  let buf = '';
  const n = text.length;
  let i = 0;
  while (i < n) {
    const code = units[i]!;
    if (code < 128) {
      const a = ASCII[code]!;
      if (a === 0) {
        if (start >= 0) {
          if (!skipping) emit(sink, stem, buf, position, start, i);
          position++;
          start = -1;
          buf = '';
        }
        i++;
        continue;
      }
      // a run of ASCII letters and digits, [i, j)
      let j = i + 1;
      let lower = a === code;
      while (j < n) {
        const c = units[j]!;
        if (c >= 128) break;
        const b = ASCII[c]!;
        if (b === 0) break;
        if (b !== c) lower = false;
        j++;
      }
      if (start < 0) {
        start = i;
        skipping = false;
        if (wants !== undefined) {
          // the run's first units are the token's first, folded by the table
          let prefix = a;
          const shown = j - i < FILTER_PREFIX_UNITS ? j - i : FILTER_PREFIX_UNITS;
          for (let k = 1; k < shown; k++) prefix = (prefix << 7) | ASCII[units[i + k]!]!;
          skipping = !wants(prefix, shown);
        }
      }
      if (!skipping) {
        const run = text.slice(i, j);
        buf += lower ? run : run.toLowerCase();
      }
      i = j;
      continue;
    }
    let cp = code;
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < n) {
      const low = units[i + 1]!;
      if (low >= 0xdc00 && low <= 0xdfff) cp = (code - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
    }
    const width = cp > 0xffff ? 2 : 1;
    const f = foldCodePoint(cp);
    // f === '': a combining mark, part of the token in progress (or of nothing)
    // a token that took letters from this code point ends after it (`½` → `1⁄2`: the `1` spans the `½`)
    let lettersHere = false;
    for (let k = 0; k < f.length; k++) {
      const c = f[k]!;
      if (c === '\u0000') {
        if (start >= 0) {
          if (!skipping) emit(sink, stem, buf, position, start, lettersHere ? i + width : i);
          position++;
          start = -1;
          buf = '';
        }
        lettersHere = false;
      } else {
        lettersHere = true;
        if (start < 0) {
          start = i;
          skipping = wants !== undefined && !wants(c.charCodeAt(0), 1);
        }
        if (!skipping) buf += c;
      }
    }
    i += width;
  }
  if (start >= 0) {
    if (!skipping) emit(sink, stem, buf, position, start, n);
    position++;
  }
  return position - firstPosition;
}

/** Receives a token of a scan: its folded, unstemmed form and its UTF-16 offsets in the scanned text. */
export type SurfaceSink = (surface: string, start: number, end: number) => void;

/** ASCII stretches shorter than this between two non-ASCII characters are walked with them, as one region. */
const REGION_MERGE_GAP = 64;

/**
 * Finds, in order, the tokens of a text whose folded form starts with one of a few folded prefixes: what
 * `tokenize` gives, filtered, at a fraction of its cost. A caller that looks for a handful of terms in a
 * whole document (a result page's snippets) would otherwise walk every character in JavaScript.
 *
 * Runs of ASCII (no code unit ≥ 128) cut at an ASCII separator are tokenized by a rule this module
 * already states: a token there is a maximal run of ASCII letters and digits, folded by lower-casing.
 * So in such a stretch the prefixes are found by one compiled regular expression (case-insensitive, at a
 * token start, then the rest of the run), which V8 scans in native code. The other stretches, each from
 * the start of the token that holds a non-ASCII code unit to the next ASCII separator, are tokenized by
 * `tokenize` with a `PrefixFilter` built from the prefixes. An ASCII separator always ends a token and
 * never belongs to one, so both kinds of stretch tokenize alone exactly as within the whole text.
 */
export class PrefixScanner {
  readonly #prefixes: readonly string[];
  /** The prefixes that can begin an ASCII token; undefined when none can. */
  readonly #ascii: RegExp | undefined;
  readonly #nonAscii = /[^\x00-\x7f]/g;
  readonly #wants: PrefixFilter;

  /** `prefixes`: folded forms (as tokens' surfaces are), none empty. */
  constructor(prefixes: Iterable<string>) {
    const all = [...new Set(prefixes)];
    if (all.some((p) => p === '')) throw new RangeError('A scan prefix is never empty.');
    this.#prefixes = all;
    const ascii = all.filter((p) => /^[a-z0-9]+$/.test(p));
    this.#ascii = ascii.length === 0 ? undefined : new RegExp(`(?<![A-Za-z0-9])(?:${ascii.join('|')})[A-Za-z0-9]*`, 'gi');
    this.#wants = prefixFilter(all);
  }

  /** Calls `sink` for each token of `text` whose folded form starts with a prefix, in text order. */
  scan(text: string, sink: SurfaceSink): void {
    const n = text.length;
    const ascii = this.#ascii;
    const nonAscii = this.#nonAscii;
    nonAscii.lastIndex = 0;
    if (ascii !== undefined) ascii.lastIndex = 0;
    // the ASCII expression's next match [matchStart, matchEnd), found ahead of the stretch it lies in
    // (matchEnd 0: not looked for since the last one was used; −1: there is none)
    let matchStart = 0;
    let matchEnd = 0;
    let from = 0;
    for (;;) {
      // the next mixed region [a, b), or none: [n, n)
      const m = nonAscii.exec(text);
      let a = n;
      let b = n;
      if (m !== null) {
        a = m.index;
        while (a > from && isAsciiWordUnit(text.charCodeAt(a - 1))) a--;
        b = this.#regionEnd(text, m.index + 1);
      }
      if (ascii !== undefined && matchEnd >= 0) {
        for (;;) {
          if (matchEnd === 0) {
            // `test` leaves the match's end in lastIndex and builds no match array; the match is a
            // whole run of ASCII letters and digits (it starts where none precedes), so it starts where
            // the run that ends there does
            if (!ascii.test(text)) {
              matchEnd = -1;
              break;
            }
            matchEnd = ascii.lastIndex;
            matchStart = matchEnd - 1;
            while (matchStart > 0 && isAsciiWordUnit(text.charCodeAt(matchStart - 1))) matchStart--;
          }
          if (matchStart >= a) break;
          sink(text.slice(matchStart, matchEnd).toLowerCase(), matchStart, matchEnd);
          matchEnd = 0;
        }
        // a match inside the region is not a token start there (a non-ASCII letter may precede it)
        if (matchEnd > 0 && matchStart < b) {
          matchEnd = 0;
          ascii.lastIndex = b;
        }
      }
      if (a < b) {
        const prefixes = this.#prefixes;
        tokenize(text.slice(a, b), (_term, surface, _position, start, end) => {
          for (const p of prefixes) {
            if (surface.startsWith(p)) {
              sink(surface, a + start, a + end);
              return;
            }
          }
        }, 0, false, this.#wants);
      }
      if (m === null) return;
      from = b;
      nonAscii.lastIndex = b;
    }
  }

  /** The end of a mixed region whose last non-ASCII unit so far ends at `i`: the next ASCII separator, past close neighbours. */
  #regionEnd(text: string, i: number): number {
    const n = text.length;
    const nonAscii = this.#nonAscii;
    for (;;) {
      while (i < n && !isAsciiSeparator(text.charCodeAt(i))) i++;
      nonAscii.lastIndex = i;
      const next = nonAscii.exec(text);
      if (next === null || next.index - i > REGION_MERGE_GAP) return i;
      i = next.index + 1;
    }
  }
}

function isAsciiWordUnit(c: number): boolean {
  return c < 128 && ASCII[c] !== 0;
}

function isAsciiSeparator(c: number): boolean {
  return c < 128 && ASCII[c] === 0;
}

/**
 * A `PrefixFilter` that passes a token when what it is shown of it agrees with one of `prefixes` as far as
 * both go (a prefix longer than what is shown may still match: the built token is checked). Each prefix is
 * packed, for each count m of units a filter may be shown, as the filter packs a token's first
 * min(m, its length) units, or −1 when it cannot be (a unit after the first that is not ASCII: a token shown
 * more than one unit has only ASCII ones there). Most tokens are refused by their first unit alone.
 */
function prefixFilter(prefixes: readonly string[]): PrefixFilter {
  const firsts = prefixes.map((p) => p.charCodeAt(0));
  const lengths = prefixes.map((p) => p.length);
  const packed = prefixes.map((p) => {
    const byUnits: number[] = [];
    for (let m = 1; m <= FILTER_PREFIX_UNITS; m++) {
      let v = p.charCodeAt(0);
      for (let i = 1; i < Math.min(m, p.length); i++) {
        const u = p.charCodeAt(i);
        v = u < 128 && v >= 0 ? (v << 7) | u : -1;
      }
      byUnits.push(v);
    }
    return byUnits;
  });
  return (prefix, units) => {
    const first = prefix >> (7 * (units - 1));
    for (let i = 0; i < firsts.length; i++) {
      if (firsts[i] !== first) continue;
      const m = Math.min(units, lengths[i]!);
      if (packed[i]![m - 1] === prefix >> (7 * (units - m))) return true;
    }
    return false;
  };
}

/** Passes a finished token to the sink (a token is never empty: its first char made it begin). */
function emit(sink: TokenSink, stem: boolean, surface: string, position: number, start: number, end: number): void {
  sink(stem ? stemSurface(surface) : surface, surface, position, start, end);
}

/** All tokens of `text` as objects (query time, snippets, tests). */
export function analyze(text: string, firstPosition = 0): Token[] {
  const out: Token[] = [];
  tokenize(text, (term, surface, position, start, end) => { out.push({ term, surface, position, start, end }); }, firstPosition);
  return out;
}

/** Just the stemmed terms of `text`, in order. */
export function analyzeTerms(text: string): string[] {
  const out: string[] = [];
  tokenize(text, (term) => { out.push(term); });
  return out;
}

/** Just the folded, unstemmed surface forms of `text`, in order (suggest completes these). */
export function analyzeSurfaces(text: string): string[] {
  const out: string[] = [];
  tokenize(text, (_term, surface) => { out.push(surface); }, 0, false);
  return out;
}
