/**
 * Who is making a request and what they may do: the value the policy module resolves from a capability
 * (or its absence) once per request, and that every face consults. Rights are CONTRACT §4's list.
 */
export const RIGHTS = [
  'search',
  'trusted.flag',
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
  readonly kind: 'anonymous' | 'capability';
  /** Capability id (never the capability itself); absent for anonymous callers. */
  readonly capId?: string;
  /** Account the capability was issued to, when it came from a login or an invite. */
  readonly account?: string;
  /** Whether this caller holds `right`, and for `mgmt.*` rights whether it covers `target`. */
  can(right: Right, target?: string): boolean;
  /** The rights held, for listing (e.g. MCP lists `service_mgmt` only to holders of a `mgmt.*` right). */
  readonly rights: ReadonlySet<Right>;
}

/**
 * Resolves the caller of a request. Implemented by `src/auth/policy.ts`; the HTTP server calls `resolve`
 * once per request and hands the result to the handler as `ctx.principal`.
 */
export interface Policy {
  /**
   * The principal for a request with these headers (`authorization: Bearer …` or `x-service-cap`), plus,
   * on `/mcp`, the capability found in `params._cap`. No capability → the anonymous principal (which may
   * hold no rights when anonymous access is off). Throws `UnauthenticatedError` for an invalid, expired or
   * revoked capability and `BadRequestError` when two different capabilities are given.
   */
  resolve(headers: Readonly<Record<string, string | string[] | undefined>>, extraCapability?: string): Principal;
}
