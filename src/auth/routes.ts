/**
 * The REST face of authentication (CONTRACT §4): registration by invite, OPAQUE login, invites, the
 * capability list, revocation and server-side attenuation, `whoami`, and the login page. Handlers only
 * parse and shape; the rules live in `accounts.ts`, `capability.ts` and `policy.ts`. Every response and
 * audit entry names capabilities by id; the one place a capability is written out is the body that hands
 * a new one to its holder (login, attenuate).
 */
import type { RequestContext, Route, RouteGroup } from '../http/route.js';
import { BadRequestError, UnauthenticatedError } from '../kernel/errors.js';
import type { Db } from '../store/db.js';
import { appendAudit } from '../store/audit.js';
import { RIGHTS, isRight, requireRight, type Right } from '../kernel/principal.js';
import type { Accounts } from './accounts.js';
import { TARGET_PATTERN, rightsList, targetsJson, type CapabilityAuthority } from './capability.js';
import { presentedCapabilities } from './policy.js';
import type { LoginPage } from './login-page.js';

export interface AuthRoutesDeps {
  db: Db;
  accounts: Accounts;
  capabilities: CapabilityAuthority;
  loginPage: LoginPage;
  now: () => Date;
  /** Longest ttl_s accepted by `POST /api/caps/attenuate`. Default 30 days. */
  maxAttenuateTtlSeconds?: number;
}

async function objectBody(ctx: RequestContext): Promise<Record<string, unknown>> {
  const body = await ctx.json();
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new BadRequestError('The body must be a JSON object.');
  return body as Record<string, unknown>;
}

export function parseRights(value: unknown, param = 'rights'): Right[] {
  if (!Array.isArray(value) || !value.every((r) => typeof r === 'string' && isRight(r))) {
    throw new BadRequestError(`${param} must be an array of rights (${RIGHTS.join(', ')}).`, param);
  }
  return [...new Set(value as Right[])];
}

export function parseTargets(value: unknown, param = 'targets'): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every((t) => typeof t === 'string' && TARGET_PATTERN.test(t))) {
    throw new BadRequestError(`${param} must be an array of target names.`, param);
  }
  return [...new Set(value as string[])];
}

function parseTtl(value: unknown, max: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw new BadRequestError(`ttl_s must be an integer number of seconds from 1 to ${max}.`, 'ttl_s');
  }
  return value;
}

const json = (schema: Record<string, unknown>) => ({ content: { 'application/json': { schema } } });
const ERROR = { $ref: '#/components/schemas/Error' };
const B64 = { type: 'string', pattern: '^[A-Za-z0-9_-]+$', description: 'base64url without padding' };
const RIGHTS_SCHEMA = { type: 'array', items: { $ref: '#/components/schemas/AuthRight' } };
const TARGETS_SCHEMA = { type: 'array', items: { type: 'string' } };
const SCOPES_SCHEMA = {
  type: ['object', 'null'], additionalProperties: TARGETS_SCHEMA,
  description: 'Per mgmt.* right, the targets it is scoped to; a right not listed covers every target.',
};
const V = { type: 'integer', const: 1 };
const err = (description: string) => ({ description, ...json(ERROR) });

export function authRouteGroup(deps: AuthRoutesDeps): RouteGroup {
  const { accounts, capabilities, loginPage, db } = deps;
  const maxAttenuateTtl = deps.maxAttenuateTtlSeconds ?? 30 * 86_400;

  const routes: Route[] = [
    {
      method: 'POST', pattern: '/api/auth/register/start',
      handler: async (ctx) => {
        const b = await objectBody(ctx);
        return { json: await accounts.registerStart({ username: b['username'], request: b['request'], invite: b['invite'] }) };
      },
      operation: {
        operationId: 'authRegisterStart', tags: ['auth'], summary: 'Start an OPAQUE registration with an invite code.',
        requestBody: { required: true, ...json({ type: 'object', required: ['username', 'request', 'invite'], properties: { username: { type: 'string' }, request: B64, invite: { type: 'string' } } }) },
        responses: {
          200: { description: 'The OPAQUE registration response.', ...json({ type: 'object', required: ['v', 'response'], properties: { v: V, response: B64 } }) },
          403: err('`forbidden`: the invite is unknown, used or expired.'),
          409: err('`conflict`: the user name is taken.'),
        },
      },
    },
    {
      method: 'POST', pattern: '/api/auth/register/finish',
      handler: async (ctx) => {
        const b = await objectBody(ctx);
        const r = accounts.registerFinish({ username: b['username'], record: b['record'], invite: b['invite'] }, { address: ctx.remoteAddress });
        return { status: 201, json: { username: r.username, rights: r.rights, targets: r.targets } };
      },
      operation: {
        operationId: 'authRegisterFinish', tags: ['auth'], summary: 'Store the OPAQUE registration record; consumes the invite.',
        requestBody: { required: true, ...json({ type: 'object', required: ['username', 'record', 'invite'], properties: { username: { type: 'string' }, record: B64, invite: { type: 'string' } } }) },
        responses: {
          201: { description: 'The account exists.', ...json({ type: 'object', required: ['v', 'username', 'rights'], properties: { v: V, username: { type: 'string' }, rights: RIGHTS_SCHEMA, targets: { type: ['array', 'null'], items: { type: 'string' } } } }) },
          403: err('`forbidden`: the invite is unknown, used or expired.'),
          409: err('`conflict`: the user name is taken.'),
        },
      },
    },
    {
      method: 'POST', pattern: '/api/auth/login/start',
      handler: async (ctx) => {
        const b = await objectBody(ctx);
        return { json: await accounts.loginStart({ username: b['username'], ke1: b['ke1'] }, { address: ctx.remoteAddress }) };
      },
      operation: {
        operationId: 'authLoginStart', tags: ['auth'], summary: 'Start an OPAQUE login (KE1 → KE2). Unknown names get a response of the same shape.',
        requestBody: { required: true, ...json({ type: 'object', required: ['username', 'ke1'], properties: { username: { type: 'string' }, ke1: B64 } }) },
        responses: {
          200: { description: 'KE2 and the id of this login, valid for 60 s and once.', ...json({ type: 'object', required: ['v', 'login_id', 'ke2'], properties: { v: V, login_id: { type: 'string' }, ke2: B64 } }) },
        },
      },
    },
    {
      method: 'POST', pattern: '/api/auth/login/finish',
      handler: async (ctx) => {
        const b = await objectBody(ctx);
        const r = await accounts.loginFinish({ login_id: b['login_id'], ke3: b['ke3'] }, { address: ctx.remoteAddress });
        return {
          headers: { 'cache-control': 'no-store' },
          json: { cap: r.cap, cap_id: r.capId, account: r.account, rights: rightsList(r.grant), targets: targetsJson(r.grant), expires_at: r.grant.expiresAt?.toISOString() ?? null },
        };
      },
      operation: {
        operationId: 'authLoginFinish', tags: ['auth'], summary: 'Finish an OPAQUE login (KE3) and receive a capability with the account\'s rights.',
        requestBody: { required: true, ...json({ type: 'object', required: ['login_id', 'ke3'], properties: { login_id: { type: 'string' }, ke3: B64 } }) },
        responses: {
          200: { description: 'The login\'s capability.', ...json({ $ref: '#/components/schemas/AuthIssuedCapability' }) },
          401: err('`unauthenticated`: the login failed (wrong password, unknown user, expired or reused login_id — all alike).'),
        },
      },
    },
    {
      method: 'POST', pattern: '/api/auth/invites', right: 'auth.admin',
      handler: async (ctx) => {
        requireRight(ctx.principal, 'auth.admin');
        const b = await objectBody(ctx);
        const r = accounts.createInvite(
          { rights: parseRights(b['rights']), targets: parseTargets(b['targets']), ttlSeconds: b['ttl_s'] === undefined ? undefined : parseTtl(b['ttl_s'], Number.MAX_SAFE_INTEGER) },
          { actor: ctx.principal.capId, address: ctx.remoteAddress },
        );
        return { status: 201, headers: { 'cache-control': 'no-store' }, json: { invite: r.invite, invite_id: r.id, expires_at: r.expiresAt.toISOString() } };
      },
      operation: {
        operationId: 'authCreateInvite', tags: ['auth'], summary: 'Mint a single-use, expiring invite code carrying the rights of the account it will create.',
        requestBody: { required: true, ...json({ type: 'object', required: ['rights'], properties: { rights: RIGHTS_SCHEMA, targets: TARGETS_SCHEMA, ttl_s: { type: 'integer', minimum: 1 } } }) },
        responses: {
          201: { description: 'The invite code (shown once).', ...json({ type: 'object', required: ['v', 'invite', 'expires_at'], properties: { v: V, invite: { type: 'string' }, invite_id: { type: 'string' }, expires_at: { type: 'string', format: 'date-time' } } }) },
        },
      },
    },
    {
      method: 'GET', pattern: '/api/auth/accounts', right: 'auth.admin',
      handler: async (ctx) => {
        requireRight(ctx.principal, 'auth.admin');
        return { json: { accounts: accounts.list() } };
      },
      operation: {
        operationId: 'authListAccounts', tags: ['auth'], summary: 'List accounts.',
        responses: {
          200: { description: 'Every account.', ...json({ type: 'object', required: ['v', 'accounts'], properties: { v: V, accounts: { type: 'array', items: { type: 'object', required: ['name', 'rights', 'disabled'], properties: { name: { type: 'string' }, rights: RIGHTS_SCHEMA, targets: { type: ['array', 'null'], items: { type: 'string' } }, created_at: { type: 'string' }, created_by: { type: ['string', 'null'] }, disabled: { type: 'boolean' } } } } } }) },
        },
      },
    },
    {
      method: 'GET', pattern: '/api/auth/whoami',
      handler: async (ctx) => {
        const p = ctx.principal;
        const targets: Record<string, string[]> = {};
        for (const r of p.rights) {
          const scope = p.targets?.(r);
          if (scope !== undefined) targets[r] = [...scope].sort();
        }
        return {
          headers: { 'cache-control': 'no-store' },
          json: {
            kind: p.kind, account: p.account ?? null, cap_id: p.capId ?? null,
            rights: RIGHTS.filter((r) => p.rights.has(r)), targets: Object.keys(targets).length === 0 ? null : targets,
            expires_at: p.expiresAt?.toISOString() ?? null,
          },
        };
      },
      operation: {
        operationId: 'authWhoami', tags: ['auth'], summary: 'Who the caller is: the capability\'s id, account, rights (anonymous rights included) and expiry.',
        security: [{}, { bearer: [] }, { serviceCap: [] }],
        responses: {
          200: { description: 'The caller.', ...json({ type: 'object', required: ['v', 'kind', 'rights'], properties: { v: V, kind: { enum: ['anonymous', 'capability'] }, account: { type: ['string', 'null'] }, cap_id: { type: ['string', 'null'] }, rights: RIGHTS_SCHEMA, targets: SCOPES_SCHEMA, expires_at: { type: ['string', 'null'] } } }) },
        },
      },
    },
    {
      method: 'GET', pattern: '/api/caps', right: 'auth.admin',
      handler: async (ctx) => {
        requireRight(ctx.principal, 'auth.admin');
        const caps = capabilities.list().map(({ kind: _k, created_at: _c, ...rest }) => rest);
        return { json: { caps } };
      },
      operation: {
        operationId: 'capsList', tags: ['auth'], summary: 'List the capabilities the service has minted or derived (never the capabilities themselves).',
        responses: {
          200: { description: 'Recorded capabilities, newest first.', ...json({ type: 'object', required: ['v', 'caps'], properties: { v: V, caps: { type: 'array', items: { type: 'object', required: ['cap_id', 'parent_id', 'account', 'rights', 'targets', 'expires_at', 'revoked'], properties: { cap_id: { type: 'string' }, parent_id: { type: ['string', 'null'] }, account: { type: ['string', 'null'] }, rights: RIGHTS_SCHEMA, targets: SCOPES_SCHEMA, expires_at: { type: ['string', 'null'] }, revoked: { type: 'boolean' } } } } } }) },
        },
      },
    },
    {
      method: 'POST', pattern: '/api/caps/revoke', right: 'auth.admin',
      handler: async (ctx) => {
        requireRight(ctx.principal, 'auth.admin');
        const b = await objectBody(ctx);
        if (typeof b['cap_id'] !== 'string') throw new BadRequestError('cap_id must be a capability id.', 'cap_id');
        const r = capabilities.revoke(b['cap_id']);
        appendAudit(db, { action: 'cap.revoke', actor: ctx.principal.capId, account: ctx.principal.account, address: ctx.remoteAddress, target: r.id, result: 'ok', detail: { revoked: r.revoked } }, deps.now());
        return { json: { revoked: r.revoked } };
      },
      operation: {
        operationId: 'capsRevoke', tags: ['auth'], summary: 'Revoke a capability and everything derived from it.',
        requestBody: { required: true, ...json({ type: 'object', required: ['cap_id'], properties: { cap_id: { type: 'string' } } }) },
        responses: {
          200: { description: 'How many capabilities stopped working, derived ones included.', ...json({ type: 'object', required: ['v', 'revoked'], properties: { v: V, revoked: { type: 'integer', minimum: 0 } } }) },
          404: err('`not_found`: no capability has that id.'),
        },
      },
    },
    {
      method: 'POST', pattern: '/api/caps/attenuate',
      handler: async (ctx) => {
        const presented = presentedCapabilities(ctx.headers);
        if (ctx.principal.kind !== 'capability' || presented.length === 0) {
          throw new UnauthenticatedError('Present the capability to narrow in Authorization or X-Service-Cap.');
        }
        const b = await objectBody(ctx);
        const parent = capabilities.verify(presented[0]!);
        const r = capabilities.attenuate(parent, {
          rights: b['rights'] === undefined ? undefined : parseRights(b['rights']),
          targets: parseTargets(b['targets']),
          ttlSeconds: parseTtl(b['ttl_s'], maxAttenuateTtl),
        });
        appendAudit(db, {
          action: 'cap.attenuate', actor: parent.capId, account: parent.account, address: ctx.remoteAddress, target: r.capId, result: 'ok',
          detail: { cap_id: r.capId, parent_id: parent.capId, rights: rightsList(r.grant), targets: targetsJson(r.grant), expires_at: r.grant.expiresAt?.toISOString() ?? null },
        }, deps.now());
        return {
          headers: { 'cache-control': 'no-store' },
          json: { cap: r.cap, cap_id: r.capId, rights: rightsList(r.grant), targets: targetsJson(r.grant), expires_at: r.grant.expiresAt?.toISOString() ?? null },
        };
      },
      operation: {
        operationId: 'capsAttenuate', tags: ['auth'], summary: 'Derive a narrower capability from the one presented.',
        security: [{ bearer: [] }, { serviceCap: [] }],
        requestBody: { required: true, ...json({ type: 'object', properties: { rights: RIGHTS_SCHEMA, targets: TARGETS_SCHEMA, ttl_s: { type: 'integer', minimum: 1 } } }) },
        responses: {
          200: { description: 'The derived capability.', ...json({ $ref: '#/components/schemas/AuthIssuedCapability' }) },
          403: err('`forbidden`: more rights or targets were asked for than the presented capability holds.'),
        },
      },
    },
    {
      method: 'GET', pattern: '/login',
      handler: async () => ({ body: loginPage.html(), contentType: 'text/html; charset=utf-8', headers: loginPage.headers() }),
    },
    {
      method: 'GET', pattern: '/login.js',
      handler: async () => ({ body: await loginPage.script(), contentType: 'text/javascript; charset=utf-8', headers: loginPage.headers() }),
    },
  ];

  return {
    name: 'auth',
    routes,
    openapi: {
      tags: [{ name: 'auth', description: 'OPAQUE accounts and capabilities (docs/auth.md).' }],
      components: {
        schemas: {
          AuthRight: { type: 'string', enum: [...RIGHTS] },
          AuthIssuedCapability: {
            type: 'object', required: ['v', 'cap', 'cap_id', 'rights', 'expires_at'],
            properties: {
              v: V, cap: { type: 'string', description: 'The capability (a macaroon, base64url): keep it secret.' },
              cap_id: { type: 'string' }, account: { type: 'string' }, rights: RIGHTS_SCHEMA, targets: SCOPES_SCHEMA,
              expires_at: { type: ['string', 'null'], format: 'date-time' },
            },
          },
        },
      },
    },
  };
}
