/**
 * Authentication and authority for Quarry: OPAQUE accounts, macaroon capabilities, the policy that
 * resolves each request's principal, and the auth application service every face calls. `createAuth` is
 * the one entry point; the server and the CLI build the same pieces over the same data directory.
 * See docs/auth.md.
 */
import type { Db } from '../store/db.js';
import type { EventBus } from '../events/bus.js';
import type { Policy, Right } from '../kernel/principal.js';
import { CapabilityAuthority } from './capability.js';
import { createPolicy } from './policy.js';
import { Accounts } from './accounts.js';
import { LoginThrottle, type ThrottleOptions } from './throttle.js';
import { loadCapabilityRootKey, loadOpaqueServerSetup } from './secrets.js';
import { AuthService } from './service.js';

export { ANONYMOUS_RIGHTS, presentedCapabilities } from './policy.js';
export { CapabilityAuthority, attenuateOffline } from './capability.js';
export { Accounts } from './accounts.js';
export { requireRight, requirePublic } from '../kernel/principal.js';
export { AuthService } from './service.js';
export type { Right };

export interface AuthOptions {
  db: Db;
  /** The data directory: the OPAQUE server setup and the capability root key live here (mode 0600). */
  dataDir: string;
  /** Not used yet: no auth event kinds exist in CONTRACT §5; accepted so callers need not change later. */
  bus?: EventBus;
  /** Whether callers without a capability get CONTRACT §4's anonymous set. Default true. */
  anonymous?: boolean;
  now?: () => Date;
  /** Lifetime of the capability a login returns. Default 3,600 s. */
  loginCapabilityTtlSeconds?: number;
  /** How long a started login waits for its finish. Default 60,000 ms. */
  loginStateTtlMs?: number;
  /** Most logins waiting for their finish at once. Default 10,000. */
  maxPendingLogins?: number;
  /** Default and longest lifetime of an invite. Defaults 7 and 30 days. */
  inviteTtlSeconds?: number;
  maxInviteTtlSeconds?: number;
  /** Longest ttl_s of `POST /api/caps/attenuate`. Default 30 days. */
  maxAttenuateTtlSeconds?: number;
  /** Login throttling (per account name and per address): see throttle.ts for the defaults. */
  throttle?: Omit<ThrottleOptions, 'now'>;
  /** Longest capability accepted (base64url characters). Default 8,192. */
  maxCapabilityLength?: number;
  /** Most caveats a capability may carry. Default 64. */
  maxCaveats?: number;
}

export interface Auth {
  policy: Policy;
  service: AuthService;
  accounts: Accounts;
  capabilities: CapabilityAuthority;
  close(): void;
}

export function createAuth(options: AuthOptions): Auth {
  const now = options.now ?? (() => new Date());
  const capabilities = new CapabilityAuthority({
    db: options.db, rootKey: loadCapabilityRootKey(options.dataDir), now,
    maxCapabilityLength: options.maxCapabilityLength, maxCaveats: options.maxCaveats,
  });
  let setup: string | undefined;
  const accounts = new Accounts({
    db: options.db, capabilities, now,
    serverSetup: () => (setup ??= loadOpaqueServerSetup(options.dataDir)),
    throttle: new LoginThrottle({ ...options.throttle, now }),
    loginStateTtlMs: options.loginStateTtlMs, maxPendingLogins: options.maxPendingLogins,
    loginCapabilityTtlSeconds: options.loginCapabilityTtlSeconds, inviteTtlSeconds: options.inviteTtlSeconds,
    maxInviteTtlSeconds: options.maxInviteTtlSeconds,
  });
  const policy = createPolicy({ capabilities, anonymous: options.anonymous !== false });
  const service = new AuthService({ db: options.db, accounts, capabilities, now, maxAttenuateTtlSeconds: options.maxAttenuateTtlSeconds });
  let closed = false;
  return {
    policy, service, accounts, capabilities,
    close() {
      if (closed) return;
      closed = true;
      accounts.sweep(); // audit logins abandoned so far; the database belongs to the caller
    },
  };
}

/** Default path of the state database inside a data directory (the same file the service opens). */
export { stateDbPath } from '../kernel/data-dir.js';
