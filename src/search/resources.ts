/**
 * The resources of search, document fetch and completion (interface §2, CONTRACT §2) as every face
 * returns them: their types, the one formatter of each (engine result → resource) and their JSON Schemas,
 * which the OpenAPI document publishes and the MCP tools use as `outputSchema`. A face that needs another
 * wire form (protobuf) maps from these; none shapes a resource on its own.
 */
import type { SearchResult, StoredDocument } from '../engine/index.js';
import { CID_PATTERN, type Cid } from '../kernel/cid.js';
import { toJson } from '../kernel/json.js';
import type { JsonSchema } from '../kernel/schema.js';
import { SCOPES, type Scope } from '../kernel/scope.js';

export interface ResultResource {
  cid: string;
  score: number;
  title: string;
  snippet?: string;
  doc: string;
  url?: string;
  host?: string;
}

export interface SearchResource {
  v: 1;
  query: string;
  scope: Scope;
  page: number;
  total: number;
  nresults: number;
  results: ResultResource[];
  phrase_exact?: boolean;
  did_you_mean?: string;
}

export interface DocResource {
  v: 1;
  found: true;
  cid: string;
  url?: string;
  title: string;
  truncated: boolean;
  text: string;
}

export interface DocNotFoundResource {
  v: 1;
  found: false;
  cid: string;
  error: { code: 'not_found'; message: string; param: 'cid' };
}

export interface SuggestResource {
  v: 1;
  prefix: string;
  suggestions: string[];
}

/** The document-fetch path of a result (CONTRACT §2 `doc`). */
export function docPath(cid: Cid | string, scope: Scope): string {
  return `/api/doc?cid=${cid}${scope === 'own' ? '' : `&scope=${scope}`}`;
}

export function searchResource(q: string, scope: Scope, page: number, r: SearchResult): SearchResource {
  const results = r.hits.map((h): ResultResource => {
    // Key order is the wire order: cid, score, title, snippet, doc, url, host.
    const out = { cid: h.cid.toString(), score: h.score, title: h.title } as ResultResource;
    if (h.snippet !== undefined) out.snippet = h.snippet;
    out.doc = docPath(h.cid, scope);
    if (h.url !== undefined) out.url = h.url;
    if (h.host !== undefined) out.host = h.host;
    return out;
  });
  const out: SearchResource = { v: 1, query: q, scope, page, total: r.total, nresults: results.length, results };
  if (r.phraseExact !== undefined) out.phrase_exact = r.phraseExact;
  if (r.didYouMean !== undefined) out.did_you_mean = r.didYouMean;
  return out;
}

const utf8 = new TextEncoder();

/**
 * `searchResource` as the JSON bytes a face sends (`toJson`), in an array of their own: what a search
 * worker returns, so that the thread serving HTTP neither rebuilds the result nor serializes it.
 */
export function searchResourceJson(q: string, scope: Scope, page: number, r: SearchResult): Uint8Array {
  return utf8.encode(toJson(searchResource(q, scope, page, r)));
}

/** The first `max` bytes of `text` in UTF-8, never splitting a character. */
function truncateUtf8(text: string, max: number): { text: string; truncated: boolean } {
  if (text.length * 3 <= max || Buffer.byteLength(text, 'utf8') <= max) return { text, truncated: false };
  const buf = Buffer.from(text, 'utf8');
  let end = max;
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
  return { text: buf.subarray(0, end).toString('utf8'), truncated: true };
}

export function docResource(d: StoredDocument, maxTextBytes: number): DocResource {
  const { text, truncated } = truncateUtf8(d.text, maxTextBytes);
  const out = { v: 1, found: true, cid: d.cid.toString() } as DocResource;
  if (d.url !== undefined) out.url = d.url;
  out.title = d.title;
  out.truncated = truncated;
  out.text = text;
  return out;
}

export function docNotFoundResource(cid: Cid, scope: Scope): DocNotFoundResource {
  return {
    v: 1, found: false, cid: cid.toString(),
    error: { code: 'not_found', message: `No document with cid ${cid} in the ${scope} corpus.`, param: 'cid' },
  };
}

export function suggestResource(prefix: string, suggestions: string[]): SuggestResource {
  return { v: 1, prefix, suggestions };
}

/** JSON Schemas of the resources, by component name. `pageSize` and `suggestLimit` bound the arrays. */
export function resourceSchemas(o: { pageSize: number; suggestLimit: number; maxDocTextBytes: number }): Record<string, JsonSchema> {
  return {
    Cid: { type: 'string', pattern: CID_PATTERN, description: 'Decimal 63-bit content id (a string: it exceeds the JSON safe-integer range).' },
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
        scope: { type: 'string', enum: [...SCOPES] },
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
        truncated: { type: 'boolean', description: `Whether \`text\` was cut at ${o.maxDocTextBytes} bytes.` },
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
  };
}
