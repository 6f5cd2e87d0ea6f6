// Property: whatever sequence of attenuations a holder applies — offline caveats of any kind the grammar
// knows, or server-side `attenuate` requests, asking for more or for less — the capability that results
// never allows an operation (right × target) that its predecessor did not, and never lives longer.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { openDb } from '../../src/store/db.js';
import { CapabilityAuthority, attenuateOffline, type VerifiedCapability } from '../../src/auth/capability.js';
import { createPolicy } from '../../src/auth/policy.js';
import { RIGHTS, type Right, type Principal } from '../../src/kernel/principal.js';
import { QuarryError } from '../../src/kernel/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'quarry-atten-'));
const db = openDb(join(dir, 'state.sqlite'));
after(() => { db.close(); rmSync(dir, { recursive: true, force: true }); });

const T0 = Date.parse('2026-11-22T05:00:00Z');
const caps = new CapabilityAuthority({ db, rootKey: new Uint8Array(32).fill(7), now: () => new Date(T0) });
const policy = createPolicy({ capabilities: caps, anonymous: false });
const TARGETS = ['sites', 'docportal', 'mgmtapi', 'relate'];

const rightsArb = fc.subarray([...RIGHTS]);
const targetsArb = fc.subarray(TARGETS);
const mgmtRightArb = fc.constantFrom(...RIGHTS.filter((r) => r.startsWith('mgmt.')));
const instantArb = fc.integer({ min: -60, max: 7200 }).map((s) => new Date(T0 + s * 1000).toISOString());

type Step =
  | { kind: 'offline'; caveat: string }
  | { kind: 'server'; rights?: Right[]; targets?: string[]; ttl?: number };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  rightsArb.map((r) => ({ kind: 'offline' as const, caveat: `rights = ${r.join(',')}` })),
  targetsArb.map((t) => ({ kind: 'offline' as const, caveat: `targets = ${t.join(',')}` })),
  fc.tuple(mgmtRightArb, targetsArb).map(([r, t]) => ({ kind: 'offline' as const, caveat: `targets ${r} = ${t.join(',')}` })),
  instantArb.map((at) => ({ kind: 'offline' as const, caveat: `expires < ${at}` })),
  fc.record({ rights: fc.option(rightsArb, { nil: undefined }), targets: fc.option(targetsArb, { nil: undefined }), ttl: fc.option(fc.integer({ min: 1, max: 100_000 }), { nil: undefined }) }, { requiredKeys: [] })
    .map((r) => ({ kind: 'server' as const, ...r })),
);

/** Every (right, target) the principal may exercise, plus the right alone, as strings. */
function allowed(p: Principal): Set<string> {
  const out = new Set<string>();
  for (const r of RIGHTS) {
    if (p.can(r)) out.add(r);
    for (const t of [...TARGETS, 'elsewhere']) if (p.can(r, t)) out.add(`${r}@${t}`);
  }
  return out;
}

function tryResolve(cap: string): Principal | undefined {
  try {
    return policy.resolve({ authorization: `Bearer ${cap}` });
  } catch (err) {
    if (QuarryError.is(err) && err.code === 'unauthenticated') return undefined; // expired: allows nothing
    throw err;
  }
}

test('no sequence of attenuations widens a capability', () => {
  fc.assert(
    fc.property(
      rightsArb, fc.option(targetsArb, { nil: undefined }), fc.option(fc.integer({ min: 1, max: 7200 }), { nil: undefined }),
      fc.array(stepArb, { maxLength: 8 }),
      (rootRights, rootTargets, ttl, steps) => {
        let cap = caps.mint({ rights: rootRights, targets: rootTargets, ttlSeconds: ttl, kind: 'mint' }).cap;
        let before = tryResolve(cap);
        for (const step of steps) {
          if (before === undefined) return; // already allows nothing
          let next: string;
          if (step.kind === 'offline') {
            next = attenuateOffline(cap, [step.caveat]);
          } else {
            let verified: VerifiedCapability;
            try { verified = caps.verify(cap); } catch { return; }
            try {
              next = caps.attenuate(verified, { rights: step.rights, targets: step.targets, ttlSeconds: step.ttl }).cap;
            } catch (err) {
              assert.ok(QuarryError.is(err) && err.code === 'forbidden', String(err));
              continue; // asked for more than held: refused, nothing issued
            }
          }
          const after = tryResolve(next);
          if (after !== undefined) {
            const was = allowed(before);
            for (const op of allowed(after)) assert.ok(was.has(op), `${step.kind} step widened to ${op}`);
            if (before.expiresAt !== undefined) {
              assert.ok(after.expiresAt !== undefined && after.expiresAt <= before.expiresAt, 'expiry never moves later');
            }
          }
          cap = next;
          before = after;
        }
      },
    ),
    { numRuns: 300 },
  );
});
