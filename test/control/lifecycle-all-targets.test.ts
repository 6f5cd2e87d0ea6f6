// Every one of the 41 allowlisted targets through build → stage → promote → in_sync, then a second
// version (a real input change), then a rollback to the first, asserting verdicts and events each step.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'node:http';
import { fixture, kindOf, principal, settle, versionInput, type Fixture } from './support.js';
import type { OpView } from '../../src/control/index.js';

function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = '';
      res.on('data', (c) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject).end();
  });
}

function kindsFor(f: Fixture, target: string, since: number): string[] {
  return f.events.slice(since).filter((e) => e.target === target && e.kind !== 'build.log').map((e) => e.kind);
}

async function ok(f: Fixture, answer: unknown): Promise<OpView> {
  const op = await settle(f.cp, answer as object);
  assert.equal(op.state, 'succeeded', `${op.kind} ${op.target}: ${JSON.stringify(op.error)}\n${op.log}`);
  return op;
}

test('all 41 targets: build, stage, promote, second version, rollback', async () => {
  const f = await fixture({ maxConcurrentBuilds: 2 });
  const p = principal();
  try {
    const targets = f.cp.allowlist.current().targets;
    assert.equal(targets.length, 41);
    const inv = f.svc.inventory(p);
    assert.equal(inv.count, 41);
    assert.deepEqual(inv.targets, targets);

    // v1: build → stage → promote, per target, all targets in parallel (builds bounded by the plane).
    const first = new Map<string, OpView>();
    let mark = f.events.length;
    await Promise.all(targets.map(async (t) => {
      const b = await ok(f, await f.svc.build(p, { target: t }));
      assert.match(b.digest!, /^sha256:[0-9a-f]{64}$/);
      await ok(f, await f.svc.stage(p, { target: t, version: b.version }));
      const d = await ok(f, await f.svc.deploy(p, { target: t, reason: 'first release' }));
      assert.equal(d.version, b.version);
      first.set(t, b);
    }));
    for (const s of await f.cp.status()) {
      assert.equal(s.verdict, 'in_sync', `${s.target}: ${s.reasons.join(', ')}`);
      assert.equal(s.sync, 'synced');
      assert.equal(s.health, 'healthy');
      assert.equal(s.live?.version, first.get(s.target)!.version);
      assert.equal(s.live?.digest, first.get(s.target)!.digest);
      assert.equal(s.generation, 1);
      assert.deepEqual(kindsFor(f, s.target, mark), [
        'build.started', 'build.succeeded', 'stage.succeeded', 'deploy.started', 'deploy.verifying', 'deploy.succeeded',
      ]);
    }
    assert.ok(f.events.slice(mark).some((e) => e.kind === 'build.log'), 'build output is published');

    // What is live is really served: the static page from the live path, the service over HTTP.
    for (const t of targets) {
      if (kindOf(f.repo, t) === 'static') {
        const html = readFileSync(join(f.cp.releases.livePath(t), 'index.html'), 'utf8');
        assert.match(html, new RegExp(`data-target="${t.replace('.', '\\.')}"`));
      } else {
        const proc = f.cp.supervisor.current(t)!;
        const r = await get(proc.port, '/');
        assert.equal(JSON.parse(r.body).name, t);
      }
    }

    // v2: a real input change per target.
    for (const t of targets) {
      const { file, edit } = versionInput(kindOf(f.repo, t));
      f.editInput(t, file, edit);
    }
    mark = f.events.length;
    const second = new Map<string, OpView>();
    await Promise.all(targets.map(async (t) => {
      const b = await ok(f, await f.svc.build(p, { target: t }));
      assert.notEqual(b.digest, first.get(t)!.digest, `${t}: a changed input gives a new digest`);
      await ok(f, await f.svc.stage(p, { target: t, version: b.version }));
      await ok(f, await f.svc.deploy(p, { target: t, version: b.version, expected_generation: 1 }));
      second.set(t, b);
    }));
    for (const s of await f.cp.status()) {
      assert.equal(s.verdict, 'in_sync', `${s.target}: ${s.reasons.join(', ')}`);
      assert.equal(s.live?.version, second.get(s.target)!.version);
      assert.equal(s.generation, 2);
      assert.deepEqual(s.stable_versions, [second.get(s.target)!.version, first.get(s.target)!.version]);
      assert.deepEqual(kindsFor(f, s.target, mark), [
        'build.started', 'build.succeeded', 'stage.succeeded', 'deploy.started', 'deploy.verifying', 'deploy.succeeded',
      ]);
      assert.equal(f.cp.store.getVersion(s.target, first.get(s.target)!.version!)?.state, 'superseded');
    }
    for (const t of targets) {
      if (kindOf(f.repo, t) === 'service') {
        const [st] = await f.cp.status([t]);
        const endpoint = new URL(st!.live!.endpoint!);
        const r = await get(Number(endpoint.port), '/');
        assert.match(JSON.parse(r.body).message, /second release/);
      } else {
        assert.match(readFileSync(join(f.cp.releases.livePath(t), 'index.html'), 'utf8'), /Second release/);
      }
    }

    // Rollback to the previous version: desired moves, so a reconcile keeps it.
    mark = f.events.length;
    await Promise.all(targets.map(async (t) => {
      const r = await ok(f, await f.svc.rollback(p, { target: t, to: 'previous', reason: 'test rollback' }));
      assert.equal(r.version, first.get(t)!.version);
    }));
    await ok(f, await f.svc.reconcile(p, {}));
    for (const s of await f.cp.status()) {
      assert.equal(s.verdict, 'in_sync', `${s.target}: ${s.reasons.join(', ')}`);
      assert.equal(s.desired?.version, first.get(s.target)!.version);
      assert.equal(s.live?.version, first.get(s.target)!.version);
      assert.equal(s.generation, 3);
      assert.deepEqual(kindsFor(f, s.target, mark), ['deploy.started', 'deploy.verifying', 'deploy.rolled_back', 'deploy.succeeded']);
      const started = f.events.slice(mark).find((e) => e.target === s.target && e.kind === 'deploy.started');
      assert.equal(started?.data['op_kind'], 'rollback', 'deploy.started says which operation promotes');
      assert.equal(f.cp.store.getVersion(s.target, second.get(s.target)!.version!)?.state, 'superseded');
    }
    const audit = f.db.prepare(`SELECT action, COUNT(*) AS n FROM audit_log WHERE result = 'ok' GROUP BY action`).all() as { action: string; n: number }[];
    const byAction = Object.fromEntries(audit.map((r) => [r.action, r.n]));
    assert.deepEqual({ b: byAction['control.build'], s: byAction['control.stage'], d: byAction['control.deploy'], r: byAction['control.rollback'] }, { b: 82, s: 82, d: 82, r: 41 });
  } finally { await f.close(); }
});
