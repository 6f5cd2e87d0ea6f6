// The capability wire format and the secrets behind it: our binary v2 encoder writes exactly what the
// `macaroon` library writes (where the library's own writer still works), the caveats read as
// documented, and the secrets are made once, with mode 0600, and survive a reopen.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, readFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import macaroon from 'macaroon';
import { openDb } from '../../src/store/db.js';
import { CapabilityAuthority, decodeCapability, encodeCapability } from '../../src/auth/capability.js';
import { loadCapabilityRootKey, CAPABILITY_ROOT_KEY_FILE, OPAQUE_SETUP_FILE } from '../../src/auth/secrets.js';
import { createAuth } from '../../src/auth/index.js';

test('the encoder matches the library\'s binary v2 writer', () => {
  const m = macaroon.newMacaroon({ identifier: 'v1:cap_0123456789abcdef01234567', location: 'quarry', rootKey: new Uint8Array(32).fill(1) });
  for (const c of ['rights = search', 'expires < 2026-11-22T05:00:00.000Z', 'targets = sites']) {
    m.addFirstPartyCaveat(c);
    assert.equal(encodeCapability(m), Buffer.from(m.exportBinary()).toString('base64url'));
  }
  const back = decodeCapability(encodeCapability(m));
  assert.deepEqual(back.caveats.map((c) => Buffer.from(c.identifier).toString()), ['rights = search', 'expires < 2026-11-22T05:00:00.000Z', 'targets = sites']);
});

test('a minted capability carries its grant as documented caveats and verifies', () => {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-capfmt-'));
  const db = openDb(join(dir, 'state.sqlite'));
  try {
    const now = new Date('2026-11-22T05:00:00Z');
    const caps = new CapabilityAuthority({ db, rootKey: loadCapabilityRootKey(dir), now: () => now });
    const minted = caps.mint({ rights: ['mgmt.deploy', 'search'], targets: ['sites', 'docportal'], ttlSeconds: 60, kind: 'mint' });
    const m = decodeCapability(minted.cap);
    assert.equal(Buffer.from(m.identifier).toString(), `v1:${minted.capId}`);
    assert.deepEqual(m.caveats.map((c) => Buffer.from(c.identifier).toString()), [
      'rights = mgmt.deploy,search', 'targets = docportal,sites', 'expires < 2026-11-22T05:01:00.000Z',
    ]);
    const v = caps.verify(minted.cap);
    assert.equal(v.capId, minted.capId);
    assert.deepEqual([...v.grant.targets.get('mgmt.deploy')!].sort(), ['docportal', 'sites']);
    const row = db.prepare('SELECT * FROM capabilities WHERE id = ?').get(minted.capId) as Record<string, string>;
    assert.ok(!JSON.stringify(row).includes(minted.cap.slice(-43)), 'the signature is not stored, only its hash');
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('secrets are created once with mode 0600 and reused', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-secrets-'));
  const db = openDb(join(dir, 'state.sqlite'));
  try {
    const auth = createAuth({ db, dataDir: dir });
    const key = loadCapabilityRootKey(dir);
    assert.deepEqual(loadCapabilityRootKey(dir), key);
    // The OPAQUE setup is made on first use (here: a login start for an unknown name).
    const { client, ready } = await import('@serenity-kit/opaque');
    await ready;
    await auth.accounts.loginStart({ username: 'nobody', ke1: client.startLogin({ password: 'p' }).startLoginRequest }, { address: '::1' });
    for (const f of [CAPABILITY_ROOT_KEY_FILE, OPAQUE_SETUP_FILE]) {
      assert.equal(statSync(join(dir, f)).mode & 0o777, 0o600, f);
    }
    const setup = readFileSync(join(dir, OPAQUE_SETUP_FILE), 'utf8');
    chmodSync(join(dir, CAPABILITY_ROOT_KEY_FILE), 0o644);
    loadCapabilityRootKey(dir);
    assert.equal(statSync(join(dir, CAPABILITY_ROOT_KEY_FILE)).mode & 0o777, 0o600, 'a widened mode is tightened');
    const again = createAuth({ db, dataDir: dir });
    await again.accounts.loginStart({ username: 'nobody', ke1: client.startLogin({ password: 'p' }).startLoginRequest }, { address: '::1' });
    assert.equal(readFileSync(join(dir, OPAQUE_SETUP_FILE), 'utf8'), setup);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
