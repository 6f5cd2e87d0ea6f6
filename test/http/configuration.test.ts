// The configuration file of `quarry serve --config`: server limits and the anonymous-access switch take
// effect (with anonymous access off, even the OpenAPI description needs a capability); a malformed file or a lone --cert stops start-up with a message instead of serving wrongly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '../support/client.js';
import { REPO_ROOT, startServer } from '../support/server.js';

test('server.limits and auth.anonymous from the configuration file apply', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-config-'));
  const config = join(dir, 'quarry.json');
  writeFileSync(config, JSON.stringify({ server: { limits: { bodyBytes: 100 } }, auth: { anonymous: false } }));
  const srv = await startServer({ args: ['--config', config] });
  // No OpenAPI validation: the description itself is closed to this anonymous client.
  const api = connect(srv, { validate: false });
  try {
    const r = await api.get('/api/search?q=granite');
    assert.equal(r.status, 401, r.text);
    assert.equal(r.json.error.code, 'unauthenticated');
    const big = await api.post('/api/auth/login/start', { username: 'x'.repeat(200) });
    assert.equal(big.status, 413, big.text);
    assert.equal(big.json.error.code, 'payload_too_large');
    const description = await api.get('/api/openapi.json');
    assert.equal(description.status, 401, 'with anonymous access off, the description needs a capability too (CONTRACT §4)');
    assert.equal(description.json.error.code, 'unauthenticated');
  } finally {
    api.close();
    await srv.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('start-up refuses a malformed configuration file (exit 1), a lone --cert or a bad --port (usage, exit 2)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-config-bad-'));
  try {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"server": ');
    const run = (...args: string[]) => spawnSync(process.execPath, [join(REPO_ROOT, 'bin/quarry.js'), 'serve', '--data', join(dir, 'data'), ...args], {
      cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000,
    });
    for (const [args, message, code] of [
      [['--config', bad, '--port', '0'], /^quarry serve: .*configuration file/, 1],
      [['--cert', join(dir, 'x.pem'), '--port', '0'], /^quarry serve: Give both --cert and --key/, 2],
      [['--port', 'eighty'], /^quarry serve: --port must be a whole number/, 2],
      [['--port', '70000'], /^quarry serve: --port must be at most 65535/, 2],
      [['--bogus'], /^quarry serve: Unknown option '--bogus'/, 2],
    ] as const) {
      const r = run(...args);
      assert.equal(r.status, code, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, message);
      if (code === 1) assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      else assert.match(r.stderr, /usage: quarry serve/);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
