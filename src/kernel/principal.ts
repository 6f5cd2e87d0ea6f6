/**
 * Who is making a request and what they may do: the value the policy module resolves from a capability
 * (or its absence) once per request, and that every face consults. Rights are CONTRACT §4's list.
 */
import { ForbiddenError, UnauthenticatedError } from './errors.js';

export const RIGHTS = [
  'search',
  'trusted.flag',
  'index.write',
  'crawl.admin',
  'events.read',
  'mgmt.read',
  'mgmt.build',
  'mgmt.stage',
  'mgmt.deploy',
  'mgmt.rollback',
  'mgmt.reconcile',
  'mgmt.restart',
  'auth.admin',
] as const;
export type Right = (typeof RIGHTS)[number];

export function isRight(s: string): s is Right {
  return (RIGHTS as readonly string[]).includes(s);
}

export interface Principal {
  /**
   * `anonymous`: no capability; `capability`: a verified capability; `local`: the operator at the machine
   * (the CLI working on the data directory), who holds every right.
   */
  readonly kind: 'anonymous' | 'capability' | 'local';
  /** Capability id (never the capability itself); absent for anonymous callers. */
  readonly capId?: string;
  /**
   * Id of the root capability this one descends from (itself for a root). Every attenuation, online or
   * offline, gets a new `capId` but keeps this: key per-holder limits (rate limiting) on it, so narrowing
   * a capability many times does not multiply its allowance.
   */
  readonly rootCapId?: string;
  /** Account the capability was issued to, when it came from a login or an invite. */
  readonly account?: string;
  /** Whether this caller holds `right`, and for `mgmt.*` rights whether it covers `target`. */
  can(right: Right, target?: string): boolean;
  /** The rights held, for listing (e.g. MCP lists `service_mgmt` only to holders of a `mgmt.*` right). */
  readonly rights: ReadonlySet<Right>;
  /**
   * For a `mgmt.*` right: the targets it is scoped to, or undefined when it covers every target (or is not
   * held: check `can` first). Lets list endpoints filter (deploy_status, events) instead of probing names.
   */
  targets?(right: Right): ReadonlySet<string> | undefined;
  /** When the capability stops working (the earliest expiry caveat); absent for anonymous or no expiry. */
  readonly expiresAt?: Date;
}

const ALL_RIGHTS: ReadonlySet<Right> = new Set(RIGHTS);

/** The operator at the machine: whoever can read the data directory already holds every right. */
export const LOCAL_OPERATOR: Principal = Object.freeze({
  kind: 'local' as const,
  rights: ALL_RIGHTS,
  can: () => true,
});

/** How the audit log names the caller: its capability id, `local` for the operator, none when anonymous. */
export function auditActor(principal: Principal): string | undefined {
  return principal.capId ?? (principal.kind === 'local' ? 'local' : undefined);
}

/**
 * Throws unless `principal` holds `right` (for `target`, when given): UnauthenticatedError for an
 * anonymous caller (a capability might help), ForbiddenError for a capability that lacks it. Handlers
 * that check target-scoped rights themselves call this; route-level rights are checked by the router.
 */
export function requireRight(principal: Principal, right: Right, target?: string): void {
  if (principal.can(right, target)) return;
  if (principal.kind === 'anonymous') {
    throw new UnauthenticatedError(`This operation needs the right ${right}; present a capability that holds it.`);
  }
  throw new ForbiddenError(target === undefined
    ? `The capability does not hold the right ${right}.`
    : `The capability does not hold the right ${right} for target ${JSON.stringify(target)}.`);
}

/**
 * Throws UnauthenticatedError unless the caller may read what anonymous callers may read (openapi.json,
 * rpc.contract): anyone while anonymous access is on, any valid capability when it is off.
 */
export function requirePublic(principal: Principal): void {
  if (principal.kind === 'capability' || principal.rights.size > 0) return;
  throw new UnauthenticatedError('Anonymous access is off; present a capability.');
}

/**
 * Resolves the caller of a request. Implemented by `src/auth/policy.ts`; the HTTP server calls `resolve`
 * once per request and hands the result to the handler as `ctx.principal`.
 */
export interface Policy {
  /**
   * The principal for a request with these headers (`authorization: Bearer …` or `x-service-cap`), plus,
   * on `/mcp`, the capabilities found in the body (`params._cap`, the prefixed `_meta` key). No capability
   * → the anonymous principal (which may hold no rights when anonymous access is off). Throws `UnauthenticatedError` for an invalid, expired or
   * revoked capability and `BadRequestError` when two different capabilities are given. The HTTP server
   * passes a credential header sent several times as the list of its fields.
   */
  resolve(headers: Readonly<Record<string, string | string[] | undefined>>, extraCapability?: string | readonly string[]): Principal;
}
