/**
 * The control plane's HTTP face (interface §4.4, CONTRACT §6): a thin layer that parses bodies, applies
 * `Idempotency-Key`, and calls the library, which checks the allowlist (404 first) and the caller's
 * target-scoped `mgmt.*` right itself. No route sets `right`, because the router's check would answer
 * 401/403 before the allowlist's 404 and could not see the target.
 */
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../kernel/errors.js';
import { errorResponses } from '../rest/openapi.js';
import type { JsonReply, RequestContext, Route, RouteGroup } from '../http/route.js';
import type { ControlPlane } from './control-plane.js';

const SECURITY = [{ bearer: [] }, { serviceCap: [] }];
const TAGS = ['control'];
const ACCEPTED = { description: 'Accepted: the operation runs in the background; poll `GET /api/ops/{op_id}`.', content: { 'application/json': { schema: { $ref: '#/components/schemas/OpAccepted' } } } };
const PLAN = { description: 'Dry run: the plan, nothing changed.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Plan' } } } };
const IDEMPOTENCY_PARAM = { name: 'Idempotency-Key', in: 'header', required: false, description: 'Replays the first answer for 24 h instead of starting a second operation.', schema: { type: 'string', minLength: 1, maxLength: 255 } };
const jsonBody = (schema: Record<string, unknown>) => ({ required: true, content: { 'application/json': { schema } } });
const targetProp = { type: 'string', description: 'A target of the allowlist.' };

async function jsonObject(ctx: RequestContext): Promise<Record<string, unknown>> {
  const body = await ctx.json();
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new BadRequestError('The body must be a JSON object.', 'body');
  return body as Record<string, unknown>;
}

/** JSON bodies on the upload route: the route's limit is the artifact's, so the JSON gets its own. */
export const UPLOAD_JSON_LIMIT_BYTES = 1024 * 1024;

async function smallJson(ctx: RequestContext): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const chunk of ctx.bodyStream()) {
    n += chunk.length;
    if (n > UPLOAD_JSON_LIMIT_BYTES) throw new PayloadTooLargeError(UPLOAD_JSON_LIMIT_BYTES);
    chunks.push(chunk);
  }
  let body: unknown;
  try { body = JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch { throw new BadRequestError('The request body is not valid JSON.', 'body'); }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new BadRequestError('The body must be a JSON object.', 'body');
  return body as Record<string, unknown>;
}

function idempotencyKey(ctx: RequestContext): string | undefined {
  const raw = ctx.headers['idempotency-key'];
  return Array.isArray(raw) ? raw[0] : raw;
}

/** Runs `fn` under the request's Idempotency-Key and shapes the reply (202 with Location, or 200). */
async function post(cp: ControlPlane, ctx: RequestContext, route: string, fn: () => Promise<Record<string, unknown>>): Promise<JsonReply> {
  const r = await cp.idempotent(ctx.principal.capId ?? '', idempotencyKey(ctx), route, async () => {
    const json = await fn();
    return { status: json.dry_run === true ? 200 : 202, json };
  });
  const headers: Record<string, string> = {};
  if (typeof r.json.op_id === 'string') headers.location = `/api/ops/${r.json.op_id}`;
  if (r.replayed) headers['idempotent-replayed'] = 'true';
  return { status: r.status, headers, json: r.json };
}

export function controlRoutes(cp: ControlPlane): RouteGroup {
  const routes: Route[] = [
    {
      method: 'GET', pattern: '/api/inventory',
      handler: async (ctx) => { cp.authorizeRead(ctx.principal); return { json: cp.inventory() }; },
      operation: {
        operationId: 'getInventory', tags: TAGS, security: SECURITY,
        summary: 'The managed targets, derived from the allowlist the deploy operation reads.',
        responses: { '200': { description: 'The inventory.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Inventory' } } } }, ...errorResponses('forbidden') },
      },
    },
    {
      method: 'GET', pattern: '/api/deploy_status',
      handler: async (ctx) => {
        const target = ctx.query.get('target');
        if (target !== null) {
          cp.allowlist.check(target);
          cp.authorizeRead(ctx.principal, target);
          return { json: { v: 1, targets: await cp.status(target) } };
        }
        cp.authorizeRead(ctx.principal);
        const all = await cp.status();
        return { json: { v: 1, targets: all.filter((s) => ctx.principal.can('mgmt.read', s.target)) } };
      },
      operation: {
        operationId: 'getDeployStatus', tags: TAGS, security: SECURITY,
        summary: 'Version verdict of one target or of every target the caller may read, observed now.',
        parameters: [{ name: 'target', in: 'query', required: false, schema: { type: 'string' } }],
        responses: { '200': { description: 'Verdicts.', content: { 'application/json': { schema: { $ref: '#/components/schemas/DeployStatus' } } } }, ...errorResponses('forbidden', 'unknown_target') },
      },
    },
    {
      method: 'GET', pattern: '/api/ops/{op_id}',
      handler: async (ctx) => {
        const op = cp.getOp(ctx.params.op_id ?? '');
        cp.authorizeRead(ctx.principal, op.target ?? undefined);
        return { json: { ...op } };
      },
      operation: {
        operationId: 'getOperation', tags: TAGS, security: SECURITY,
        summary: 'One control-plane operation: state, version, digest, error and log.',
        parameters: [{ name: 'op_id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'The operation.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Operation' } } } }, ...errorResponses('forbidden', 'not_found') },
      },
    },
    {
      method: 'POST', pattern: '/api/build',
      handler: async (ctx) => post(cp, ctx, 'POST /api/build', async () => ({ ...(await cp.build(ctx.principal, await jsonObject(ctx))) })),
      operation: {
        operationId: 'build', tags: TAGS, security: SECURITY, summary: 'Build a target from its recipe (lifecycle step: build).',
        parameters: [IDEMPOTENCY_PARAM],
        requestBody: jsonBody({ type: 'object', required: ['target'], properties: { target: targetProp } }),
        responses: { '202': ACCEPTED, ...errorResponses('forbidden', 'unknown_target', 'conflict') },
      },
    },
    {
      method: 'POST', pattern: '/api/upload', streamBody: true, bodyLimit: cp.uploadLimitBytes,
      handler: async (ctx) => post(cp, ctx, 'POST /api/upload', async () => {
        const type = String(ctx.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
        if (type === 'application/json') return { ...(await cp.stage(ctx.principal, await smallJson(ctx))) };
        if (type !== 'application/x-tar' && type !== 'application/octet-stream' && type !== 'application/gzip') {
          throw new UnsupportedMediaTypeError(type || undefined, 'application/json, application/x-tar or application/octet-stream');
        }
        return { ...(await cp.stageUpload(ctx.principal, { target: ctx.query.get('target') ?? undefined, digest: ctx.query.get('digest') ?? undefined }, ctx.bodyStream())) };
      }),
      operation: {
        operationId: 'stage', tags: TAGS, security: SECURITY,
        summary: 'Stage a built version ({target, version}), or an artifact tarball sent as the body with ?target=&digest= (lifecycle step: stage).',
        parameters: [
          { name: 'target', in: 'query', required: false, description: 'With a tarball body: the target.', schema: { type: 'string' } },
          { name: 'digest', in: 'query', required: false, description: 'With a tarball body: its expected `sha256:<hex>`.', schema: { type: 'string', pattern: '^sha256:[0-9a-f]{64}$' } },
          IDEMPOTENCY_PARAM,
        ],
        requestBody: {
          required: true,
          content: {
            'application/json': { schema: { type: 'object', required: ['target', 'version'], properties: { target: targetProp, version: { type: 'string' } } } },
            'application/x-tar': { schema: { type: 'string', format: 'binary' } },
            'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
          },
        },
        responses: { '202': ACCEPTED, ...errorResponses('bad_request', 'forbidden', 'unknown_target', 'not_found', 'conflict', 'payload_too_large') },
      },
    },
    {
      method: 'POST', pattern: '/api/deploy',
      handler: async (ctx) => post(cp, ctx, 'POST /api/deploy', async () => ({ ...(await cp.deploy(ctx.principal, await jsonObject(ctx))) })),
      operation: {
        operationId: 'deploy', tags: TAGS, security: SECURITY, summary: 'Promote a staged version (lifecycle step: promote).',
        parameters: [IDEMPOTENCY_PARAM],
        requestBody: jsonBody({
          type: 'object', required: ['target'],
          properties: {
            target: targetProp, version: { type: 'string', description: 'Default: the newest staged version.' },
            dry_run: { type: 'boolean' }, reason: { type: 'string', maxLength: 1000 },
            expected_generation: { type: 'integer', description: '409 when the target is at another generation.' },
          },
        }),
        responses: { '200': PLAN, '202': ACCEPTED, ...errorResponses('bad_request', 'forbidden', 'unknown_target', 'not_found', 'conflict') },
      },
    },
    {
      method: 'POST', pattern: '/api/rollback',
      handler: async (ctx) => post(cp, ctx, 'POST /api/rollback', async () => ({ ...(await cp.rollback(ctx.principal, await jsonObject(ctx))) })),
      operation: {
        operationId: 'rollback', tags: TAGS, security: SECURITY, summary: 'Move the desired version back (lifecycle step: rollback).',
        parameters: [IDEMPOTENCY_PARAM],
        requestBody: jsonBody({
          type: 'object', required: ['target'],
          properties: { target: targetProp, to: { type: 'string', description: '"previous" (default) or a version.' }, dry_run: { type: 'boolean' }, reason: { type: 'string', maxLength: 1000 } },
        }),
        responses: { '200': PLAN, '202': ACCEPTED, ...errorResponses('bad_request', 'forbidden', 'unknown_target', 'not_found', 'conflict') },
      },
    },
    {
      method: 'POST', pattern: '/api/reconcile',
      handler: async (ctx) => post(cp, ctx, 'POST /api/reconcile', async () => {
        // An empty POST (no Content-Type) means "every target".
        const body = ctx.headers['content-type'] ? await jsonObject(ctx) : {};
        return { ...(await cp.reconcile(ctx.principal, body)) };
      }),
      operation: {
        operationId: 'reconcile', tags: TAGS, security: SECURITY, summary: 'Repair drift of one target, or of every target when none is named.',
        parameters: [IDEMPOTENCY_PARAM],
        requestBody: jsonBody({ type: 'object', properties: { target: targetProp } }),
        responses: { '202': ACCEPTED, ...errorResponses('forbidden', 'unknown_target', 'conflict') },
      },
    },
    {
      method: 'POST', pattern: '/api/restart',
      handler: async (ctx) => post(cp, ctx, 'POST /api/restart', async () => ({ ...(await cp.restart(ctx.principal, await jsonObject(ctx))) })),
      operation: {
        operationId: 'restart', tags: TAGS, security: SECURITY, summary: 'Restart the live version of a service target (start new, check health, stop old).',
        parameters: [IDEMPOTENCY_PARAM],
        requestBody: jsonBody({ type: 'object', required: ['target'], properties: { target: targetProp, reason: { type: 'string', maxLength: 1000 } } }),
        responses: { '202': ACCEPTED, ...errorResponses('forbidden', 'unknown_target', 'conflict') },
      },
    },
  ];
  return { name: 'control', routes, openapi: { tags: [{ name: 'control', description: 'Deployment control plane (CONTRACT §6).' }], components: { schemas: SCHEMAS } } };
}

const OP_KIND = { type: 'string', enum: ['build', 'stage', 'deploy', 'rollback', 'reconcile', 'restart'] };
const OP_STATE = { type: 'string', enum: ['queued', 'running', 'succeeded', 'failed', 'cancelled'] };
const NULLABLE_STRING = { type: ['string', 'null'] };

const SCHEMAS: Record<string, unknown> = {
  Inventory: {
    type: 'object', required: ['v', 'inventory', 'source', 'targets', 'count', 'lifecycle', 'revision', 'generated_at'],
    properties: {
      v: { type: 'integer', const: 1 }, inventory: { type: 'string' }, source: { type: 'string' },
      revision: { type: 'string', pattern: '^sha256:[0-9a-f]{64}$' }, generated_at: { type: 'string', format: 'date-time' },
      targets: { type: 'array', items: { type: 'string' } }, count: { type: 'integer' },
      lifecycle: {
        type: 'object', required: ['build', 'stage', 'promote', 'version_verdict', 'rollback'],
        properties: Object.fromEntries(['build', 'stage', 'promote', 'version_verdict', 'rollback'].map((k) => [k, { type: 'string' }])),
      },
    },
  },
  OpAccepted: {
    type: 'object', required: ['v', 'op_id', 'target', 'kind', 'state'],
    properties: { v: { type: 'integer', const: 1 }, op_id: { type: 'string' }, target: NULLABLE_STRING, kind: OP_KIND, state: OP_STATE },
  },
  Operation: {
    type: 'object', required: ['v', 'op_id', 'target', 'kind', 'state', 'version', 'digest', 'error', 'log'],
    properties: {
      v: { type: 'integer', const: 1 }, op_id: { type: 'string' }, target: NULLABLE_STRING, kind: OP_KIND, state: OP_STATE,
      version: NULLABLE_STRING, digest: NULLABLE_STRING, log: { type: 'string' },
      error: { oneOf: [{ type: 'null' }, { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' } } }] },
    },
  },
  Plan: {
    type: 'object', required: ['v', 'dry_run', 'target', 'kind', 'plan'],
    properties: { v: { type: 'integer', const: 1 }, dry_run: { const: true }, target: { type: 'string' }, kind: OP_KIND, plan: { type: 'object' } },
  },
  TargetStatus: {
    type: 'object',
    required: ['target', 'verdict', 'sync', 'health', 'desired', 'live', 'generation', 'lock', 'last_op', 'stable_versions', 'reasons'],
    properties: {
      target: { type: 'string' },
      verdict: { type: 'string', enum: ['in_sync', 'progressing', 'degraded', 'drifted', 'failed', 'missing', 'unknown'] },
      sync: { type: 'string', enum: ['synced', 'out_of_sync', 'unknown'] },
      health: { type: 'string', enum: ['healthy', 'progressing', 'degraded', 'missing', 'unknown'] },
      desired: { oneOf: [{ type: 'null' }, { type: 'object', required: ['version', 'digest'], properties: { version: { type: 'string' }, digest: { type: 'string' } } }] },
      live: { oneOf: [{ type: 'null' }, { type: 'object', required: ['version', 'digest', 'path'], properties: { version: { type: 'string' }, digest: NULLABLE_STRING, path: { type: 'string', description: 'The live pointer: where a static target is served from.' }, endpoint: { type: 'string', description: 'Service targets: where the live process listens.' } } }] },
      generation: { type: 'integer' },
      lock: { oneOf: [{ type: 'null' }, { type: 'object', properties: { op_id: { type: 'string' }, kind: { type: 'string' }, since: NULLABLE_STRING } }] },
      last_op: { oneOf: [{ type: 'null' }, { type: 'object', properties: { op_id: { type: 'string' }, kind: OP_KIND, state: OP_STATE, updated_at: { type: 'string' } } }] },
      stable_versions: { type: 'array', items: { type: 'string' } },
      reasons: { type: 'array', items: { type: 'string' } },
    },
  },
  DeployStatus: {
    type: 'object', required: ['v', 'targets'],
    properties: { v: { type: 'integer', const: 1 }, targets: { type: 'array', items: { $ref: '#/components/schemas/TargetStatus' } } },
  },
};
