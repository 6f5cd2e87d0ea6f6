/**
 * The observer: what is actually there for each target (the live pointer, the files of the live release,
 * the supervised process, a health probe) and the cached verdict built from it, which the event-stream
 * snapshot and the reconcile loop read.
 *
 * Observation is asynchronous and cached, and never runs on the publish path. A full observation checks
 * the live release's files through the `ReleaseChecker` (on a thread of its own, hashing only files whose
 * stat changed). Publishing an event only marks the target dirty: its cached verdict is rebuilt at once from
 * the database, the pointer and the last file check of that version (a few syscalls, no file of the
 * release read: the bus requires a snapshot to reflect every event already published), and a full
 * observation follows in the background, one target at a time.
 *
 * Invariant: a background result never overwrites a verdict that was rebuilt after it started (each
 * target carries a sequence number bumped by `markDirty`); the newer mark has scheduled a newer refresh.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { SnapshotView } from '../events/bus.js';
import { ReleaseChecker } from './release-checker.js';
import type { ReleaseStore } from './releases.js';
import { loadRecipe, type Recipe } from './recipe.js';
import type { ControlStore } from './store.js';
import { probeHttp, type Supervisor } from './supervisor.js';
import type { TargetObservation, TargetStatus } from './types.js';
import { statusOf, type StatusFacts } from './verdict.js';

export interface ObserverOptions {
  store: ControlStore;
  releases: ReleaseStore;
  supervisor: Supervisor;
  targetsDir: string;
  /** Health probe timeout when observing (at least the recipe's `timeout_ms`). */
  probeTimeoutMs: number;
  /** Consecutive failed probes before a running service counts as unhealthy. */
  probeFailureThreshold: number;
  /** Called with every verdict the cache takes, before the event that caused it is published. */
  onVerdict?: ((status: TargetStatus) => void) | undefined;
}

export class Observer {
  readonly files = new ReleaseChecker();
  readonly #o: ObserverOptions;
  readonly #verdicts = new Map<string, TargetStatus>();
  /** The last health probe of each service target's current process. */
  readonly #lastProbe = new Map<string, { pid: number; failures: number }>();
  /** The last file check of each target's live release, and which version it was of. */
  readonly #lastCheck = new Map<string, { version: string; modified: string[] | undefined }>();
  /** Bumped by every `markDirty`: a refresh that started before the bump does not store its result. */
  readonly #seq = new Map<string, number>();
  readonly #dirty = new Set<string>();
  /** The running background drain, if any. */
  #draining: Promise<void> | undefined;
  #closed = false;

  constructor(o: ObserverOptions) { this.#o = o; }

  /** The cached verdicts (the snapshot's `targets` part), filtered to what `view` may see. */
  snapshot(view: SnapshotView): TargetStatus[] {
    return [...this.#verdicts.values()].filter((s) => view.canSeeTarget(s.target));
  }

  /**
   * The publish path: rebuilds the target's cached verdict from what is known without reading the
   * release, and schedules a full observation in the background.
   */
  markDirty(target: string): void {
    if (this.#closed) return;
    this.#seq.set(target, (this.#seq.get(target) ?? 0) + 1);
    let obs: TargetObservation | Error;
    try { obs = this.#quickObservation(target); } catch (err) { obs = err as Error; }
    this.#cache(statusOf(target, this.#facts(target), obs));
    this.#dirty.add(target);
    this.#draining ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.#drain());
  }

  /** A full observation (with a health probe unless `probe` is false), judged and cached. */
  async refresh(target: string, probe = true): Promise<TargetStatus> {
    return (await this.#refresh(target, probe)).status;
  }

  /**
   * A full observation to act on (the reconcile loop): undefined when the target changed while it was
   * being observed (an operation moved it or released its lock), since the verdict would then mix an
   * older observation with a newer spec. The change has queued a newer observation.
   */
  async consistent(target: string): Promise<TargetStatus | undefined> {
    const r = await this.#refresh(target, true);
    return r.current ? r.status : undefined;
  }

  async #refresh(target: string, probe: boolean): Promise<{ status: TargetStatus; current: boolean }> {
    const seq = this.#seq.get(target) ?? 0;
    const obs = await this.observe(target, probe).catch((err: Error) => err);
    const status = statusOf(target, this.#facts(target), obs);
    const current = (this.#seq.get(target) ?? 0) === seq;
    if (current) this.#cache(status);
    return { status, current };
  }

  #cache(status: TargetStatus): void {
    this.#verdicts.set(status.target, status);
    this.#o.onVerdict?.(status);
  }

  /** Stops background refreshes, waits for the one running, then stops the file checks (the control plane is closing). */
  async close(): Promise<void> {
    this.#closed = true;
    this.#dirty.clear();
    await this.#draining;
    await this.files.close();
  }

  async #drain(): Promise<void> {
    try {
      while (this.#dirty.size && !this.#closed) {
        const target = this.#dirty.values().next().value as string;
        this.#dirty.delete(target);
        // Probes belong to requests and the resync; an event's refresh reuses the last probe.
        await this.refresh(target, false).catch(() => undefined);
      }
    } finally { this.#draining = undefined; }
  }

  /**
   * Paths of a release that differ from its manifest, undefined when the release is incomplete. Off the
   * event loop and cached per file (see ReleaseChecker); remembered as the target's last check of that
   * version.
   */
  async verify(target: string, version: string): Promise<string[] | undefined> {
    const { releases } = this.#o;
    const modified = await this.files.check(releases.manifestPath(target, version), releases.releaseDir(target, version));
    this.#lastCheck.set(target, { version, modified });
    return modified;
  }

  /**
   * What is actually there: the live pointer, the files of the live release, the supervised process
   * and (with `probe`) one health probe of it; without `probe`, the last probe's answer.
   */
  async observe(target: string, probe = true): Promise<TargetObservation> {
    const recipe = this.#recipe(target);
    const liveVersion = this.#o.releases.readLive(target);
    const obs = this.#base(target, recipe, liveVersion);
    obs.modified = liveVersion ? await this.verify(target, liveVersion) : undefined;
    const p = this.#o.supervisor.current(target);
    if (probe && obs.process && p && obs.process.state === 'running' && recipe?.health.type === 'http') {
      const ok = await probeHttp(p.port, recipe.health.path, Math.max(recipe.health.timeoutMs, this.#o.probeTimeoutMs));
      const last = this.#lastProbe.get(target);
      const failures = ok ? 0 : (last?.pid === p.pid ? last.failures : 0) + 1;
      this.#lastProbe.set(target, { pid: p.pid, failures });
      obs.process.healthy = failures < this.#o.probeFailureThreshold;
    }
    return obs;
  }

  /**
   * The observation without reading the release's files: the last file check when it was of the live
   * version; otherwise a complete release counts as intact until the background check (queued by the
   * caller) says otherwise.
   */
  #quickObservation(target: string): TargetObservation {
    const liveVersion = this.#o.releases.readLive(target);
    const obs = this.#base(target, this.#recipe(target), liveVersion);
    const last = this.#lastCheck.get(target);
    obs.modified = !liveVersion ? undefined
      : last?.version === liveVersion ? last.modified
        : this.#o.releases.isComplete(target, liveVersion) ? [] : undefined;
    return obs;
  }

  /** Everything but the files: pointer, digest (from the version record), process, health file. */
  #base(target: string, recipe: Recipe | undefined, liveVersion: string | undefined): TargetObservation {
    const obs: TargetObservation = {
      target, kind: recipe?.kind ?? 'unknown', liveVersion,
      liveDigest: liveVersion ? this.#o.store.getVersion(target, liveVersion)?.digest : undefined,
      modified: undefined,
    };
    if (recipe?.kind === 'service') {
      const p = this.#o.supervisor.current(target);
      if (p) {
        const alive = this.#o.supervisor.isAlive(p);
        const last = this.#lastProbe.get(target);
        obs.process = {
          version: p.version, pid: p.pid, port: p.port, state: alive ? p.state : (p.state === 'backoff' ? 'backoff' : 'exited'), restarts: p.restarts,
          // A process that passed its start-up health check counts as healthy until a probe says otherwise.
          healthy: alive ? !(last && last.pid === p.pid && last.failures >= this.#o.probeFailureThreshold) : undefined,
        };
      }
    } else if (recipe?.kind === 'static' && liveVersion && recipe.health.type === 'file') {
      obs.healthFile = existsSync(join(this.#o.releases.releaseDir(target, liveVersion), recipe.health.path));
    }
    return obs;
  }

  #recipe(target: string): Recipe | undefined {
    try { return loadRecipe(this.#o.targetsDir, target); } catch { return undefined; }
  }

  #facts(target: string): StatusFacts {
    const { store, releases } = this.#o;
    const spec = store.getTarget(target);
    return {
      spec,
      desiredRec: spec.desired_version ? store.getVersion(target, spec.desired_version) : undefined,
      lockOp: spec.lock_op ? store.getOp(spec.lock_op) : undefined,
      lockedAt: store.lockedAt(target),
      lastOp: store.lastOp(target),
      stable: store.listVersions(target).filter((v) => v.state === 'live' || v.state === 'superseded').map((v) => v.version),
      livePath: releases.livePath(target),
    };
  }
}
