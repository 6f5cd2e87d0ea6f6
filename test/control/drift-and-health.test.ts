// The observed truth: a live file edited behind the control plane's back, a live pointer moved by hand
// and a killed service are seen as drift and repaired by reconcile; a promotion whose health check
// fails is rolled back automatically, and that failed version is never selected again.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, writeFileSync, symlinkSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { fixture, principal, settle, type Fixture } from './support.js';

let f: Fixture;
const p = principal();
before(async () => { f = await fixture({ supervisor: { restartInitialMs: 50 } }); });
after(async () => { await f.close(); });

async function ship(target: string): Promise<string> {
  const b = await settle(f.cp, await f.svc.build(p, { target }));
  await settle(f.cp, await f.svc.stage(p, { target, version: b.version }));
  const d = await settle(f.cp, await f.svc.deploy(p, { target, version: b.version }));
  assert.equal(d.state, 'succeeded', `${JSON.stringify(d.error)}\n${d.log}`);
  return b.version!;
}

async function verdict(target: string): Promise<{ verdict: string; reasons: string[]; sync: string; health: string }> {
  const [s] = await f.cp.status([target]);
  return s!;
}

test('a live file edited behind our back → drifted → reconcile → in_sync with the original bytes', async () => {
  const T = 'writer';
  await ship(T);
  const file = join(f.cp.releases.livePath(T), 'index.html');
  const original = readFileSync(file, 'utf8');
  chmodSync(file, 0o644);
  writeFileSync(file, '<p>defaced</p>');
  const s = await verdict(T);
  assert.equal(s.verdict, 'drifted');
  assert.equal(s.sync, 'out_of_sync');
  assert.deepEqual(s.reasons, ['live_files_modified']);
  const mark = f.events.length;
  const r = await settle(f.cp, await f.svc.reconcile(p, { target: T }));
  assert.equal(r.state, 'succeeded');
  assert.match(r.log, /restored 1 file/);
  assert.equal(readFileSync(file, 'utf8'), original);
  assert.equal((await verdict(T)).verdict, 'in_sync');
  assert.ok(f.events.slice(mark).some((e) => e.kind === 'target.drifted' && e.target === T));
  // A second reconcile has nothing to do: steps are idempotent.
  const again = await settle(f.cp, await f.svc.reconcile(p, { target: T }));
  assert.match(again.log, /nothing to do/);
});

test('an extra file and a moved live pointer are drift too', async () => {
  const T = 'office';
  const v1 = await ship(T);
  f.editInput(T, 'content.md', (t) => `${t}\nmore\n`);
  const v2 = await ship(T);
  // Someone points live back at v1 by hand.
  const tmp = join(f.dataDir, 'control', 'live', '.hand');
  symlinkSync(join('..', 'releases', T, v1), tmp);
  renameSync(tmp, f.cp.releases.livePath(T));
  let s = await verdict(T);
  assert.equal(s.verdict, 'drifted');
  assert.deepEqual(s.reasons, ['live_version_mismatch']);
  writeFileSync(join(f.cp.releases.releaseDir(T, v2), 'extra.txt'), 'x');
  await settle(f.cp, await f.svc.reconcile(p, { target: T }));
  s = await verdict(T);
  assert.equal(s.verdict, 'in_sync', s.reasons.join());
  assert.equal(f.cp.releases.readLive(T), v2);
});

test('a killed service is restarted by the supervisor; a stopped one is drift that reconcile repairs', async () => {
  const T = 'mpserve';
  const v = await ship(T);
  const before = f.cp.supervisor.current(T)!;
  const restarted = new Promise<void>((resolve) => {
    const off = f.bus.subscribe((e) => { if (e.kind === 'target.restarted' && e.target === T) { off(); resolve(); } });
  });
  process.kill(before.pid, 'SIGKILL');
  await restarted;
  for (let i = 0; i < 600 && (await verdict(T)).verdict !== 'in_sync'; i++) await new Promise((r) => setTimeout(r, 50));
  assert.equal((await verdict(T)).verdict, 'in_sync');
  await f.cp.supervisor.stopTarget(T);
  const s = await verdict(T);
  assert.equal(s.verdict, 'drifted');
  assert.deepEqual(s.reasons, ['process_missing']);
  await settle(f.cp, await f.svc.reconcile(p, { target: T }));
  assert.equal((await verdict(T)).verdict, 'in_sync');
  assert.equal(f.cp.supervisor.current(T)?.version, v);
});

test('a failing health check rolls the promotion back automatically; the failed version is never re-selected', async () => {
  const T = 'signaling';
  const good = await ship(T);
  const goodPid = f.cp.supervisor.current(T)!.pid;
  f.editInput(T, 'config.json', (t) => t.replace('"healthy": true', '"healthy": false'));
  // A short deadline keeps the test quick; the recipe is the user's to tune.
  f.editInput(T, 'recipe.json', (t) => t.replace('"deadline_ms": 15000', '"deadline_ms": 1500'));
  const b = await settle(f.cp, await f.svc.build(p, { target: T }));
  await settle(f.cp, await f.svc.stage(p, { target: T, version: b.version }));
  const mark = f.events.length;
  const d = await settle(f.cp, await f.svc.deploy(p, { target: T, version: b.version }));
  assert.equal(d.state, 'failed');
  assert.equal(d.error?.code, 'health_check_failed');
  const kinds = f.events.slice(mark).filter((e) => e.target === T).map((e) => e.kind);
  assert.deepEqual(kinds, ['deploy.started', 'deploy.verifying', 'deploy.failed', 'deploy.rolled_back']);
  const rolled = f.events.slice(mark).find((e) => e.kind === 'deploy.rolled_back')!;
  assert.equal(rolled.data.to, good);
  assert.equal(f.cp.store.getVersion(T, b.version!)?.state, 'failed');
  assert.equal(f.cp.releases.readLive(T), good);
  assert.equal(f.cp.supervisor.current(T)?.pid, goodPid, 'the old process kept serving');
  const s = await verdict(T);
  assert.equal(s.verdict, 'in_sync');
  assert.deepEqual(s.reasons, ['last_deploy_failed_rolled_back']);
  // Neither reconcile nor rollback "previous" picks the failed version.
  await settle(f.cp, await f.svc.reconcile(p, { target: T }));
  assert.equal(f.cp.releases.readLive(T), good);
  await assert.rejects(f.svc.rollback(p, { target: T, to: b.version }), { code: 'bad_request' });
  assert.equal((await f.svc.deploy(p, { target: T, dry_run: true }).catch((e) => e)).code, 'bad_request', 'no staged version left to pick by default');
});

test('a rollback moves the desired version, so reconcile keeps it', async () => {
  const T = 'wikigw';
  const v1 = await ship(T);
  f.editInput(T, 'config.json', (t) => t.replace('"message": "', '"message": "v2 '));
  const v2 = await ship(T);
  assert.notEqual(v1, v2);
  const r = await settle(f.cp, await f.svc.rollback(p, { target: T, reason: 'bad release' }));
  assert.equal(r.state, 'succeeded');
  assert.equal(r.version, v1);
  await settle(f.cp, await f.svc.reconcile(p, { target: T }));
  const s = await verdict(T);
  assert.equal(s.verdict, 'in_sync');
  assert.equal(f.cp.releases.readLive(T), v1);
  assert.equal(f.cp.supervisor.current(T)?.version, v1);
  const audit = f.db.prepare(`SELECT from_ref, to_ref, reason, result FROM audit_log WHERE action = 'control.rollback' AND target = ?`).get(T);
  assert.deepEqual(audit, { from_ref: v2, to_ref: v1, reason: 'bad release', result: 'ok' });
});

test('restart replaces the process of the live version', async () => {
  const T = 'toolsapi';
  const v = await ship(T);
  const pid = f.cp.supervisor.current(T)!.pid;
  const r = await settle(f.cp, await f.svc.restart(p, { target: T }));
  assert.equal(r.state, 'succeeded');
  assert.notEqual(f.cp.supervisor.current(T)!.pid, pid);
  assert.equal(f.cp.supervisor.current(T)!.version, v);
  assert.ok(f.events.some((e) => e.kind === 'target.restarted' && e.target === T && e.data.cause === 'request'));
});
