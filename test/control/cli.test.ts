// The operator's commands against a real server: quarry build → stage → deploy → status → rollback,
// and an artifact upload with `stage --artifact`, each waiting for its operation and exiting 0/1.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT, type TestServer } from '../support/server.js';
import { mintCap, prepare, startControlServer, type ControlServerSetup } from './server-support.js';
import { rawTar } from './tarball.js';

let dir: string;
let s: ControlServerSetup;
let srv: TestServer;
let cap: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'quarry-control-cli-'));
  s = prepare(dir);
  cap = mintCap(s.dataDir);
  srv = await startControlServer(s);
});
after(async () => { await srv?.stop(); rmSync(dir, { recursive: true, force: true }); });

function quarry(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'bin/quarry.js'), ...args, '--url', srv.url, '--data', s.dataDir], {
      cwd: REPO_ROOT, env: { ...process.env, QUARRY_CAP: cap }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => { stdout += c; });
    child.stderr.on('data', (c) => { stderr += c; });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('build, stage, deploy, status and rollback from the command line', async () => {
  const b = await quarry(['build', 'studio', '--json']);
  assert.equal(b.code, 0, b.stderr);
  const built = JSON.parse(b.stdout.trim().split('\n').pop()!);
  assert.equal(built.state, 'succeeded');
  const st = await quarry(['stage', 'studio', '--version', built.version]);
  assert.equal(st.code, 0, st.stderr);
  assert.match(st.stdout, /succeeded/);
  const plan = await quarry(['deploy', 'studio', '--dry-run']);
  assert.equal(plan.code, 0, plan.stderr);
  assert.match(plan.stdout, /switch live pointer/);
  const d = await quarry(['deploy', 'studio', '--reason', 'from the CLI']);
  assert.equal(d.code, 0, d.stderr);
  assert.match(d.stdout, new RegExp(`succeeded: studio ${built.version}`));
  const status = await quarry(['status', 'studio']);
  assert.equal(status.code, 0, status.stdout + status.stderr);
  assert.match(status.stdout, /studio\s+in_sync/);
  const rb = await quarry(['rollback', 'studio']);
  assert.equal(rb.code, 1, 'nothing to roll back to is a failure');
  assert.match(rb.stderr, /no previous version/);
  const all = await quarry(['status']);
  assert.equal(all.code, 1, 'not every target is in sync');
  const unknown = await quarry(['deploy', 'nope']);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /unknown_target/);
});

test('stage --artifact uploads a tarball with its digest', async () => {
  const file = join(dir, 'site.tar');
  writeFileSync(file, rawTar([{ path: 'index.html', body: '<p>cli upload</p>' }]));
  const st = await quarry(['stage', 'email', '--artifact', file]);
  assert.equal(st.code, 0, st.stderr);
  const d = await quarry(['deploy', 'email']);
  assert.equal(d.code, 0, d.stderr);
  const r = await quarry(['restart', 'email']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /static target/);
});
