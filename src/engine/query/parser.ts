/**
 * The query parser (CONTRACT §2, docs/query-language.md): `q` → a list of clauses, each with its occur
 * (`should` / `must` / `mustNot`), its analyzed terms and its source span, so that did-you-mean can
 * rewrite exactly one word and leave every other character of `q` as written.
 *
 * Lexing, left to right:
 * - white space (Unicode `\s`) separates tokens; a `"` also ends a bare word;
 * - a token may start with one `+` or `-` (the occur); what follows is a `"phrase"` (to the next `"`, or to
 *   the end of `q` when unmatched), `site:host` (the prefix in any case), or a bare term;
 * - a lone `+`, `-` or `site:` (nothing after it) is ignored.
 *
 * A *clause* is one term, phrase or `site:` token as written. A bare word that analyzes to several tokens
 * (`e-mail`, `U.S.A`) stays one clause whose tokens are separate terms with the word's occur (not a
 * phrase: only quotes make phrases). Words and phrases that analyze to nothing are dropped.
 *
 * There is no limit on the number of clauses: pasted paragraphs and agents' questions are ordinary
 * queries. The byte limit bounds the work — at most MAX_QUERY_BYTES / 2 clauses — and repeated clauses
 * are merged downstream (logical.ts), so a long query costs what its distinct terms cost.
 */
import { domainToASCII } from 'node:url';
import { BadQueryError } from '../../kernel/errors.js';
import { analyze } from '../analysis/analyzer.js';

/** Longest `q` accepted, in UTF-8 bytes (CONTRACT §1 `bad_query`): room for a long question or a pasted paragraph. */
export const MAX_QUERY_BYTES = 4096;

export type Occur = 'should' | 'must' | 'mustNot';

interface ClauseBase {
  occur: Occur;
  /** [start, end) UTF-16 offsets in `q` of the clause after its `+`/`-` (a phrase's span includes its quotes). */
  start: number;
  end: number;
}
export interface TermClause extends ClauseBase {
  kind: 'term';
  /** The word as written. */
  raw: string;
  /** Stemmed terms, in order (usually one). */
  terms: string[];
  /** Folded, unstemmed forms, parallel to `terms`. */
  surfaces: string[];
  /** [start, end) offsets in `q` of each token, parallel to `terms` (a rewrite keeps the punctuation around it). */
  spans: [number, number][];
}
export interface PhraseClause extends ClauseBase {
  kind: 'phrase';
  /** Stemmed terms at consecutive positions (at least one). */
  terms: string[];
}
export interface SiteClause extends ClauseBase {
  kind: 'site';
  /** Normalized host: lower case, no scheme, path, port or edge dots. */
  host: string;
}
export type Clause = TermClause | PhraseClause | SiteClause;

export interface ParsedQuery {
  source: string;
  /** Clauses that survived analysis, in source order. */
  clauses: Clause[];
  /** True when `q` holds a phrase with at least one term (then `phraseExact` is reported). */
  hasPhrase: boolean;
}

const SPACE = /\s/u;

/**
 * The host of a `site:` operand: `HTTPS://Docs.Example.com:8080/x` → `docs.example.com`. A non-ASCII
 * host is converted to its ASCII (punycode) form, as URL parsing gives document hosts
 * (`site:bücher.de` → `xn--bcher-kva.de`); one that cannot be converted is kept lower-cased.
 */
export function normalizeSiteHost(operand: string): string {
  let h = operand.normalize('NFKC').toLowerCase();
  h = h.replace(/^[a-z][a-z0-9+.-]*:\/\//, '');
  const cut = h.search(/[/?#]/);
  if (cut >= 0) h = h.slice(0, cut);
  h = h.replace(/:\d*$/, '');
  h = h.replace(/^\.+|\.+$/g, '');
  if (/[^\x00-\x7f]/.test(h)) h = domainToASCII(h) || h;
  return h;
}

/**
 * Parses and validates `q`. Throws BadQueryError when `q` is not a string, is empty after trimming, or is
 * over MAX_QUERY_BYTES.
 */
export function parseQuery(q: unknown): ParsedQuery {
  if (typeof q !== 'string') throw new BadQueryError('The query must be a string.');
  if (q.trim() === '') throw new BadQueryError('The query is empty.');
  const bytes = Buffer.byteLength(q, 'utf8');
  if (bytes > MAX_QUERY_BYTES) throw new BadQueryError(`The query is ${bytes} bytes long; the limit is ${MAX_QUERY_BYTES}.`);

  const clauses: Clause[] = [];
  let hasPhrase = false;
  const n = q.length;
  let i = 0;
  while (i < n) {
    if (SPACE.test(q[i]!)) { i++; continue; }
    let occur: Occur = 'should';
    if (q[i] === '+' || q[i] === '-') {
      occur = q[i] === '+' ? 'must' : 'mustNot';
      i++;
    }
    if (i < n && q[i] === '"') {
      const close = q.indexOf('"', i + 1);
      const end = close < 0 ? n : close + 1;
      const body = q.slice(i + 1, close < 0 ? n : close);
      const terms = analyze(body).map((t) => t.term);
      if (terms.length > 0) {
        clauses.push({ kind: 'phrase', occur, start: i, end, terms });
        hasPhrase = true;
      }
      i = end;
      continue;
    }
    const start = i;
    while (i < n && q[i] !== '"' && !SPACE.test(q[i]!)) i++;
    const word = q.slice(start, i);
    if (word === '') continue; // a lone operator
    if (word.length >= 5 && word.slice(0, 5).toLowerCase() === 'site:') {
      if (word.length === 5) continue; // a lone `site:`
      const host = normalizeSiteHost(word.slice(5));
      if (host !== '') clauses.push({ kind: 'site', occur, start, end: i, host });
      continue;
    }
    const tokens = analyze(word);
    if (tokens.length > 0) {
      clauses.push({
        kind: 'term', occur, start, end: i, raw: word,
        terms: tokens.map((t) => t.term), surfaces: tokens.map((t) => t.surface), spans: tokens.map((t) => [start + t.start, start + t.end]),
      });
    }
  }
  return { source: q, clauses, hasPhrase };
}
