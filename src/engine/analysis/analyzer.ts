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
/** Porter2 stem of a folded surface form (cached: natural text repeats its words). */
export function stemSurface(surface: string): string {
  let s = stemCache.get(surface);
  if (s === undefined) {
    s = porter2(surface);
    if (stemCache.size > 200_000) stemCache.clear();
    stemCache.set(surface, s);
  }
  return s;
}

/**
 * Which tokens a caller wants, judged by the first code unit of a token's folded form. A token it refuses
 * still takes its position, but is never built nor passed to the sink: a caller that looks for a few terms
 * in a long text (snippets) skips most of its tokens unread.
 */
export type FirstUnitFilter = (unit: number) => boolean;

/**
 * Streams the tokens of `text` to `sink`, positions starting at `firstPosition`. Returns the number of
 * tokens emitted. This is the one tokenizer; `analyze` and `analyzeTerms` are conveniences over it.
 * `stem = false` passes the surface form as `term` too, for callers that stem only the few tokens they
 * need (snippets look for a handful of query terms in a whole document); `wants` drops tokens unbuilt.
 */
export function tokenize(text: string, sink: TokenSink, firstPosition = 0, stem = true, wants?: FirstUnitFilter): number {
  let position = firstPosition;
  // The token in progress: its folded chars so far and where it started (-1 between tokens). A run of
  // ASCII letters and digits is taken as one slice, lower-cased only if it holds an upper-case letter.
  let buf = '';
  let start = -1;
  // the token in progress was refused by `wants`: its chars are only walked over
  let skipping = false;
  // The loop's own variables (`i`, `j`) are not used in these closures, so they stay out of their context.
  const flush = (end: number) => {
    if (skipping) {
      skipping = false;
      position++;
    } else if (buf.length > 0) {
      sink(stem ? stemSurface(buf) : buf, buf, position++, start, end);
    }
    buf = '';
    start = -1;
  };
  /** A token starts at `at` with the folded code unit `unit`. */
  const begin = (at: number, unit: number) => {
    start = at;
    skipping = wants !== undefined && !wants(unit);
  };
  const n = text.length;
  let i = 0;
  while (i < n) {
    const code = text.charCodeAt(i);
    if (code < 128) {
      const a = ASCII[code]!;
      if (a === 0) {
        if (start >= 0) flush(i);
        i++;
        continue;
      }
      // a run of ASCII letters and digits, [i, j)
      let j = i + 1;
      let lower = a === code;
      while (j < n) {
        const c = text.charCodeAt(j);
        if (c >= 128) break;
        const b = ASCII[c]!;
        if (b === 0) break;
        if (b !== c) lower = false;
        j++;
      }
      if (start < 0) begin(i, a);
      if (!skipping) {
        const run = text.slice(i, j);
        buf += lower ? run : run.toLowerCase();
      }
      i = j;
      continue;
    }
    const cp = text.codePointAt(i)!;
    const width = cp > 0xffff ? 2 : 1;
    const f = foldCodePoint(cp);
    if (f === '') {
      // combining mark: belongs to the token in progress (or to nothing)
    } else {
      // a token that took letters from this code point ends after it (`½` → `1⁄2`: the `1` spans the `½`)
      let lettersHere = false;
      for (let k = 0; k < f.length; k++) {
        const c = f[k]!;
        if (c === '\u0000') {
          if (start >= 0) flush(lettersHere ? i + width : i);
          lettersHere = false;
        } else {
          lettersHere = true;
          if (start < 0) begin(i, c.charCodeAt(0));
          if (!skipping) buf += c;
        }
      }
    }
    i += width;
  }
  if (start >= 0) flush(n);
  return position - firstPosition;
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
  tokenize(text, (_term, surface) => { out.push(surface); });
  return out;
}
