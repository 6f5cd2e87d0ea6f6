// The reconciler's decisions, Kubernetes-controller style: each test declares the observed state of
// one target in a fake world, runs one reconcile, and compares the list of actions taken. The fake
// applies each action to its world, so a second reconcile shows the steps converge and are idempotent.
// Then the queue's error policy: back-off on failure, forgetting on success, one name synced once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Reconciler, reconcileTarget, type ReconcileEffects, type SyncResult } from '../../src/control/reconciler.js';
import type { VersionRecord, VersionState } from '../../src/control/types.js';

interface World {
  kind: 'static' | 'service' | 'invalid';
  desired: string | null;
  versions: Record<string, VersionState>;
  live?: string | undefined;
  /** Versions whose release is complete on disk. */
  complete: string[];
  /** Modified paths per version. */
  modified?: Record<string, string[]>;
  process?: { version: string; state: string } | undefined;
}

/** A fake store, observer and executor over `world`: reads come from it, actions are recorded and applied. */
function fixture(world: World): { fx: ReconcileEffects; actions: string[]; events: string[] } {
  const actions: string[] = [];
  const events: string[] = [];
  const record = (v: string, state: VersionState): VersionRecord => ({ target: 't', version: v, digest: `sha256:${v}`, state, origin: 'build', created_at: '', updated_at: '' });
  const fx: ReconcileEffects = {
    desired: () => world.desired,
    version: (_t, v) => (world.versions[v] ? record(v, world.versions[v]!) : undefined),
    kind: () => { if (world.kind === 'invalid') throw new Error('kind must be "static" or "service"'); return world.kind; },
    live: () => world.live,
    complete: (_t, v) => world.complete.includes(v),
    modified: async (_t, v) => world.modified?.[v] ?? [],
    process: () => world.process,
    materialize: async (_t, v, digest) => { actions.push(`materialize ${v} ${digest}`); world.complete.push(v); },
    restore: async (_t, v) => { actions.push(`restore ${v}`); delete world.modified?.[v]; },
    switchLive: (_t, v) => { actions.push(`switch live → ${v}`); world.live = v; },
    removeLive: () => { actions.push('remove live'); world.live = undefined; },
    startService: async (_t, v) => { actions.push(`start ${v}`); world.process = { version: v, state: 'running' }; },
    stopService: async () => { actions.push('stop'); world.process = undefined; },
    markLive: (_t, v) => {
      actions.push(`mark ${v} live`);
      for (const [k, s] of Object.entries(world.versions)) if (s === 'live') world.versions[k] = 'superseded';
      world.versions[v] = 'live';
    },
    drifted: (_t, payload) => { events.push((payload.reasons as string[]).join(',')); },
  };
  return { fx, actions, events };
}

async function expectActions(world: World, expected: string[], expectedEvents?: string[], why: 'startup' | 'request' | 'resync' = 'resync'): Promise<void> {
  const f = fixture(world);
  await reconcileTarget(f.fx, 't', why);
  assert.deepEqual(f.actions, expected);
  if (expectedEvents) assert.deepEqual(f.events, expectedEvents);
  // Converged: a second reconcile of the same world does nothing.
  const again = fixture(world);
  await reconcileTarget(again.fx, 't', why);
  assert.deepEqual(again.actions, [], 'a second reconcile has nothing to do');
}

test('in sync does nothing', async () => {
  await expectActions({ kind: 'static', desired: 'v1', versions: { v1: 'live' }, live: 'v1', complete: ['v1'] }, [], []);
  await expectActions({ kind: 'service', desired: 'v1', versions: { v1: 'live' }, live: 'v1', complete: ['v1'], process: { version: 'v1', state: 'running' } }, [], []);
});

test('a crash-looping service of the right version is left to the supervisor', async () => {
  await expectActions({ kind: 'service', desired: 'v1', versions: { v1: 'live' }, live: 'v1', complete: ['v1'], process: { version: 'v1', state: 'backoff' } }, []);
});

test('drifted pointer is switched back', async () => {
  await expectActions({ kind: 'static', desired: 'v2', versions: { v1: 'superseded', v2: 'live' }, live: 'v1', complete: ['v1', 'v2'] },
    ['switch live → v2'], ['live_version_mismatch']);
});

test('missing pointer is put back', async () => {
  await expectActions({ kind: 'static', desired: 'v1', versions: { v1: 'live' }, complete: ['v1'] }, ['switch live → v1'], ['live_pointer_missing']);
});

test('modified files are restored before anything else is touched', async () => {
  await expectActions({ kind: 'static', desired: 'v1', versions: { v1: 'live' }, live: 'v1', complete: ['v1'], modified: { v1: ['index.html'] } },
    ['restore v1'], ['live_files_modified']);
});

test('an incomplete release is materialized from its artifact, then pointed at', async () => {
  await expectActions({ kind: 'static', desired: 'v1', versions: { v1: 'live' }, live: undefined, complete: [] },
    ['materialize v1 sha256:v1', 'switch live → v1'], ['live_pointer_missing']);
});

test('failed desired version is never selected', async () => {
  await expectActions({ kind: 'static', desired: 'v2', versions: { v1: 'superseded', v2: 'failed' }, live: 'v1', complete: ['v1', 'v2'] }, [], []);
});

test('a desired version without a record is left alone', async () => {
  await expectActions({ kind: 'static', desired: 'v9', versions: {}, live: 'v1', complete: ['v1'] }, []);
});

test('an invalid recipe is reported, not acted on', async () => {
  await expectActions({ kind: 'invalid', desired: 'v1', versions: { v1: 'live' }, live: undefined, complete: [] }, []);
});

test('nothing desired: our pointer is removed and the process stopped', async () => {
  await expectActions({ kind: 'service', desired: null, versions: { v1: 'failed' }, live: 'v1', complete: ['v1'], process: { version: 'v1', state: 'running' } },
    ['remove live', 'stop'], ['live_without_desired']);
});

test('a stopped service is started; a service of another version is replaced', async () => {
  await expectActions({ kind: 'service', desired: 'v1', versions: { v1: 'live' }, live: 'v1', complete: ['v1'] }, ['start v1'], ['process_missing']);
  await expectActions({ kind: 'service', desired: 'v2', versions: { v1: 'superseded', v2: 'live' }, live: 'v2', complete: ['v1', 'v2'], process: { version: 'v1', state: 'running' } },
    ['start v2'], ['process_version_mismatch']);
  // At start-up no process is running yet: expected, so no drift event.
  await expectActions({ kind: 'service', desired: 'v1', versions: { v1: 'live' }, live: 'v1', complete: ['v1'] }, ['start v1'], [], 'startup');
});

test('a desired version not yet recorded as live is marked live once it is', async () => {
  await expectActions({ kind: 'service', desired: 'v2', versions: { v1: 'live', v2: 'staged' }, live: 'v1', complete: ['v1', 'v2'], process: { version: 'v1', state: 'running' } },
    ['switch live → v2', 'start v2', 'mark v2 live']);
});

test('everything drifted at once is repaired in order', async () => {
  await expectActions({ kind: 'service', desired: 'v2', versions: { v2: 'live' }, live: 'v1', complete: [], modified: {} },
    ['materialize v2 sha256:v2', 'switch live → v2', 'start v2'], ['live_version_mismatch', 'process_missing']);
});

// ── the queue ──

/** A queue over a fake sync that answers from `results`; `after(n)` resolves once n more syncs ran. */
function queue(results: Record<string, SyncResult[]>): { r: Reconciler; synced: string[]; after(n: number): Promise<void> } {
  const synced: string[] = [];
  let waiter: { n: number; resolve: () => void } | undefined;
  const r = new Reconciler({
    targets: () => Object.keys(results),
    sync: async (t) => {
      synced.push(t);
      if (waiter && --waiter.n === 0) waiter.resolve();
      return results[t]!.shift() ?? 'done';
    },
    resyncIntervalMs: 0, backoffInitialMs: 1, backoffMaxMs: 4,
  });
  return { r, synced, after: (n) => new Promise<void>((resolve) => { waiter = { n, resolve }; }) };
}

test('the queue holds names: a name queued twice before it runs is synced once', async () => {
  const q = queue({ a: [], b: [] });
  q.r.start();
  const done = q.after(2);
  // 'a' starts syncing at once; 'b', queued twice meanwhile, waits as one name.
  q.r.enqueue('a'); q.r.enqueue('b'); q.r.enqueue('b');
  await done;
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(q.synced, ['a', 'b']);
  await q.r.close();
});

test('a failed sync is retried after its back-off until it succeeds, then forgotten', async () => {
  const q = queue({ a: ['retry', 'retry', 'done'] });
  q.r.start();
  const done = q.after(3);
  q.r.enqueue('a');
  await done;
  assert.deepEqual(q.synced, ['a', 'a', 'a']);
  await q.r.close();
});

test('a resync enqueues every name', async () => {
  const q = queue({ a: [], b: [], c: [] });
  q.r.start();
  const done = q.after(3);
  q.r.enqueueAll();
  await done;
  assert.deepEqual(q.synced, ['a', 'b', 'c']);
  await q.r.close();
});

test('nothing is synced before start or after close', async () => {
  const q = queue({ a: [] });
  q.r.enqueue('a');
  q.r.start();
  await q.r.close();
  q.r.enqueue('a');
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(q.synced, []);
});
