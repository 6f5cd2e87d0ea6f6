// Login throttling against the real HTTPS server: per account name (known and unknown alike) and per
// address, with growing delays answered as 429 + Retry-After, and an abandoned login counted as a
// failure. Only `login/start` is exercised (no Argon2id cost); the clock is the server's, moved by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as opaque from '@serenity-kit/opaque';
import { startAuthServer, type AuthTestServer } from './support.js';
import { LoginThrottle } from '../../src/auth/throttle.js';
import { RIGHTS } from '../../src/kernel/principal.js';

async function start(srv: AuthTestServer, username: string) {
  const { startLoginRequest } = opaque.client.startLogin({ password: 'irrelevant' });
  return srv.request('POST', '/api/auth/login/start', { json: { username, ke1: startLoginRequest } });
}

test('abandoned logins lock an account name out with growing delays, for unknown names exactly as for real ones', async () => {
  await opaque.ready;
  const srv = await startAuthServer({ throttle: { accountFreeFailures: 2, addressFreeFailures: 100, baseDelayMs: 10_000 } });
  try {
    await srv.auth.accounts.createLocally('carol', 'carol-password', RIGHTS, undefined);
    const seen: Record<string, number[]> = {};
    for (const name of ['carol', 'nobody']) {
      assert.equal((await start(srv, name)).status, 200);
      assert.equal((await start(srv, name)).status, 200);
      assert.equal((await start(srv, name)).status, 200, 'the third start is allowed; its failure starts the delay');
      const locked = await start(srv, name);
      assert.equal(locked.status, 429);
      assert.equal((locked.json['error'] as { code: string }).code, 'rate_limited');
      const first = Number(locked.headers['retry-after']);
      srv.advance(10_001);
      assert.equal((await start(srv, name)).status, 200, 'allowed again after the delay');
      const second = Number((await start(srv, name)).headers['retry-after']);
      seen[name] = [first, second];
      assert.ok(second > first, `delays grow: ${first} then ${second}`);
      srv.advance(3_600_000); // forget this name before the next one
    }
    assert.deepEqual(seen['carol'], seen['nobody'], 'an unknown name is throttled like a real one');
    assert.ok(srv.auth.accounts.pendingLogins > 0);
    srv.auth.accounts.sweep();
    const abandoned = srv.db.prepare("SELECT count(*) AS n FROM audit_log WHERE action = 'auth.login' AND reason = 'abandoned'").get() as { n: number };
    assert.ok(abandoned.n >= 6, 'abandoned logins are audited as failures');
  } finally {
    await srv.close();
  }
});

test('many names from one address lock the address out', async () => {
  await opaque.ready;
  const srv = await startAuthServer({ throttle: { accountFreeFailures: 100, addressFreeFailures: 4, baseDelayMs: 5_000 } });
  try {
    for (let i = 0; i < 5; i++) assert.equal((await start(srv, `user${i}`)).status, 200);
    const r = await start(srv, 'fresh-name');
    assert.equal(r.status, 429);
    assert.ok(Number(r.headers['retry-after']) >= 1);
  } finally {
    await srv.close();
  }
});

test('a valid finish takes back its own failure and clears the account', () => {
  let now = 0;
  const t = new LoginThrottle({ accountFreeFailures: 1, addressFreeFailures: 1, baseDelayMs: 1000, now: () => new Date(now) });
  t.fail('dave', '10.0.0.1');
  t.succeed('dave', '10.0.0.1');
  t.fail('dave', '10.0.0.1');
  t.check('dave', '10.0.0.1'); // one failure outstanding: within the allowance
  t.fail('dave', '10.0.0.1');
  assert.throws(() => t.check('dave', '10.0.0.1'), (e: { code?: string; retryAfterSeconds?: number }) => e.code === 'rate_limited' && e.retryAfterSeconds === 1);
  assert.throws(() => t.check('erin', '10.0.0.1'), /retry after/, 'the address is locked too');
  t.check('erin', '10.0.0.2');
  now += 1000;
  t.check('dave', '10.0.0.1');
});
