/**
 * The control plane as a library (no HTTP, no authorization): the operations of CONTRACT §6 (build,
 * stage, deploy, rollback, reconcile, restart) on targets the caller has already checked, the verdicts
 * of deploy_status, and the reconcile loop. It composes the parts, one job each:
 *
 *   operations.ts  the runner: lock → op record → steps in the background → audit → unlock
 *   rules.ts       what each operation requires of its versions; dry-run plans
 *   promotion.ts   atomic switch, health-gated, automatic rollback
 *   reconciler.ts  the queue of target names and the desired-vs-observed decision
 *   observer.ts    observation (async, cached) and the cached verdicts; the files of live releases are
 *                  checked on a thread of their own (release-checker.ts)
 *   spawner.ts     builds and services are started by a small helper process, never by a fork of the server
 *
 * Rights, the allowlist check, input validation, idempotency and dry runs are the application service's
 * (`service.ts`), which every face calls.
 *
 * Lifecycle: `created → started → closing → closed`. `start()` recovers from a crash (interrupted ops
 * failed, locks cleared, half-written releases removed, orphaned services stopped) and converges every
 * target once; `close()` stops accepting operations, waits for running ones, stops the services.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Principal } from '../kernel/principal.js';
import type { EventBus, EventKind } from '../events/bus.js';
import { PayloadTooLargeError, QuarryError, UnavailableError, BadRequestError } from '../kernel/errors.js';
import { controlDir } from '../kernel/data-dir.js';
import { appendAudit } from '../store/audit.js';
import type { Db } from '../store/db.js';
import { type Allowlist, AllowlistSource } from './allowlist.js';
import { type ArtifactLimits, type Digest, DEFAULT_ARTIFACT_LIMITS, inspectArtifact, versionOf } from './artifact.js';
import { BuildFailedError, runBuild } from './builder.js';
import { forEachBounded } from './bounded.js';
import { Observer } from './observer.js';
import { Spawner } from './spawner.js';
import { OperationRunner, OpFailure, Slots, type OpAnswer, type OpRun, type OpView } from './operations.js';
import { Promoter } from './promotion.js';
import { loadRecipe } from './recipe.js';
import { Reconciler, reconcileTarget, type ReconcileCause, type ReconcileEffects, type SyncResult } from './reconciler.js';
import { ReleaseStore } from './releases.js';
import { checkGeneration, deployCandidate, promotionPlan, pruneCandidates, rollbackCandidate, stageCandidate, type PlanAnswer } from './rules.js';
import { Supervisor, type SupervisorOptions } from './supervisor.js';
import type { TargetStatus, VersionRecord, VersionState } from './types.js';
import { ControlStore } from './store.js';

export interface ControlPlaneOptions {
  db: Db;
  bus: EventBus;
  /** Quarry's data directory; the control plane keeps its files in `<dataDir>/control/`. */
  dataDir: string;
  /** Where `deploy/` lives. Default: the repository this module belongs to. */
  repoRoot?: string;
  /** The allowlist file. Default `<repoRoot>/deploy/allowlist.txt`. */
  allowlistPath?: string;
  /** Directory of target sources with their recipes. Default `<repoRoot>/deploy/targets`. */
  targetsDir?: string;
  now?: () => Date;
  /** Versions kept per target besides the live one (superseded, built, staged); older ones are pruned. Default 10. */
  historyLimit?: number;
  /** Builds running at once across all targets; more wait in `queued`. Default 2. */
  maxConcurrentBuilds?: number;
  /** Largest artifact accepted by `POST /api/upload` (bytes of the body). Default 512 MiB (CONTRACT §1). */
  uploadLimitBytes?: number;
  /** Limits on what an artifact may unpack to. */
  artifactLimits?: Partial<ArtifactLimits>;
  /** How long an `Idempotency-Key` answer is replayed. Default 24 h. */
  idempotencyTtlMs?: number;
  /** Every target is re-observed this often and repaired when drifted. Default 30 s; 0 = only at start and on request. */
  resyncIntervalMs?: number;
  /** Back-off of a target whose reconcile failed: first delay, doubling, capped. Defaults 1 s and 60 s. */
  reconcileBackoffInitialMs?: number;
  reconcileBackoffMaxMs?: number;
  /** Characters of output kept in an operation's `log`. Default 64 KiB. */
  opLogMaxChars?: number;
  /** Parallel reconciles at start-up and in a reconcile of every target. Default 4. */
  reconcileConcurrency?: number;
  /** Health probe timeout when computing a verdict. Default 2 s. */
  statusProbeTimeoutMs?: number;
  /** Consecutive failed probes before a running service counts as unhealthy (a busy machine can miss one). Default 3. */
  statusProbeFailureThreshold?: number;
  /** Called with every verdict the observer caches, before the event that caused it is published. */
  onVerdict?: (status: TargetStatus) => void;
  /** Starts builds and services. Default: a new one, whose helper starts at the first spawn. */
  spawner?: Spawner;
  supervisor?: Partial<Omit<SupervisorOptions, 'marker' | 'logsDir' | 'onRestart'>>;
}

type Lifecycle = 'created' | 'started' | 'closing' | 'closed';

function defaultRepoRoot(): string {
  const fromModule = fileURLToPath(new URL('../../', import.meta.url));
  return existsSync(join(fromModule, 'deploy', 'allowlist.txt')) ? fromModule : process.cwd();
}

/** The options with their defaults, as the plane and its thread's client (./thread.ts) both read them. */
export interface PlaneSettings {
  allowlistPath: string;
  targetsDir: string;
  historyLimit: number;
  uploadLimitBytes: number;
  idempotencyTtlMs: number;
  reconcileConcurrency: number;
}

export function planeSettings(o: Omit<ControlPlaneOptions, 'db' | 'bus'>): PlaneSettings {
  const repoRoot = o.repoRoot ?? defaultRepoRoot();
  return {
    allowlistPath: o.allowlistPath ?? join(repoRoot, 'deploy', 'allowlist.txt'),
    targetsDir: o.targetsDir ?? join(repoRoot, 'deploy', 'targets'),
    historyLimit: o.historyLimit ?? 10,
    uploadLimitBytes: o.uploadLimitBytes ?? 512 * 1024 * 1024,
    idempotencyTtlMs: o.idempotencyTtlMs ?? 24 * 3600 * 1000,
    reconcileConcurrency: o.reconcileConcurrency ?? 4,
  };
}

/** `GET /api/inventory`'s answer: the allowlist's targets and where they come from. */
export function inventoryOf(list: Allowlist, now: Date): Record<string, unknown> {
  return {
    v: 1,
    inventory: 'Managed deployable artifacts of this Quarry, derived from the allowlist that every control-plane operation reads.',
    source: relativeToRepo(list.file),
    revision: list.revision,
    generated_at: now.toISOString(),
    targets: [...list.targets],
    count: list.targets.length,
    lifecycle: {
      build: 'POST /api/build',
      stage: 'POST /api/upload',
      promote: 'POST /api/deploy',
      version_verdict: 'GET /api/deploy_status',
      rollback: 'POST /api/rollback',
    },
  };
}

export class ControlPlane {
  readonly allowlist: AllowlistSource;
  readonly targetsDir: string;
  readonly releases: ReleaseStore;
  readonly store: ControlStore;
  readonly supervisor: Supervisor;
  readonly observer: Observer;
  readonly ops: OperationRunner;
  readonly #promoter: Promoter;
  readonly #reconciler: Reconciler;
  readonly #bus: EventBus;
  readonly #db: Db;
  readonly #now: () => Date;
  readonly #builds: Slots;
  /** Starts builds and services from a small helper process: a fork of the server would stall its event loop. */
  readonly #spawner: Spawner;
  readonly #o: PlaneSettings;
  #state: Lifecycle = 'created';
  #closing: Promise<void> | undefined;

  constructor(o: ControlPlaneOptions) {
    const settings = planeSettings(o);
    this.allowlist = new AllowlistSource(settings.allowlistPath);
    this.targetsDir = settings.targetsDir;
    this.#now = o.now ?? (() => new Date());
    this.#db = o.db;
    this.#bus = o.bus;
    this.#o = settings;
    this.#builds = new Slots(o.maxConcurrentBuilds ?? 2);
    this.#spawner = o.spawner ?? new Spawner();
    const root = controlDir(o.dataDir);
    mkdirSync(root, { recursive: true });
    this.releases = new ReleaseStore(root, { ...DEFAULT_ARTIFACT_LIMITS, ...o.artifactLimits });
    this.store = new ControlStore(o.db, this.#now);
    this.supervisor = new Supervisor({
      ...o.supervisor,
      spawner: this.#spawner,
      marker: root,
      logsDir: (t) => this.releases.logsDir(t),
      onRestart: (target, version, restarts) => {
        this.#publish('target.restarted', { version, restarts, cause: 'crash' }, target);
      },
    });
    this.observer = new Observer({
      store: this.store, releases: this.releases, supervisor: this.supervisor, targetsDir: this.targetsDir,
      probeTimeoutMs: o.statusProbeTimeoutMs ?? 2_000, probeFailureThreshold: o.statusProbeFailureThreshold ?? 3,
      onVerdict: o.onVerdict,
    });
    this.ops = new OperationRunner({
      db: o.db, store: this.store, now: this.#now, opLogMaxChars: o.opLogMaxChars ?? 64 * 1024,
      onUnlocked: (target) => this.observer.markDirty(target),
      onSettled: async (target) => { await this.observer.refresh(target); },
    });
    this.#promoter = new Promoter({
      db: o.db, store: this.store, releases: this.releases, supervisor: this.supervisor, observer: this.observer,
      targetsDir: this.targetsDir, publish: (k, p, t) => this.#publish(k, p, t), onPromoted: (t) => this.#pruneHistory(t),
    });
    this.#reconciler = new Reconciler({
      targets: () => this.allowlist.current().targets,
      sync: (t) => this.#syncTarget(t),
      resyncIntervalMs: o.resyncIntervalMs ?? 30_000,
      backoffInitialMs: o.reconcileBackoffInitialMs ?? 1_000,
      backoffMaxMs: o.reconcileBackoffMaxMs ?? 60_000,
    });
  }

  get uploadLimitBytes(): number { return this.#o.uploadLimitBytes; }
  get idempotencyTtlMs(): number { return this.#o.idempotencyTtlMs; }
  get lifecycle(): Lifecycle { return this.#state; }
  /** The clock of this plane's records (options.now). */
  now(): Date { return this.#now(); }

  // ───────────────────────────── lifecycle ─────────────────────────────

  async start(): Promise<void> {
    if (this.#state !== 'created') return;
    this.#state = 'started';
    this.recover();
    await this.supervisor.killOrphans();
    const targets = this.allowlist.current().targets;
    for (const t of targets) this.store.ensureTarget(t);
    this.#bus.registerSnapshotPart('targets', (view) => this.observer.snapshot(view));
    this.#reconciler.start();
    await forEachBounded(targets, this.#o.reconcileConcurrency, async (t) => {
      try { await this.#reconcileLocked(t, undefined, 'startup'); } catch { this.#reconciler.enqueueAfterFailure(t); }
    });
    await forEachBounded(targets, this.#o.reconcileConcurrency, async (t) => { await this.observer.refresh(t); });
  }

  /**
   * Crash recovery, before anything else runs: every operation left queued or running is marked
   * failed (`interrupted`); a promotion it interrupted never went live, so its version gets back the
   * state it had and the desired version goes back to what it was; every lock is cleared; the release
   * store removes half-written files. Safe to run twice.
   */
  recover(): { interrupted: string[]; removed: string[] } {
    const interrupted: string[] = [];
    const tx = this.#db.transaction(() => {
      for (const op of this.store.interruptedOps()) {
        interrupted.push(op.op_id);
        this.store.updateOp(op.op_id, { state: 'failed', error: { code: 'interrupted', message: 'The operation was interrupted by a restart of Quarry.' } });
        if (op.target && (op.kind === 'deploy' || op.kind === 'rollback') && op.version) {
          const v = this.store.getVersion(op.target, op.version);
          // The promotion never finished, so the version was never judged: it gets back the state it had
          // (staged, superseded, …), and the desired version goes back below. Without a record of that
          // state it is not trusted.
          if (v && (v.state === 'promoting' || v.state === 'verifying')) this.store.setVersionState(op.target, op.version, (op.prior_state as VersionState | null) ?? 'failed');
          const spec = this.store.getTarget(op.target);
          if (spec.desired_version === op.version && v?.state !== 'live') this.store.setDesiredInTx(op.target, op.from_version);
        }
        if (op.target && op.kind === 'stage' && op.version) {
          const v = this.store.getVersion(op.target, op.version);
          if (v && v.state === 'built') this.store.setVersionState(op.target, op.version, 'stage_failed');
        }
        appendAudit(this.#db, {
          actor: op.actor ?? undefined, action: `control.${op.kind}`, target: op.target ?? undefined,
          from: op.from_version ?? undefined, to: op.version ?? undefined, result: 'interrupted',
          detail: { op_id: op.op_id },
        }, this.#now());
      }
      // A version caught mid-promotion without an op (should not happen) is not trusted either.
      this.#db.prepare(`UPDATE control_versions SET state = 'failed', updated_at = ? WHERE state IN ('promoting', 'verifying')`).run(this.#now().toISOString());
      this.store.clearAllLocks();
    });
    tx.immediate();
    const removed = this.releases.recover();
    this.store.pruneIdempotency(this.#o.idempotencyTtlMs);
    return { interrupted, removed };
  }

  /** Idempotent: a second call waits for the first. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#state = 'closing';
      await this.#reconciler.close();
      await this.ops.drain();
      await this.supervisor.close();
      await this.observer.close();
      this.#spawner.close();
      this.#state = 'closed';
    })();
    return this.#closing;
  }

  #assertOpen(): void {
    if (this.#state === 'closing' || this.#state === 'closed') throw new UnavailableError('The control plane is shutting down.');
  }

  // ───────────────────────────── reads ─────────────────────────────

  /** The operation, or undefined when there is none. */
  getOp(opId: string): OpView | undefined { return this.ops.view(opId); }

  /** Resolves when the operation has finished (for the CLI and tests). */
  async waitOp(opId: string): Promise<OpView> {
    await this.ops.settled(opId);
    return this.ops.view(opId)!;
  }

  /** Verdicts of the named targets (default: all), each observed now (files checked, services probed). */
  async status(targets: readonly string[] = this.allowlist.current().targets): Promise<TargetStatus[]> {
    return Promise.all(targets.map((t) => this.observer.refresh(t)));
  }

  versions(target: string): VersionRecord[] { return this.store.listVersions(target); }

  // ───────────────────────────── operations ─────────────────────────────
  // Each takes a target the caller has checked against the allowlist and the actor's rights, takes the
  // target's lock (409 when held) before applying the rules of rules.ts, and answers `queued`.

  async build(actor: Principal, target: string): Promise<OpAnswer> {
    this.#assertOpen();
    return this.ops.underLock(target, (opId) => {
      const recipe = loadRecipe(this.targetsDir, target);
      return this.ops.launch(actor, target, 'build', opId, {}, async (run) => {
        await this.#builds.acquire();
        try {
          this.store.updateOp(opId, { state: 'running' });
          this.#publish('build.started', { op_id: opId }, target);
          const logFile = join(this.releases.logsDir(target), `build-${opId}.log`);
          let result;
          try {
            result = await runBuild(recipe, {
              spawner: this.#spawner, scratchDir: this.releases.scratchDir, logFile,
              onLine: (line) => { run.log(line); this.#publish('build.log', { op_id: opId, line }, target); },
            });
          } catch (err) {
            const code = err instanceof BuildFailedError ? 'build_failed' : QuarryError.is(err) ? err.code : 'build_failed';
            this.#publish('build.failed', { op_id: opId, error: (err as Error).message }, target);
            throw new OpFailure(code, (err as Error).message);
          }
          const version = versionOf(result.digest);
          await this.releases.adoptArtifact(result.tarFile, result.digest);
          this.#db.transaction(() => {
            const existing = this.store.getVersion(target, version);
            if (!existing || existing.state === 'pruned' || existing.state === 'build_failed') {
              this.store.upsertVersion(target, version, result.digest, 'built', 'build');
            }
            this.store.updateOp(opId, { version, digest: result.digest });
          }).immediate();
          run.log(`built ${target} ${version} ${result.digest}`);
          this.#publish('build.succeeded', { op_id: opId, version, digest: result.digest }, target);
          await this.#pruneHistory(target);
        } finally { this.#builds.release(); }
      });
    });
  }

  /** Stages a built version: unpacks its artifact into a complete release on disk. */
  async stage(actor: Principal, target: string, version: string): Promise<OpAnswer> {
    this.#assertOpen();
    return this.ops.underLock(target, (opId) => {
      const v = stageCandidate(target, this.store.getVersion(target, version), version);
      return this.ops.launch(actor, target, 'stage', opId, { version: v.version, digest: v.digest }, async (run) => {
        this.store.updateOp(opId, { state: 'running' });
        await this.#materializeForStage(run, target, v.version, v.digest);
      });
    });
  }

  /**
   * Stages an artifact sent as a stream. The body is written to a temp file (at most
   * `uploadLimitBytes`), its digest checked against `digest`, and every tar header inspected, all before
   * the operation is launched and before anything is written under releases/: a hostile or mismatched
   * upload is a 400 and leaves nothing behind.
   */
  async stageUpload(actor: Principal, target: string, digest: Digest, body: AsyncIterable<Buffer>): Promise<OpAnswer> {
    this.#assertOpen();
    const version = versionOf(digest);
    return this.ops.underLock(target, async (opId) => {
      const tmp = join(this.releases.uploadsDir, `${opId}.tar`);
      try {
        const got = await receive(body, tmp, this.#o.uploadLimitBytes);
        if (got !== digest) throw new BadRequestError(`The body's digest is ${got}, not the expected ${digest}.`, 'digest');
        await inspectArtifact(tmp, this.releases.limits);
      } catch (err) {
        rmSync(tmp, { force: true });
        appendAudit(this.#db, { actor: actor.capId, account: actor.account, action: 'control.stage', target, to: version, result: 'rejected', reason: (err as Error).message, detail: { digest } }, this.#now());
        this.#publish('stage.failed', { version, digest, error: (err as Error).message }, target);
        throw err;
      }
      await this.releases.adoptArtifact(tmp, digest);
      const existing = this.store.getVersion(target, version);
      if (!existing || existing.state === 'pruned' || existing.state === 'stage_failed') this.store.upsertVersion(target, version, digest, 'built', 'upload');
      return this.ops.launch(actor, target, 'stage', opId, { version, digest }, async (run) => {
        this.store.updateOp(opId, { state: 'running' });
        await this.#materializeForStage(run, target, version, digest);
      });
    });
  }

  async #materializeForStage(run: OpRun, target: string, version: string, digest: Digest): Promise<void> {
    try {
      await this.releases.materialize(target, version, digest);
    } catch (err) {
      const v = this.store.getVersion(target, version);
      if (v && v.state === 'built') this.store.setVersionState(target, version, 'stage_failed');
      this.#publish('stage.failed', { op_id: run.op.op_id, version, digest, error: (err as Error).message }, target);
      throw new OpFailure('stage_failed', (err as Error).message);
    }
    const v = this.store.getVersion(target, version);
    if (v && (v.state === 'built' || v.state === 'stage_failed')) this.store.setVersionState(target, version, 'staged');
    run.log(`staged ${target} ${version} at ${this.releases.releaseDir(target, version)}`);
    this.#publish('stage.succeeded', { op_id: run.op.op_id, version, digest }, target);
    await this.#pruneHistory(target);
  }

  async deploy(actor: Principal, target: string, o: DeployOptions): Promise<OpAnswer> {
    this.#assertOpen();
    return this.ops.underLock(target, (opId) => {
      const spec = this.store.getTarget(target);
      checkGeneration(spec, o.expectedGeneration);
      const v = deployCandidate(target, this.store.listVersions(target), o.version);
      return this.ops.launch(actor, target, 'deploy', opId, { version: v.version, digest: v.digest, reason: o.reason, from: spec.desired_version }, (run) =>
        this.#promoter.promote(run, target, v, 'deploy'));
    });
  }

  /** The dry run of `deploy`: the plan, without the lock, changing nothing. */
  planDeploy(target: string, o: DeployOptions): PlanAnswer {
    const spec = this.store.getTarget(target);
    checkGeneration(spec, o.expectedGeneration);
    return this.#plan(target, 'deploy', deployCandidate(target, this.store.listVersions(target), o.version));
  }

  async rollback(actor: Principal, target: string, o: RollbackOptions): Promise<OpAnswer> {
    this.#assertOpen();
    return this.ops.underLock(target, (opId) => {
      const spec = this.store.getTarget(target);
      const v = this.#rollbackCandidate(target, o.to);
      return this.ops.launch(actor, target, 'rollback', opId, { version: v.version, digest: v.digest, reason: o.reason, from: spec.desired_version }, (run) =>
        this.#promoter.promote(run, target, v, 'rollback'));
    });
  }

  planRollback(target: string, o: RollbackOptions): PlanAnswer {
    return this.#plan(target, 'rollback', this.#rollbackCandidate(target, o.to));
  }

  #rollbackCandidate(target: string, to: string): VersionRecord {
    return rollbackCandidate(target, this.store.getTarget(target), this.store.listVersions(target), to,
      (v) => this.releases.isComplete(target, v.version) || this.releases.hasArtifact(v.digest));
  }

  #plan(target: string, kind: 'deploy' | 'rollback', v: VersionRecord): PlanAnswer {
    return promotionPlan(loadRecipe(this.targetsDir, target), kind, this.store.getTarget(target), v,
      this.releases.readLive(target), this.releases.isComplete(target, v.version));
  }

  async reconcile(actor: Principal, target: string): Promise<OpAnswer> {
    this.#assertOpen();
    return this.ops.underLock(target, (opId) => this.ops.launch(actor, target, 'reconcile', opId, {}, async (run) => {
      this.store.updateOp(opId, { state: 'running' });
      const actions = await this.#reconcileLocked(target, run, 'request');
      run.log(actions.length ? actions.join('\n') : 'in sync: nothing to do');
    }));
  }

  /**
   * Reconciles every target: each is observed first, and only one that is not in sync is locked and
   * reconciled (a target locked by another operation is skipped). Observing needs no write, so a
   * reconcile of 41 targets in sync costs no database commit per target.
   */
  async reconcileAll(actor: Principal): Promise<OpAnswer> {
    this.#assertOpen();
    const opId = this.store.newOpId();
    const op = this.store.createOp({ op_id: opId, target: null, kind: 'reconcile', actor: actor.capId });
    return this.ops.run(actor, op, undefined, async (run) => {
      this.store.updateOp(opId, { state: 'running' });
      const failed: string[] = [];
      let inSync = 0;
      await forEachBounded(this.allowlist.current().targets, this.#o.reconcileConcurrency, async (t) => {
        const st = await this.observer.refresh(t, false);
        if (st.verdict === 'in_sync' || (st.desired === null && st.live === null)) { inSync++; return; }
        const lockId = `${opId}:${t}`;
        if (!this.store.tryLock(t, lockId)) { run.log(`${t}: skipped, locked by ${this.store.getTarget(t).lock_op}`); return; }
        try {
          const actions = await this.#reconcileLocked(t, run, 'request');
          run.log(`${t}: ${actions.length ? actions.join(', ') : 'in sync'}`);
        } catch (err) { failed.push(t); run.log(`${t}: failed: ${(err as Error).message}`); } finally {
          this.store.unlock(t, lockId);
          this.observer.markDirty(t);
        }
      });
      run.log(`${inSync} target(s) in sync or never deployed: nothing to do`);
      if (failed.length) throw new OpFailure('reconcile_failed', `Reconcile failed for ${failed.join(', ')}.`);
    });
  }

  async restart(actor: Principal, target: string, reason: string | undefined): Promise<OpAnswer> {
    this.#assertOpen();
    return this.ops.underLock(target, (opId) => {
      const recipe = loadRecipe(this.targetsDir, target);
      return this.ops.launch(actor, target, 'restart', opId, { version: this.releases.readLive(target), reason }, async (run) => {
        this.store.updateOp(opId, { state: 'running' });
        if (recipe.kind !== 'service') { run.log(`${target} is a static target: nothing runs, nothing to restart`); return; }
        const version = this.releases.readLive(target);
        if (!version) throw new OpFailure('not_deployed', `${target} has nothing live to restart.`);
        await this.#promoter.startService(run, recipe, version, 'restart');
        this.#publish('target.restarted', { op_id: opId, version, cause: 'request' }, target);
      });
    });
  }

  // ───────────────────────────── reconcile ─────────────────────────────

  /** One reconcile of one target whose lock the caller holds, with the effects on disk and processes. */
  #reconcileLocked(target: string, run: OpRun | undefined, why: ReconcileCause): Promise<string[]> {
    return reconcileTarget(this.#effects(run), target, why, (line) => run?.log(line));
  }

  #effects(run: OpRun | undefined): ReconcileEffects {
    const { store, releases, supervisor, observer } = this;
    return {
      desired: (t) => store.getTarget(t).desired_version,
      version: (t, v) => store.getVersion(t, v),
      kind: (t) => loadRecipe(this.targetsDir, t).kind,
      live: (t) => releases.readLive(t),
      complete: (t, v) => releases.isComplete(t, v),
      modified: async (t, v) => (await observer.verify(t, v)) ?? [],
      process: (t) => supervisor.current(t),
      materialize: (t, v, digest) => releases.materialize(t, v, digest as Digest),
      restore: async (t, v) => { await releases.repair(t, v); },
      switchLive: (t, v) => releases.switchLive(t, v),
      removeLive: (t) => releases.removeLive(t),
      startService: (t, v, why) => this.#promoter.startService(run, loadRecipe(this.targetsDir, t), v, why),
      stopService: (t) => supervisor.stopTarget(t),
      markLive: (t, v) => this.#promoter.markLive(t, v),
      drifted: (t, payload) => this.#publish('target.drifted', payload, t),
    };
  }

  /**
   * The loop's sync of one name: observe; when drifted (and not locked, not merely unhealthy, not
   * undesired), repair it as an audited `controller` operation. A target that is only unhealthy (a
   * failing health check of the right version) is the supervisor's.
   */
  async #syncTarget(target: string): Promise<SyncResult> {
    if (this.#state !== 'started' || !this.allowlist.current().set.has(target)) return 'done';
    const st = await this.observer.consistent(target).catch(() => undefined);
    if (!st || st.verdict === 'in_sync' || st.lock || st.desired === null) return 'done';
    if (st.verdict === 'degraded' && st.reasons.every((r) => r === 'health_check_failing')) return 'done';
    const opId = this.store.newOpId();
    if (!this.store.tryLock(target, opId)) return 'done';
    const op = this.store.createOp({ op_id: opId, target, kind: 'reconcile', actor: 'controller', reason: `automatic: ${st.reasons.join(', ')}` });
    this.ops.run(undefined, op, target, async (run) => {
      this.store.updateOp(opId, { state: 'running' });
      await this.#reconcileLocked(target, run, 'resync');
    });
    const done = await this.waitOp(opId);
    return done.state === 'failed' ? 'retry' : 'done';
  }

  // ───────────────────────────── plumbing ─────────────────────────────

  /** Removes the oldest versions past the history limit (never the live or desired one). */
  async #pruneHistory(target: string): Promise<void> {
    const spec = this.store.getTarget(target);
    for (const v of pruneCandidates(this.store.listVersions(target), spec, this.releases.readLive(target), this.#o.historyLimit)) {
      const shared = this.#db.prepare(`SELECT COUNT(*) AS n FROM control_versions WHERE digest = ? AND state != 'pruned' AND NOT (target = ? AND version = ?)`).get(v.digest, target, v.version) as { n: number };
      await this.releases.prune(target, v.version, shared.n === 0 ? v.digest : undefined);
      this.observer.files.forget(this.releases.releaseDir(target, v.version));
      this.store.setVersionState(target, v.version, 'pruned');
    }
  }

  /** State first, then the event (the bus's contract): the target's cached verdict is rebuilt before publishing. */
  #publish(kind: EventKind, payload: Record<string, unknown>, target: string): void {
    if (kind !== 'build.log') this.observer.markDirty(target);
    this.#bus.publish(kind, payload, target);
  }
}

export interface DeployOptions {
  /** Default: the newest staged version. */
  version?: string | undefined;
  reason?: string | undefined;
  /** 409 when the target is at another generation. */
  expectedGeneration?: number | undefined;
}

export interface RollbackOptions {
  /** `previous` (the newest known-good version before the desired one) or a version. */
  to: string;
  reason?: string | undefined;
}

function relativeToRepo(file: string): string {
  const i = file.lastIndexOf('/deploy/');
  return i >= 0 ? file.slice(i + 1) : file;
}

/** Streams `body` to `file`, at most `limit` bytes (PayloadTooLargeError past it); returns its digest. */
async function receive(body: AsyncIterable<Buffer>, file: string, limit: number): Promise<Digest> {
  const h = createHash('sha256');
  // A file handle opened before the first byte, not a lazily opening stream: when the body fails, the
  // caller removes the file and nothing can re-create it afterwards.
  const fh = await open(file, 'wx');
  let n = 0;
  try {
    for await (const chunk of body) {
      n += chunk.length;
      if (n > limit) throw new PayloadTooLargeError(limit);
      h.update(chunk);
      await fh.write(chunk);
    }
  } finally {
    await fh.close();
  }
  return `sha256:${h.digest('hex')}`;
}
