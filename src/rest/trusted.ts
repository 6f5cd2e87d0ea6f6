/**
 * The REST face of the trusted corpus (CONTRACT §3, right `trusted.flag`): `POST /api/trusted {url | cid,
 * note?}`, `DELETE /api/trusted?cid=`, `GET /api/trusted?page=`. It only translates; the trusted service
 * validates, authorizes, audits and publishes.
 */
import type { RouteGroup } from '../http/route.js';
import { FlagRequest, TRUSTED_PAGE_SIZE, trustedSchemas, type TrustedService } from '../trusted/service.js';
import { errorResponses } from './openapi.js';

const TAGS = ['trusted'];
const json = (name: string) => ({ 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } });

export function trustedRoutes(service: TrustedService): RouteGroup {
  return {
    name: 'trusted',
    routes: [
      {
        method: 'POST', pattern: '/api/trusted', right: 'trusted.flag',
        handler: async (ctx) => {
          const flag = await service.flag(ctx.principal, await ctx.json());
          return { status: flag.state === 'pending' ? 202 : 201, json: { ...flag } };
        },
        operation: {
          operationId: 'flagTrusted', tags: TAGS,
          summary: 'Flags a document as a good reference: a cid of the own or web corpus, or a URL (copied from the web corpus when there, else fetched politely by the crawler and indexed).',
          requestBody: { required: true, content: json(FlagRequest.name) },
          responses: {
            '201': { description: 'Flagged; the document is in the trusted corpus.', content: json('TrustedFlagged') },
            '202': { description: 'Flagged; the URL is queued for the crawler (`state: pending`); `GET /api/trusted` shows when it is fetched.', content: json('TrustedFlagged') },
            ...errorResponses('bad_request', 'bad_cid', 'not_found'),
          },
        },
      },
      {
        method: 'DELETE', pattern: '/api/trusted', right: 'trusted.flag',
        handler: async (ctx) => ({ json: { ...(await service.unflag(ctx.principal, { cid: ctx.query.get('cid') ?? undefined })) } }),
        operation: {
          operationId: 'unflagTrusted', tags: TAGS, summary: 'Unflags a document: its flag is forgotten and it leaves the trusted corpus.',
          parameters: [{ name: 'cid', in: 'query', required: true, schema: { $ref: '#/components/schemas/Cid' } }],
          responses: { '200': { description: 'Unflagged.', content: json('TrustedUnflagged') }, ...errorResponses('bad_cid', 'not_found') },
        },
      },
      {
        method: 'GET', pattern: '/api/trusted', right: 'trusted.flag',
        handler: async (ctx) => ({ json: { ...service.list(ctx.principal, { page: ctx.query.get('page') ?? undefined }) } }),
        operation: {
          operationId: 'listTrusted', tags: TAGS, summary: `The flags, newest first, ${TRUSTED_PAGE_SIZE} per page: who flagged what, when, with which note, and the fetch state.`,
          parameters: [{ name: 'page', in: 'query', required: false, schema: { type: 'integer', minimum: 0, default: 0 } }],
          responses: { '200': { description: 'One page of flags.', content: json('TrustedList') }, ...errorResponses('bad_page') },
        },
      },
    ],
    openapi: {
      tags: [{ name: 'trusted', description: 'The trusted corpus: documents clients flagged as good references (right `trusted.flag`).' }],
      components: { schemas: trustedSchemas() },
    },
  };
}
