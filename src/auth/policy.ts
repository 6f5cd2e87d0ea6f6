/**
 * The policy module: the one place that turns a request's credentials into a Principal. Every face calls
 * it (the HTTP server once per request with the headers; `/mcp` also with `params._cap`), and every
 * decision is then `principal.can(right, target?)`.
 *
 * - A capability is read from `Authorization: Bearer <cap>` and `X-Service-Cap: <cap>` (and the extra ones
 *   a face passes: `/mcp` hands over `params._cap` and the prefixed `_meta` key). The same capability
 *   given in several places is fine; two different ones → 400.
 * - None → the anonymous principal, which holds the anonymous set (CONTRACT §4: `search`, which covers
 *   search, doc and suggest; openapi.json, rpc.contract and the read-only MCP tools ask only for
 *   `requirePublic`), or nothing when anonymous access is off.
 * - An invalid, expired or revoked capability → 401 (the server adds `WWW-Authenticate`). It is never
 *   silently treated as anonymous: a client that sent one expects its authority.
 * - A capability holder also gets the anonymous set: anonymous access is a floor, not a separate mode.
 *
 * Errors and principals never carry the capability itself, only its id.
 */
import { BadRequestError, UnauthenticatedError } from '../kernel/errors.js';
import type { Principal, Policy, Right } from '../kernel/principal.js';
import type { CapabilityAuthority, Grant } from './capability.js';
import { isMgmtRight } from './capability.js';

/** Rights every caller holds while anonymous access is on. */
export const ANONYMOUS_RIGHTS: readonly Right[] = ['search'];

type Headers = Readonly<Record<string, string | string[] | undefined>>;

class AnonymousPrincipal implements Principal {
  readonly kind = 'anonymous' as const;
  readonly rights: ReadonlySet<Right>;
  constructor(rights: ReadonlySet<Right>) { this.rights = rights; }
  can(right: Right): boolean { return this.rights.has(right); }
  targets(): ReadonlySet<string> | undefined { return undefined; }
}

class CapabilityPrincipal implements Principal {
  readonly kind = 'capability' as const;
  readonly capId: string;
  readonly rootCapId: string;
  readonly account?: string;
  readonly rights: ReadonlySet<Right>;
  readonly expiresAt?: Date;
  readonly #grant: Grant;
  readonly #anonymous: ReadonlySet<Right>;

  constructor(capId: string, rootCapId: string, account: string | undefined, grant: Grant, anonymous: ReadonlySet<Right>) {
    this.capId = capId;
    this.rootCapId = rootCapId;
    if (account !== undefined) this.account = account;
    if (grant.expiresAt !== undefined) this.expiresAt = grant.expiresAt;
    this.#grant = grant;
    this.#anonymous = anonymous;
    this.rights = new Set([...grant.rights, ...anonymous]);
  }

  can(right: Right, target?: string): boolean {
    if (this.#anonymous.has(right)) return true;
    if (!this.#grant.rights.has(right)) return false;
    if (target === undefined || !isMgmtRight(right)) return true;
    const scope = this.#grant.targets.get(right);
    return scope === undefined || scope.has(target);
  }

  targets(right: Right): ReadonlySet<string> | undefined {
    return this.#grant.targets.get(right);
  }
}

function headerValues(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/**
 * Every capability the request carries, trimmed. Each header may hold several, comma-separated (an
 * intermediary may join repeated fields that way; a capability never contains a comma). `Authorization`
 * with another scheme is an error: it is a credential this service cannot check, and ignoring it would
 * turn the caller anonymous unnoticed.
 */
export function presentedCapabilities(headers: Headers, extraCapability?: string | readonly string[]): string[] {
  const found: string[] = [];
  for (const field of headerValues(headers['authorization'])) {
    const parts = splitFields(field);
    if (parts.length === 0) throw new UnauthenticatedError('The Authorization header must use the Bearer scheme.');
    for (const v of parts) {
      const m = /^Bearer\s+(\S+)$/i.exec(v);
      if (!m) throw new UnauthenticatedError('The Authorization header must use the Bearer scheme.');
      found.push(m[1]!);
    }
  }
  for (const v of headerValues(headers['x-service-cap']).flatMap(splitFields)) found.push(v);
  const extra = typeof extraCapability === 'string' ? [extraCapability] : extraCapability ?? [];
  for (const v of extra) {
    const t = v.trim();
    if (t !== '') found.push(t);
  }
  return found;
}

/** The non-empty, trimmed comma-separated parts of one header field. */
function splitFields(value: string): string[] {
  return value.split(',').map((p) => p.trim()).filter((p) => p !== '');
}

export interface PolicyOptions {
  capabilities: CapabilityAuthority;
  /** Whether callers without a capability get the anonymous set (CONTRACT §4). Default true. */
  anonymous?: boolean;
}

export function createPolicy(options: PolicyOptions): Policy & { readonly anonymous: boolean } {
  const anonymousRights: ReadonlySet<Right> = new Set(options.anonymous === false ? [] : ANONYMOUS_RIGHTS);
  const anonymous = new AnonymousPrincipal(anonymousRights);
  const caps = options.capabilities;
  return {
    anonymous: options.anonymous !== false,
    resolve(headers, extraCapability) {
      const presented = new Set(presentedCapabilities(headers, extraCapability));
      if (presented.size === 0) return anonymous;
      if (presented.size > 1) {
        throw new BadRequestError('The request carries two different capabilities; send exactly one.', 'authorization');
      }
      const verified = caps.verify([...presented][0]!);
      return new CapabilityPrincipal(verified.capId, verified.rootId, verified.account, verified.grant, anonymousRights);
    },
  };
}
