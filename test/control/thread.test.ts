// The control plane on a thread of its own (`ControlThread`), as the server runs it: the faces' service
// over it must answer as over the plane on their own thread — answers, errors of the same kind, the
// plane's events on the server's bus with the verdicts of its snapshot, an upload's body pulled through
// and let go when the plane stops reading — and a thread that dies is replaced.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ControlService, ControlThread, type ControlThreadOptions, type OpView, type TargetStatus } from '../../src/control/index.js';
import { EventBus, type BusEvent } from '../../src/events/bus.js';
import { PayloadTooLargeError, QuarryError } from '../../src/kernel/errors.js';
import { stateDbPath } from '../../src/kernel/data-dir.js';
import { threadModule } from '../../src/kernel/thread-module.js';
import { openDb, type Db } from '../../src/store/db.js';
import { copyDeploy, principal } from './support.js';
import { rawTar, sha256 } from './tarball.js';

const p = principal();

interface ThreadFixture { dir: string; db: Db; bus: EventBus; events: BusEvent[]; thread: ControlThread; svc: ControlService; close(): Promise<void> }

async function threadFixture(o: Partial<ControlThreadOptions> = {}): Promise<ThreadFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-control-thread-'));
  const repo = copyDeploy(dir);
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir, { recursive: true });
  const db = openDb(stateDbPath(dataDir));
  const bus = new EventBus();
  const events: BusEvent[] = [];
  bus.subscribe((e) => events.push(e));
  const thread = new ControlThread({ db, bus, dataDir, repoRoot: repo, resyncIntervalMs: 0, ...o });
  await thread.start();
  return {
    dir, db, bus, events, thread, svc: new ControlService(thread),
    async close() {
      await thread.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function settled(svc: ControlService, opId: string): Promise<OpView> {
  for (;;) {
    const op = await svc.getOp(p, opId);
    if (op.state === 'succeeded' || op.state === 'failed') return op;
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try { await promise; } catch (err) { assert.ok(QuarryError.is(err), `a QuarryError, not ${String(err)}`); return err.code; }
  return 'ok';
}

test('operations, errors and events cross the thread; the snapshot holds the verdict of every event published', async () => {
  const f = await threadFixture();
  try {
    // Start converged every target: the server's snapshot has all of them.
    const inventory = f.svc.inventory(p) as { count: number; targets: string[] };
    const snapshotTargets = () => (f.bus.snapshot()['targets'] as TargetStatus[]);
    assert.equal(snapshotTargets().length, inventory.count);

    // An event about a target reaches the server's bus after the verdict it changed.
    const seen: { kind: string; desired: string | undefined }[] = [];
    f.bus.subscribe((e) => {
      if (e.target === 'comparegw') seen.push({ kind: e.kind, desired: snapshotTargets().find((s) => s.target === 'comparegw')?.desired?.version });
    });

    const built = await settled(f.svc, (await f.svc.build(p, { target: 'comparegw' })).answer.op_id);
    assert.equal(built.state, 'succeeded', built.log);
    assert.ok(built.version);
    const staged = await settled(f.svc, (await f.svc.stage(p, { target: 'comparegw', version: built.version })).answer.op_id);
    assert.equal(staged.state, 'succeeded', staged.log);

    const plan = (await f.svc.deploy(p, { target: 'comparegw', dry_run: true })).answer as { dry_run?: boolean; plan?: { to?: string } };
    assert.equal(plan.dry_run, true);
    assert.equal(plan.plan?.to, built.version);
    const deployed = await settled(f.svc, ((await f.svc.deploy(p, { target: 'comparegw' })).answer as { op_id: string }).op_id);
    assert.equal(deployed.state, 'succeeded', deployed.log);
    const [status] = (await f.svc.status(p, { target: 'comparegw' })).targets;
    assert.equal(status?.live?.version, built.version);
    assert.equal(status?.verdict, 'in_sync');

    // The events were published on the server's bus (its ids), in the order the plane published them,
    // and when `deploy.succeeded` arrived the snapshot already held the new desired version.
    const kinds = f.events.filter((e) => e.target === 'comparegw').map((e) => e.kind);
    for (const k of ['build.started', 'build.succeeded', 'stage.succeeded', 'deploy.started', 'deploy.succeeded'] as const) {
      assert.ok(kinds.includes(k), `${k} in ${kinds.join(', ')}`);
    }
    assert.ok(kinds.indexOf('build.started') < kinds.indexOf('deploy.succeeded'));
    assert.ok(f.events.every((e) => e.id.startsWith(`${f.bus.epoch}-`)));
    // The payload crosses as published; the envelope is the server's bus's own.
    const done = f.events.find((e) => e.kind === 'build.succeeded' && e.target === 'comparegw');
    assert.equal(done?.data['op_id'], built.op_id);
    assert.equal(done?.data['target'], 'comparegw');
    assert.equal(done?.data.seq, Number(done?.id.split('-')[1]));
    assert.equal(seen.find((s) => s.kind === 'deploy.succeeded')?.desired, built.version);

    // Errors keep their kind: an unknown version (404), a lock held by another operation (409).
    assert.equal(await codeOf(f.svc.stage(p, { target: 'comparegw', version: 'v-nope' })), 'not_found');
    assert.ok(f.thread.store.tryLock('sites', 'op_elsewhere'));
    assert.equal(await codeOf(f.svc.build(p, { target: 'sites' })), 'conflict');
    f.thread.store.unlock('sites', 'op_elsewhere');
    assert.equal(await codeOf(f.svc.getOp(p, 'op_nope')), 'not_found');
  } finally { await f.close(); }
});

/** `[pid, ppid, nice, command line]` of every process (or, with `pid`, of every thread of it). */
function tasks(dir = '/proc'): { id: number; ppid: number; nice: number; cmd: string }[] {
  const out = [];
  for (const name of readdirSync(dir)) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(join(dir, name, 'stat'), 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cmd = dir === '/proc' ? readFileSync(join(dir, name, 'cmdline'), 'utf8').replaceAll('\0', ' ') : '';
      out.push({ id: Number(name), ppid: Number(f[1]), nice: Number(f[16]), cmd });
    } catch { /* gone meanwhile */ }
  }
  return out;
}

test('the plane runs at its nice value; the services it starts run at the server\'s', async () => {
  const f = await threadFixture({ threadNice: 7 });
  try {
    const own = getPriority(0);
    assert.ok(tasks(`/proc/${process.pid}/task`).some((t) => t.nice === 7), 'a thread of this process at nice 7');
    const built = await settled(f.svc, (await f.svc.build(p, { target: 'comparegw' })).answer.op_id);
    await settled(f.svc, (await f.svc.stage(p, { target: 'comparegw', version: built.version! })).answer.op_id);
    const deployed = await settled(f.svc, ((await f.svc.deploy(p, { target: 'comparegw' })).answer as { op_id: string }).op_id);
    assert.equal(deployed.state, 'succeeded', deployed.log);
    const all = tasks();
    const helper = all.find((t) => t.ppid === process.pid && t.cmd.includes('spawn-helper'));
    assert.ok(helper, 'the spawn helper is a child of this process');
    assert.equal(helper.nice, own);
    const services = all.filter((t) => t.ppid === helper.id);
    assert.ok(services.length >= 1, 'the deployed service runs under the helper');
    for (const s of services) assert.equal(s.nice, own, s.cmd);
  } finally { await f.close(); }
});

test('an upload is pulled through a chunk at a time and let go when the plane stops reading', async () => {
  const f = await threadFixture({ uploadLimitBytes: 64 * 1024 });
  try {
    // Endless: the plane stops at its limit, and the body is returned (no more is read).
    let pulled = 0;
    let returned = false;
    async function* endless(): AsyncGenerator<Buffer> {
      try { for (;;) { pulled++; yield Buffer.alloc(16 * 1024, 7); } } finally { returned = true; }
    }
    const err = await f.svc.stageUpload(p, { target: 'docportal', digest: sha256(Buffer.from('x')) }, endless()).catch((e: unknown) => e);
    assert.ok(err instanceof PayloadTooLargeError, String(err));
    assert.equal(err.limit, 64 * 1024);
    assert.ok(returned);
    assert.ok(pulled <= 6, `pulled ${pulled} chunks`);

    // A body that fails mid-way (the client left): the call fails with the reader's error.
    async function* cut(): AsyncGenerator<Buffer> {
      yield Buffer.from('partial');
      throw new QuarryError('bad_request', 'The request body ended before it was complete.', { param: 'body' });
    }
    assert.equal(await codeOf(f.svc.stageUpload(p, { target: 'docportal', digest: sha256(Buffer.from('x')) }, cut())), 'bad_request');

    // A real artifact in pieces smaller and larger than a chunk: staged.
    const tar = rawTar([{ path: 'index.html', body: '<p>from upload</p>'.repeat(2000) }]);
    async function* pieces(): AsyncGenerator<Buffer> {
      for (let at = 0, n = 1; at < tar.length; at += n, n = n * 3 + 1) yield tar.subarray(at, at + n);
    }
    const submitted = await f.svc.stageUpload(p, { target: 'docportal', digest: sha256(tar) }, pieces());
    const op = await settled(f.svc, submitted.answer.op_id);
    assert.equal(op.state, 'succeeded', op.log);
  } finally { await f.close(); }
});

test('a thread that dies fails the calls in flight with 503 and is started again', async () => {
  // A module that runs the plane's thread and dies when asked for operation `op_die`.
  const dir = mkdtempSync(join(tmpdir(), 'quarry-control-crash-'));
  const module = join(dir, 'crashing-thread.mjs');
  writeFileSync(module, [
    "import { parentPort } from 'node:worker_threads';",
    `await import(${JSON.stringify(threadModule(new URL('../../src/control/thread.ts', import.meta.url).href, 'plane-thread').href)});`,
    "parentPort.on('message', (m) => { if (m.call === 'getOp' && m.args[0] === 'op_die') process.exit(7); });",
  ].join('\n'));
  const errors: string[] = [];
  const f = await threadFixture({ threadModule: pathToFileURL(module), onError: (m) => errors.push(m) });
  try {
    const err = await f.svc.getOp(p, 'op_die').catch((e: unknown) => e);
    assert.ok(QuarryError.is(err) && err.code === 'unavailable', String(err));
    assert.equal(errors.length, 1);
    // While it is down calls answer 503; after the first delay it serves again.
    const deadline = Date.now() + 60_000;
    let code = 'unavailable';
    while (code === 'unavailable' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      code = await codeOf(f.svc.getOp(p, 'op_nope'));
    }
    assert.equal(code, 'not_found');
    const built = await settled(f.svc, (await f.svc.build(p, { target: 'comparegw' })).answer.op_id);
    assert.equal(built.state, 'succeeded', built.log);
    assert.ok(f.events.some((e) => e.kind === 'build.succeeded' && e.target === 'comparegw'));
  } finally {
    await f.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
