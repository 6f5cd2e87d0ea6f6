// Capabilities over the real HTTPS server: where they are read, tampered, expired, revoked and
// parent-revoked ones, server-side and offline attenuation, admin listing and revocation, and the
// anonymous switch. Capabilities are minted directly (as `quarry cap mint` does): no OPAQUE cost here.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import macaroon from 'macaroon';
import { startAuthServer, type AuthTestServer } from './support.js';
import { attenuateOffline, encodeCapability, decodeCapability } from '../../src/auth/capability.js';
import { RIGHTS } from '../../src/kernel/principal.js';
import type { RouteGroup } from '../../src/http/route.js';
import { requireRight, requirePublic } from '../../src/kernel/principal.js';

// A stand-in for a control-plane endpoint: needs mgmt.deploy for the target named in the query.
const probe: RouteGroup = {
  name: 'probe',
  routes: [{
    method: 'GET', pattern: '/api/probe/deploy',
    handler: async (ctx) => { requireRight(ctx.principal, 'mgmt.deploy', ctx.query.get('target') ?? ''); return { json: { ok: true } }; },
  }],
};

let srv: AuthTestServer;
let admin: string;
let deployer: { cap: string; capId: string };

const bearer = (cap: string) => ({ authorization: `Bearer ${cap}` });
const code = (r: { json: Record<string, unknown> }) => (r.json['error'] as { code: string } | undefined)?.code;

before(async () => {
  srv = await startAuthServer({ extraGroups: [probe] });
  admin = srv.auth.capabilities.mint({ rights: ['auth.admin'], ttlSeconds: 86_400, kind: 'mint' }).cap;
  deployer = srv.auth.capabilities.mint({ rights: ['mgmt.read', 'mgmt.deploy'], targets: ['sites', 'docportal'], ttlSeconds: 3600, kind: 'mint' });
});
after(async () => { await srv?.close(); });

test('a capability is read from Authorization: Bearer or X-Service-Cap; two different ones are refused with 400', async () => {
  for (const headers of [bearer(deployer.cap), { 'x-service-cap': deployer.cap }, { ...bearer(deployer.cap), 'x-service-cap': deployer.cap }]) {
    const r = await srv.request('GET', '/api/auth/whoami', { headers });
    assert.equal(r.status, 200);
    assert.equal(r.json['cap_id'], deployer.capId);
  }
  // `/mcp` passes `params._cap` as the extra capability: the same rules apply.
  assert.equal(srv.auth.policy.resolve({}, deployer.cap).capId, deployer.capId);
  assert.equal(srv.auth.policy.resolve(bearer(deployer.cap), deployer.cap).capId, deployer.capId);
  assert.throws(() => srv.auth.policy.resolve(bearer(deployer.cap), admin), (e: { code?: string }) => e.code === 'bad_request');
  assert.throws(() => srv.auth.policy.resolve({ authorization: 'Basic dXNlcjpwYXNz' }), (e: { code?: string }) => e.code === 'unauthenticated');
  const two = await srv.request('GET', '/api/auth/whoami', { headers: { ...bearer(deployer.cap), 'x-service-cap': admin } });
  assert.equal(two.status, 400);
  assert.equal(code(two), 'bad_request');
  assert.ok(!two.text.includes(admin) && !two.text.includes(deployer.cap), 'never echoed');
});

test('rights are checked per operation and per target: 401 without a capability, 403 with an insufficient one', async () => {
  assert.equal((await srv.request('GET', '/api/probe/deploy?target=sites', { headers: bearer(deployer.cap) })).status, 200);
  const other = await srv.request('GET', '/api/probe/deploy?target=mgmtapi', { headers: bearer(deployer.cap) });
  assert.equal(other.status, 403);
  assert.equal(code(other), 'forbidden');
  const anon = await srv.request('GET', '/api/probe/deploy?target=sites');
  assert.equal(anon.status, 401);
  assert.match(String(anon.headers['www-authenticate']), /^Bearer realm="quarry"/);
  assert.equal((await srv.request('GET', '/api/caps', { headers: bearer(deployer.cap) })).status, 403);
  assert.equal((await srv.request('GET', '/api/caps')).status, 401);
});

test('tampered, foreign, unknown-caveat and expired capabilities get 401 with WWW-Authenticate', async () => {
  const bytes = Buffer.from(deployer.cap, 'base64url');
  bytes[bytes.length - 5] ^= 1; // inside the signature
  const tampered = bytes.toString('base64url');
  // Same identifier, caveats rewritten to `rights = auth.admin` with a signature that cannot match.
  const m = decodeCapability(deployer.cap);
  const forged = macaroon.newMacaroon({ identifier: m.identifier, location: 'quarry', rootKey: new Uint8Array(32) });
  forged.addFirstPartyCaveat('rights = auth.admin');
  const withUnknown = attenuateOffline(deployer.cap, ['ip = 127.0.0.1']);
  const thirdParty = decodeCapability(deployer.cap);
  (thirdParty as unknown as { addThirdPartyCaveat(k: Uint8Array, id: string, loc: string): void })
    .addThirdPartyCaveat(new Uint8Array(32), 'discharge-me', 'https://elsewhere.example');
  const expiring = srv.auth.capabilities.mint({ rights: ['mgmt.read'], ttlSeconds: 60, kind: 'mint' }).cap;
  const shortened = attenuateOffline(deployer.cap, [`expires < ${new Date(Date.now() + 30_000).toISOString()}`]);
  assert.equal((await srv.request('GET', '/api/auth/whoami', { headers: bearer(expiring) })).status, 200);
  srv.advance(61_000);
  try {
    for (const cap of [tampered, encodeCapability(forged), withUnknown, encodeCapability(thirdParty), expiring, shortened, 'not a capability!', 'AAAA']) {
      const r = await srv.request('GET', '/api/auth/whoami', { headers: { 'x-service-cap': cap } });
      assert.equal(r.status, 401, cap.slice(0, 20));
      assert.equal(code(r), 'unauthenticated');
      assert.match(String(r.headers['www-authenticate']), /^Bearer /);
    }
  } finally {
    srv.advance(-61_000);
  }
});

test('attenuation through the API narrows and never widens (403)', async () => {
  const narrow = await srv.request('POST', '/api/caps/attenuate', { headers: bearer(deployer.cap), json: { rights: ['mgmt.deploy'], targets: ['sites'], ttl_s: 600 } });
  assert.equal(narrow.status, 200, narrow.text);
  assert.deepEqual(narrow.json['rights'], ['mgmt.deploy']);
  assert.deepEqual(narrow.json['targets'], { 'mgmt.deploy': ['sites'] });
  const child = String(narrow.json['cap']);
  assert.equal((await srv.request('GET', '/api/probe/deploy?target=sites', { headers: bearer(child) })).status, 200);
  assert.equal((await srv.request('GET', '/api/probe/deploy?target=docportal', { headers: bearer(child) })).status, 403);

  for (const json of [{ rights: ['auth.admin'] }, { targets: ['mgmtapi'] }, { rights: ['mgmt.deploy'], targets: ['docportal'] }]) {
    const r = await srv.request('POST', '/api/caps/attenuate', { headers: bearer(child), json });
    assert.equal(r.status, 403, JSON.stringify(json));
  }
  const longer = await srv.request('POST', '/api/caps/attenuate', { headers: bearer(child), json: { ttl_s: 86_400 } });
  assert.equal(longer.json['expires_at'], narrow.json['expires_at'], 'a longer ttl is cut to the parent\'s expiry');
  assert.equal((await srv.request('POST', '/api/caps/attenuate', { json: {} })).status, 401);
});

test('revoking a capability revokes everything derived from it, online and offline', async () => {
  const parent = srv.auth.capabilities.mint({ rights: ['mgmt.read', 'mgmt.deploy'], ttlSeconds: 3600, kind: 'mint' });
  const a = await srv.request('POST', '/api/caps/attenuate', { headers: bearer(parent.cap), json: { rights: ['mgmt.read'] } });
  const childCap = String(a.json['cap']);
  const b = await srv.request('POST', '/api/caps/attenuate', { headers: bearer(childCap), json: { ttl_s: 60 } });
  const grandchild = String(b.json['cap']);
  const offline = attenuateOffline(childCap, ['targets = sites']);
  const offlineMe = await srv.request('GET', '/api/auth/whoami', { headers: bearer(offline) });
  assert.equal(offlineMe.status, 200);
  assert.match(String(offlineMe.json['cap_id']), new RegExp(`^${String(a.json['cap_id'])}\\.[0-9a-f]{16}$`), 'a derived id links to its parent');
  assert.deepEqual(offlineMe.json['targets'], { 'mgmt.read': ['sites'] });

  const list = await srv.request('GET', '/api/caps', { headers: bearer(admin) });
  assert.equal(list.status, 200);
  const caps = list.json['caps'] as { cap_id: string; parent_id: string | null; revoked: boolean }[];
  assert.equal(caps.find((c) => c.cap_id === a.json['cap_id'])?.parent_id, parent.capId);
  assert.equal(caps.find((c) => c.cap_id === b.json['cap_id'])?.parent_id, a.json['cap_id']);
  assert.ok(!list.text.includes(parent.cap.slice(10, 50)), 'the list never holds a capability');

  const revoked = await srv.request('POST', '/api/caps/revoke', { headers: bearer(admin), json: { cap_id: parent.capId } });
  assert.equal(revoked.status, 200);
  assert.equal(revoked.json['revoked'], 3, 'the parent, its child and its grandchild');
  for (const cap of [parent.cap, childCap, grandchild, offline]) {
    assert.equal((await srv.request('GET', '/api/auth/whoami', { headers: bearer(cap) })).status, 401);
  }
  const again = await srv.request('POST', '/api/caps/revoke', { headers: bearer(admin), json: { cap_id: parent.capId } });
  assert.equal(again.json['revoked'], 0);
  assert.equal((await srv.request('POST', '/api/caps/revoke', { headers: bearer(admin), json: { cap_id: 'cap_000000000000000000000000' } })).status, 404);

  // Revoking a child leaves the parent working.
  const p2 = srv.auth.capabilities.mint({ rights: ['mgmt.read'], ttlSeconds: 3600, kind: 'mint' });
  const c2 = await srv.request('POST', '/api/caps/attenuate', { headers: bearer(p2.cap), json: { ttl_s: 60 } });
  await srv.request('POST', '/api/caps/revoke', { headers: bearer(admin), json: { cap_id: c2.json['cap_id'] } });
  assert.equal((await srv.request('GET', '/api/auth/whoami', { headers: bearer(String(c2.json['cap'])) })).status, 401);
  assert.equal((await srv.request('GET', '/api/auth/whoami', { headers: bearer(p2.cap) })).status, 200);

  const audit = srv.db.prepare("SELECT * FROM audit_log WHERE action IN ('cap.attenuate', 'cap.revoke')").all() as Record<string, string>[];
  assert.ok(audit.some((r) => r['action'] === 'cap.revoke' && r['target'] === parent.capId));
  assert.ok(audit.some((r) => r['action'] === 'cap.attenuate' && r['target'] === a.json['cap_id']));
  assert.ok(!JSON.stringify(audit).includes(childCap.slice(10, 50)));
});

test('a cap-id caveat the server did not record makes the capability invalid', async () => {
  const other = srv.auth.capabilities.mint({ rights: ['mgmt.read'], ttlSeconds: 3600, kind: 'mint' });
  const claimed = attenuateOffline(deployer.cap, [`cap-id = ${other.capId}`]);
  assert.equal((await srv.request('GET', '/api/auth/whoami', { headers: bearer(claimed) })).status, 401);
});

test('a holder cannot take a derived capability\'s id: a cap-id caveat counts only on the chain the server minted it for', async () => {
  const parent = srv.auth.capabilities.mint({ rights: ['mgmt.read', 'mgmt.deploy'], ttlSeconds: 3600, kind: 'mint' });
  const child = srv.auth.capabilities.attenuate(srv.auth.capabilities.verify(parent.cap), { rights: ['mgmt.read'] });
  const grandchild = srv.auth.capabilities.attenuate(srv.auth.capabilities.verify(child.cap), { ttlSeconds: 600 });
  // The real ones keep their ids, and an offline narrowing of one keeps its lineage.
  for (const [cap, id] of [[parent.cap, parent.capId], [child.cap, child.capId], [grandchild.cap, grandchild.capId]] as const) {
    const r = await srv.request('GET', '/api/auth/whoami', { headers: bearer(cap) });
    assert.equal(r.status, 200);
    assert.equal(r.json['cap_id'], id);
  }
  const narrowed = await srv.request('GET', '/api/auth/whoami', { headers: bearer(attenuateOffline(child.cap, ['rights = mgmt.read'])) });
  assert.equal(narrowed.status, 200);
  assert.match(String(narrowed.json['cap_id']), new RegExp(`^${child.capId}\\.[0-9a-f]{16}$`));
  // The parent's holder appends the child's id: alone, after another narrowing, or with the grandchild's
  // after it. (Appending exactly the caveats the server appended recomputes the child itself, bit for bit:
  // the same capability the parent's holder was handed when it asked for the child.)
  for (const forged of [
    attenuateOffline(parent.cap, [`cap-id = ${child.capId}`]),
    attenuateOffline(parent.cap, ['rights = mgmt.deploy', `cap-id = ${child.capId}`]),
    attenuateOffline(parent.cap, ['rights = mgmt.read', 'targets = sites', `cap-id = ${child.capId}`]),
    attenuateOffline(parent.cap, [`cap-id = ${child.capId}`, `cap-id = ${grandchild.capId}`]),
    attenuateOffline(child.cap, [`cap-id = ${grandchild.capId}`]),
  ]) {
    const r = await srv.request('GET', '/api/auth/whoami', { headers: bearer(forged) });
    assert.equal(r.status, 401, JSON.stringify(r.json));
    assert.equal(code(r), 'unauthenticated');
  }
});

test('anonymous access: on by default (search only), off by configuration', async () => {
  const on = await srv.request('GET', '/api/auth/whoami');
  assert.deepEqual(on.json['rights'], ['search']);
  const withCap = await srv.request('GET', '/api/auth/whoami', { headers: bearer(deployer.cap) });
  assert.deepEqual(withCap.json['rights'], ['search', 'mgmt.read', 'mgmt.deploy'], 'holders keep the anonymous floor');

  const closed = await startAuthServer({ anonymous: false });
  try {
    const me = await closed.request('GET', '/api/auth/whoami');
    assert.deepEqual(me.json['rights'], []);
    const p = closed.auth.policy.resolve({});
    assert.equal(p.can('search'), false);
    assert.throws(() => requirePublic(p), (e: { code?: string }) => e.code === 'unauthenticated', 'openapi.json needs a capability');
    requirePublic(srv.auth.policy.resolve({}));
    const cap = closed.auth.capabilities.mint({ rights: ['search'], kind: 'mint', ttlSeconds: 60 }).cap;
    assert.equal(closed.auth.policy.resolve({ authorization: `Bearer ${cap}` }).can('search'), true);
    assert.equal(RIGHTS.length, 13);
  } finally {
    await closed.close();
  }
});
