/**
 * The public search interface: `GET /api/search`, `GET /api/doc`, `GET /api/suggest` (interface §4.1–4.3,
 * CONTRACT §2). A thin face: it validates the parameters that are HTTP's business (presence, scope,
 * page syntax, cid syntax), asks the scope's searcher, and shapes the JSON. The query language, its
 * limits and ranking belong to the engine, which throws `BadQueryError`/`BadPageError` itself.
 */
import {
  parseCid, DEFAULT_PAGE_SIZE, MAX_QUERY_BYTES, MAX_RESULT_WINDOW, type Cid, type Searcher,
} from '../engine/index.js';
import { BadPageError, BadQueryError, BadScopeError, NotFoundError, UnavailableError } from '../kernel/errors.js';
import { errorBody } from './errors.js';
import { errorResponses } from './openapi.js';
import type { RequestContext, RouteGroup } from './route.js';

import type { Scope } from '../kernel/scope.js';

export type { Scope };

/** What the routes need of a searcher: the engine's `Searcher` (search, get, suggest). */
export type ScopeSearcher = Pick<Searcher, 'search' | 'get' | 'suggest'>;

/** What the routes need of the corpora: the current searcher of a scope. */
export interface SearchCorpora {
  /** Throws `UnavailableError` while the scope's index is not open yet. */
  searcher(scope: Scope): ScopeSearcher;
}

export interface SearchRoutesOptions {
  /** Results per page. Fixed by the interface at 20; an option only so the number has one home. */
  pageSize?: number;
  /** Deep-paging bound: `page * pageSize` must stay below it (CONTRACT §1). Default 10,000. */
  maxResultWindow?: number;
  /** Largest `q` in UTF-8 bytes (CONTRACT §1). Default 1,024. */
  maxQueryBytes?: number;
  /** Largest `text` of `/api/doc` in UTF-8 bytes, cut on a character boundary (CONTRACT §2). Default 1 MiB. */
  maxDocTextBytes?: number;
  /** Completions per `/api/suggest` (CONTRACT §2). Default 10. */
  suggestLimit?: number;
}

const DEFAULTS: Required<SearchRoutesOptions> = {
  pageSize: DEFAULT_PAGE_SIZE,
  maxResultWindow: MAX_RESULT_WINDOW,
  maxQueryBytes: MAX_QUERY_BYTES,
  maxDocTextBytes: 1024 * 1024,
  suggestLimit: 10,
};

const SCOPES: readonly Scope[] = ['own', 'web', 'trusted'];

/** `scope` absent → own; `web`/`trusted` as given; anything else (even `own`, even empty) → bad_scope. */
export function parseScope(raw: string | null): Scope {
  if (raw === null) return 'own';
  if (raw === 'web' || raw === 'trusted') return raw;
  throw new BadScopeError(`scope must be "web" or "trusted", or absent for the own corpus; got ${JSON.stringify(raw)}.`);
}

function requireQuery(raw: string | null, maxBytes: number): string {
  if (raw === null) throw new BadQueryError('The parameter q is required.');
  if (raw.trim() === '') throw new BadQueryError('The parameter q is empty.');
  const bytes = Buffer.byteLength(raw, 'utf8');
  if (bytes > maxBytes) throw new BadQueryError(`q is ${bytes} bytes long; the limit is ${maxBytes}.`);
  return raw;
}

function parsePage(raw: string | null, pageSize: number, window: number): number {
  if (raw === null) return 0;
  if (!/^[0-9]+$/.test(raw)) throw new BadPageError(`page must be a base-10 integer ≥ 0; got ${JSON.stringify(raw)}.`);
  const page = Number(raw);
  if (!Number.isSafeInteger(page) || page * pageSize >= window) {
    throw new BadPageError(`page ${raw} is past the deep-paging bound: page × ${pageSize} must be below ${window}.`);
  }
  return page;
}

/** The first `max` bytes of `text` in UTF-8, never splitting a character. */
export function truncateUtf8(text: string, max: number): { text: string; truncated: boolean } {
  if (text.length * 3 <= max || Buffer.byteLength(text, 'utf8') <= max) return { text, truncated: false };
  const buf = Buffer.from(text, 'utf8');
  let end = max;
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
  return { text: buf.subarray(0, end).toString('utf8'), truncated: true };
}

export function docPath(cid: Cid | string, scope: Scope): string {
  return `/api/doc?cid=${cid}${scope === 'own' ? '' : `&scope=${scope}`}`;
}

export function searchRoutes(corpora: SearchCorpora, options: SearchRoutesOptions = {}): RouteGroup {
  const o = { ...DEFAULTS, ...options };
  const searcher = (scope: Scope): ScopeSearcher => {
    const s = corpora.searcher(scope);
    if (!s) throw new UnavailableError(`The ${scope} index is not open yet.`, 2);
    return s;
  };

  async function search(ctx: RequestContext) {
    const q = requireQuery(ctx.query.get('q'), o.maxQueryBytes);
    const scope = parseScope(ctx.query.get('scope'));
    const page = parsePage(ctx.query.get('page'), o.pageSize, o.maxResultWindow);
    const result = searcher(scope).search(q, { page, pageSize: o.pageSize, snippets: true });
    const results = result.hits.map((h) => {
      const r: Record<string, unknown> = { cid: h.cid.toString(), score: h.score, title: h.title };
      if (h.snippet !== undefined) r.snippet = h.snippet;
      r.doc = docPath(h.cid, scope);
      if (h.url !== undefined) r.url = h.url;
      if (h.host !== undefined) r.host = h.host;
      return r;
    });
    const json: Record<string, unknown> = { query: q, scope, page, total: result.total, nresults: results.length, results };
    if (result.phraseExact !== undefined) json.phrase_exact = result.phraseExact;
    if (result.didYouMean !== undefined) json.did_you_mean = result.didYouMean;
    return { json };
  }

  async function doc(ctx: RequestContext) {
    const raw = ctx.query.get('cid');
    const cid = parseCid(raw);
    const scope = parseScope(ctx.query.get('scope'));
    const d = searcher(scope).get(cid);
    if (!d) {
      const err = new NotFoundError(`No document with cid ${cid} in the ${scope} corpus.`, 'cid');
      return { status: 404, json: { ...errorBody(err), found: false, cid: cid.toString() } };
    }
    const { text, truncated } = truncateUtf8(d.text, o.maxDocTextBytes);
    const json: Record<string, unknown> = { found: true, cid: d.cid.toString() };
    if (d.url !== undefined) json.url = d.url;
    json.title = d.title;
    json.truncated = truncated;
    json.text = text;
    return { json };
  }

  async function suggest(ctx: RequestContext) {
    const q = requireQuery(ctx.query.get('q'), o.maxQueryBytes);
    const scope = parseScope(ctx.query.get('scope'));
    const suggestions = searcher(scope).suggest(q, o.suggestLimit);
    return { json: { prefix: q, suggestions: suggestions.slice(0, o.suggestLimit) } };
  }

  const scopeParam = (values: Scope[], what: string) => ({
    name: 'scope', in: 'query', required: false,
    description: `${what} Absent: the service's own corpus.`,
    schema: { type: 'string', enum: values },
  });

  return {
    name: 'search',
    routes: [
      {
        method: 'GET', pattern: '/api/search', handler: search, right: 'search',
        operation: {
          operationId: 'search', tags: ['search'],
          summary: 'Full-text search of one corpus, 20 results per page.',
          parameters: [
            { name: 'q', in: 'query', required: true, description: 'The query: terms (OR), +required, -excluded, "phrases", site:host. At most 1,024 bytes and 64 clauses.', schema: { type: 'string', minLength: 1 } },
            scopeParam(['web', 'trusted'], '`web`: the crawled open-web corpus; `trusted`: flagged references.'),
            { name: 'page', in: 'query', required: false, description: '0-based page; page × 20 must be below 10,000.', schema: { type: 'integer', minimum: 0, maximum: Math.ceil(o.maxResultWindow / o.pageSize) - 1, default: 0 } },
          ],
          responses: {
            '200': { description: 'The page of results.', content: { 'application/json': { schema: { $ref: '#/components/schemas/SearchResponse' } } } },
            ...errorResponses('bad_query', 'bad_scope', 'bad_page'),
          },
        },
      },
      {
        method: 'GET', pattern: '/api/doc', handler: doc, right: 'search',
        operation: {
          operationId: 'getDoc', tags: ['search'],
          summary: 'One document by content id.',
          parameters: [
            { name: 'cid', in: 'query', required: true, description: 'Decimal content id, 0 ≤ cid ≤ 2^63−1, no leading zeros.', schema: { type: 'string', pattern: '^(0|[1-9][0-9]{0,18})$' } },
            scopeParam(['web', 'trusted'], 'The corpus to read from.'),
          ],
          responses: {
            '200': { description: 'The document.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Doc' } } } },
            ...errorResponses('bad_cid', 'bad_scope'),
            '404': { description: 'No document has this cid in the corpus: `not_found`.', content: { 'application/json': { schema: { $ref: '#/components/schemas/DocNotFound' } } } },
          },
        },
      },
      {
        method: 'GET', pattern: '/api/suggest', handler: suggest, right: 'search',
        operation: {
          operationId: 'suggest', tags: ['search'],
          summary: 'Completions of the last term of q, most frequent first.',
          parameters: [
            { name: 'q', in: 'query', required: true, description: 'The text typed so far; its last token is completed.', schema: { type: 'string', minLength: 1 } },
            scopeParam(['web', 'trusted'], 'The corpus whose terms complete.'),
          ],
          responses: {
            '200': { description: 'Up to 10 completions.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Suggest' } } } },
            ...errorResponses('bad_query', 'bad_scope'),
          },
        },
      },
    ],
    openapi: {
      tags: [{ name: 'search', description: 'Search, document fetch and completion over the own, web and trusted corpora.' }],
      components: {
        schemas: {
          Cid: { type: 'string', pattern: '^(0|[1-9][0-9]{0,18})$', description: 'Decimal 63-bit content id (a string: it exceeds the JSON safe-integer range).' },
          Result: {
            type: 'object', additionalProperties: false,
            required: ['cid', 'score', 'title', 'doc'],
            properties: {
              cid: { $ref: '#/components/schemas/Cid' },
              score: { type: 'integer', minimum: 0, description: 'Integer BM25 score.' },
              title: { type: 'string' },
              snippet: { type: 'string', maxLength: 240, description: 'Plain text around the query terms, `…` where cut.' },
              doc: { type: 'string', description: 'The document-fetch path of this result, e.g. `/api/doc?cid=123&scope=web`.' },
              url: { type: 'string' },
              host: { type: 'string' },
            },
          },
          SearchResponse: {
            type: 'object', additionalProperties: false,
            required: ['v', 'query', 'scope', 'page', 'total', 'nresults', 'results'],
            properties: {
              v: { type: 'integer', const: 1 },
              query: { type: 'string', description: 'The `q` submitted.' },
              scope: { type: 'string', enum: SCOPES },
              page: { type: 'integer', minimum: 0 },
              total: { type: 'integer', minimum: 0, description: 'Exact number of matching documents.' },
              nresults: { type: 'integer', minimum: 0, maximum: o.pageSize, description: 'Number of results in this response.' },
              results: { type: 'array', maxItems: o.pageSize, items: { $ref: '#/components/schemas/Result' } },
              did_you_mean: { type: 'string', description: 'A corrected query, present only when it would match more documents.' },
              phrase_exact: { type: 'boolean', description: 'Present exactly when q has a phrase; false when phrases were relaxed to their terms.' },
            },
          },
          Doc: {
            type: 'object', additionalProperties: false,
            required: ['v', 'found', 'cid', 'title', 'truncated', 'text'],
            properties: {
              v: { type: 'integer', const: 1 },
              found: { type: 'boolean', const: true },
              cid: { $ref: '#/components/schemas/Cid' },
              url: { type: 'string' },
              title: { type: 'string' },
              truncated: { type: 'boolean', description: 'Whether `text` was cut at 1 MiB.' },
              text: { type: 'string' },
            },
          },
          DocNotFound: {
            type: 'object',
            required: ['v', 'found', 'cid', 'error'],
            properties: {
              v: { type: 'integer', const: 1 },
              found: { type: 'boolean', const: false },
              cid: { $ref: '#/components/schemas/Cid' },
              error: { $ref: '#/components/schemas/Error/properties/error' },
            },
          },
          Suggest: {
            type: 'object', additionalProperties: false,
            required: ['v', 'prefix', 'suggestions'],
            properties: {
              v: { type: 'integer', const: 1 },
              prefix: { type: 'string', description: 'The `q` submitted.' },
              suggestions: { type: 'array', maxItems: o.suggestLimit, items: { type: 'string' } },
            },
          },
        },
      },
    },
  };
}
