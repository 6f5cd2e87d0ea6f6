// Start-up recovery as a scenario: the state a crash leaves in the middle of a promotion (op running,
// lock held, version promoting, desired and live already moved, temp debris) is put right by start():
// the op is failed as interrupted, the version gets back its prior state, desired and live return to the
// previous version, the lock and the debris are gone, and the audit log says so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ControlPlane, ControlService } from '../../src/control/index.js';
import { fixture, principal, settle } from './support.js';

test('an interrupted promotion is undone at start, and nothing half-written survives', async () => {
  const f = await fixture();
  const p = principal();
  const T = 'sites';
  try {
    const ship = async (): Promise<string> => {
      const b = await settle(f.cp, await f.svc.build(p, { target: T }));
      await settle(f.cp, await f.svc.stage(p, { target: T, version: b.version }));
      return b.version!;
    };
    const v1 = await ship();
    assert.equal((await settle(f.cp, await f.svc.deploy(p, { target: T }))).state, 'succeeded');
    f.editInput(T, 'content.md', (t) => `${t}\nv2\n`);
    const v2 = await ship();
    await f.cp.close();

    // What a SIGKILL in the middle of promoting v2 leaves behind.
    const store = f.cp.store;
    f.db.transaction(() => {
      store.createOp({ op_id: 'op_crashed', target: T, kind: 'deploy', actor: 'cap_test', version: v2, from_version: v1 });
      store.updateOp('op_crashed', { state: 'running', prior_state: 'staged' });
      store.setVersionState(T, v2, 'verifying');
      store.setDesiredInTx(T, v2);
      assert.ok(store.tryLock(T, 'op_crashed'));
    })();
    f.cp.releases.switchLive(T, v2);
    const control = join(f.dataDir, 'control');
    mkdirSync(join(control, 'releases', T, `.tmp-${v2}-abc`));
    writeFileSync(join(control, 'releases', T, 'deadbeef0000.manifest.json'), '{}');
    mkdirSync(join(control, 'releases', T, 'cafebabe0000'));
    writeFileSync(join(control, 'uploads', 'op_x.tar'), 'partial');
    mkdirSync(join(control, 'scratch', 'build-sites-123'));

    const cp = new ControlPlane({ db: f.db, bus: f.bus, dataDir: f.dataDir, repoRoot: f.repo, resyncIntervalMs: 0 });
    await cp.start();
    try {
      const op = cp.getOp('op_crashed')!;
      assert.equal(op.state, 'failed');
      assert.equal(op.error?.code, 'interrupted');
      assert.equal(cp.store.getVersion(T, v2)?.state, 'staged', 'never judged, so not failed');
      const spec = cp.store.getTarget(T);
      assert.equal(spec.desired_version, v1);
      assert.equal(spec.lock_op, null);
      assert.equal(cp.releases.readLive(T), v1, 'reconcile at start pointed live back');
      assert.deepEqual(readdirSync(join(control, 'releases', T)).sort(), [v1, `${v1}.manifest.json`, v2, `${v2}.manifest.json`].sort());
      assert.deepEqual(readdirSync(join(control, 'uploads')), []);
      assert.deepEqual(readdirSync(join(control, 'scratch')), []);
      const [s] = await cp.status([T]);
      assert.equal(s!.verdict, 'in_sync');
      const audit = f.db.prepare(`SELECT result, from_ref, to_ref FROM audit_log WHERE detail LIKE '%op_crashed%'`).get();
      assert.deepEqual(audit, { result: 'interrupted', from_ref: v1, to_ref: v2 });
      // The interrupted version can still be promoted on purpose.
      const again = await settle(cp, await new ControlService(cp).deploy(p, { target: T, version: v2 }));
      assert.equal(again.state, 'succeeded');
      assert.ok(existsSync(join(cp.releases.livePath(T), 'index.html')));
    } finally { await cp.close(); }
  } finally { await f.close(); }
});
