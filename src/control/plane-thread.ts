/**
 * The server's control plane, on a thread of its own (./thread.ts is the server's side of it). The
 * plane's work — operation steps, promotions, the reconcile loop, observation, its SQLite commits and
 * the garbage it makes — runs on this thread's event loop and heap, so none of it holds up the event
 * loop that serves search.
 *
 * What crosses: calls and their answers (errors as `WireError`), an upload's body pulled a chunk at a
 * time, each event the plane publishes (the server's bus gives it its id) and each verdict the observer
 * caches. A verdict is posted before the event that caused it, and one port keeps their order, so the
 * server's snapshot of the targets reflects every event it has published, as the bus requires.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { EventBus, type EventKind, payloadOf } from '../events/bus.js';
import { stateDbPath } from '../kernel/data-dir.js';
import { errorFromWire, errorToWire, type WireError } from '../kernel/errors.js';
import type { Principal } from '../kernel/principal.js';
import { lowerThreadPriority } from '../kernel/thread-priority.js';
import { openDb } from '../store/db.js';
import type { Digest } from './artifact.js';
import { ControlPlane, type ControlPlaneOptions, type DeployOptions, type RollbackOptions } from './control-plane.js';
import { Spawner } from './spawner.js';
import type { TargetStatus } from './types.js';

/** The plane's options that can cross a thread (no database, bus, clock or spawner). */
export type ThreadPlaneOptions = Omit<ControlPlaneOptions, 'db' | 'bus' | 'now' | 'onVerdict' | 'spawner'>;

export interface PlaneThreadData {
  options: ThreadPlaneOptions;
  /** The nice value this thread runs at (Linux keeps one per thread). */
  nice: number;
}

/** Who asked, as far as the plane records it (operations and audit carry the capability and account). */
export interface ActorData { kind: Principal['kind']; capId?: string; account?: string }

export type ToThread =
  | { id: number; call: keyof PlaneCalls; args: unknown[] }
  | { body: number; chunk: Uint8Array }
  | { body: number; end: true }
  | { body: number; error: WireError };

export type FromThread =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: WireError }
  | { verdict: TargetStatus }
  | { event: { kind: EventKind; payload: Record<string, unknown>; target: string | undefined } }
  | { pull: number };

const data = workerData as PlaneThreadData;
const port = parentPort!;

const db = openDb(stateDbPath(data.options.dataDir));
const bus = new EventBus();
bus.subscribe((e) => post({ event: { kind: e.kind, payload: payloadOf(e), target: e.target } }));
// The helper that starts builds and services is forked before this thread lowers its priority, so the
// services run at the server's.
const spawner = new Spawner();
spawner.start();
lowerThreadPriority(data.nice);
const plane = new ControlPlane({ ...data.options, db, bus, spawner, onVerdict: (verdict) => post({ verdict }) });

function post(message: FromThread): void { port.postMessage(message); }

function actor(a: ActorData): Principal {
  return {
    kind: a.kind, rights: new Set(), can: () => false,
    ...(a.capId === undefined ? {} : { capId: a.capId }), ...(a.account === undefined ? {} : { account: a.account }),
  };
}

// ───────────────────────────── an upload's body ─────────────────────────────

type BodyMessage = { chunk: Uint8Array } | { end: true } | { error: WireError };
const bodyWaiters = new Map<number, (m: BodyMessage) => void>();

/**
 * The body of upload `id`, asked of the server a chunk at a time: at most one chunk is in flight. When
 * the plane stops reading early (a limit), the call's end tells the server to let the body go.
 */
async function* pullBody(id: number): AsyncGenerator<Buffer> {
  try {
    for (;;) {
      const m = await new Promise<BodyMessage>((resolve) => { bodyWaiters.set(id, resolve); post({ pull: id }); });
      if ('error' in m) throw errorFromWire(m.error);
      if ('end' in m) return;
      yield Buffer.from(m.chunk.buffer, m.chunk.byteOffset, m.chunk.byteLength);
    }
  } finally { bodyWaiters.delete(id); }
}

// ───────────────────────────── calls ─────────────────────────────

const calls = {
  start: () => plane.start(),
  close: async () => { await plane.close(); db.close(); },
  getOp: (opId: string) => plane.getOp(opId),
  status: (targets: string[]) => plane.status(targets),
  build: (a: ActorData, target: string) => plane.build(actor(a), target),
  stage: (a: ActorData, target: string, version: string) => plane.stage(actor(a), target, version),
  stageUpload: (a: ActorData, target: string, digest: Digest, body: number) => plane.stageUpload(actor(a), target, digest, pullBody(body)),
  deploy: (a: ActorData, target: string, o: DeployOptions) => plane.deploy(actor(a), target, o),
  planDeploy: (target: string, o: DeployOptions) => plane.planDeploy(target, o),
  rollback: (a: ActorData, target: string, o: RollbackOptions) => plane.rollback(actor(a), target, o),
  planRollback: (target: string, o: RollbackOptions) => plane.planRollback(target, o),
  reconcile: (a: ActorData, target: string) => plane.reconcile(actor(a), target),
  reconcileAll: (a: ActorData) => plane.reconcileAll(actor(a)),
  restart: (a: ActorData, target: string, reason: string | undefined) => plane.restart(actor(a), target, reason),
};

/** The calls the server may make, by name: `ControlThread` derives its typed client from this. */
export type PlaneCalls = typeof calls;

port.on('message', (m: ToThread) => {
  if ('body' in m) {
    const waiter = bodyWaiters.get(m.body);
    bodyWaiters.delete(m.body);
    waiter?.(m);
    return;
  }
  const fn = calls[m.call] as (...args: unknown[]) => unknown;
  Promise.resolve().then(() => fn(...m.args)).then(
    (value) => post({ id: m.id, ok: true, value }),
    (err: unknown) => post({ id: m.id, ok: false, error: errorToWire(err) }),
  );
});
