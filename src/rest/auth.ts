/**
 * The REST face of authentication (CONTRACT §4): registration by invite, OPAQUE login, invites, accounts,
 * the capability list, revocation, attenuation, `whoami`, and the login page. Handlers translate only:
 * the body goes to the auth service as sent, which validates, authorizes and audits.
 */
import type { LoginPage } from '../auth/login-page.js';
import { presentedCapabilities } from '../auth/policy.js';
import { AUTH_BODIES, AttenuateBody, CreateInviteBody, LoginFinishBody, LoginStartBody, RegisterFinishBody, RegisterStartBody, RevokeCapBody } from '../auth/schemas.js';
import type { AuthService } from '../auth/service.js';
import type { RequestContext, Route, RouteGroup } from '../http/route.js';
import { RIGHTS } from '../kernel/principal.js';
import type { BodySchema } from '../kernel/schema.js';

const json = (schema: Record<string, unknown>) => ({ content: { 'application/json': { schema } } });
const body = (s: BodySchema<unknown>) => ({ required: true, ...json({ $ref: `#/components/schemas/${s.name}` }) });
const ERROR = { $ref: '#/components/schemas/Error' };
const B64 = { type: 'string', pattern: '^[A-Za-z0-9_-]+$', description: 'base64url without padding' };
const RIGHTS_SCHEMA = { type: 'array', items: { $ref: '#/components/schemas/AuthRight' } };
const SCOPES_SCHEMA = {
  type: ['object', 'null'], additionalProperties: { type: 'array', items: { type: 'string' } },
  description: 'Per mgmt.* right, the targets it is scoped to; a right not listed covers every target.',
};
const V = { type: 'integer', const: 1 };
const err = (description: string) => ({ description, ...json(ERROR) });
const NO_STORE = { 'cache-control': 'no-store' };

export function authRoutes(auth: AuthService, loginPage: LoginPage): RouteGroup {
  const origin = (ctx: RequestContext) => ({ address: ctx.remoteAddress });
  const routes: Route[] = [
    {
      method: 'POST', pattern: '/api/auth/register/start',
      handler: async (ctx) => ({ json: { ...(await auth.registerStart(await ctx.json())) } }),
      operation: {
        operationId: 'authRegisterStart', tags: ['auth'], summary: 'Start an OPAQUE registration with an invite code.',
        requestBody: body(RegisterStartBody),
        responses: {
          200: { description: 'The OPAQUE registration response.', ...json({ type: 'object', required: ['v', 'response'], properties: { v: V, response: B64 } }) },
          403: err('`forbidden`: the invite is unknown, used or expired.'),
          409: err('`conflict`: the user name is taken.'),
        },
      },
    },
    {
      method: 'POST', pattern: '/api/auth/register/finish',
      handler: async (ctx) => ({ status: 201, json: { ...auth.registerFinish(await ctx.json(), origin(ctx)) } }),
      operation: {
        operationId: 'authRegisterFinish', tags: ['auth'], summary: 'Store the OPAQUE registration record; consumes the invite.',
        requestBody: body(RegisterFinishBody),
        responses: {
          201: { description: 'The account exists.', ...json({ type: 'object', required: ['v', 'username', 'rights'], properties: { v: V, username: { type: 'string' }, rights: RIGHTS_SCHEMA, targets: { type: ['array', 'null'], items: { type: 'string' } } } }) },
          403: err('`forbidden`: the invite is unknown, used or expired.'),
          409: err('`conflict`: the user name is taken.'),
        },
      },
    },
    {
      method: 'POST', pattern: '/api/auth/login/start',
      handler: async (ctx) => ({ json: { ...(await auth.loginStart(await ctx.json(), origin(ctx))) } }),
      operation: {
        operationId: 'authLoginStart', tags: ['auth'], summary: 'Start an OPAQUE login (KE1 → KE2). Unknown names get a response of the same shape.',
        requestBody: body(LoginStartBody),
        responses: {
          200: { description: 'KE2 and the id of this login, valid for 60 s and once.', ...json({ type: 'object', required: ['v', 'login_id', 'ke2'], properties: { v: V, login_id: { type: 'string' }, ke2: B64 } }) },
        },
      },
    },
    {
      method: 'POST', pattern: '/api/auth/login/finish',
      handler: async (ctx) => ({ headers: NO_STORE, json: { ...(await auth.loginFinish(await ctx.json(), origin(ctx))) } }),
      operation: {
        operationId: 'authLoginFinish', tags: ['auth'], summary: 'Finish an OPAQUE login (KE3) and receive a capability with the account\'s rights.',
        requestBody: body(LoginFinishBody),
        responses: {
          200: { description: 'The login\'s capability.', ...json({ $ref: '#/components/schemas/AuthIssuedCapability' }) },
          401: err('`unauthenticated`: the login failed (wrong password, unknown user, expired or reused login_id — all alike).'),
        },
      },
    },
    {
      method: 'POST', pattern: '/api/auth/invites', right: 'auth.admin',
      handler: async (ctx) => ({ status: 201, headers: NO_STORE, json: { ...auth.createInvite(ctx.principal, await ctx.json(), origin(ctx)) } }),
      operation: {
        operationId: 'authCreateInvite', tags: ['auth'], summary: 'Mint a single-use, expiring invite code carrying the rights of the account it will create.',
        requestBody: body(CreateInviteBody),
        responses: {
          201: { description: 'The invite code (shown once).', ...json({ type: 'object', required: ['v', 'invite', 'expires_at'], properties: { v: V, invite: { type: 'string' }, invite_id: { type: 'string' }, expires_at: { type: 'string', format: 'date-time' } } }) },
        },
      },
    },
    {
      method: 'GET', pattern: '/api/auth/accounts', right: 'auth.admin',
      handler: async (ctx) => ({ json: { ...auth.listAccounts(ctx.principal) } }),
      operation: {
        operationId: 'authListAccounts', tags: ['auth'], summary: 'List accounts.',
        responses: {
          200: { description: 'Every account.', ...json({ type: 'object', required: ['v', 'accounts'], properties: { v: V, accounts: { type: 'array', items: { type: 'object', required: ['name', 'rights', 'disabled'], properties: { name: { type: 'string' }, rights: RIGHTS_SCHEMA, targets: { type: ['array', 'null'], items: { type: 'string' } }, created_at: { type: 'string' }, created_by: { type: ['string', 'null'] }, disabled: { type: 'boolean' } } } } } }) },
        },
      },
    },
    {
      method: 'GET', pattern: '/api/auth/whoami',
      handler: async (ctx) => ({ headers: NO_STORE, json: { ...auth.whoami(ctx.principal) } }),
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
      handler: async (ctx) => ({ json: { ...auth.listCapabilities(ctx.principal) } }),
      operation: {
        operationId: 'capsList', tags: ['auth'], summary: 'List the capabilities the service has minted or derived (never the capabilities themselves).',
        responses: {
          200: { description: 'Recorded capabilities, newest first.', ...json({ type: 'object', required: ['v', 'caps'], properties: { v: V, caps: { type: 'array', items: { type: 'object', required: ['cap_id', 'parent_id', 'account', 'rights', 'targets', 'expires_at', 'revoked'], properties: { cap_id: { type: 'string' }, parent_id: { type: ['string', 'null'] }, account: { type: ['string', 'null'] }, rights: RIGHTS_SCHEMA, targets: SCOPES_SCHEMA, expires_at: { type: ['string', 'null'] }, revoked: { type: 'boolean' } } } } } }) },
        },
      },
    },
    {
      method: 'POST', pattern: '/api/caps/revoke', right: 'auth.admin',
      handler: async (ctx) => ({ json: { ...auth.revokeCapability(ctx.principal, await ctx.json(), origin(ctx)) } }),
      operation: {
        operationId: 'capsRevoke', tags: ['auth'], summary: 'Revoke a capability and everything derived from it.',
        requestBody: body(RevokeCapBody),
        responses: {
          200: { description: 'How many capabilities stopped working, derived ones included.', ...json({ type: 'object', required: ['v', 'revoked'], properties: { v: V, revoked: { type: 'integer', minimum: 0 } } }) },
          404: err('`not_found`: no capability has that id.'),
        },
      },
    },
    {
      method: 'POST', pattern: '/api/caps/attenuate',
      handler: async (ctx) => {
        const presented = presentedCapabilities(ctx.headers)[0];
        return { headers: NO_STORE, json: { ...auth.attenuate(ctx.principal, presented, await ctx.json(), origin(ctx)) } };
      },
      operation: {
        operationId: 'capsAttenuate', tags: ['auth'], summary: 'Derive a narrower capability from the one presented.',
        security: [{ bearer: [] }, { serviceCap: [] }],
        requestBody: body(AttenuateBody),
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
          ...Object.fromEntries(AUTH_BODIES.map((s) => [s.name, s.schema])),
        },
      },
    },
  };
}
