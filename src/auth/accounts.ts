/**
 * Accounts and invites, and the server side of OPAQUE (RFC 9807) registration and login.
 *
 * The server stores, per account, only the OPAQUE registration record and the rights its logins get.
 * Registration needs an invite code minted by an admin; the code itself is never stored (only its
 * SHA-256), it is single-use and it expires. Login is two round trips: `startLogin` answers KE2 and keeps
 * the server's login state in memory for `loginStateTtlMs` (60 s), under a random `login_id`;
 * `finishLogin` takes that state out (single use) and checks KE3. An unknown or disabled account gets a
 * KE2 made from the library's fake record, which is derived from the server setup and the user name, so
 * it has the size of a real one and repeated probes of one name see the same OPRF evaluation; its finish
 * fails exactly like a wrong password's.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../store/db.js';
import { appendAudit } from '../store/audit.js';
import {
  BadRequestError, ConflictError, ForbiddenError, NotFoundError, RateLimitedError, UnauthenticatedError,
} from '../kernel/errors.js';
import { RIGHTS, type Right } from '../kernel/principal.js';
import type { CapabilityAuthority, MintedCapability } from './capability.js';
import { LoginThrottle } from './throttle.js';
import { OPAQUE_KEY_STRETCHING, USERNAME_PATTERN } from './opaque-config.js';
import { loadOpaque } from './opaque.js';

export interface AccountsOptions {
  db: Db;
  capabilities: CapabilityAuthority;
  /** Returns the OPAQUE server setup (loaded lazily: it needs `loadOpaque()` resolved). */
  serverSetup: () => string;
  throttle: LoginThrottle;
  now?: () => Date;
  /** How long a started login may wait for its finish. Default 60,000 ms. */
  loginStateTtlMs?: number;
  /** Most logins waiting for their finish at once; past it, `login/start` answers 429. Default 10,000. */
  maxPendingLogins?: number;
  /** Lifetime of the capability a login returns. Default 3,600 s. */
  loginCapabilityTtlSeconds?: number;
  /** Default lifetime of an invite. Default 7 days. */
  inviteTtlSeconds?: number;
  /** Longest lifetime an admin may give an invite. Default 30 days. */
  maxInviteTtlSeconds?: number;
}

export interface AccountInfo {
  name: string;
  rights: Right[];
  targets: string[] | null;
  created_at: string;
  created_by: string | null;
  disabled: boolean;
}

interface AccountRow {
  name: string;
  record: string;
  rights: string;
  targets: string | null;
  created_at: string;
  created_by: string | null;
  disabled_at: string | null;
}

interface InviteRow {
  id: string;
  rights: string;
  targets: string | null;
  expires_at: string;
  used_at: string | null;
}

interface PendingLogin {
  username: string;
  state: string;
  expiresAt: number;
  address: string;
}

/** Where a request came from, for audit and throttling. */
export interface Origin {
  address?: string | undefined;
  /** Capability id of the caller, or 'local' for the command line. */
  actor?: string | undefined;
}

/** Longest OPAQUE message accepted (base64url characters); real ones are under 500. */
const MAX_MESSAGE_LENGTH = 2048;

export function checkUsername(name: unknown, param = 'username'): string {
  if (typeof name !== 'string' || !USERNAME_PATTERN.test(name)) {
    throw new BadRequestError(`${param} must be 1–64 characters of a–z, 0–9, '.', '_' or '-', starting with a letter or digit.`, param);
  }
  return name;
}

export function checkMessage(value: unknown, param: string): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_MESSAGE_LENGTH || !/^[A-Za-z0-9_-]+$/.test(value)) {
    throw new BadRequestError(`${param} must be a base64url string (without padding) of at most ${MAX_MESSAGE_LENGTH} characters.`, param);
  }
  return value;
}

function hashCode(code: string): string {
  return createHash('sha256').update(code).digest('hex');
}

export class Accounts {
  readonly #db: Db;
  readonly #caps: CapabilityAuthority;
  readonly #setup: () => string;
  readonly #throttle: LoginThrottle;
  readonly #now: () => Date;
  readonly #loginTtl: number;
  readonly #maxPending: number;
  readonly #capTtl: number;
  readonly #inviteTtl: number;
  readonly #maxInviteTtl: number;
  readonly #pending = new Map<string, PendingLogin>();

  constructor(options: AccountsOptions) {
    this.#db = options.db;
    this.#caps = options.capabilities;
    this.#setup = options.serverSetup;
    this.#throttle = options.throttle;
    this.#now = options.now ?? (() => new Date());
    this.#loginTtl = options.loginStateTtlMs ?? 60_000;
    this.#maxPending = options.maxPendingLogins ?? 10_000;
    this.#capTtl = options.loginCapabilityTtlSeconds ?? 3_600;
    this.#inviteTtl = options.inviteTtlSeconds ?? 7 * 86_400;
    this.#maxInviteTtl = options.maxInviteTtlSeconds ?? 30 * 86_400;
  }

  get loginCapabilityTtlSeconds(): number { return this.#capTtl; }

  // ---- accounts -------------------------------------------------------------------------------------

  get(name: string): AccountInfo | undefined {
    const row = this.#db.prepare('SELECT * FROM accounts WHERE name = ?').get(name) as AccountRow | undefined;
    return row === undefined ? undefined : toInfo(row);
  }

  list(): AccountInfo[] {
    return (this.#db.prepare('SELECT * FROM accounts ORDER BY name').all() as AccountRow[]).map(toInfo);
  }

  /** Disables an account: its logins fail like an unknown user's and its capabilities stop working. */
  disable(name: string, origin: Origin = {}): void {
    const now = this.#now();
    const changed = this.#db.prepare('UPDATE accounts SET disabled_at = ? WHERE name = ? AND disabled_at IS NULL')
      .run(now.toISOString(), name).changes;
    if (changed === 0 && this.get(name) === undefined) throw new NotFoundError(`No account is named ${JSON.stringify(name)}.`, 'name');
    appendAudit(this.#db, { action: 'auth.user.disable', actor: origin.actor, address: origin.address, account: name, target: name, result: 'ok' }, now);
  }

  /**
   * Creates an account on this machine (`quarry user add`): runs both halves of OPAQUE registration here,
   * so the password goes no further than this process and only the record is stored.
   */
  async createLocally(name: string, password: string, rights: readonly Right[], targets: readonly string[] | undefined): Promise<void> {
    checkUsername(name, 'name');
    const opaque = await loadOpaque();
    if (this.get(name) !== undefined) throw new ConflictError(`An account named ${JSON.stringify(name)} already exists.`);
    const { clientRegistrationState, registrationRequest } = opaque.client.startRegistration({ password });
    const { registrationResponse } = opaque.server.createRegistrationResponse({
      serverSetup: this.#setup(), userIdentifier: name, registrationRequest,
    });
    const { registrationRecord } = opaque.client.finishRegistration({
      clientRegistrationState, registrationResponse, password, keyStretching: OPAQUE_KEY_STRETCHING,
    });
    const now = this.#now();
    this.#insertAccount(name, registrationRecord, rights, targets, 'local', now);
    appendAudit(this.#db, { action: 'auth.user.add', actor: 'local', account: name, target: name, result: 'ok', detail: { rights } }, now);
  }

  #insertAccount(name: string, record: string, rights: readonly Right[], targets: readonly string[] | null | undefined, createdBy: string, now: Date): void {
    try {
      this.#db.prepare('INSERT INTO accounts (name, record, rights, targets, created_at, created_by) VALUES (?, ?, ?, ?, ?, ?)')
        .run(name, record, JSON.stringify(RIGHTS.filter((r) => rights.includes(r))),
          targets == null ? null : JSON.stringify([...targets].sort()), now.toISOString(), createdBy);
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
        throw new ConflictError(`An account named ${JSON.stringify(name)} already exists.`);
      }
      throw err;
    }
  }

  // ---- invites --------------------------------------------------------------------------------------

  createInvite(params: { rights: readonly Right[]; targets?: readonly string[] | undefined; ttlSeconds?: number | undefined }, origin: Origin): { invite: string; expiresAt: Date; id: string } {
    const ttl = params.ttlSeconds ?? this.#inviteTtl;
    if (!Number.isInteger(ttl) || ttl < 1 || ttl > this.#maxInviteTtl) {
      throw new BadRequestError(`ttl_s must be an integer from 1 to ${this.#maxInviteTtl}.`, 'ttl_s');
    }
    const now = this.#now();
    const code = randomBytes(24).toString('base64url');
    const id = `inv_${randomBytes(8).toString('hex')}`;
    const expiresAt = new Date(now.getTime() + ttl * 1000);
    const rights = RIGHTS.filter((r) => params.rights.includes(r));
    this.#db.prepare('INSERT INTO invites (id, code_hash, rights, targets, created_at, created_by, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(id, hashCode(code), JSON.stringify(rights), params.targets === undefined ? null : JSON.stringify([...params.targets].sort()),
        now.toISOString(), origin.actor ?? null, expiresAt.toISOString());
    appendAudit(this.#db, {
      action: 'auth.invite.create', actor: origin.actor, address: origin.address, target: id, result: 'ok',
      detail: { rights, targets: params.targets ?? null, expires_at: expiresAt.toISOString() },
    }, now);
    return { invite: code, expiresAt, id };
  }

  #validInvite(code: unknown): InviteRow {
    if (typeof code !== 'string' || code.length === 0 || code.length > 256) {
      throw new BadRequestError('invite must be the invite code an admin gave you.', 'invite');
    }
    const row = this.#db.prepare('SELECT * FROM invites WHERE code_hash = ?').get(hashCode(code)) as InviteRow | undefined;
    if (row === undefined || row.used_at !== null || new Date(row.expires_at) <= this.#now()) {
      throw new ForbiddenError('The invite code is unknown, already used or expired.');
    }
    return row;
  }

  // ---- registration ---------------------------------------------------------------------------------

  async registerStart(body: { username: unknown; request: unknown; invite: unknown }): Promise<{ response: string }> {
    const username = checkUsername(body.username);
    const request = checkMessage(body.request, 'request');
    this.#validInvite(body.invite);
    if (this.get(username) !== undefined) throw new ConflictError(`The user name ${JSON.stringify(username)} is taken.`);
    const opaque = await loadOpaque();
    try {
      const { registrationResponse } = opaque.server.createRegistrationResponse({
        serverSetup: this.#setup(), userIdentifier: username, registrationRequest: request,
      });
      return { response: registrationResponse };
    } catch {
      throw new BadRequestError('request is not an OPAQUE registration request.', 'request');
    }
  }

  registerFinish(body: { username: unknown; record: unknown; invite: unknown }, origin: Origin): { username: string; rights: Right[]; targets: string[] | null } {
    const username = checkUsername(body.username);
    const record = checkMessage(body.record, 'record');
    // A record is 192 bytes (public key, masking key, envelope) in the library's encoding: refuse junk
    // here rather than at the first login.
    if (Buffer.from(record, 'base64url').length !== 192) throw new BadRequestError('record is not an OPAQUE registration record.', 'record');
    const now = this.#now();
    const result = this.#db.transaction(() => {
      const invite = this.#validInvite(body.invite);
      const rights = JSON.parse(invite.rights) as Right[];
      const targets = invite.targets === null ? null : (JSON.parse(invite.targets) as string[]);
      this.#insertAccount(username, record, rights, targets, invite.id, now);
      this.#db.prepare('UPDATE invites SET used_at = ?, used_by = ? WHERE id = ?').run(now.toISOString(), username, invite.id);
      return { username, rights, targets, inviteId: invite.id };
    }).immediate();
    appendAudit(this.#db, {
      action: 'auth.register', address: origin.address, account: username, target: result.inviteId, result: 'ok',
      detail: { rights: result.rights, targets: result.targets },
    }, now);
    return { username: result.username, rights: result.rights, targets: result.targets };
  }

  // ---- login ----------------------------------------------------------------------------------------

  async loginStart(body: { username: unknown; ke1: unknown }, origin: Origin): Promise<{ login_id: string; ke2: string }> {
    const username = checkUsername(body.username);
    const ke1 = checkMessage(body.ke1, 'ke1');
    const address = origin.address ?? 'unknown';
    this.sweep();
    this.#throttle.check(username, address);
    if (this.#pending.size >= this.#maxPending) throw new RateLimitedError(Math.ceil(this.#loginTtl / 1000));
    // Counted now, in the same turn as the check (so parallel starts cannot all slip through), and taken
    // back by a valid finish: an abandoned or malformed login is a failure.
    this.#throttle.fail(username, address);
    const opaque = await loadOpaque();
    const row = this.#db.prepare('SELECT record FROM accounts WHERE name = ? AND disabled_at IS NULL').get(username) as { record: string } | undefined;
    let started: { serverLoginState: string; loginResponse: string };
    try {
      started = opaque.server.startLogin({
        serverSetup: this.#setup(), userIdentifier: username, registrationRecord: row?.record ?? null, startLoginRequest: ke1,
      });
    } catch {
      throw new BadRequestError('ke1 is not an OPAQUE KE1 message.', 'ke1');
    }
    const loginId = randomBytes(16).toString('base64url');
    this.#pending.set(loginId, { username, state: started.serverLoginState, expiresAt: this.#now().getTime() + this.#loginTtl, address });
    return { login_id: loginId, ke2: started.loginResponse };
  }

  async loginFinish(body: { login_id: unknown; ke3: unknown }, origin: Origin): Promise<MintedCapability & { account: string }> {
    const loginId = typeof body.login_id === 'string' ? body.login_id : '';
    const ke3 = checkMessage(body.ke3, 'ke3');
    const pending = this.#pending.get(loginId);
    this.#pending.delete(loginId); // single use, whatever happens next
    const now = this.#now();
    const failed = (account: string | undefined, reason: string): never => {
      appendAudit(this.#db, { action: 'auth.login', address: origin.address, account, result: 'failed', reason }, now);
      throw new UnauthenticatedError('The login failed.');
    };
    if (pending === undefined) return failed(undefined, 'unknown or used login_id');
    if (pending.expiresAt <= now.getTime()) return failed(pending.username, 'login state expired');
    const opaque = await loadOpaque();
    try {
      opaque.server.finishLogin({ serverLoginState: pending.state, finishLoginRequest: ke3 });
    } catch {
      return failed(pending.username, 'bad ke3');
    }
    const row = this.#db.prepare('SELECT * FROM accounts WHERE name = ? AND disabled_at IS NULL').get(pending.username) as AccountRow | undefined;
    if (row === undefined) return failed(pending.username, 'no such account'); // unreachable with a fake record, unless disabled meanwhile
    this.#throttle.succeed(pending.username, pending.address);
    const minted = this.#caps.mint({
      rights: JSON.parse(row.rights) as Right[],
      targets: row.targets === null ? undefined : (JSON.parse(row.targets) as string[]),
      ttlSeconds: this.#capTtl,
      account: row.name,
      kind: 'login',
    });
    appendAudit(this.#db, { action: 'auth.login', actor: minted.capId, address: origin.address, account: row.name, result: 'ok', detail: { cap_id: minted.capId } }, now);
    return { ...minted, account: row.name };
  }

  /** Drops login states past their deadline, auditing each as an abandoned login (already throttled). */
  sweep(): void {
    const now = this.#now();
    for (const [id, p] of this.#pending) {
      if (p.expiresAt > now.getTime()) continue;
      this.#pending.delete(id);
      appendAudit(this.#db, { action: 'auth.login', address: p.address, account: p.username, result: 'failed', reason: 'abandoned' }, now);
    }
  }

  /** Logins started and not yet finished or swept (for tests and health). */
  get pendingLogins(): number { return this.#pending.size; }
}

function toInfo(row: AccountRow): AccountInfo {
  return {
    name: row.name,
    rights: JSON.parse(row.rights) as Right[],
    targets: row.targets === null ? null : (JSON.parse(row.targets) as string[]),
    created_at: row.created_at,
    created_by: row.created_by,
    disabled: row.disabled_at !== null,
  };
}
