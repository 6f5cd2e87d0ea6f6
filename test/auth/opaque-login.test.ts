// OPAQUE registration (by invite) and login against the real HTTPS server, with the real OPAQUE client:
// what the server receives, how failures look, login-state expiry and single use, and the audit trail.
// Argon2id costs ~250 ms per client finish: this file runs seven.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import * as opaque from '@serenity-kit/opaque';
import { startAuthServer, type AuthTestServer } from './support.js';
import { OPAQUE_KEY_STRETCHING } from '../../src/auth/opaque-config.js';
import { RIGHTS } from '../../src/kernel/principal.js';

const ADMIN_PW = 'correct horse battery staple';
const ALICE_PW = 'ålice-pässword-42';

let srv: AuthTestServer;
let adminCap: string;
const clientSecrets: string[] = []; // export and session keys the client derived: must never be sent
let aliceSuccess: { login_id: string; ke3: string } | undefined;

before(async () => {
  await opaque.ready;
  srv = await startAuthServer();
  await srv.auth.accounts.createLocally('admin', ADMIN_PW, RIGHTS, undefined);
  const r = await login('admin', ADMIN_PW);
  assert.equal(r.finish?.status, 200);
  adminCap = String(r.finish!.json['cap']);
});
after(async () => { await srv?.close(); });

async function login(username: string, password: string) {
  const { clientLoginState, startLoginRequest } = opaque.client.startLogin({ password });
  const start = await srv.request('POST', '/api/auth/login/start', { json: { username, ke1: startLoginRequest } });
  assert.equal(start.status, 200, start.text);
  const finished = opaque.client.finishLogin({
    clientLoginState, loginResponse: String(start.json['ke2']), password, keyStretching: OPAQUE_KEY_STRETCHING,
  });
  if (finished === undefined) return { start, finished, finish: undefined };
  clientSecrets.push(finished.exportKey, finished.sessionKey);
  const body = { login_id: String(start.json['login_id']), ke3: finished.finishLoginRequest };
  const finish = await srv.request('POST', '/api/auth/login/finish', { json: body });
  return { start, finished, finish, body };
}

/** What a client without the password can send as KE3: well-formed, 64 random bytes. */
const bogusKe3 = () => randomBytes(64).toString('base64url');

test('register by invite, then log in: the capability carries the invite\'s rights', async () => {
  const anon = await srv.request('POST', '/api/auth/invites', { json: { rights: ['search'] } });
  assert.equal(anon.status, 401);
  assert.match(String(anon.headers['www-authenticate']), /^Bearer /);

  const inv = await srv.request('POST', '/api/auth/invites', {
    json: { rights: ['search', 'mgmt.read'], targets: ['sites'], ttl_s: 600 }, headers: { authorization: `Bearer ${adminCap}` },
  });
  assert.equal(inv.status, 201, inv.text);
  const invite = String(inv.json['invite']);

  const { clientRegistrationState, registrationRequest } = opaque.client.startRegistration({ password: ALICE_PW });
  const rs = await srv.request('POST', '/api/auth/register/start', { json: { username: 'alice', request: registrationRequest, invite } });
  assert.equal(rs.status, 200, rs.text);
  const { registrationRecord, exportKey } = opaque.client.finishRegistration({
    clientRegistrationState, registrationResponse: String(rs.json['response']), password: ALICE_PW, keyStretching: OPAQUE_KEY_STRETCHING,
  });
  clientSecrets.push(exportKey);
  const rf = await srv.request('POST', '/api/auth/register/finish', { json: { username: 'alice', record: registrationRecord, invite } });
  assert.equal(rf.status, 201, rf.text);
  assert.deepEqual(rf.json['rights'], ['search', 'mgmt.read']);

  const again = await srv.request('POST', '/api/auth/register/start', { json: { username: 'bob', request: registrationRequest, invite } });
  assert.equal(again.status, 403, 'an invite is single-use');
  assert.equal((again.json['error'] as { code: string }).code, 'forbidden');

  const r = await login('alice', ALICE_PW);
  assert.equal(r.finish?.status, 200, r.finish?.text);
  aliceSuccess = r.body;
  const body = r.finish!.json;
  assert.equal(body['v'], 1);
  assert.deepEqual(body['rights'], ['search', 'mgmt.read']);
  assert.deepEqual(body['targets'], { 'mgmt.read': ['sites'] });
  assert.equal(typeof body['cap_id'], 'string');
  const ttl = Date.parse(String(body['expires_at'])) - Date.now();
  assert.ok(ttl > 3_500_000 && ttl <= 3_600_000, `login capability lives an hour, got ${ttl} ms`);

  const me = await srv.request('GET', '/api/auth/whoami', { headers: { 'x-service-cap': String(body['cap']) } });
  assert.equal(me.json['account'], 'alice');
  assert.equal(me.json['cap_id'], body['cap_id']);
});

test('the password, and anything derived from it without the server\'s secret, never reaches the server', () => {
  assert.ok(srv.received.length >= 6);
  const forms = (s: string): string[] => {
    const b = Buffer.from(s, 'utf8');
    return [
      s, b.toString('base64'), b.toString('base64url'), b.toString('hex'), encodeURIComponent(s),
      createHash('sha256').update(b).digest('hex'), createHash('sha256').update(b).digest('base64url'),
      createHash('sha512').update(b).digest('hex'), createHash('sha512').update(b).digest('base64url'),
    ];
  };
  const secrets = [...forms(ADMIN_PW), ...forms(ALICE_PW), ...clientSecrets];
  for (const r of srv.received) {
    const seen = `${r.body}\n${JSON.stringify(r.headers)}`;
    for (const s of secrets) assert.ok(!seen.includes(s), `${r.method} ${r.path} carried client-only material`);
    if (r.path.startsWith('/api/auth/login') || r.path.startsWith('/api/auth/register')) {
      // Only OPAQUE protocol messages and identifiers: nothing else the client could leak.
      const keys = Object.keys(JSON.parse(r.body) as object).sort();
      assert.ok([['ke1', 'username'], ['ke3', 'login_id'], ['invite', 'request', 'username'], ['invite', 'record', 'username']]
        .some((k) => k.join() === keys.join()), `${r.path}: ${keys.join()}`);
    }
  }
  const stored = srv.db.prepare('SELECT record FROM accounts WHERE name = ?').get('alice') as { record: string };
  assert.equal(Buffer.from(stored.record, 'base64url').length, 192, 'only the OPAQUE record is stored');
});

test('wrong password, unknown user and replayed KE3 all fail the same way', async () => {
  const wrong = await login('alice', 'not the password');
  assert.equal(wrong.finished, undefined, 'the client itself detects a wrong password');
  const unknown = await login('nobody-here', 'whatever');
  assert.equal(unknown.finished, undefined);
  assert.equal(String(unknown.start.json['ke2']).length, String(wrong.start.json['ke2']).length, 'a fake KE2 has the size of a real one');
  assert.deepEqual(Object.keys(unknown.start.json).sort(), Object.keys(wrong.start.json).sort());

  const finishes = [
    await srv.request('POST', '/api/auth/login/finish', { json: { login_id: wrong.start.json['login_id'], ke3: bogusKe3() } }),
    await srv.request('POST', '/api/auth/login/finish', { json: { login_id: unknown.start.json['login_id'], ke3: bogusKe3() } }),
    await srv.request('POST', '/api/auth/login/finish', { json: aliceSuccess }), // the same login_id again
  ];
  // The recorded KE3 against a fresh login of the same account.
  const { startLoginRequest } = opaque.client.startLogin({ password: ALICE_PW });
  const fresh = await srv.request('POST', '/api/auth/login/start', { json: { username: 'alice', ke1: startLoginRequest } });
  finishes.push(await srv.request('POST', '/api/auth/login/finish', { json: { login_id: fresh.json['login_id'], ke3: aliceSuccess!.ke3 } }));

  for (const f of finishes) {
    assert.equal(f.status, 401);
    assert.deepEqual(f.json, finishes[0]!.json);
    assert.equal(f.headers['www-authenticate'], finishes[0]!.headers['www-authenticate']);
  }
  assert.equal((finishes[0]!.json['error'] as { code: string }).code, 'unauthenticated');
});

test('login state is single-use and expires after 60 s', async () => {
  const { clientLoginState, startLoginRequest } = opaque.client.startLogin({ password: ALICE_PW });
  const start = await srv.request('POST', '/api/auth/login/start', { json: { username: 'alice', ke1: startLoginRequest } });
  const finished = opaque.client.finishLogin({ clientLoginState, loginResponse: String(start.json['ke2']), password: ALICE_PW, keyStretching: OPAQUE_KEY_STRETCHING });
  assert.ok(finished, 'a valid KE3');
  srv.advance(61_000);
  const late = await srv.request('POST', '/api/auth/login/finish', { json: { login_id: start.json['login_id'], ke3: finished.finishLoginRequest } });
  assert.equal(late.status, 401);
});

test('logins (success and failure), invites and registrations are audited without any capability', () => {
  const rows = srv.db.prepare('SELECT * FROM audit_log ORDER BY id').all() as Record<string, string | null>[];
  const logins = rows.filter((r) => r['action'] === 'auth.login');
  assert.ok(logins.some((r) => r['account'] === 'alice' && r['result'] === 'ok' && r['actor']?.startsWith('cap_') && r['address'] === '127.0.0.1'));
  assert.ok(logins.some((r) => r['account'] === 'alice' && r['result'] === 'failed'));
  assert.ok(logins.some((r) => r['account'] === 'nobody-here' && r['result'] === 'failed'));
  assert.ok(rows.some((r) => r['action'] === 'auth.invite.create' && r['actor']?.startsWith('cap_')));
  assert.ok(rows.some((r) => r['action'] === 'auth.register' && r['account'] === 'alice'));
  const all = JSON.stringify(rows);
  assert.ok(!all.includes(adminCap) && !all.includes(adminCap.slice(20, 60)), 'no capability in the audit log');
});
