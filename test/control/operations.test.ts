// Operation rules of CONTRACT §6: one operation per target (409), Idempotency-Key replays, stale
// expected_generation (409), dry runs change nothing, unknown targets are 404 before any work, rights
// are checked per target, builds are reproducible, and history past the limit is pruned.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { QuarryError } from '../../src/kernel/errors.js';
import { anonymous, fixture, principal, settle, type Fixture } from './support.js';

let f: Fixture;
const p = principal();
before(async () => { f = await fixture({ historyLimit: 2 }); });
after(async () => { await f.close(); });

async function code(promise: Promise<unknown>): Promise<string> {
  try { await promise; } catch (err) { assert.ok(QuarryError.is(err), String(err)); return err.code; }
  return 'no error';
}

test('building the same inputs twice gives the same digest and version', async () => {
  const a = await settle(f.cp, await f.svc.build(p, { target: 'docportal' }));
  const b = await settle(f.cp, await f.svc.build(p, { target: 'docportal' }));
  assert.equal(a.state, 'succeeded');
  assert.equal(a.digest, b.digest);
  assert.equal(a.version, b.version);
  assert.equal(f.cp.versions('docportal').length, 1);
  // And in another checkout and data directory: nothing of the paths or the clock gets in.
  const g = await fixture();
  try {
    const c = await settle(g.cp, await g.svc.build(p, { target: 'docportal' }));
    assert.equal(c.digest, a.digest);
    const s1 = await settle(f.cp, await f.svc.build(p, { target: 'svc_sov_build_run.elf' }));
    const s2 = await settle(g.cp, await g.svc.build(p, { target: 'svc_sov_build_run.elf' }));
    assert.equal(s1.state, 'succeeded');
    assert.equal(s1.digest, s2.digest);
  } finally { await g.close(); }
});

test('a second operation on a locked target is 409 conflict, on another target it proceeds', async () => {
  const first = await f.svc.build(p, { target: 'relate' });
  assert.equal(await code(f.svc.build(p, { target: 'relate' })), 'conflict');
  // The lock answers before the version rules: a version that does not exist is still 409 here.
  assert.equal(await code(f.svc.deploy(p, { target: 'relate', version: 'whatever' })), 'conflict');
  const other = await f.svc.build(p, { target: 'hubgw' });
  assert.equal((await settle(f.cp, first)).state, 'succeeded');
  assert.equal((await settle(f.cp, other)).state, 'succeeded');
  // The lock is gone once the operation is done.
  assert.equal((await settle(f.cp, await f.svc.build(p, { target: 'relate' }))).state, 'succeeded');
});

test('an Idempotency-Key replays the first answer instead of starting a second operation', async () => {
  const run = () => f.svc.build(p, { target: 'vroom' }, { idempotencyKey: 'key-1' });
  const [a, b] = await Promise.all([run(), run()]);
  assert.equal(a.answer.op_id, b.answer.op_id);
  assert.equal(a.replayed !== b.replayed, true, 'one ran, the other shared its answer');
  const c = await run();
  assert.equal(c.replayed, true);
  assert.equal(c.answer.op_id, a.answer.op_id);
  await f.cp.waitOp(a.answer.op_id);
  const again = await run();
  assert.equal(again.answer.op_id, a.answer.op_id, 'still the first answer after the operation finished');
  // Another caller with the same key is a different request.
  const other = await f.svc.build(principal('all', undefined, 'cap_other'), { target: 'vroom' }, { idempotencyKey: 'key-1' });
  assert.notEqual(other.answer.op_id, a.answer.op_id);
  await f.cp.waitOp(other.answer.op_id);
  assert.equal(await code(f.svc.build(p, { target: 'vroom' }, { idempotencyKey: '' })), 'bad_request');
});

test('expected_generation that is stale is 409; dry_run plans and changes nothing', async () => {
  const b = await settle(f.cp, await f.svc.build(p, { target: 'finserve' }));
  await settle(f.cp, await f.svc.stage(p, { target: 'finserve', version: b.version }));
  const gen = f.cp.store.getTarget('finserve').generation;
  assert.equal(await code(f.svc.deploy(p, { target: 'finserve', expected_generation: gen + 5 })), 'conflict');
  const { answer: plan } = await f.svc.deploy(p, { target: 'finserve', dry_run: true });
  assert.ok('dry_run' in plan && plan.dry_run);
  assert.equal(plan.plan.to, b.version);
  assert.equal(f.cp.store.getTarget('finserve').generation, gen);
  assert.equal(f.cp.releases.readLive('finserve'), undefined);
  const d = await settle(f.cp, await f.svc.deploy(p, { target: 'finserve', expected_generation: gen }));
  assert.equal(d.state, 'succeeded');
  assert.equal(f.cp.store.getTarget('finserve').generation, gen + 1);
});

test('an unknown target is 404 unknown_target before any other check', async () => {
  for (const op of [
    f.svc.build(anonymous, { target: 'nope' }), f.svc.deploy(p, { target: '../etc' }), f.svc.rollback(p, { target: 'nope' }),
    f.svc.restart(p, { target: 'nope' }), f.svc.reconcile(p, { target: 'nope' }), f.svc.stage(p, { target: 'nope', version: 'x' }),
    f.svc.status(p, { target: 'nope' }),
  ]) assert.equal(await code(op), 'unknown_target');
});

test('rights are checked per target: forbidden, unauthenticated, and audited as denied', async () => {
  const scoped = principal(['mgmt.read', 'mgmt.build'], ['sites'], 'cap_scoped');
  assert.equal(await code(f.svc.build(scoped, { target: 'relate' })), 'forbidden');
  assert.equal(await code(f.svc.deploy(scoped, { target: 'sites' })), 'forbidden');
  assert.equal(await code(f.svc.build(anonymous, { target: 'sites' })), 'unauthenticated');
  const ok = await settle(f.cp, await f.svc.build(scoped, { target: 'sites' }));
  assert.equal(ok.state, 'succeeded');
  const denied = f.db.prepare(`SELECT actor, action, target FROM audit_log WHERE result = 'denied' AND actor = 'cap_scoped'`).all();
  assert.deepEqual(denied, [{ actor: 'cap_scoped', action: 'control.build', target: 'relate' }, { actor: 'cap_scoped', action: 'control.deploy', target: 'sites' }]);
  const row = f.db.prepare(`SELECT actor, to_ref, result, detail FROM audit_log WHERE action = 'control.build' AND actor = 'cap_scoped' AND result = 'ok'`).get() as { actor: string; to_ref: string; detail: string };
  assert.equal(row.to_ref, ok.version);
  assert.equal(JSON.parse(row.detail).op_id, ok.op_id);
});

test('versions past the history limit are pruned, never the live one', async () => {
  const T = 'survey';
  const versions: string[] = [];
  for (let i = 0; i < 4; i++) {
    f.editInput(T, 'content.md', (t) => `${t}\nrevision ${i}\n`);
    const b = await settle(f.cp, await f.svc.build(p, { target: T }));
    await settle(f.cp, await f.svc.stage(p, { target: T, version: b.version }));
    const d = await settle(f.cp, await f.svc.deploy(p, { target: T }));
    assert.equal(d.state, 'succeeded');
    versions.push(b.version!);
  }
  const states = Object.fromEntries(f.cp.versions(T).map((v) => [v.version, v.state]));
  assert.equal(states[versions[3]!], 'live');
  assert.equal(states[versions[2]!], 'superseded');
  assert.equal(states[versions[1]!], 'superseded');
  assert.equal(states[versions[0]!], 'pruned');
  assert.equal(existsSync(f.cp.releases.releaseDir(T, versions[0]!)), false);
  assert.equal(existsSync(f.cp.releases.releaseDir(T, versions[1]!)), true);
  assert.equal(await code(f.svc.rollback(p, { target: T, to: versions[0]! })), 'not_found');
});

test('a second operation while a promotion runs is 409 before any version rule', async () => {
  const b = await settle(f.cp, await f.svc.build(p, { target: 'galxgw' }));
  await settle(f.cp, await f.svc.stage(p, { target: 'galxgw', version: b.version }));
  // Fired from deploy.started: the version is `promoting`, which the deploy rules would refuse (400),
  // and there is no previous version, which the rollback rules would refuse (400). The lock answers first.
  const during: Promise<string>[] = [];
  const off = f.bus.subscribe((e) => {
    if (e.kind !== 'deploy.started' || e.target !== 'galxgw' || during.length) return;
    for (let i = 0; i < 5; i++) during.push(code(f.svc.deploy(p, { target: 'galxgw', version: b.version })));
    during.push(code(f.svc.rollback(p, { target: 'galxgw' })));
    during.push(code(f.svc.deploy(p, { target: 'galxgw', version: 'nonexistent' })));
  });
  const first = await f.svc.deploy(p, { target: 'galxgw', version: b.version });
  try { assert.equal((await settle(f.cp, first)).state, 'succeeded'); } finally { off(); }
  assert.deepEqual(await Promise.all(during), Array(7).fill('conflict'));
  // Once the lock is free, the rules answer again.
  assert.equal(await code(f.svc.rollback(p, { target: 'galxgw' })), 'bad_request');
});

test('the JSON body is validated with its schema after the allowlist and the right', async () => {
  assert.equal(await code(f.svc.deploy(p, 'not an object')), 'bad_request');
  assert.equal(await code(f.svc.deploy(anonymous, { target: 'sites', dryrun: true })), 'unauthenticated');
  const err = await f.svc.deploy(p, { target: 'sites', dryrun: true }).catch((e: QuarryError) => e);
  assert.equal((err as QuarryError).code, 'bad_request');
  assert.equal((err as QuarryError & { param?: string }).param, 'dryrun', 'a misspelt dry_run never deploys');
  assert.equal(await code(f.svc.deploy(p, { target: 'sites', expected_generation: 1.5 })), 'bad_request');
  assert.equal(await code(f.svc.rollback(p, { target: 'sites', reason: 'x'.repeat(1001) })), 'bad_request');
  assert.equal(await code(f.svc.reconcile(p, { target: 42 })), 'unknown_target');
});

test('deploy_status: one target, or every target the caller may read', async () => {
  const scoped = principal(['mgmt.read'], ['sites', 'relate'], 'cap_reader');
  const mine = await f.svc.status(scoped);
  assert.deepEqual(mine.targets.map((s) => s.target).sort(), ['relate', 'sites']);
  assert.equal((await f.svc.status(p)).targets.length, 41);
  assert.equal((await f.svc.status(p, { target: 'sites' })).targets[0]!.target, 'sites');
  assert.equal(await code(f.svc.status(scoped, { target: 'vroom' })), 'forbidden');
  assert.equal(await code(f.svc.status(anonymous)), 'unauthenticated');
});

test('an operation is visible only to who may read it; existence does not leak', async () => {
  const op = await settle(f.cp, await f.svc.build(p, { target: 'comparegw' }));
  const get = (who: typeof p, id: string) => code(f.svc.getOp(who, id));
  assert.equal((await f.svc.getOp(p, op.op_id)).state, 'succeeded');
  assert.equal(await get(p, 'op_nope'), 'not_found');
  // Anonymous: 401 whether or not the id exists.
  assert.equal(await get(anonymous, op.op_id), 'unauthenticated');
  assert.equal(await get(anonymous, 'op_nope'), 'unauthenticated');
  // No mgmt.read at all: 403 whether or not the id exists.
  const builder = principal(['mgmt.build'], undefined, 'cap_builder');
  assert.equal(await get(builder, op.op_id), 'forbidden');
  assert.equal(await get(builder, 'op_nope'), 'forbidden');
  // mgmt.read on other targets: the same 404 as an unknown id.
  const other = principal(['mgmt.read'], ['sites'], 'cap_other_reader');
  assert.equal(await get(other, op.op_id), 'not_found');
  assert.equal(await get(other, 'op_nope'), 'not_found');
  assert.equal((await f.svc.getOp(principal(['mgmt.read'], ['comparegw']), op.op_id)).op_id, op.op_id);
  // An operation over every target needs read access to every target.
  const all = await settle(f.cp, await f.svc.reconcile(p, {}));
  assert.equal(await get(other, all.op_id), 'not_found');
  assert.equal((await f.svc.getOp(p, all.op_id)).target, null);
});
