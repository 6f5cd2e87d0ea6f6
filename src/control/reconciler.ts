/**
 * The reconciler, in the style of a Kubernetes controller: a queue of target **names** (never objects),
 * and a sync of one name that re-reads the desired and the observed state and converges with steps that
 * are safe to repeat. Duplicate, late or merged requests are therefore harmless.
 *
 * `reconcileTarget` is the decision, taking every read and every effect through `ReconcileEffects`, so a
 * test can declare an observed state, run one reconcile and compare the list of actions taken. The
 * `Reconciler` class is the queue and its error policy, written out in one place (`#processNext`).
 */
import type { VersionRecord } from './types.js';

/** What one reconcile reads: the spec side (database) and the observed side (disk, process table). */
export interface ReconcileView {
  desired(target: string): string | null;
  version(target: string, version: string): VersionRecord | undefined;
  /** The recipe's kind; throws when the recipe is invalid (an invalid spec: reported, not retried). */
  kind(target: string): 'static' | 'service';
  live(target: string): string | undefined;
  /** Whether the release directory and its manifest are both on disk. */
  complete(target: string, version: string): boolean;
  /** Paths of a complete release that differ from its manifest. */
  modified(target: string, version: string): Promise<string[]>;
  /** The target's current supervised process, if any. */
  process(target: string): { version: string; state: string } | undefined;
}

/** What one reconcile may do. Each is idempotent. */
export interface ReconcileActions {
  /** Unpacks the release from its artifact (digest re-checked). */
  materialize(target: string, version: string, digest: string): Promise<void>;
  /** Restores the files that differ from the manifest from a fresh unpack; removes extra ones. */
  restore(target: string, version: string): Promise<void>;
  switchLive(target: string, version: string): void;
  removeLive(target: string): void;
  /** Starts `version` beside the current process, waits for health, stops the old one. */
  startService(target: string, version: string, why: string): Promise<void>;
  stopService(target: string): Promise<void>;
  /** Records `version` as the live version (the one live before becomes superseded). */
  markLive(target: string, version: string): void;
  /** Publishes `target.drifted` (before the repair it announces). */
  drifted(target: string, payload: Record<string, unknown>): void;
}

export type ReconcileEffects = ReconcileView & ReconcileActions;

/** Why a reconcile runs: at start-up a missing process is expected, not drift worth an event. */
export type ReconcileCause = 'startup' | 'request' | 'resync';

/**
 * One reconcile of one target (its lock held by the caller). Order, each step idempotent: nothing
 * desired → remove our pointer and stop the process; desired failed or unknown → nothing (a failed
 * version is never selected); release incomplete → materialize; files modified → restore; pointer ≠
 * desired → switch; service not running desired → start. Returns what it did, empty when in sync.
 */
export async function reconcileTarget(fx: ReconcileEffects, target: string, why: ReconcileCause, log: (line: string) => void = () => undefined): Promise<string[]> {
  const actions: string[] = [];
  let kind: 'static' | 'service';
  try { kind = fx.kind(target); } catch (err) {
    log(`${target}: invalid recipe: ${(err as Error).message}`);
    return actions;
  }
  const desired = fx.desired(target);
  if (!desired) {
    // Nothing should be live (e.g. a first promotion interrupted by a crash). The pointer lives in our
    // own directory, so it is ours to remove.
    const live = fx.live(target);
    if (live) {
      fx.drifted(target, { version: null, live, reasons: ['live_without_desired'] });
      fx.removeLive(target);
      actions.push(`removed live pointer to ${live}: nothing desired`);
    }
    if (kind === 'service' && fx.process(target)) { await fx.stopService(target); actions.push('stopped process: nothing desired'); }
    for (const a of actions) log(`${target}: ${a}`);
    return actions;
  }
  const v = fx.version(target, desired);
  if (!v) { log(`${target}: desired version ${desired} has no record`); return actions; }
  if (v.state === 'failed') { log(`${target}: desired version ${desired} is failed; not selecting it`); return actions; }
  if (!fx.complete(target, desired)) {
    await fx.materialize(target, desired, v.digest);
    actions.push(`materialized ${desired}`);
  }
  const modified = await fx.modified(target, desired);
  if (modified.length) {
    fx.drifted(target, { version: desired, reasons: ['live_files_modified'], paths: modified.slice(0, 20) });
    await fx.restore(target, desired);
    actions.push(`restored ${modified.length} file(s) of ${desired}`);
  }
  const live = fx.live(target);
  if (live !== desired) {
    fx.drifted(target, { version: desired, live: live ?? null, reasons: [live ? 'live_version_mismatch' : 'live_pointer_missing'] });
    fx.switchLive(target, desired);
    actions.push(`live pointer ${live ?? '(none)'} → ${desired}`);
  }
  if (kind === 'service') {
    const cur = fx.process(target);
    if (!cur || cur.version !== desired || (cur.state !== 'running' && cur.state !== 'backoff')) {
      if (why !== 'startup') fx.drifted(target, { version: desired, reasons: [cur ? 'process_version_mismatch' : 'process_missing'] });
      await fx.startService(target, desired, `reconcile (${why})`);
      actions.push(`started ${desired}`);
    }
  }
  if (v.state !== 'live') fx.markLive(target, desired);
  for (const a of actions) log(`${target}: ${a}`);
  return actions;
}

/** The outcome of syncing one name: done (converged, nothing to do, or not ours), or retry with back-off. */
export type SyncResult = 'done' | 'retry';

export interface ReconcilerOptions {
  /** The names the resync enqueues: every target of the allowlist, re-read each time. */
  targets(): readonly string[];
  /** Observes one target and converges it if needed. Must not throw (a failure is `retry`). */
  sync(target: string): Promise<SyncResult>;
  /** Every target is enqueued this often; 0 = never (only on request). */
  resyncIntervalMs: number;
  /** Back-off of a target whose sync failed: first delay, doubling per failure, capped. */
  backoffInitialMs: number;
  backoffMaxMs: number;
}

export class Reconciler {
  readonly #o: ReconcilerOptions;
  /** Names waiting; a Set, so a name queued twice is synced once. */
  readonly #queue = new Set<string>();
  readonly #backoff = new Map<string, { failures: number; timer?: NodeJS.Timeout }>();
  /** The running drain, if any. */
  #running: Promise<void> | undefined;
  #open = false;
  #resync: NodeJS.Timeout | undefined;

  constructor(o: ReconcilerOptions) { this.#o = o; }

  /** Starts the periodic resync; names enqueued before this are ignored. */
  start(): void {
    this.#open = true;
    if (this.#o.resyncIntervalMs > 0) {
      this.#resync = setInterval(() => this.enqueueAll(), this.#o.resyncIntervalMs);
      this.#resync.unref();
    }
  }

  enqueueAll(): void { for (const t of this.#o.targets()) this.enqueue(t); }

  enqueue(target: string): void {
    if (!this.#open) return;
    this.#queue.add(target);
    this.#running ??= this.#drain();
  }

  /** Enqueues `target` after its back-off: initial × 2^(failures−1), capped. */
  enqueueAfterFailure(target: string): void {
    const b = this.#backoff.get(target) ?? { failures: 0 };
    b.failures++;
    const delay = Math.min(this.#o.backoffMaxMs, this.#o.backoffInitialMs * 2 ** (b.failures - 1));
    if (b.timer) clearTimeout(b.timer);
    b.timer = setTimeout(() => { b.timer = undefined; this.enqueue(target); }, delay);
    this.#backoff.set(target, b);
  }

  /** Stops the resync and the back-off timers, drops what is queued, and waits for a running sync. */
  async close(): Promise<void> {
    this.#open = false;
    if (this.#resync) clearInterval(this.#resync);
    for (const b of this.#backoff.values()) if (b.timer) clearTimeout(b.timer);
    this.#queue.clear();
    await this.#running;
  }

  /** One worker: a name is never synced twice at once. */
  async #drain(): Promise<void> {
    try {
      while (this.#queue.size && this.#open) await this.#processNext();
    } finally { this.#running = undefined; }
  }

  /** The error policy: success forgets the back-off; a failure goes back on the queue after it. */
  async #processNext(): Promise<void> {
    const target = this.#queue.values().next().value as string;
    this.#queue.delete(target);
    if ((await this.#o.sync(target)) === 'retry') this.enqueueAfterFailure(target);
    else {
      const b = this.#backoff.get(target);
      if (b?.timer) clearTimeout(b.timer);
      this.#backoff.delete(target);
    }
  }
}
