/**
 * The server's side of the control plane's thread (./plane-thread.ts): a `Plane` for the application
 * service whose work runs on that thread. Reads the service makes itself — the allowlist, the records in
 * the state database — stay here (the same file, its own connection); every call that the plane answers
 * from what it does or keeps in memory is posted to the thread.
 *
 * Events the plane publishes are re-published on the server's bus, and the verdicts it caches are
 * mirrored here for the bus's snapshot: the thread posts a verdict before the event that caused it.
 *
 * If the thread dies (a bug in the plane), the calls in flight fail with 503, the thread is started
 * again after a pause that doubles up to a minute, and its start recovers as a restarted server's
 * would: interrupted operations failed, locks cleared, every target reconciled.
 */
import { Worker } from 'node:worker_threads';
import type { EventBus } from '../events/bus.js';
import { errorFromWire, errorToWire, UnavailableError } from '../kernel/errors.js';
import type { Principal } from '../kernel/principal.js';
import { threadModule } from '../kernel/thread-module.js';
import type { Db } from '../store/db.js';
import { AllowlistSource } from './allowlist.js';
import type { Digest } from './artifact.js';
import { planeSettings, type DeployOptions, type RollbackOptions } from './control-plane.js';
import type { OpAnswer, OpView } from './operations.js';
import type { ActorData, FromThread, PlaneCalls, PlaneThreadData, ThreadPlaneOptions, ToThread } from './plane-thread.js';
import type { PlanAnswer } from './rules.js';
import type { Plane } from './service.js';
import { ControlStore } from './store.js';
import type { TargetStatus } from './types.js';

const THREAD_MODULE = threadModule(import.meta.url, 'plane-thread');

const DEFAULT_NICE = 10;

const RESTART_DELAY_MS = 1_000;
const RESTART_DELAY_MAX_MS = 60_000;
/** A thread that ran this long before it died starts again after the first delay. */
const RESTART_RESET_MS = 60_000;

export interface ControlThreadOptions extends ThreadPlaneOptions {
  /** The server's database (the service's reads) and bus (the plane's events). */
  db: Db;
  bus: EventBus;
  /** Reports a thread that died, and a restart that failed. */
  onError?: (message: string, err: unknown) => void;
  /** The thread's module: ./plane-thread.js, or a module that loads it and adds to it. */
  threadModule?: URL;
  /**
   * The thread's nice value (0 normal … 19 lowest; Linux keeps one per thread). Default 10: the plane's
   * work yields the cores to search when both want them, and still gets about a tenth of a busy core.
   */
  threadNice?: number;
}

type Pending = { resolve(value: unknown): void; reject(err: Error): void };
type Call<M extends keyof PlaneCalls> = Awaited<ReturnType<PlaneCalls[M]>>;

export class ControlThread implements Plane {
  readonly allowlist: AllowlistSource;
  readonly store: ControlStore;
  readonly uploadLimitBytes: number;
  readonly idempotencyTtlMs: number;
  readonly #data: PlaneThreadData;
  readonly #module: URL;
  readonly #bus: EventBus;
  readonly #onError: (message: string, err: unknown) => void;
  readonly #pending = new Map<number, Pending>();
  /** Upload bodies the thread is reading, by id. */
  readonly #bodies = new Map<number, AsyncIterator<Buffer>>();
  /** The verdicts the thread's observer holds: the `targets` part of the bus's snapshot. */
  readonly #verdicts = new Map<string, TargetStatus>();
  #worker: Worker | undefined;
  #next = 0;
  #startedAt = 0;
  #restartDelay = RESTART_DELAY_MS;
  #restartTimer: NodeJS.Timeout | undefined;
  /** Settles when the current thread's start has (whether or not it succeeded). */
  #starting: Promise<void> | undefined;
  #closing: Promise<void> | undefined;

  constructor(o: ControlThreadOptions) {
    const { db, bus, onError, threadModule: module, threadNice, ...options } = o;
    const settings = planeSettings(options);
    this.allowlist = new AllowlistSource(settings.allowlistPath);
    this.store = new ControlStore(db, () => new Date());
    this.uploadLimitBytes = settings.uploadLimitBytes;
    this.idempotencyTtlMs = settings.idempotencyTtlMs;
    this.#data = { options, nice: threadNice ?? DEFAULT_NICE };
    this.#module = module ?? THREAD_MODULE;
    this.#bus = bus;
    this.#onError = onError ?? (() => undefined);
  }

  now(): Date { return new Date(); }

  /** Starts the thread; settles when its plane has recovered and converged every target once. */
  async start(): Promise<void> {
    if (this.#worker) return;
    this.#bus.registerSnapshotPart('targets', (view) => [...this.#verdicts.values()].filter((s) => view.canSeeTarget(s.target)));
    await this.#launch();
  }

  /** Stops accepting calls, lets the plane finish its running operations and stop its services, ends the thread. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      clearTimeout(this.#restartTimer);
      const w = this.#worker;
      if (!w) return;
      try { await this.#call('close'); } finally {
        this.#worker = undefined;
        await w.terminate();
        this.#failAll(new UnavailableError('The control plane is shutting down.'));
      }
    })();
    return this.#closing;
  }

  getOp(opId: string): Promise<OpView | undefined> { return this.#call('getOp', opId); }
  status(targets: readonly string[]): Promise<TargetStatus[]> { return this.#call('status', [...targets]); }
  build(a: Principal, target: string): Promise<OpAnswer> { return this.#call('build', actor(a), target); }
  stage(a: Principal, target: string, version: string): Promise<OpAnswer> { return this.#call('stage', actor(a), target, version); }
  deploy(a: Principal, target: string, o: DeployOptions): Promise<OpAnswer> { return this.#call('deploy', actor(a), target, o); }
  planDeploy(target: string, o: DeployOptions): Promise<PlanAnswer> { return this.#call('planDeploy', target, o); }
  rollback(a: Principal, target: string, o: RollbackOptions): Promise<OpAnswer> { return this.#call('rollback', actor(a), target, o); }
  planRollback(target: string, o: RollbackOptions): Promise<PlanAnswer> { return this.#call('planRollback', target, o); }
  reconcile(a: Principal, target: string): Promise<OpAnswer> { return this.#call('reconcile', actor(a), target); }
  reconcileAll(a: Principal): Promise<OpAnswer> { return this.#call('reconcileAll', actor(a)); }
  restart(a: Principal, target: string, reason: string | undefined): Promise<OpAnswer> { return this.#call('restart', actor(a), target, reason); }

  /** The body is read as the thread asks for it, one chunk at a time; it stops reading when the call ends. */
  async stageUpload(a: Principal, target: string, digest: Digest, body: AsyncIterable<Buffer>): Promise<OpAnswer> {
    const id = this.#next++;
    this.#bodies.set(id, body[Symbol.asyncIterator]());
    try {
      return await this.#call('stageUpload', actor(a), target, digest, id);
    } finally { this.#endBody(id); }
  }

  /** Posts a call. Calls made while the thread is starting wait for its start (recovery comes first). */
  async #call<M extends keyof PlaneCalls>(call: M, ...args: Parameters<PlaneCalls[M]>): Promise<Call<M>> {
    if (call !== 'start' && call !== 'close') await this.#starting;
    const w = this.#worker;
    if (!w || (this.#closing && call !== 'close')) {
      throw new UnavailableError(this.#closing ? 'The control plane is shutting down.' : 'The control plane is restarting; retry shortly.', 2);
    }
    const id = this.#next++;
    return new Promise<Call<M>>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      w.postMessage({ id, call, args } satisfies ToThread);
    });
  }

  /** A new thread, started; one whose start fails is ended (and so replaced, after the delay). */
  async #launch(): Promise<void> {
    const w = new Worker(this.#module, { workerData: this.#data });
    this.#worker = w;
    this.#startedAt = Date.now();
    w.on('message', (m: FromThread) => this.#receive(w, m));
    w.on('error', (err) => this.#died(w, err));
    w.on('exit', (code) => this.#died(w, new Error(`The control plane's thread exited (${code}).`)));
    const starting = this.#call('start');
    this.#starting = starting.then(() => undefined, () => undefined);
    try { await starting; } catch (err) {
      if (this.#worker === w && !this.#closing) void w.terminate();
      throw err;
    }
  }

  #receive(w: Worker, m: FromThread): void {
    if ('verdict' in m) { this.#verdicts.set(m.verdict.target, m.verdict); return; }
    if ('event' in m) { this.#bus.publish(m.event.kind, m.event.payload, m.event.target); return; }
    if ('pull' in m) { void this.#pull(w, m.pull); return; }
    const p = this.#pending.get(m.id);
    if (!p) return;
    this.#pending.delete(m.id);
    if (m.ok) p.resolve(m.value);
    else p.reject(errorFromWire(m.error));
  }

  /** Sends the next chunk of body `id`: a copy of exactly its bytes, whose buffer moves to the thread. */
  async #pull(w: Worker, id: number): Promise<void> {
    const it = this.#bodies.get(id);
    if (!it) return;
    let message: ToThread;
    const transfer: ArrayBuffer[] = [];
    try {
      const r = await it.next();
      if (r.done) message = { body: id, end: true };
      else {
        const chunk = new Uint8Array(r.value);
        message = { body: id, chunk };
        transfer.push(chunk.buffer);
      }
    } catch (err) { message = { body: id, error: errorToWire(err) }; }
    if (this.#worker === w) w.postMessage(message, transfer);
  }

  #endBody(id: number): void {
    const it = this.#bodies.get(id);
    if (!it) return;
    this.#bodies.delete(id);
    void it.return?.().catch(() => undefined);
  }

  #died(w: Worker, err: Error): void {
    if (this.#worker !== w) return;
    this.#worker = undefined;
    this.#failAll(new UnavailableError('The control plane restarted; retry shortly.', 2));
    if (this.#closing) return;
    this.#onError('quarry: the control plane\'s thread died; starting it again', err);
    if (Date.now() - this.#startedAt >= RESTART_RESET_MS) this.#restartDelay = RESTART_DELAY_MS;
    const delay = this.#restartDelay;
    this.#restartDelay = Math.min(RESTART_DELAY_MAX_MS, delay * 2);
    this.#restartTimer = setTimeout(() => {
      this.#launch().catch((e: unknown) => this.#onError('quarry: the control plane failed to start again', e));
    }, delay);
    this.#restartTimer.unref();
  }

  #failAll(err: Error): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) p.reject(err);
    for (const id of [...this.#bodies.keys()]) this.#endBody(id);
  }
}

function actor(p: Principal): ActorData {
  return { kind: p.kind, ...(p.capId === undefined ? {} : { capId: p.capId }), ...(p.account === undefined ? {} : { account: p.account }) };
}
