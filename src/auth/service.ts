/**
 * The accounts-and-capabilities application service (CONTRACT §4): registration by invite, OPAQUE
 * login, invites, accounts, the capability list, revocation, attenuation and `whoami`. Every face (REST,
 * the CLI, later MCP and RPC) calls it with the caller's principal and the body as sent; it validates the
 * body with its schema (`schemas.ts`), checks the right, and writes the audit entry — faces only translate.
 * Responses name capabilities by id; the one place a capability is written out is the result that hands
 * a new one to its holder (login, attenuate, mint).
 */
import { BadRequestError, UnauthenticatedError } from '../kernel/errors.js';
import { RIGHTS, auditActor, requireRight, type Principal, type Right } from '../kernel/principal.js';
import { appendAudit } from '../store/audit.js';
import type { Db } from '../store/db.js';
import type { AccountInfo, Accounts } from './accounts.js';
import {
  rightsList, targetsJson, type CapabilityAuthority, type CapabilityRecord, type MintedCapability, type VerifiedCapability,
} from './capability.js';
import {
  AttenuateBody, CreateInviteBody, LoginFinishBody, LoginStartBody, RegisterFinishBody, RegisterStartBody, RevokeCapBody,
} from './schemas.js';

/** Where a request came from, for the audit log and login throttling. */
export interface RequestOrigin { address?: string | undefined }

/** A capability handed to its holder (login, attenuate, mint). */
export interface IssuedCapability {
  v: 1;
  cap: string;
  cap_id: string;
  account?: string;
  rights: Right[];
  targets: Record<string, string[]> | null;
  expires_at: string | null;
}

/** A recorded capability as listed to admins (never the capability itself). */
export type CapabilityView = Omit<CapabilityRecord, 'kind' | 'created_at'>;

export interface Whoami {
  v: 1;
  kind: Principal['kind'];
  account: string | null;
  cap_id: string | null;
  rights: Right[];
  targets: Record<string, string[]> | null;
  expires_at: string | null;
}

export interface AuthServiceOptions {
  db: Db;
  accounts: Accounts;
  capabilities: CapabilityAuthority;
  now: () => Date;
  /** Longest ttl_s of an attenuation. Default 30 days. */
  maxAttenuateTtlSeconds?: number;
}

export class AuthService {
  readonly accounts: Accounts;
  readonly capabilities: CapabilityAuthority;
  readonly #db: Db;
  readonly #now: () => Date;
  readonly #maxAttenuateTtl: number;

  constructor(o: AuthServiceOptions) {
    this.accounts = o.accounts;
    this.capabilities = o.capabilities;
    this.#db = o.db;
    this.#now = o.now;
    this.#maxAttenuateTtl = o.maxAttenuateTtlSeconds ?? 30 * 86_400;
  }

  async registerStart(body: unknown): Promise<{ v: 1; response: string }> {
    const b = RegisterStartBody.parse(body);
    return { v: 1, ...(await this.accounts.registerStart(b)) };
  }

  registerFinish(body: unknown, origin: RequestOrigin): { v: 1; username: string; rights: Right[]; targets: string[] | null } {
    const b = RegisterFinishBody.parse(body);
    const r = this.accounts.registerFinish(b, { address: origin.address });
    return { v: 1, username: r.username, rights: r.rights, targets: r.targets };
  }

  async loginStart(body: unknown, origin: RequestOrigin): Promise<{ v: 1; login_id: string; ke2: string }> {
    const b = LoginStartBody.parse(body);
    return { v: 1, ...(await this.accounts.loginStart(b, { address: origin.address })) };
  }

  async loginFinish(body: unknown, origin: RequestOrigin): Promise<IssuedCapability> {
    const b = LoginFinishBody.parse(body);
    const r = await this.accounts.loginFinish(b, { address: origin.address });
    return { ...issued(r), account: r.account };
  }

  createInvite(principal: Principal, body: unknown, origin: RequestOrigin): { v: 1; invite: string; invite_id: string; expires_at: string } {
    requireRight(principal, 'auth.admin');
    const b = CreateInviteBody.parse(body);
    const r = this.accounts.createInvite(
      { rights: unique(b.rights), targets: b.targets == null ? undefined : unique(b.targets), ttlSeconds: b.ttl_s ?? undefined },
      { actor: auditActor(principal), address: origin.address },
    );
    return { v: 1, invite: r.invite, invite_id: r.id, expires_at: r.expiresAt.toISOString() };
  }

  listAccounts(principal: Principal): { v: 1; accounts: AccountInfo[] } {
    requireRight(principal, 'auth.admin');
    return { v: 1, accounts: this.accounts.list() };
  }

  whoami(principal: Principal): Whoami {
    const targets: Record<string, string[]> = {};
    for (const r of principal.rights) {
      const scope = principal.targets?.(r);
      if (scope !== undefined) targets[r] = [...scope].sort();
    }
    return {
      v: 1, kind: principal.kind, account: principal.account ?? null, cap_id: principal.capId ?? null,
      rights: RIGHTS.filter((r) => principal.rights.has(r)), targets: Object.keys(targets).length === 0 ? null : targets,
      expires_at: principal.expiresAt?.toISOString() ?? null,
    };
  }

  listCapabilities(principal: Principal): { v: 1; caps: CapabilityView[] } {
    requireRight(principal, 'auth.admin');
    return { v: 1, caps: this.capabilities.list().map(({ kind: _k, created_at: _c, ...rest }) => rest) };
  }

  revokeCapability(principal: Principal, body: unknown, origin: RequestOrigin): { v: 1; revoked: number } {
    requireRight(principal, 'auth.admin');
    const b = RevokeCapBody.parse(body);
    const r = this.capabilities.revoke(b.cap_id);
    this.#audit(principal, origin, 'cap.revoke', r.id, { revoked: r.revoked });
    return { v: 1, revoked: r.revoked };
  }

  /**
   * Derives a narrower capability from `presented`, the capability the caller sent (the principal was
   * resolved from it). Asking for more than it holds is 403.
   */
  attenuate(principal: Principal, presented: string | undefined, body: unknown, origin: RequestOrigin): IssuedCapability {
    if (principal.kind !== 'capability' || presented === undefined) {
      throw new UnauthenticatedError('Present the capability to narrow in Authorization or X-Service-Cap.');
    }
    const b = AttenuateBody.parse(body);
    const parent: VerifiedCapability = this.capabilities.verify(presented);
    const r = this.capabilities.attenuate(parent, {
      rights: b.rights == null ? undefined : unique(b.rights),
      targets: b.targets == null ? undefined : unique(b.targets),
      ttlSeconds: this.#ttl(b.ttl_s),
    });
    this.#audit(principal, origin, 'cap.attenuate', r.capId, {
      cap_id: r.capId, parent_id: parent.capId, rights: rightsList(r.grant), targets: targetsJson(r.grant), expires_at: r.grant.expiresAt?.toISOString() ?? null,
    });
    return issued(r);
  }

  /** Mints a root capability: only the operator at the machine may (`quarry cap mint`). */
  mintCapability(principal: Principal, params: { rights: Right[]; targets?: string[] | undefined; ttlSeconds?: number | undefined }): IssuedCapability {
    if (principal.kind !== 'local') throw new UnauthenticatedError('Root capabilities are minted on the machine itself (quarry cap mint).');
    const m = this.capabilities.mint({ ...params, kind: 'mint' });
    this.#audit(principal, {}, 'cap.mint', m.capId, {
      cap_id: m.capId, rights: rightsList(m.grant), targets: targetsJson(m.grant), expires_at: m.grant.expiresAt?.toISOString() ?? null,
    });
    return issued(m);
  }

  #ttl(ttl: number | null | undefined): number | undefined {
    if (ttl == null) return undefined;
    if (ttl > this.#maxAttenuateTtl) throw new BadRequestError(`ttl_s must be an integer number of seconds from 1 to ${this.#maxAttenuateTtl}.`, 'ttl_s');
    return ttl;
  }

  #audit(principal: Principal, origin: RequestOrigin, action: string, target: string, detail: Record<string, unknown>): void {
    appendAudit(this.#db, {
      action, actor: auditActor(principal), account: principal.account, address: origin.address, target, result: 'ok', detail,
    }, this.#now());
  }
}

function issued(m: MintedCapability): IssuedCapability {
  return {
    v: 1, cap: m.cap, cap_id: m.capId, rights: rightsList(m.grant), targets: targetsJson(m.grant),
    expires_at: m.grant.expiresAt?.toISOString() ?? null,
  };
}

function unique<T>(xs: readonly T[]): T[] { return [...new Set(xs)]; }
