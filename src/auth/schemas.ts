/**
 * The request bodies of authentication (CONTRACT §4), one schema each: the auth service validates with
 * them and the REST face publishes them in OpenAPI. OPAQUE messages are base64url without padding.
 */
import { RIGHTS, type Right } from '../kernel/principal.js';
import { bodySchema } from '../kernel/schema.js';

const B64 = { type: 'string', pattern: '^[A-Za-z0-9_-]+$', maxLength: 4096, description: 'base64url without padding' };
const NAME = { type: 'string', maxLength: 256 };
const RIGHTS_LIST = { type: 'array', maxItems: RIGHTS.length, items: { type: 'string', enum: [...RIGHTS] } };
const TARGETS = { type: ['array', 'null'], maxItems: 1024, items: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$' }, description: 'Targets the mgmt.* rights are scoped to; absent or null: every target.' };
const TTL = { type: ['integer', 'null'], minimum: 1, description: 'Lifetime in seconds.' };

const object = (required: string[], properties: Record<string, unknown>) =>
  ({ type: 'object', additionalProperties: false, required, properties });

export const RegisterStartBody = bodySchema<{ username: string; request: string; invite: string }>(
  'AuthRegisterStart', object(['username', 'request', 'invite'], { username: NAME, request: B64, invite: NAME }));
export const RegisterFinishBody = bodySchema<{ username: string; record: string; invite: string }>(
  'AuthRegisterFinish', object(['username', 'record', 'invite'], { username: NAME, record: B64, invite: NAME }));
export const LoginStartBody = bodySchema<{ username: string; ke1: string }>(
  'AuthLoginStart', object(['username', 'ke1'], { username: NAME, ke1: B64 }));
export const LoginFinishBody = bodySchema<{ login_id: string; ke3: string }>(
  'AuthLoginFinish', object(['login_id', 'ke3'], { login_id: NAME, ke3: B64 }));
export const CreateInviteBody = bodySchema<{ rights: Right[]; targets?: string[] | null; ttl_s?: number | null }>(
  'AuthCreateInvite', object(['rights'], { rights: RIGHTS_LIST, targets: TARGETS, ttl_s: TTL }));
export const RevokeCapBody = bodySchema<{ cap_id: string }>(
  'AuthRevokeCapability', object(['cap_id'], { cap_id: NAME }));
export const AttenuateBody = bodySchema<{ rights?: Right[] | null; targets?: string[] | null; ttl_s?: number | null }>(
  'AuthAttenuate', object([], { rights: RIGHTS_LIST, targets: TARGETS, ttl_s: TTL }));

export const AUTH_BODIES = [RegisterStartBody, RegisterFinishBody, LoginStartBody, LoginFinishBody, CreateInviteBody, RevokeCapBody, AttenuateBody];
