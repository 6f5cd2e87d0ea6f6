// The operator's commands against a real `quarry serve` process over one data directory: the first admin
// from the command line (password on stdin, never in argv), `quarry login` with a pinned certificate
// fingerprint, `cap mint` for scripts, invites, listing, and disabling an account.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import https from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, REPO_ROOT, type TestServer } from '../support/server.js';

function quarry(args: string[], stdin = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'bin/quarry.js'), ...args], { cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

function whoami(srv: TestServer, cap: string): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    https.get(new URL('/api/auth/whoami', srv.url), { ca: srv.ca, headers: { authorization: `Bearer ${cap}` } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => { text += c.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as Record<string, unknown> }));
    }).on('error', reject);
  });
}

const PASSWORD = 'operator says: hunter2 hunter2';
let dataDir: string;
let srv: TestServer;

before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'quarry-cli-'));
  const add = await quarry(['user', 'add', 'root', '--admin', '--password-stdin', '--data', dataDir], `${PASSWORD}\n`);
  assert.equal(add.code, 0, add.stderr);
  srv = await startServer({ dataDir, waitFor: 'listening' });
});
after(async () => {
  await srv?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('quarry login with a pinned fingerprint prints a working capability; a wrong pin or password is refused', async () => {
  const r = await quarry(['login', 'root', '--url', srv.url, '--fingerprint', srv.fingerprint256, '--password-stdin'], `${PASSWORD}\n`);
  assert.equal(r.code, 0, r.stderr);
  const cap = r.stdout.trim();
  assert.match(cap, /^[A-Za-z0-9_-]{100,}$/);
  assert.ok(!r.stderr.includes(cap), 'the capability goes to stdout only');
  const me = await whoami(srv, cap);
  assert.equal(me.status, 200);
  assert.equal(me.json['account'], 'root');
  assert.ok((me.json['rights'] as string[]).includes('auth.admin'));

  const bad = await quarry(['login', 'root', '--url', srv.url, '--fingerprint', 'AB'.repeat(32), '--password-stdin'], `${PASSWORD}\n`);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /fingerprint/);
  const wrong = await quarry(['login', 'root', '--url', srv.url, '--insecure', '--password-stdin'], 'not the password\n');
  assert.equal(wrong.code, 1);
  assert.match(wrong.stderr, /login failed/);
});

test('cap mint, invite create, user list and user disable work on the data directory of a running server', async () => {
  const minted = await quarry(['cap', 'mint', '--rights', 'mgmt.read', '--targets', 'sites', '--ttl', '1h', '--data', dataDir]);
  assert.equal(minted.code, 0, minted.stderr);
  const me = await whoami(srv, minted.stdout.trim());
  assert.equal(me.status, 200);
  assert.deepEqual(me.json['targets'], { 'mgmt.read': ['sites'] });

  const inv = await quarry(['invite', 'create', '--rights', 'search', '--ttl', '2h', '--data', dataDir]);
  assert.equal(inv.code, 0, inv.stderr);
  assert.match(inv.stdout.trim(), /^[A-Za-z0-9_-]{32}$/);

  const login = await quarry(['login', 'root', '--url', srv.url, '--insecure', '--password-stdin'], `${PASSWORD}\n`);
  const cap = login.stdout.trim();
  const list = await quarry(['user', 'list', '--json', '--data', dataDir]);
  assert.deepEqual((JSON.parse(list.stdout) as { name: string; disabled: boolean }[]).map((a) => [a.name, a.disabled]), [['root', false]]);
  const disable = await quarry(['user', 'disable', 'root', '--data', dataDir]);
  assert.equal(disable.code, 0, disable.stderr);
  assert.equal((await whoami(srv, cap)).status, 401, 'a disabled account\'s capabilities stop working');

  const noPassword = await quarry(['user', 'add', 'eve', '--data', dataDir]); // stdin is a pipe, not a terminal
  assert.equal(noPassword.code, 2);
  assert.match(noPassword.stderr, /--password-stdin/);
});
