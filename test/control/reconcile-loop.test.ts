// The reconcile loop on its own: with a resync interval, drift is found and repaired without anyone
// asking (an operation by `controller`, audited); a repair that cannot succeed goes back on the queue
// with back-off instead of spinning or giving up. Deploying what is already live changes nothing.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixture, principal, settle, type Fixture } from './support.js';

let f: Fixture;
const p = principal();
before(async () => { f = await fixture({ resyncIntervalMs: 100, reconcileBackoffInitialMs: 50, reconcileBackoffMaxMs: 400 }); });
after(async () => { await f.close(); });

async function ship(target: string): Promise<{ version: string; digest: string }> {
  const b = await settle(f.cp, await f.svc.build(p, { target }));
  await settle(f.cp, await f.svc.stage(p, { target, version: b.version }));
  const d = await settle(f.cp, await f.svc.deploy(p, { target, version: b.version }));
  assert.equal(d.state, 'succeeded');
  return { version: b.version!, digest: b.digest! };
}

function controllerOps(target: string): { state: string; error: string | null }[] {
  return f.db.prepare(`SELECT state, error FROM control_ops WHERE target = ? AND kind = 'reconcile' AND actor = 'controller' ORDER BY created_at`).all(target) as { state: string; error: string | null }[];
}

async function eventually(cond: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 1200; i++) { if (await cond()) return; await new Promise((r) => setTimeout(r, 25)); }
  assert.fail(`timed out waiting for ${what}`);
}

test('drift is repaired by the loop without a request', async () => {
  const T = 'siteedit';
  await ship(T);
  const file = join(f.cp.releases.livePath(T), 'assets', 'style.css');
  chmodSync(file, 0o644);
  writeFileSync(file, 'body{display:none}');
  await eventually(() => controllerOps(T).some((o) => o.state === 'succeeded'), 'an automatic reconcile');
  const [s] = await f.cp.status([T]);
  assert.equal(s!.verdict, 'in_sync');
  assert.ok(f.events.some((e) => e.kind === 'target.drifted' && e.target === T));
  const audit = f.db.prepare(`SELECT actor, result FROM audit_log WHERE action = 'control.reconcile' AND target = ?`).all(T);
  assert.deepEqual(audit[0], { actor: 'controller', result: 'ok' });
});

test('a repair that fails is retried with back-off', async () => {
  const T = 'toolchain';
  const { version, digest } = await ship(T);
  // The release and its artifact are both gone: nothing to restore from.
  chmodSync(f.cp.releases.releaseDir(T, version), 0o755);
  rmSync(f.cp.releases.releaseDir(T, version), { recursive: true, force: true });
  rmSync(f.cp.releases.manifestPath(T, version), { force: true });
  rmSync(f.cp.releases.artifactPath(digest as `sha256:${string}`), { force: true });
  await eventually(() => controllerOps(T).filter((o) => o.state === 'failed').length >= 3, 'three failed attempts');
  const [s] = await f.cp.status([T]);
  assert.equal(s!.verdict, 'drifted');
  assert.ok(s!.reasons.includes('live_release_incomplete'), s!.reasons.join());
});

test('deploying the version that is already live is a no-op', async () => {
  const T = 'meshgw';
  const { version } = await ship(T);
  const gen = f.cp.store.getTarget(T).generation;
  const pid = f.cp.supervisor.current(T)!.pid;
  const d = await settle(f.cp, await f.svc.deploy(p, { target: T, version }));
  assert.equal(d.state, 'succeeded');
  assert.match(d.log, /already live/);
  assert.equal(f.cp.store.getTarget(T).generation, gen);
  assert.equal(f.cp.supervisor.current(T)!.pid, pid);
});

test('the event-stream snapshot carries every verdict, current when an event is published', async () => {
  const T = 'cleanserve';
  let seen: { verdict: string; live: { version: string } | null } | undefined;
  const off = f.bus.subscribe((e) => {
    if (e.kind === 'deploy.succeeded' && e.target === T) {
      seen = (f.bus.snapshot() as { targets: NonNullable<typeof seen & { target: string }>[] }).targets.find((x) => x.target === T);
    }
  });
  const { version } = await ship(T);
  off();
  // At the event the operation still holds the lock; the new version is already what is live.
  assert.equal(seen?.verdict, 'progressing');
  assert.equal(seen?.live?.version, version);
  const now = (f.bus.snapshot() as { targets: { target: string; verdict: string }[] }).targets.find((x) => x.target === T);
  assert.equal(now?.verdict, 'in_sync');
  assert.equal((f.bus.snapshot() as { targets: unknown[] }).targets.length, 41);
});
