/**
 * Capabilities: macaroons (HMAC chains over a root key, `macaroon` v3, binary v2 format, base64url without
 * padding on the wire) whose first-party caveats say what the holder may do. Anyone holding a capability
 * can append caveats and so derive a narrower one offline; nobody can remove one, because each caveat is
 * folded into the signature. Every caveat only ever narrows:
 *
 *   rights = search,mgmt.read        the rights held: the intersection over every `rights` caveat
 *   targets = sites,docportal        scopes every mgmt.* right to these targets (intersection)
 *   targets mgmt.deploy = sites      scopes one mgmt.* right (intersection with the others that apply)
 *   expires < 2026-11-22T05:00:00Z   valid strictly before this instant: the earliest one wins
 *   cap-id = cap_…                   the id the server gave a capability it derived (POST /api/caps/attenuate)
 *
 * Anything else (an unknown caveat, an unknown right, a malformed value, a third-party caveat) makes the
 * whole capability invalid: unknown caveats fail closed. A capability without any `rights` caveat is
 * invalid too, so that "no caveat" never means "everything".
 *
 * Identity and revocation: the macaroon identifier is `v1:<root id>`. Each capability the server mints or
 * derives is recorded (id, parent, root, account, grant, expiry, SHA-256 of its signature — never the
 * capability itself). The ids in the identifier and in the `cap-id` caveats form the chain from the root;
 * each must be recorded with the previous one as parent, and revoking any of them revokes the capability.
 * A `cap-id` caveat counts only where the server put it: the recorded signature hash of a derived id is
 * that of the chain ending with its own `cap-id` caveat, and verification recomputes the chain's
 * signature at each such caveat and compares. A capability narrowed offline by its holder is not
 * recorded: its id is derived, `<last recorded id>.<16 hex digits of the SHA-256 of its signature>`,
 * which links it to what it came from.
 */
import macaroon from 'macaroon';
import type { Macaroon } from 'macaroon';
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../store/db.js';
import { BadRequestError, ForbiddenError, NotFoundError, UnauthenticatedError } from '../kernel/errors.js';
import { RIGHTS, isRight, type Right } from '../kernel/principal.js';

export const CAPABILITY_LOCATION = 'quarry';
const IDENTIFIER_PREFIX = 'v1:';

/** A target name as the allowlist spells them (e.g. `svc_sov_build_run.elf`). */
export const TARGET_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;
const ID_PATTERN = /^cap_[0-9a-f]{24}$/;
const INSTANT_PATTERN = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,3})?Z$/;

/** What a capability grants, after intersecting all of its caveats. */
export interface Grant {
  rights: ReadonlySet<Right>;
  /** Per mgmt.* right, the targets it is scoped to; a right absent here covers every target. */
  targets: ReadonlyMap<Right, ReadonlySet<string>>;
  /** The earliest expiry caveat; undefined when there is none. */
  expiresAt?: Date;
}

export interface VerifiedCapability {
  /** The id of exactly this capability: a recorded id, or a derived one for an offline-narrowed capability. */
  capId: string;
  rootId: string;
  /** Recorded ids from the root to the last `cap-id` caveat. */
  chain: readonly string[];
  account?: string;
  grant: Grant;
  macaroon: Macaroon;
}

export interface MintedCapability {
  cap: string;
  capId: string;
  grant: Grant;
}

export interface CapabilityRecord {
  cap_id: string;
  parent_id: string | null;
  account: string | null;
  rights: Right[];
  targets: Record<string, string[]> | null;
  expires_at: string | null;
  revoked: boolean;
  kind: string;
  created_at: string;
}

export interface CapabilityAuthorityOptions {
  db: Db;
  rootKey: Uint8Array;
  now?: () => Date;
  /** Longest capability accepted, in characters of base64url; longer ones are refused unparsed. Default 8192. */
  maxCapabilityLength?: number;
  /** Most caveats a capability may carry (each one costs an HMAC per verification). Default 64. */
  maxCaveats?: number;
}

export function isMgmtRight(right: Right): boolean {
  return right.startsWith('mgmt.');
}

function newCapId(): string {
  return `cap_${randomBytes(12).toString('hex')}`;
}

function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * The binary v2 macaroon format (the one the Go, Python and C libraries share), base64url without padding.
 * Written here rather than with `exportBinary()`: in macaroon 3.0.4 its buffer doubles on every append
 * (`_grow` compares against a `_capacity` that is never set), so a macaroon with more than three caveats
 * asks for gigabytes. Importing is unaffected.
 */
export function encodeCapability(m: Macaroon): string {
  const parts: Buffer[] = [Buffer.of(2)];
  const field = (type: number, data: Uint8Array): void => {
    const len: number[] = [];
    let n = data.length;
    while (n >= 0x80) { len.push((n & 0x7f) | 0x80); n >>>= 7; }
    len.push(n);
    parts.push(Buffer.of(type, ...len), Buffer.from(data));
  };
  const EOS = Buffer.of(0);
  if (m.location) field(1, Buffer.from(m.location, 'utf8'));
  field(2, m.identifier);
  parts.push(EOS);
  for (const c of m.caveats) {
    if (c.location) field(1, Buffer.from(c.location, 'utf8'));
    field(2, c.identifier);
    if (c.vid) field(4, c.vid);
    parts.push(EOS);
  }
  parts.push(EOS);
  field(6, m.signature);
  return Buffer.concat(parts).toString('base64url');
}

/** Parses the wire form; throws UnauthenticatedError for anything that is not a binary v2 macaroon. */
export function decodeCapability(token: string, maxLength = 8192): Macaroon {
  if (token.length === 0 || token.length > maxLength || !/^[A-Za-z0-9_-]+$/.test(token)) {
    throw new UnauthenticatedError('The capability is malformed.');
  }
  try {
    return macaroon.importMacaroon(new Uint8Array(Buffer.from(token, 'base64url')));
  } catch {
    throw new UnauthenticatedError('The capability is malformed.');
  }
}

/** Caveat text for a grant narrowing (used by minting, server-side and offline attenuation alike). */
export function grantCaveats(grant: { rights?: readonly Right[]; targets?: readonly string[]; expiresAt?: Date }): string[] {
  const out: string[] = [];
  if (grant.rights !== undefined) out.push(`rights = ${[...grant.rights].sort().join(',')}`);
  if (grant.targets !== undefined) out.push(`targets = ${[...grant.targets].sort().join(',')}`);
  if (grant.expiresAt !== undefined) out.push(`expires < ${grant.expiresAt.toISOString()}`);
  return out;
}

/**
 * A holder's offline narrowing: appends caveats to a capability without the server. Exported for tests
 * and for Node scripts (docs/auth.md shows the same with `macaroon` directly).
 */
export function attenuateOffline(token: string, caveats: readonly string[]): string {
  const m = decodeCapability(token);
  for (const c of caveats) m.addFirstPartyCaveat(c);
  return encodeCapability(m);
}

/** Mutable accumulator of the caveats seen while the macaroon library walks the chain. */
interface Parsed {
  rights?: Set<Right>;
  allMgmtTargets?: Set<string>;
  targets: Map<Right, Set<string>>;
  expiresAt?: Date;
  capIds: string[];
}

function intersect<T>(a: Set<T> | undefined, b: Set<T>): Set<T> {
  if (a === undefined) return b;
  return new Set([...a].filter((x) => b.has(x)));
}

function parseList(value: string): string[] {
  return value === '' ? [] : value.split(',');
}

/** Applies one caveat to `acc`; returns an error string (fail closed) when it is not understood. */
function applyCaveat(acc: Parsed, cond: string): string | null {
  let m: RegExpExecArray | null;
  if ((m = /^rights = ([a-z.,]*)$/.exec(cond))) {
    const list = parseList(m[1]!);
    if (!list.every(isRight)) return 'unknown right';
    acc.rights = intersect(acc.rights, new Set(list as Right[]));
    return null;
  }
  if ((m = /^targets(?: (mgmt\.[a-z]+))? = ([A-Za-z0-9_.,-]*)$/.exec(cond))) {
    const list = parseList(m[2]!);
    if (!list.every((t) => TARGET_PATTERN.test(t))) return 'malformed target';
    const set = new Set(list);
    if (m[1] === undefined) {
      acc.allMgmtTargets = intersect(acc.allMgmtTargets, set);
    } else {
      const right = m[1];
      if (!isRight(right)) return 'unknown right';
      acc.targets.set(right, intersect(acc.targets.get(right), set));
    }
    return null;
  }
  if ((m = /^expires < (.+)$/.exec(cond))) {
    if (!INSTANT_PATTERN.test(m[1]!)) return 'malformed expiry';
    const at = new Date(m[1]!);
    if (Number.isNaN(at.getTime())) return 'malformed expiry';
    if (acc.expiresAt === undefined || at < acc.expiresAt) acc.expiresAt = at;
    return null;
  }
  if ((m = /^cap-id = (.+)$/.exec(cond))) {
    if (!ID_PATTERN.test(m[1]!)) return 'malformed cap-id';
    acc.capIds.push(m[1]!);
    return null;
  }
  return 'unknown caveat';
}

function finishGrant(acc: Parsed): Grant {
  const rights = acc.rights ?? new Set<Right>();
  const targets = new Map<Right, ReadonlySet<string>>();
  for (const right of rights) {
    if (!isMgmtRight(right)) continue;
    let scope: Set<string> | undefined = acc.allMgmtTargets;
    const own = acc.targets.get(right);
    if (own !== undefined) scope = intersect(scope === undefined ? undefined : new Set(scope), own);
    if (scope !== undefined) targets.set(right, scope);
  }
  const grant: Grant = { rights, targets };
  if (acc.expiresAt !== undefined) grant.expiresAt = acc.expiresAt;
  return grant;
}

/** The JSON form of a grant's target scopes: `{right: [targets]}`, or null when nothing is scoped. */
export function targetsJson(grant: Grant): Record<string, string[]> | null {
  if (grant.targets.size === 0) return null;
  const out: Record<string, string[]> = {};
  for (const right of RIGHTS) {
    const scope = grant.targets.get(right);
    if (scope !== undefined) out[right] = [...scope].sort();
  }
  return out;
}

export function rightsList(grant: Grant): Right[] {
  return RIGHTS.filter((r) => grant.rights.has(r));
}

interface CapRow {
  id: string;
  parent_id: string | null;
  root_id: string;
  account: string | null;
  rights: string;
  targets: string | null;
  expires_at: string | null;
  sig_hash: string;
  created_at: string;
  kind: string;
  revoked_at: string | null;
  disabled_at?: string | null;
}

/** Mints, verifies, derives, lists and revokes capabilities against the state database. */
export class CapabilityAuthority {
  readonly #db: Db;
  readonly #rootKey: Uint8Array;
  readonly #now: () => Date;
  readonly #maxLength: number;
  readonly #maxCaveats: number;

  constructor(options: CapabilityAuthorityOptions) {
    this.#db = options.db;
    this.#rootKey = options.rootKey;
    this.#now = options.now ?? (() => new Date());
    this.#maxLength = options.maxCapabilityLength ?? 8192;
    this.#maxCaveats = options.maxCaveats ?? 64;
  }

  /** A new root capability (a login's, or one an operator mints). */
  mint(params: {
    rights: readonly Right[];
    targets?: readonly string[] | undefined;
    ttlSeconds?: number | undefined;
    account?: string | undefined;
    kind: 'login' | 'mint';
  }): MintedCapability {
    const id = newCapId();
    const m = macaroon.newMacaroon({ identifier: IDENTIFIER_PREFIX + id, location: CAPABILITY_LOCATION, rootKey: this.#rootKey, version: 2 });
    const expiresAt = params.ttlSeconds === undefined ? undefined : new Date(this.#now().getTime() + params.ttlSeconds * 1000);
    for (const c of grantCaveats({ rights: params.rights, targets: params.targets, expiresAt })) m.addFirstPartyCaveat(c);
    const grant = this.#grantOf(m);
    this.#record({ id, parentId: null, rootId: id, account: params.account ?? null, grant, sigHash: sha256Hex(m.signature), kind: params.kind });
    return { cap: encodeCapability(m), capId: id, grant };
  }

  /**
   * Checks a presented capability: signature chain, every caveat understood, not expired, every recorded
   * id in its chain present, consistent and not revoked, and its account (if any) not disabled. Throws
   * UnauthenticatedError otherwise, with a message that never contains the capability.
   */
  verify(token: string): VerifiedCapability {
    const m = decodeCapability(token, this.#maxLength);
    const identifier = Buffer.from(m.identifier).toString('utf8');
    if (!identifier.startsWith(IDENTIFIER_PREFIX) || !ID_PATTERN.test(identifier.slice(IDENTIFIER_PREFIX.length))) {
      throw new UnauthenticatedError('The capability was not issued by this service.');
    }
    if (m.caveats.length > this.#maxCaveats) throw new UnauthenticatedError('The capability has too many caveats.');
    const rootId = identifier.slice(IDENTIFIER_PREFIX.length);
    const acc: Parsed = { targets: new Map(), capIds: [] };
    let sawRights = false;
    try {
      m.verify(this.#rootKey, (cond) => {
        if (cond.startsWith('rights = ')) sawRights = true;
        return applyCaveat(acc, cond);
      });
    } catch {
      throw new UnauthenticatedError('The capability is invalid.');
    }
    if (!sawRights) throw new UnauthenticatedError('The capability is invalid.');
    const grant = finishGrant(acc);
    if (grant.expiresAt !== undefined && this.#now() >= grant.expiresAt) {
      throw new UnauthenticatedError('The capability has expired.');
    }
    const chain = [rootId, ...acc.capIds];
    const rows = this.#rowsWithAccount(chain);
    for (let i = 0; i < chain.length; i++) {
      const row = rows.get(chain[i]!);
      if (row === undefined || row.root_id !== rootId || (i > 0 && row.parent_id !== chain[i - 1])) {
        throw new UnauthenticatedError('The capability is invalid.');
      }
      if (row.revoked_at !== null) throw new UnauthenticatedError('The capability has been revoked.');
    }
    if (acc.capIds.length > 0) this.#checkIdCaveats(m, rows);
    const root = rows.get(rootId)!;
    if (root.disabled_at) throw new UnauthenticatedError('The account of this capability is disabled.');
    const last = rows.get(chain[chain.length - 1]!)!;
    const sigHash = sha256Hex(m.signature);
    const capId = sigHash === last.sig_hash ? last.id : `${last.id}.${sigHash.slice(0, 16)}`;
    const out: VerifiedCapability = { capId, rootId, chain, grant, macaroon: m };
    if (root.account !== null) out.account = root.account;
    return out;
  }

  /**
   * `POST /api/caps/attenuate`: a narrower capability derived from a verified one, recorded with it as
   * parent. Rights or targets beyond what `parent` holds → ForbiddenError. A ttl reaching past the
   * parent's expiry is cut to it (the caveats could not widen it anyway).
   */
  attenuate(parent: VerifiedCapability, req: { rights?: readonly Right[] | undefined; targets?: readonly string[] | undefined; ttlSeconds?: number | undefined }): MintedCapability {
    const held = parent.grant;
    if (req.rights !== undefined) {
      const extra = req.rights.filter((r) => !held.rights.has(r));
      if (extra.length > 0) throw new ForbiddenError(`The capability does not hold ${extra.join(', ')}; attenuation cannot add rights.`);
    }
    if (req.targets !== undefined) {
      const rights = req.rights ?? [...held.rights];
      for (const right of rights) {
        const scope = held.targets.get(right);
        if (scope === undefined) continue;
        const extra = req.targets.filter((t) => !scope.has(t));
        if (extra.length > 0) throw new ForbiddenError(`${right} is not held for ${extra.join(', ')}; attenuation cannot add targets.`);
      }
    }
    let expiresAt: Date | undefined;
    if (req.ttlSeconds !== undefined) {
      expiresAt = new Date(this.#now().getTime() + req.ttlSeconds * 1000);
      if (held.expiresAt !== undefined && held.expiresAt < expiresAt) expiresAt = held.expiresAt;
    }
    const id = newCapId();
    const m = parent.macaroon.clone();
    for (const c of grantCaveats({ rights: req.rights, targets: req.targets, expiresAt })) m.addFirstPartyCaveat(c);
    m.addFirstPartyCaveat(`cap-id = ${id}`);
    const grant = this.#grantOf(m);
    this.#record({
      id, parentId: parent.chain[parent.chain.length - 1]!, rootId: parent.rootId, account: parent.account ?? null,
      grant, sigHash: sha256Hex(m.signature), kind: 'attenuate',
    });
    return { cap: encodeCapability(m), capId: id, grant };
  }

  /** Every recorded capability, newest first. */
  list(): CapabilityRecord[] {
    const rows = this.#db.prepare('SELECT * FROM capabilities ORDER BY created_at DESC, id').all() as CapRow[];
    return rows.map((r) => ({
      cap_id: r.id,
      parent_id: r.parent_id,
      account: r.account,
      rights: JSON.parse(r.rights) as Right[],
      targets: r.targets === null ? null : (JSON.parse(r.targets) as Record<string, string[]>),
      expires_at: r.expires_at,
      revoked: r.revoked_at !== null,
      kind: r.kind,
      created_at: r.created_at,
    }));
  }

  /**
   * Revokes a recorded capability and marks every recorded descendant revoked too (verification would
   * refuse them anyway, through their chain). Returns how many recorded capabilities stopped working:
   * those not already revoked and not yet expired. A derived id (`cap_….<hex>`) revokes what it was
   * derived from, since an offline-narrowed capability has no record of its own.
   */
  revoke(capId: string): { revoked: number; id: string } {
    const id = capId.split('.')[0]!;
    if (!ID_PATTERN.test(id)) throw new BadRequestError('cap_id is not a capability id.', 'cap_id');
    const nowIso = this.#now().toISOString();
    return this.#db.transaction(() => {
      const exists = this.#db.prepare('SELECT 1 FROM capabilities WHERE id = ?').get(id);
      if (exists === undefined) throw new NotFoundError(`No capability has id ${JSON.stringify(id)}.`, 'cap_id');
      const ids = (this.#db.prepare(
        `WITH RECURSIVE sub(id) AS (SELECT ? UNION SELECT c.id FROM capabilities c JOIN sub ON c.parent_id = sub.id)
         SELECT c.id FROM capabilities c JOIN sub ON c.id = sub.id
         WHERE c.revoked_at IS NULL AND (c.expires_at IS NULL OR c.expires_at > ?)`,
      ).all(id, nowIso) as { id: string }[]).map((r) => r.id);
      const mark = this.#db.prepare(
        `WITH RECURSIVE sub(id) AS (SELECT ? UNION SELECT c.id FROM capabilities c JOIN sub ON c.parent_id = sub.id)
         UPDATE capabilities SET revoked_at = ? WHERE revoked_at IS NULL AND id IN (SELECT id FROM sub)`,
      );
      mark.run(id, nowIso);
      return { revoked: ids.length, id };
    }).immediate();
  }

  /** Revokes every capability issued to an account (when it is disabled). */
  revokeAccount(account: string): number {
    return this.#db.prepare('UPDATE capabilities SET revoked_at = ? WHERE account = ? AND revoked_at IS NULL')
      .run(this.#now().toISOString(), account).changes;
  }

  /**
   * Each `cap-id` caveat must be the one the server appended when it derived that capability: the
   * signature of the chain up to and including the caveat is the one recorded for the id. Without this,
   * the holder of a parent could append a child's id offline and act under the child's identity.
   */
  #checkIdCaveats(m: Macaroon, rows: ReadonlyMap<string, CapRow>): void {
    const replay = macaroon.newMacaroon({ identifier: m.identifier, location: CAPABILITY_LOCATION, rootKey: this.#rootKey, version: 2 });
    for (const c of m.caveats) {
      replay.addFirstPartyCaveat(c.identifier);
      const id = /^cap-id = (.+)$/.exec(Buffer.from(c.identifier).toString('utf8'))?.[1];
      if (id !== undefined && sha256Hex(replay.signature) !== rows.get(id)?.sig_hash) {
        throw new UnauthenticatedError('The capability is invalid.');
      }
    }
  }

  #grantOf(m: Macaroon): Grant {
    const acc: Parsed = { targets: new Map(), capIds: [] };
    for (const c of m.caveats) {
      const err = applyCaveat(acc, Buffer.from(c.identifier).toString('utf8'));
      if (err !== null) throw new UnauthenticatedError('The capability is invalid.');
    }
    return finishGrant(acc);
  }

  /** Verification runs once per request: its statements are prepared once per chain length. */
  readonly #chainStatements = new Map<number, { all(...ids: string[]): unknown[] }>();

  #rowsWithAccount(ids: readonly string[]): Map<string, CapRow> {
    let stmt = this.#chainStatements.get(ids.length);
    if (stmt === undefined) {
      stmt = this.#db.prepare(
        `SELECT c.*, a.disabled_at FROM capabilities c LEFT JOIN accounts a ON a.name = c.account
         WHERE c.id IN (${ids.map(() => '?').join(',')})`,
      );
      this.#chainStatements.set(ids.length, stmt);
    }
    const rows = stmt.all(...ids) as CapRow[];
    return new Map(rows.map((r) => [r.id, r]));
  }

  #record(r: { id: string; parentId: string | null; rootId: string; account: string | null; grant: Grant; sigHash: string; kind: string }): void {
    const targets = targetsJson(r.grant);
    this.#db.prepare(
      `INSERT INTO capabilities (id, parent_id, root_id, account, rights, targets, expires_at, sig_hash, created_at, kind)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      r.id, r.parentId, r.rootId, r.account, JSON.stringify(rightsList(r.grant)),
      targets === null ? null : JSON.stringify(targets), r.grant.expiresAt?.toISOString() ?? null,
      r.sigHash, this.#now().toISOString(), r.kind,
    );
  }
}
