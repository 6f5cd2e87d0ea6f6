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
  const a = await settle(f.cp, await f.cp.build(p, { target: 'docportal' }));
  const b = await settle(f.cp, await f.cp.build(p, { target: 'docportal' }));
  assert.equal(a.state, 'succeeded');
  assert.equal(a.digest, b.digest);
  assert.equal(a.version, b.version);
  assert.equal(f.cp.versions('docportal').length, 1);
  // And in another checkout and data directory: nothing of the paths or the clock gets in.
  const g = await fixture();
  try {
    const c = await settle(g.cp, await g.cp.build(p, { target: 'docportal' }));
    assert.equal(c.digest, a.digest);
    const s1 = await settle(f.cp, await f.cp.build(p, { target: 'svc_sov_build_run.elf' }));
    const s2 = await settle(g.cp, await g.cp.build(p, { target: 'svc_sov_build_run.elf' }));
    assert.equal(s1.state, 'succeeded');
    assert.equal(s1.digest, s2.digest);
  } finally { await g.close(); }
});

test('a second operation on a locked target is 409 conflict, on another target it proceeds', async () => {
  const first = await f.cp.build(p, { target: 'relate' });
  assert.equal(await code(f.cp.build(p, { target: 'relate' })), 'conflict');
  assert.equal(await code(f.cp.deploy(p, { target: 'relate', version: 'whatever' })), 'not_found');
  const other = await f.cp.build(p, { target: 'hubgw' });
  assert.equal((await settle(f.cp, first)).state, 'succeeded');
  assert.equal((await settle(f.cp, other)).state, 'succeeded');
  // The lock is gone once the operation is done.
  assert.equal((await settle(f.cp, await f.cp.build(p, { target: 'relate' }))).state, 'succeeded');
});

test('an Idempotency-Key replays the first answer instead of starting a second operation', async () => {
  const run = () => f.cp.idempotent('cap_test', 'key-1', 'POST /api/build', async () => ({ status: 202, json: { ...(await f.cp.build(p, { target: 'vroom' })) } }));
  const [a, b] = await Promise.all([run(), run()]);
  assert.equal(a.json.op_id, b.json.op_id);
  const c = await run();
  assert.equal(c.replayed, true);
  assert.equal(c.json.op_id, a.json.op_id);
  await f.cp.waitOp(a.json.op_id as string);
  const again = await run();
  assert.equal(again.json.op_id, a.json.op_id, 'still the first answer after the operation finished');
  // Another caller with the same key is a different request.
  const other = await f.cp.idempotent('cap_other', 'key-1', 'POST /api/build', async () => ({ status: 202, json: { ...(await f.cp.build(p, { target: 'vroom' })) } }));
  assert.notEqual(other.json.op_id, a.json.op_id);
  await f.cp.waitOp(other.json.op_id as string);
});

test('expected_generation that is stale is 409; dry_run plans and changes nothing', async () => {
  const b = await settle(f.cp, await f.cp.build(p, { target: 'finserve' }));
  await settle(f.cp, await f.cp.stage(p, { target: 'finserve', version: b.version }));
  const gen = f.cp.store.getTarget('finserve').generation;
  assert.equal(await code(f.cp.deploy(p, { target: 'finserve', expected_generation: gen + 5 })), 'conflict');
  const plan = await f.cp.deploy(p, { target: 'finserve', dry_run: true });
  assert.equal((plan as { dry_run: boolean }).dry_run, true);
  assert.equal((plan as unknown as { plan: { to: string } }).plan.to, b.version);
  assert.equal(f.cp.store.getTarget('finserve').generation, gen);
  assert.equal(f.cp.releases.readLive('finserve'), undefined);
  const d = await settle(f.cp, await f.cp.deploy(p, { target: 'finserve', expected_generation: gen }));
  assert.equal(d.state, 'succeeded');
  assert.equal(f.cp.store.getTarget('finserve').generation, gen + 1);
});

test('an unknown target is 404 unknown_target before any other check', async () => {
  for (const op of [
    f.cp.build(anonymous, { target: 'nope' }), f.cp.deploy(p, { target: '../etc' }), f.cp.rollback(p, { target: 'nope' }),
    f.cp.restart(p, { target: 'nope' }), f.cp.reconcile(p, { target: 'nope' }), f.cp.stage(p, { target: 'nope', version: 'x' }),
    f.cp.status('nope'),
  ]) assert.equal(await code(op), 'unknown_target');
});

test('rights are checked per target: forbidden, unauthenticated, and audited as denied', async () => {
  const scoped = principal(['mgmt.read', 'mgmt.build'], ['sites'], 'cap_scoped');
  assert.equal(await code(f.cp.build(scoped, { target: 'relate' })), 'forbidden');
  assert.equal(await code(f.cp.deploy(scoped, { target: 'sites' })), 'forbidden');
  assert.equal(await code(f.cp.build(anonymous, { target: 'sites' })), 'unauthenticated');
  const ok = await settle(f.cp, await f.cp.build(scoped, { target: 'sites' }));
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
    const b = await settle(f.cp, await f.cp.build(p, { target: T }));
    await settle(f.cp, await f.cp.stage(p, { target: T, version: b.version }));
    const d = await settle(f.cp, await f.cp.deploy(p, { target: T }));
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
  assert.equal(await code(f.cp.rollback(p, { target: T, to: versions[0]! })), 'not_found');
});

test('GET ops: an unknown id is 404 not_found', async () => {
  assert.equal(await code(Promise.resolve().then(() => f.cp.getOp('op_nope'))), 'not_found');
});

test('the MCP entry point maps actions onto the same operations and checks', async () => {
  const b = await f.cp.mgmtAction(p, { action: 'build', target: 'comparegw' });
  assert.equal(b.kind, 'build');
  assert.equal((await f.cp.waitOp(b.op_id as string)).state, 'succeeded');
  const st = await f.cp.mgmtAction(p, { action: 'status', target: 'comparegw' });
  assert.equal((st.targets as { verdict: string }[])[0]!.verdict, 'missing');
  assert.equal(await code(f.cp.mgmtAction(p, { action: 'explode', target: 'comparegw' })), 'bad_request');
  assert.equal(await code(f.cp.mgmtAction(anonymous, { action: 'deploy', target: 'nope' })), 'unknown_target');
  assert.equal(await code(f.cp.mgmtAction(anonymous, { action: 'status' })), 'unauthenticated');
});
