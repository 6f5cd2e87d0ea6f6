/**
 * The control plane's REST face (interface §4.4, CONTRACT §6): parses the query and the body, reads
 * `Idempotency-Key`, calls the `ControlService`, and shapes status codes and headers (202 with
 * `Location`, 200 for a plan, `idempotent-replayed`). Every rule (allowlist 404 first, target-scoped
 * rights, validation, idempotency, dry runs) is the service's: no route sets `right`, because the
 * router's check would answer 401/403 before the allowlist's 404 and could not see the target.
 */
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../kernel/errors.js';
import { errorResponses } from './openapi.js';
import type { JsonReply, RequestContext, Route, RouteGroup } from '../http/route.js';
import {
  BuildRequest, CONTROL_REQUESTS, DeployRequest, ReconcileRequest, RestartRequest, RollbackRequest, StageRequest,
  type ControlService, type Submitted, type SubmitOptions,
} from '../control/index.js';
import type { Principal } from '../kernel/principal.js';
import type { BodySchema } from '../kernel/schema.js';

const SECURITY = [{ bearer: [] }, { serviceCap: [] }];
const TAGS = ['control'];
const ACCEPTED = { description: 'Accepted: the operation runs in the background; poll `GET /api/ops/{op_id}`.', content: { 'application/json': { schema: { $ref: '#/components/schemas/OpAccepted' } } } };
const PLAN = { description: 'Dry run: the plan, nothing changed.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Plan' } } } };
const IDEMPOTENCY_PARAM = { name: 'Idempotency-Key', in: 'header', required: false, description: 'Replays the first answer for 24 h instead of starting a second operation.', schema: { type: 'string', minLength: 1, maxLength: 255 } };
const ref = (s: BodySchema<unknown>) => ({ $ref: `#/components/schemas/${s.name}` });
const jsonBody = (s: BodySchema<unknown>) => ({ required: true, content: { 'application/json': { schema: ref(s) } } });

/** JSON bodies on the upload route: the route's limit is the artifact's, so the JSON gets its own. */
export const UPLOAD_JSON_LIMIT_BYTES = 1024 * 1024;

async function smallJson(ctx: RequestContext): Promise<unknown> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const chunk of ctx.bodyStream()) {
    n += chunk.length;
    if (n > UPLOAD_JSON_LIMIT_BYTES) throw new PayloadTooLargeError(UPLOAD_JSON_LIMIT_BYTES);
    chunks.push(chunk);
  }
  try { return JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch { throw new BadRequestError('The request body is not valid JSON.', 'body'); }
}

function idempotencyKey(ctx: RequestContext): { idempotencyKey: string | undefined } {
  const raw = ctx.headers['idempotency-key'];
  return { idempotencyKey: Array.isArray(raw) ? raw[0] : raw };
}

/** 202 with Location for an operation, 200 for a plan; `idempotent-replayed` on a replay. */
function submitted(r: Submitted): JsonReply {
  const json = { ...r.answer } as Record<string, unknown>;
  const headers: Record<string, string> = {};
  if (typeof json.op_id === 'string') headers.location = `/api/ops/${json.op_id}`;
  if (r.replayed) headers['idempotent-replayed'] = 'true';
  return { status: json.dry_run === true ? 200 : 202, headers, json };
}

/**
 * A POST whose JSON body the service validates and whose answer is an operation (202) or, for a dry
 * run, a plan (200). `body` reads the request's input (default: the JSON body).
 */
function submitRoute(pattern: string, operation: { operationId: string; summary: string; schema: BodySchema<unknown>; responses: Record<string, unknown> },
  submit: (principal: Principal, input: unknown, o: SubmitOptions) => Promise<Submitted>,
  body: (ctx: RequestContext) => Promise<unknown> = (ctx) => ctx.json()): Route {
  return {
    method: 'POST', pattern,
    handler: async (ctx) => submitted(await submit(ctx.principal, await body(ctx), idempotencyKey(ctx))),
    operation: {
      operationId: operation.operationId, tags: TAGS, security: SECURITY, summary: operation.summary,
      parameters: [IDEMPOTENCY_PARAM], requestBody: jsonBody(operation.schema), responses: operation.responses,
    },
  };
}

export function controlRoutes(service: ControlService): RouteGroup {
  const routes: Route[] = [
    {
      method: 'GET', pattern: '/api/inventory',
      handler: async (ctx) => ({ json: service.inventory(ctx.principal) }),
      operation: {
        operationId: 'getInventory', tags: TAGS, security: SECURITY,
        summary: 'The managed targets, derived from the allowlist the deploy operation reads.',
        responses: { '200': { description: 'The inventory.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Inventory' } } } }, ...errorResponses('forbidden') },
      },
    },
    {
      method: 'GET', pattern: '/api/deploy_status',
      handler: async (ctx) => ({ json: { ...(await service.status(ctx.principal, { target: ctx.query.get('target') })) } }),
      operation: {
        operationId: 'getDeployStatus', tags: TAGS, security: SECURITY,
        summary: 'Version verdict of one target or of every target the caller may read, observed now.',
        parameters: [{ name: 'target', in: 'query', required: false, schema: { type: 'string' } }],
        responses: { '200': { description: 'Verdicts.', content: { 'application/json': { schema: { $ref: '#/components/schemas/DeployStatus' } } } }, ...errorResponses('forbidden', 'unknown_target') },
      },
    },
    {
      method: 'GET', pattern: '/api/history',
      handler: async (ctx) => ({ json: service.history(ctx.principal, { target: ctx.query.get('target') }) }),
      operation: {
        operationId: 'getHistory', tags: TAGS, security: SECURITY,
        summary: 'One target\'s versions, its last 50 operations (without logs) and its last 50 audit entries, newest first.',
        parameters: [{ name: 'target', in: 'query', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'The history.', content: { 'application/json': { schema: { $ref: '#/components/schemas/TargetHistory' } } } }, ...errorResponses('forbidden', 'unknown_target') },
      },
    },
    {
      method: 'GET', pattern: '/api/ops/{op_id}',
      handler: async (ctx) => ({ json: { ...await service.getOp(ctx.principal, ctx.params.op_id ?? '') } }),
      operation: {
        operationId: 'getOperation', tags: TAGS, security: SECURITY,
        summary: 'One control-plane operation: state, version, digest, error and log.',
        parameters: [{ name: 'op_id', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '200': { description: 'The operation.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Operation' } } } }, ...errorResponses('forbidden', 'not_found') },
      },
    },
    submitRoute('/api/build', {
      operationId: 'build', summary: 'Build a target from its recipe (lifecycle step: build).', schema: BuildRequest,
      responses: { '202': ACCEPTED, ...errorResponses('bad_request', 'forbidden', 'unknown_target', 'conflict') },
    }, (p, input, o) => service.build(p, input, o)),
    {
      method: 'POST', pattern: '/api/upload', streamBody: true, bodyLimit: service.uploadLimitBytes,
      handler: async (ctx) => {
        const type = String(ctx.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
        if (type === 'application/json') return submitted(await service.stage(ctx.principal, await smallJson(ctx), idempotencyKey(ctx)));
        if (type !== 'application/x-tar' && type !== 'application/octet-stream' && type !== 'application/gzip') {
          throw new UnsupportedMediaTypeError(type || undefined, 'application/json, application/x-tar or application/octet-stream');
        }
        const input = { target: ctx.query.get('target') ?? undefined, digest: ctx.query.get('digest') ?? undefined };
        return submitted(await service.stageUpload(ctx.principal, input, ctx.bodyStream(), idempotencyKey(ctx)));
      },
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
            'application/json': { schema: ref(StageRequest) },
            'application/x-tar': { schema: { type: 'string', format: 'binary' } },
            'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
          },
        },
        responses: { '202': ACCEPTED, ...errorResponses('bad_request', 'forbidden', 'unknown_target', 'not_found', 'conflict', 'payload_too_large') },
      },
    },
    submitRoute('/api/deploy', {
      operationId: 'deploy', summary: 'Promote a staged version (lifecycle step: promote).', schema: DeployRequest,
      responses: { '200': PLAN, '202': ACCEPTED, ...errorResponses('bad_request', 'forbidden', 'unknown_target', 'not_found', 'conflict') },
    }, (p, input, o) => service.deploy(p, input, o)),
    submitRoute('/api/rollback', {
      operationId: 'rollback', summary: 'Move the desired version back (lifecycle step: rollback).', schema: RollbackRequest,
      responses: { '200': PLAN, '202': ACCEPTED, ...errorResponses('bad_request', 'forbidden', 'unknown_target', 'not_found', 'conflict') },
    }, (p, input, o) => service.rollback(p, input, o)),
    // An empty POST (no Content-Type) means "every target".
    submitRoute('/api/reconcile', {
      operationId: 'reconcile', summary: 'Repair drift of one target, or of every target when none is named.', schema: ReconcileRequest,
      responses: { '202': ACCEPTED, ...errorResponses('bad_request', 'forbidden', 'unknown_target', 'conflict') },
    }, (p, input, o) => service.reconcile(p, input, o), async (ctx) => (ctx.headers['content-type'] ? ctx.json() : {})),
    submitRoute('/api/restart', {
      operationId: 'restart', summary: 'Restart the live version of a service target (start new, check health, stop old).', schema: RestartRequest,
      responses: { '202': ACCEPTED, ...errorResponses('bad_request', 'forbidden', 'unknown_target', 'conflict') },
    }, (p, input, o) => service.restart(p, input, o)),
  ];
  return { name: 'control', routes, openapi: { tags: [{ name: 'control', description: 'Deployment control plane (CONTRACT §6).' }], components: { schemas: { ...SCHEMAS, ...Object.fromEntries(CONTROL_REQUESTS.map((s) => [s.name, s.schema])) } } } };
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
  TargetHistory: {
    type: 'object', required: ['v', 'target', 'versions', 'ops', 'audit'],
    properties: {
      v: { type: 'integer', const: 1 }, target: { type: 'string' },
      versions: { type: 'array', items: { type: 'object', required: ['version', 'digest', 'state', 'origin', 'created_at', 'updated_at'], properties: { version: { type: 'string' }, digest: { type: 'string' }, state: { type: 'string' }, origin: { type: 'string', enum: ['build', 'upload'] }, created_at: { type: 'string' }, updated_at: { type: 'string' } } } },
      ops: { type: 'array', items: { type: 'object', required: ['op_id', 'kind', 'state', 'created_at', 'updated_at'], properties: { op_id: { type: 'string' }, target: NULLABLE_STRING, kind: OP_KIND, state: OP_STATE, version: NULLABLE_STRING, digest: NULLABLE_STRING, from_version: NULLABLE_STRING, prior_state: NULLABLE_STRING, error: { type: ['object', 'null'] }, actor: NULLABLE_STRING, reason: NULLABLE_STRING, created_at: { type: 'string' }, updated_at: { type: 'string' } } } },
      audit: { type: 'array', items: { type: 'object', required: ['id', 'at', 'action', 'result'], properties: { id: { type: 'integer' }, at: { type: 'string' }, actor: NULLABLE_STRING, account: NULLABLE_STRING, action: { type: 'string' }, target: NULLABLE_STRING, from_ref: NULLABLE_STRING, to_ref: NULLABLE_STRING, reason: NULLABLE_STRING, result: { type: 'string' }, detail: {} } } },
    },
  },
  DeployStatus: {
    type: 'object', required: ['v', 'targets'],
    properties: { v: { type: 'integer', const: 1 }, targets: { type: 'array', items: { $ref: '#/components/schemas/TargetStatus' } } },
  },
};
