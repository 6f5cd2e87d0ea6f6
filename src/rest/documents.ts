/**
 * The REST face of the documents API (right `index.write`): `POST /api/documents?corpus=` with a batch
 * (JSON array or NDJSON) and `DELETE /api/documents?corpus=&cid=|site=`. Both answer 200 once the
 * ingest's commit is durable. It only translates; the documents service validates, authorizes, audits.
 */
import { MAX_BATCH_BYTES, documentsSchemas, type Answered, type DocumentsService } from '../documents/service.js';
import type { JsonReply, RequestContext, RouteGroup } from '../http/route.js';
import { SCOPES } from '../kernel/scope.js';
import { errorResponses } from './openapi.js';

const TAGS = ['documents'];
const CORPUS = { name: 'corpus', in: 'query', required: true, description: 'The corpus written.', schema: { type: 'string', enum: [...SCOPES] } };
const IDEMPOTENCY = { name: 'Idempotency-Key', in: 'header', required: false, description: 'Replays the first answer of this key (per capability and route) for 24 h instead of doing the work again.', schema: { type: 'string', minLength: 1, maxLength: 255 } };
const REPLAYED = { 'idempotent-replayed': { schema: { type: 'string', const: 'true' }, description: 'The answer is the stored one of an earlier request with the same Idempotency-Key.' } };
const RECORDS = { $ref: '#/components/schemas/DocumentRecordInput' };

function reply(r: Answered<object>): JsonReply {
  return { json: { ...r.answer }, ...(r.replayed ? { headers: { 'idempotent-replayed': 'true' } } : {}) };
}

function idempotencyKey(ctx: RequestContext): string | undefined {
  const raw = ctx.headers['idempotency-key'];
  return Array.isArray(raw) ? raw[0] : raw;
}

export function documentsRoutes(service: DocumentsService): RouteGroup {
  return {
    name: 'documents',
    routes: [
      {
        method: 'POST', pattern: '/api/documents', right: 'index.write', bodyLimit: MAX_BATCH_BYTES,
        handler: async (ctx) => reply(await service.add(ctx.principal, {
          corpus: ctx.query.get('corpus') ?? undefined, collection: ctx.query.get('collection') ?? undefined,
          contentType: ctx.headers['content-type'], body: await ctx.body(),
        }, idempotencyKey(ctx))),
        operation: {
          operationId: 'addDocuments', tags: TAGS,
          summary: `Adds or replaces a batch of documents (at most ${MAX_BATCH_BYTES / 1024 / 1024} MiB); answers once the batch is durably committed. Malformed records are listed by number and skipped; the rest are committed.`,
          parameters: [
            CORPUS,
            { name: 'collection', in: 'query', required: false, description: 'Names the collection `_id`s belong to (their cids depend on it). Default `api`.', schema: { type: 'string', pattern: '^[A-Za-z0-9._/-]{1,200}$' } },
            IDEMPOTENCY,
          ],
          requestBody: {
            required: true,
            content: {
              'application/json': { schema: { type: 'array', items: RECORDS } },
              'application/x-ndjson': { schema: { type: 'string', description: 'One record (a JSON object) a line.' }, itemSchema: RECORDS },
            },
          },
          responses: {
            '200': { description: 'Committed.', headers: REPLAYED, content: { 'application/json': { schema: { $ref: '#/components/schemas/DocumentsBatchResult' } } } },
            ...errorResponses('bad_request', 'bad_scope', 'conflict'),
          },
        },
      },
      {
        method: 'DELETE', pattern: '/api/documents', right: 'index.write',
        handler: async (ctx) => reply(await service.delete(ctx.principal, {
          corpus: ctx.query.get('corpus') ?? undefined, cid: ctx.query.get('cid') ?? undefined, site: ctx.query.get('site') ?? undefined,
        }, idempotencyKey(ctx))),
        operation: {
          operationId: 'deleteDocuments', tags: TAGS,
          summary: 'Deletes one document (cid) or every document of a host (site, as `site:` matches it); answers once the deletion is durably committed.',
          parameters: [
            CORPUS,
            { name: 'cid', in: 'query', required: false, description: 'One document (exactly one of cid and site).', schema: { $ref: '#/components/schemas/Cid' } },
            { name: 'site', in: 'query', required: false, description: 'A host name: every document whose URL is on it.', schema: { type: 'string', maxLength: 260 } },
            IDEMPOTENCY,
          ],
          responses: {
            '200': { description: 'Deleted and committed.', headers: REPLAYED, content: { 'application/json': { schema: { $ref: '#/components/schemas/DocumentsDeleted' } } } },
            ...errorResponses('bad_request', 'bad_scope', 'bad_cid', 'not_found', 'conflict'),
          },
        },
      },
    ],
    openapi: {
      tags: [{ name: 'documents', description: 'Adding and deleting documents of any corpus over HTTP (right `index.write`).' }],
      components: { schemas: documentsSchemas() },
    },
  };
}
