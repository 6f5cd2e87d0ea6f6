/**
 * The REST face of search: `GET /api/search`, `GET /api/doc`, `GET /api/suggest` (interface §4.1–4.3).
 * It only translates: query parameters into the search service's input, its resources into JSON replies
 * (a document that is not found is a 404 carrying the `DocNotFound` resource).
 */
import type { JsonBytesReply, JsonReply, RequestContext, RouteGroup } from '../http/route.js';
import { SCOPES } from '../kernel/scope.js';
import type { SearchService } from '../search/service.js';
import { errorResponses } from './openapi.js';

export function searchRoutes(service: SearchService): RouteGroup {
  const { pageSize, maxResultWindow, maxQueryBytes } = service.limits;
  const get = (ctx: RequestContext, name: string) => ctx.query.get(name);

  async function search(ctx: RequestContext): Promise<JsonBytesReply> {
    const call = { deadline: ctx.deadline };
    return { jsonBytes: await service.searchJson(ctx.principal, { q: get(ctx, 'q'), scope: get(ctx, 'scope'), page: get(ctx, 'page') }, call) };
  }

  async function doc(ctx: RequestContext): Promise<JsonReply> {
    const d = await service.doc(ctx.principal, { cid: get(ctx, 'cid'), scope: get(ctx, 'scope') });
    return d.found ? { json: { ...d } } : { status: 404, json: { ...d } };
  }

  async function suggest(ctx: RequestContext): Promise<JsonReply> {
    return { json: { ...await service.suggest(ctx.principal, { q: get(ctx, 'q'), scope: get(ctx, 'scope') }) } };
  }

  const scopeParam = (what: string) => ({
    name: 'scope', in: 'query', required: false,
    description: `${what} Absent: the service's own corpus.`,
    schema: { type: 'string', enum: SCOPES.filter((s) => s !== 'own') },
  });

  return {
    name: 'search',
    routes: [
      {
        method: 'GET', pattern: '/api/search', handler: search, right: 'search',
        operation: {
          operationId: 'search', tags: ['search'],
          summary: `Full-text search of one corpus, ${pageSize} results per page.`,
          parameters: [
            { name: 'q', in: 'query', required: true, description: `The query: terms (OR), +required, -excluded, "phrases", site:host. At most ${maxQueryBytes.toLocaleString('en-US')} bytes, any number of clauses.`, schema: { type: 'string', minLength: 1 } },
            scopeParam('`web`: the crawled open-web corpus; `trusted`: flagged references.'),
            { name: 'page', in: 'query', required: false, description: `0-based page; page × ${pageSize} must be below ${maxResultWindow.toLocaleString('en-US')}.`, schema: { type: 'integer', minimum: 0, maximum: Math.ceil(maxResultWindow / pageSize) - 1, default: 0 } },
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
            { name: 'cid', in: 'query', required: true, description: 'Decimal content id, 0 ≤ cid ≤ 2^63−1, no leading zeros.', schema: { $ref: '#/components/schemas/Cid' } },
            scopeParam('The corpus to read from.'),
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
            scopeParam('The corpus whose terms complete.'),
          ],
          responses: {
            '200': { description: `Up to ${service.limits.suggestLimit} completions.`, content: { 'application/json': { schema: { $ref: '#/components/schemas/Suggest' } } } },
            ...errorResponses('bad_query', 'bad_scope'),
          },
        },
      },
    ],
    openapi: {
      tags: [{ name: 'search', description: 'Search, document fetch and completion over the own, web and trusted corpora.' }],
      components: { schemas: service.schemas() },
    },
  };
}
