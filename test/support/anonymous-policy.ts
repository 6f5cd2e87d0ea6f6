/**
 * The policy the server uses when the auth part is not wired (tests of the HTTP layer alone, or a build
 * without `createAuth`): every caller gets CONTRACT §4's anonymous rights (search, doc, suggest — the
 * right `search`), and any presented capability is refused as unauthenticated, because nothing here can
 * verify one and accepting it silently would hide a misconfiguration.
 */
import type { Policy, Principal, Right } from '../../src/kernel/principal.js';
import { UnauthenticatedError } from '../../src/kernel/errors.js';

import { ANONYMOUS_RIGHTS as ANONYMOUS_LIST } from '../../src/auth/policy.js';

const ANONYMOUS_RIGHTS: ReadonlySet<Right> = new Set<Right>(ANONYMOUS_LIST);

export const ANONYMOUS: Principal = Object.freeze({
  kind: 'anonymous' as const,
  rights: ANONYMOUS_RIGHTS,
  can: (right: Right) => ANONYMOUS_RIGHTS.has(right),
});

export function anonymousOnlyPolicy(): Policy {
  return {
    resolve(headers, extraCapability) {
      const auth = headers['authorization'];
      if (headers['x-service-cap'] !== undefined || extraCapability !== undefined || [auth ?? []].flat().some((a) => /^\s*bearer\s/i.test(a))) {
        throw new UnauthenticatedError('This server does not accept capabilities (authentication is not configured).');
      }
      return ANONYMOUS;
    },
  };
}
