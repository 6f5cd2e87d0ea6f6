// The rate limit of CONTRACT §1 keys clients by capability id, else by IP address: over real HTTPS with real
// capabilities (minted with `quarry cap mint` on the server's data directory), two capabilities used from
// the same address have separate buckets, and the anonymous bucket of that address is a third one. The
// client is the root capability: a capability its holder narrowed (a new id) draws on its root's bucket, or
// attenuating would multiply the allowance.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { rawRequest } from '../support/client.js';
import { REPO_ROOT, startServer } from '../support/server.js';
import { attenuateOffline } from '../../src/auth/capability.js';

function mint(dataDir: string): string {
  const r = spawnSync(process.execPath, [join(REPO_ROOT, 'bin/quarry.js'), 'cap', 'mint', '--rights', 'search', '--data', dataDir], {
    cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000,
  });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

test('each capability has its own bucket; anonymous callers share their address\'s', async () => {
  const srv = await startServer({ rateLimit: { perSecond: 0.001, burst: 3 } });
  try {
    const [a, b] = [mint(srv.dataDir), mint(srv.dataDir)];
    const get = (cap?: string) => rawRequest(srv, 'GET', '/api/suggest?q=a', undefined, cap ? { headers: { authorization: `Bearer ${cap}` } } : {});
    const burst = async (cap?: string) => {
      const out: number[] = [];
      for (let i = 0; i < 4; i++) out.push((await get(cap)).status);
      return out;
    };
    assert.deepEqual(await burst(a), [200, 200, 200, 429]);
    assert.deepEqual(await burst(b), [200, 200, 200, 429]);
    assert.deepEqual(await burst(), [200, 200, 200, 429]);
    const refused = await get(a);
    assert.equal(refused.status, 429);
    assert.equal(refused.json.error.code, 'rate_limited');
    assert.match(refused.headers['retry-after'] ?? '', /^[1-9][0-9]*$/);
    const narrowed = attenuateOffline(a, [`expires < ${new Date(Date.now() + 3_600_000).toISOString()}`]);
    assert.equal((await get(narrowed)).status, 429, 'a narrowed capability shares its root\'s bucket');
  } finally {
    assert.equal((await srv.stop()).code, 0);
  }
});
