// The control plane over HTTPS on a real `quarry serve`: every response is validated against the served
// OpenAPI document. Inventory, 401/404 ordering, build → stage → deploy → verdict, a tarball upload, a
// hostile upload, Idempotency-Key replay, 409 on a locked target, dry runs and the ops endpoint.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type TestClient } from '../support/client.js';
import type { TestServer } from '../support/server.js';
import { mintCap, prepare, startControlServer } from './server-support.js';
import { rawTar, sha256 } from './tarball.js';

let dir: string;
let dataDir: string;
let repo: string;
let capHeader: string;
let srv: TestServer;
let c: TestClient;
let anon: TestClient;
let scoped: TestClient;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'quarry-control-http-'));
  const s = prepare(dir, { uploadLimitBytes: 8 * 1024 });
  dataDir = s.dataDir;
  repo = s.repo;
  const cap = mintCap(s.dataDir);
  const scopedCap = mintCap(s.dataDir, 'mgmt.read,mgmt.build', 'sites');
  srv = await startControlServer(s);
  capHeader = `Bearer ${cap}`;
  c = connect(srv, { headers: { authorization: capHeader } });
  scoped = connect(srv, { headers: { authorization: `Bearer ${scopedCap}` } });
  anon = connect(srv);
});
after(async () => {
  c?.close(); anon?.close(); scoped?.close();
  await srv?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function until(opId: string): Promise<Record<string, any>> {
  for (;;) {
    const r = await c.get(`/api/ops/${opId}`);
    assert.equal(r.status, 200);
    if (r.json.state === 'succeeded' || r.json.state === 'failed') return r.json;
    await new Promise((res) => setTimeout(res, 50));
  }
}

test('inventory: 41 targets from the allowlist, with source, revision and lifecycle', async () => {
  const r = await c.get('/api/inventory');
  assert.equal(r.status, 200);
  assert.equal(r.json.v, 1);
  assert.equal(r.json.count, 41);
  assert.equal(r.json.targets.length, 41);
  assert.equal(r.json.source, 'deploy/allowlist.txt');
  assert.match(r.json.revision, /^sha256:[0-9a-f]{64}$/);
  assert.deepEqual(r.json.lifecycle, {
    build: 'POST /api/build', stage: 'POST /api/upload', promote: 'POST /api/deploy',
    version_verdict: 'GET /api/deploy_status', rollback: 'POST /api/rollback',
  });
  assert.equal((await anon.get('/api/inventory')).status, 401);
});

test('unknown target is 404 unknown_target, even before authentication', async () => {
  for (const [client, method, path, body] of [
    [c, 'POST', '/api/deploy', { target: 'nope' }], [anon, 'POST', '/api/build', { target: 'nope' }],
    [c, 'GET', '/api/deploy_status?target=nope', undefined],
  ] as const) {
    const r = await client.request(method, path, body);
    assert.equal(r.status, 404, path);
    assert.equal(r.json.error.code, 'unknown_target');
  }
  const r = await anon.post('/api/build', { target: 'sites' });
  assert.equal(r.status, 401);
  const f = await scoped.post('/api/build', { target: 'relate' });
  assert.equal(f.status, 403);
  assert.equal(f.json.error.code, 'forbidden');
});

test('build → stage → deploy → in_sync over HTTP, with Idempotency-Key replay and 409', async () => {
  const key = { headers: { 'idempotency-key': 'build-gengw-1' } };
  const b = await c.post('/api/build', { target: 'gengw' }, key);
  assert.equal(b.status, 202);
  assert.deepEqual(Object.keys(b.json).sort(), ['kind', 'op_id', 'state', 'target', 'v']);
  assert.equal(b.headers.location, `/api/ops/${b.json.op_id}`);
  const conflict = await c.post('/api/build', { target: 'gengw' });
  assert.equal(conflict.status, 409);
  assert.equal(conflict.json.error.code, 'conflict');
  const replay = await c.post('/api/build', { target: 'gengw' }, key);
  assert.equal(replay.status, 202);
  assert.equal(replay.json.op_id, b.json.op_id);
  const built = await until(b.json.op_id);
  assert.equal(built.state, 'succeeded', built.log);
  assert.match(built.digest, /^sha256:/);

  const s = await c.post('/api/upload', { target: 'gengw', version: built.version });
  assert.equal(s.status, 202);
  assert.equal((await until(s.json.op_id)).state, 'succeeded');

  const plan = await c.post('/api/deploy', { target: 'gengw', dry_run: true });
  assert.equal(plan.status, 200);
  assert.equal(plan.json.plan.to, built.version);
  const d = await c.post('/api/deploy', { target: 'gengw', reason: 'http test', expected_generation: 0 });
  assert.equal(d.status, 202);
  const done = await until(d.json.op_id);
  assert.equal(done.state, 'succeeded', done.log);
  assert.equal(done.version, built.version);

  const st = await c.get('/api/deploy_status?target=gengw');
  assert.equal(st.status, 200);
  const [t] = st.json.targets;
  assert.equal(t.verdict, 'in_sync');
  assert.equal(t.live.version, built.version);
  assert.equal(t.generation, 1);
  const stale = await c.post('/api/deploy', { target: 'gengw', expected_generation: 0 });
  assert.equal(stale.status, 409);

  const all = await c.get('/api/deploy_status');
  assert.equal(all.json.targets.length, 41);
  const mine = await scoped.get('/api/deploy_status');
  assert.deepEqual(mine.json.targets.map((x: { target: string }) => x.target), ['sites']);
});

test('an artifact uploaded as the body is staged; a hostile one is 400 with nothing written', async () => {
  const tar = rawTar([{ path: 'index.html', body: '<p>from upload</p>' }]);
  const bad = rawTar([{ path: '../escape.html', body: 'x' }]);
  const h = { headers: { 'content-type': 'application/x-tar' } };
  const r1 = await c.post(`/api/upload?target=docportal&digest=${sha256(bad)}`, bad, h);
  assert.equal(r1.status, 400);
  assert.equal(r1.json.error.code, 'bad_request');
  const r2 = await c.post(`/api/upload?target=docportal&digest=${sha256(Buffer.from('other'))}`, tar, h);
  assert.equal(r2.status, 400);
  assert.equal(r2.json.error.param, 'digest');
  const ok = await c.post(`/api/upload?target=docportal&digest=${sha256(tar)}`, tar, h);
  assert.equal(ok.status, 202, ok.text);
  assert.equal((await until(ok.json.op_id)).state, 'succeeded');
  const d = await c.post('/api/deploy', { target: 'docportal' });
  assert.equal((await until(d.json.op_id)).state, 'succeeded');
  const st = await c.get('/api/deploy_status?target=docportal');
  assert.equal(st.json.targets[0].verdict, 'in_sync');
  assert.equal(st.json.targets[0].live.digest, sha256(tar));
});

test('rollback with nothing to roll back to is 400; reconcile and restart answer 202', async () => {
  const r = await c.post('/api/rollback', { target: 'gengw' });
  assert.equal(r.status, 400);
  const rec = await c.post('/api/reconcile', { target: 'gengw' });
  assert.equal(rec.status, 202);
  assert.equal((await until(rec.json.op_id)).state, 'succeeded');
  const rs = await c.post('/api/restart', { target: 'gengw' });
  assert.equal(rs.status, 202);
  assert.equal((await until(rs.json.op_id)).state, 'succeeded');
  const nf = await c.get('/api/ops/op_doesnotexist');
  assert.equal(nf.status, 404);
});

test('an upload over the limit is 413 payload_too_large and leaves no file', async () => {
  // Small enough to be sent whole before the server answers (a server may stop reading at the limit).
  const big = rawTar([{ path: 'big.bin', body: Buffer.alloc(12 * 1024, 7) }]);
  const own = connect(srv, { headers: { authorization: capHeader } });
  // The server answers 413 before it has read the whole body; whether the client gets to read that
  // answer or sees the stream reset first is the transport's race (reported to the HTTP face). What the
  // control plane owns is checked either way: nothing is written.
  const r = await own.post(`/api/upload?target=survey&digest=${sha256(big)}`, big, { headers: { 'content-type': 'application/x-tar' } })
    .catch((err: NodeJS.ErrnoException) => { assert.match(String(err.code), /ECONNRESET|ERR_HTTP2_STREAM_ERROR|EPIPE/); return undefined; });
  own.close();
  if (r) {
    assert.equal(r.status, 413);
    assert.equal(r.json.error.code, 'payload_too_large');
  }
  const { readdirSync } = await import('node:fs');
  // After a reset the server's handler may still be unwinding: its temp file must be gone once it has.
  // Waited for by condition (a loaded machine can take seconds); the deadline is only a hang guard.
  const deadline = Date.now() + 120_000;
  while (readdirSync(join(dataDir, 'control', 'uploads')).length > 0 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 25));
  assert.deepEqual(readdirSync(join(dataDir, 'control', 'uploads')), []);
  assert.equal((await c.get('/api/deploy_status?target=survey')).json.targets[0].verdict, 'missing');
});

test('while a deploy runs, more deploys of the same version and a rollback are 409, not 400', async () => {
  const T = 'vaultgw';
  // A version whose health check fails for 5 s: the deploy is in progress all that time.
  const edit = (file: string, fn: (t: string) => string) => { const p = join(repo, 'deploy', 'targets', T, file); writeFileSync(p, fn(readFileSync(p, 'utf8'))); };
  edit('config.json', (t) => t.replace('"healthy": true', '"healthy": false'));
  edit('recipe.json', (t) => t.replace('"deadline_ms": 15000', '"deadline_ms": 5000'));
  const built = await until((await c.post('/api/build', { target: T })).json.op_id);
  assert.equal(built.state, 'succeeded', built.log);
  assert.equal((await until((await c.post('/api/upload', { target: T, version: built.version })).json.op_id)).state, 'succeeded');
  const answers = await Promise.all(Array.from({ length: 6 }, () => c.post('/api/deploy', { target: T, version: built.version })));
  assert.deepEqual(answers.map((r) => r.status).sort(), [202, 409, 409, 409, 409, 409]);
  for (const r of answers.filter((x) => x.status === 409)) assert.equal(r.json.error.code, 'conflict');
  const rollback = await c.post('/api/rollback', { target: T });
  assert.equal(rollback.status, 409, rollback.text);
  const done = await until(answers.find((r) => r.status === 202)!.json.op_id);
  assert.equal(done.state, 'failed');
  // Free again: now the rules answer (nothing to roll back to).
  assert.equal((await c.post('/api/rollback', { target: T })).status, 400);
});

test('GET /api/ops/{op_id} does not tell who may not read it whether the id exists', async () => {
  const b = await c.post('/api/build', { target: 'sites' });
  const other = await c.post('/api/build', { target: 'relate' });
  await until(b.json.op_id);
  await until(other.json.op_id);
  const noRead = connect(srv, { headers: { authorization: `Bearer ${mintCap(dataDir, 'mgmt.build')}` } });
  try {
    for (const id of [b.json.op_id, 'op_doesnotexist']) {
      const a = await anon.get(`/api/ops/${id}`);
      assert.equal(a.status, 401, id);
      assert.equal(a.json.error.code, 'unauthenticated');
      assert.equal((await noRead.get(`/api/ops/${id}`)).status, 403, id);
    }
    // Read access to `sites` only: an op of `relate` is as unknown as an id that does not exist.
    const hidden = await scoped.get(`/api/ops/${other.json.op_id}`);
    const unknown = await scoped.get('/api/ops/op_doesnotexist');
    assert.equal(hidden.status, 404);
    assert.equal(unknown.status, 404);
    assert.equal(hidden.json.error.code, unknown.json.error.code);
    assert.equal((await scoped.get(`/api/ops/${b.json.op_id}`)).status, 200);
  } finally { noRead.close(); }
});
