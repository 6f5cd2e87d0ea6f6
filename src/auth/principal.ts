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
