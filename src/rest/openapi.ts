/**
 * The OpenAPI 3.1 document of `GET /api/openapi.json` (CONTRACT §9), assembled from the route groups, so
 * each group describes its own endpoints next to their handlers and nobody edits one big file.
 *
 * How a group contributes:
 *   - each `Route` may carry `operation`: its OpenAPI Operation Object (summary, operationId, parameters,
 *     requestBody, responses). It lands at `paths[route.pattern][method]`. Use `errorResponses(...codes)`
 *     for its error responses and `$ref: '#/components/schemas/<Name>'` for shared schemas.
 *   - the group may carry `openapi.components` (schemas, parameters, …) and `openapi.tags`; a component
 *     name defined twice stops start-up, as do two operations with the same `operationId`.
 *   - responses every route can produce are added here when the operation does not list them: 400
 *     (`bad_request`, e.g. two capabilities), 401 (invalid capability), 403 (when the route declares a
 *     `right`), 413 and 415 (when it has a `requestBody`), 429, 431 (headers over the limit), 500 and 503.
 *     So an operation lists only
 *     what is specific to it.
 *   - `security` defaults from `route.right`: none needed for routes without one; a capability (bearer
 *     or `X-Service-Cap`) for routes with one, optional (`{}` first) for `search`, which anonymous callers
 *     hold by default.
 * Shared schemas that live here: `Error` (CONTRACT §1 body) and `ErrorCode`.
 */
import type { ErrorCode } from '../kernel/errors.js';
import { requirePublic } from '../kernel/principal.js';
import { ERROR_CODES, WIRE_CODES } from '../http/errors.js';
import type { RouteGroup } from '../http/route.js';

export const API_VERSION = '1.0.0';

const ERROR_REF = { $ref: '#/components/schemas/Error' };

const REASONS: Record<number, string> = {
  400: 'Bad request', 401: 'Unauthenticated', 403: 'Forbidden', 404: 'Not found', 405: 'Method not allowed',
  409: 'Conflict', 413: 'Payload too large', 415: 'Unsupported media type', 429: 'Rate limited', 431: 'Request headers too large',
  500: 'Internal error', 503: 'Unavailable',
};

/** Headers some error statuses carry. */
const ERROR_HEADERS: Record<number, Record<string, unknown>> = {
  401: { 'WWW-Authenticate': { schema: { type: 'string' }, description: '`Bearer realm="quarry"`' } },
  405: { Allow: { schema: { type: 'string' }, description: 'The methods the path accepts.' } },
  429: { 'Retry-After': { schema: { type: 'integer', minimum: 1 }, description: 'Seconds until a request will be accepted.' } },
  503: { 'Retry-After': { schema: { type: 'integer', minimum: 1 }, description: 'Seconds after which to retry.' } },
};

/**
 * OpenAPI responses for these error codes, grouped by HTTP status; each references the shared `Error`
 * schema and names its codes in the description. Spread it into an operation's `responses`.
 */
export function errorResponses(...codes: ErrorCode[]): Record<string, Record<string, unknown>> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = WIRE_CODES[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<string, Record<string, unknown>> = {};
  for (const [status, list] of byStatus) out[String(status)] = errorResponse(status, list);
  return out;
}

function errorResponse(status: number, codes: ErrorCode[]): Record<string, unknown> {
  const r: Record<string, unknown> = {
    description: `${REASONS[status] ?? 'Error'}: ${codes.map((c) => `\`${c}\``).join(', ')}.`,
    content: { 'application/json': { schema: ERROR_REF } },
  };
  if (ERROR_HEADERS[status]) r.headers = ERROR_HEADERS[status];
  return r;
}

const SHARED_COMPONENTS: Record<string, Record<string, unknown>> = {
  schemas: {
    ErrorCode: { type: 'string', enum: ERROR_CODES, description: 'Stable error identifier (docs/spec/CONTRACT.md §1).' },
    Error: {
      type: 'object',
      description: 'Every error response. Some endpoints add fields beside `error` (e.g. `/api/doc` 404 adds `found` and `cid`).',
      required: ['v', 'error'],
      properties: {
        v: { type: 'integer', const: 1 },
        error: {
          type: 'object',
          required: ['code', 'message'],
          additionalProperties: false,
          properties: {
            code: { $ref: '#/components/schemas/ErrorCode' },
            message: { type: 'string', description: 'One human sentence.' },
            param: { type: 'string', description: 'The parameter at fault, when one is.' },
          },
        },
      },
    },
  },
  securitySchemes: {
    bearer: { type: 'http', scheme: 'bearer', description: 'A capability: `Authorization: Bearer <cap>`.' },
    serviceCap: { type: 'apiKey', in: 'header', name: 'X-Service-Cap', description: 'A capability in `X-Service-Cap`.' },
  },
};

export interface OpenApiInfo {
  title?: string;
  description?: string;
}

/** The whole document for these groups. Throws on clashing component names or operation ids. */
export function buildOpenApi(groups: readonly RouteGroup[], info: OpenApiInfo = {}): Record<string, unknown> {
  const components: Record<string, Record<string, unknown>> = structuredClone(SHARED_COMPONENTS);
  const owner = new Map<string, string>();
  for (const [kind, entries] of Object.entries(SHARED_COMPONENTS)) for (const name of Object.keys(entries)) owner.set(`${kind}/${name}`, 'http');
  const tags: { name: string; description?: string }[] = [];
  for (const g of groups) {
    for (const [kind, entries] of Object.entries(g.openapi?.components ?? {})) {
      components[kind] ??= {};
      for (const [name, value] of Object.entries(entries)) {
        const key = `${kind}/${name}`;
        if (owner.has(key)) throw new Error(`OpenAPI component ${key} is defined by groups ${owner.get(key)} and ${g.name}.`);
        owner.set(key, g.name);
        components[kind]![name] = value;
      }
    }
    for (const t of g.openapi?.tags ?? []) if (!tags.some((x) => x.name === t.name)) tags.push(t);
  }

  const paths: Record<string, Record<string, unknown>> = {};
  const operationIds = new Map<string, string>();
  for (const g of groups) {
    for (const route of g.routes) {
      if (!route.operation) continue;
      const op = structuredClone(route.operation);
      const id = op.operationId;
      if (typeof id === 'string') {
        if (operationIds.has(id)) throw new Error(`OpenAPI operationId ${id} is used by groups ${operationIds.get(id)} and ${g.name}.`);
        operationIds.set(id, g.name);
      }
      const responses = (op.responses ??= {}) as Record<string, unknown>;
      const add = (status: number, code: ErrorCode) => {
        if (!(String(status) in responses)) responses[String(status)] = errorResponse(status, [code]);
      };
      add(400, 'bad_request');
      add(401, 'unauthenticated');
      if (route.right !== undefined) add(403, 'forbidden');
      if (op.requestBody !== undefined) {
        add(413, 'payload_too_large');
        add(415, 'unsupported_media_type');
      }
      add(429, 'rate_limited');
      if (!('431' in responses)) {
        responses['431'] = { ...errorResponse(431, ['bad_request']), description: 'Request headers over the limit (16 KiB): `bad_request`.' };
      }
      add(500, 'internal');
      add(503, 'unavailable');
      if (op.security === undefined) {
        if (route.right === 'search') op.security = [{}, { bearer: [] }, { serviceCap: [] }];
        else if (route.right !== undefined) op.security = [{ bearer: [] }, { serviceCap: [] }];
      }
      downgradeTo31(op);
      (paths[route.pattern] ??= {})[route.method.toLowerCase()] = op;
    }
  }

  return {
    openapi: '3.1.0',
    info: {
      title: info.title ?? 'Quarry',
      version: API_VERSION,
      description: info.description
        ?? 'Full-text search over three corpora (own, web, trusted), the event stream, authentication and the deployment control plane. Every JSON response carries `v: 1`; errors follow docs/spec/CONTRACT.md §1 in the repository.',
    },
    servers: [{ url: '/' }],
    ...(tags.length > 0 ? { tags } : {}),
    paths,
    components,
    security: [{}, { bearer: [] }, { serviceCap: [] }],
  };
}

/**
 * OpenAPI 3.2 keywords a group may use that 3.1 does not know (`itemSchema` of a media type, for
 * streams) move to their `x-` extension, so the served document stays valid 3.1.
 */
function downgradeTo31(node: unknown): void {
  if (typeof node !== 'object' || node === null) return;
  if (Array.isArray(node)) {
    for (const n of node) downgradeTo31(n);
    return;
  }
  const obj = node as Record<string, unknown>;
  const content = obj.content;
  if (typeof content === 'object' && content !== null) {
    for (const media of Object.values(content as Record<string, Record<string, unknown>>)) {
      if (media && 'itemSchema' in media) {
        media['x-itemSchema'] = media.itemSchema;
        delete media.itemSchema;
      }
    }
  }
  for (const v of Object.values(obj)) downgradeTo31(v);
}

/** `GET /api/openapi.json`: serves the document the service built from all groups (including this one). */
export function openApiRoutes(document: () => Record<string, unknown>): RouteGroup {
  let cached: Buffer | undefined;
  return {
    name: 'openapi',
    routes: [{
      method: 'GET',
      pattern: '/api/openapi.json',
      handler: async (ctx) => {
        // Public (CONTRACT §4): anyone while anonymous access is on, any valid capability when it is off.
        requirePublic(ctx.principal);
        cached ??= Buffer.from(JSON.stringify(document()));
        return { body: cached, contentType: 'application/json; charset=utf-8', headers: { 'cache-control': 'no-cache' } };
      },
      operation: {
        operationId: 'getOpenApi',
        summary: 'This OpenAPI 3.1 description of the REST interface.',
        tags: ['meta'],
        security: [{}, { bearer: [] }, { serviceCap: [] }],
        responses: {
          '200': { description: 'The OpenAPI document.', content: { 'application/json': { schema: { type: 'object', required: ['openapi', 'info', 'paths'] } } } },
        },
      },
    }],
    openapi: { tags: [{ name: 'meta', description: 'The interface description itself.' }] },
  };
}
