/**
 * The control plane as a library (no HTTP): the operations of CONTRACT §6 (build, stage, deploy,
 * rollback, reconcile, restart), the verdicts of deploy_status, and the reconcile loop that keeps what is
 * live equal to what is desired.
 *
 * Flow of every operation: check the target against the allowlist (404 first) → check the caller's
 * right → take the target's lock (409 when held) → record the operation → answer 202 → run the steps in
 * the background → events and an audit entry → release the lock. The desired version (spec, database)
 * and the observation (disk, process table) are kept apart; a verdict is computed from the observation
 * every time, never stored.
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
import type { Principal, Right } from '../kernel/principal.js';
import type { EventBus, EventKind, SnapshotView } from '../events/bus.js';
import {
  BadRequestError, ConflictError, ForbiddenError, NotFoundError, PayloadTooLargeError, QuarryError,
  UnauthenticatedError, UnavailableError,
} from '../kernel/errors.js';
import { controlDir } from '../kernel/data-dir.js';
import { appendAudit } from '../store/audit.js';
import type { Db } from '../store/db.js';
import { AllowlistSource } from './allowlist.js';
import { type ArtifactLimits, type Digest, DEFAULT_ARTIFACT_LIMITS, inspectArtifact, isDigest, versionOf } from './artifact.js';
import { BuildFailedError, runBuild } from './builder.js';
import { loadRecipe, type Recipe } from './recipe.js';
import { ReleaseStore } from './releases.js';
import { Supervisor, probeHttp, type ServiceProcess, type SupervisorOptions } from './supervisor.js';
import type {
  OpKind, OpRecord, OpState, TargetObservation, TargetSpec, TargetStatus, Verdict, VersionRecord, VersionState,
} from './types.js';
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
  supervisor?: Partial<Omit<SupervisorOptions, 'marker' | 'logsDir' | 'onRestart'>>;
}

export interface OpAnswer { v: 1; op_id: string; target: string | null; kind: OpKind; state: OpState }
export interface OpView extends OpAnswer { version: string | null; digest: string | null; error: { code: string; message: string } | null; log: string }
export interface PlanAnswer { v: 1; dry_run: true; target: string; kind: OpKind; plan: Record<string, unknown> }

type Lifecycle = 'created' | 'started' | 'closing' | 'closed';

/** Version states that can be promoted by an explicit request. */
const PROMOTABLE: ReadonlySet<VersionState> = new Set(['staged', 'superseded', 'live', 'failed']);
/** Version states counted against the history limit (and pruned past it). */
const PRUNABLE: ReadonlySet<VersionState> = new Set(['superseded', 'built', 'staged', 'build_failed', 'stage_failed']);

function defaultRepoRoot(): string {
  const fromModule = fileURLToPath(new URL('../../', import.meta.url));
  return existsSync(join(fromModule, 'deploy', 'allowlist.txt')) ? fromModule : process.cwd();
}

class OpFailure extends Error {
  readonly code: string;
  constructor(code: string, message: string) { super(message); this.code = code; }
}

/** The context of one running operation: log lines go to the op record and, for builds, to events. */
interface OpRun {
  op: OpRecord;
  actor: Principal | undefined;
  log(line: string): void;
}

export class ControlPlane {
  readonly allowlist: AllowlistSource;
  readonly targetsDir: string;
  readonly releases: ReleaseStore;
  readonly store: ControlStore;
  readonly supervisor: Supervisor;
  readonly #bus: EventBus;
  readonly #db: Db;
  readonly #now: () => Date;
  readonly #o: Required<Pick<ControlPlaneOptions,
    'historyLimit' | 'maxConcurrentBuilds' | 'uploadLimitBytes' | 'idempotencyTtlMs' | 'resyncIntervalMs'
    | 'reconcileBackoffInitialMs' | 'reconcileBackoffMaxMs' | 'opLogMaxChars' | 'reconcileConcurrency' | 'statusProbeTimeoutMs'
    | 'statusProbeFailureThreshold'>>;
  #state: Lifecycle = 'created';
  readonly #running = new Map<string, Promise<void>>();
  readonly #buildSlots: (() => void)[] = [];
  #buildsActive = 0;
  readonly #verdicts = new Map<string, TargetStatus>();
  /** The last health probe of each service target's current process. */
  readonly #lastProbe = new Map<string, { pid: number; failures: number }>();
  readonly #inflightIdem = new Map<string, Promise<{ status: number; json: Record<string, unknown> }>>();
  // The reconcile queue: target names (not objects), each with its back-off.
  readonly #queue = new Set<string>();
  readonly #backoff = new Map<string, { failures: number; timer?: NodeJS.Timeout }>();
  #queueRunning = false;
  #resyncTimer: NodeJS.Timeout | undefined;

  constructor(o: ControlPlaneOptions) {
    const repoRoot = o.repoRoot ?? defaultRepoRoot();
    this.allowlist = new AllowlistSource(o.allowlistPath ?? join(repoRoot, 'deploy', 'allowlist.txt'));
    this.targetsDir = o.targetsDir ?? join(repoRoot, 'deploy', 'targets');
    this.#now = o.now ?? (() => new Date());
    this.#db = o.db;
    this.#bus = o.bus;
    this.#o = {
      historyLimit: o.historyLimit ?? 10,
      maxConcurrentBuilds: o.maxConcurrentBuilds ?? 2,
      uploadLimitBytes: o.uploadLimitBytes ?? 512 * 1024 * 1024,
      idempotencyTtlMs: o.idempotencyTtlMs ?? 24 * 3600 * 1000,
      resyncIntervalMs: o.resyncIntervalMs ?? 30_000,
      reconcileBackoffInitialMs: o.reconcileBackoffInitialMs ?? 1_000,
      reconcileBackoffMaxMs: o.reconcileBackoffMaxMs ?? 60_000,
      opLogMaxChars: o.opLogMaxChars ?? 64 * 1024,
      reconcileConcurrency: o.reconcileConcurrency ?? 4,
      statusProbeTimeoutMs: o.statusProbeTimeoutMs ?? 2_000,
      statusProbeFailureThreshold: o.statusProbeFailureThreshold ?? 3,
    };
    const root = controlDir(o.dataDir);
    mkdirSync(root, { recursive: true });
    this.releases = new ReleaseStore(root, { ...DEFAULT_ARTIFACT_LIMITS, ...o.artifactLimits });
    this.store = new ControlStore(o.db, this.#now);
    this.supervisor = new Supervisor({
      ...o.supervisor,
      marker: root,
      logsDir: (t) => this.releases.logsDir(t),
      onRestart: (target, version, restarts) => {
        this.#publish('target.restarted', { version, restarts, cause: 'crash' }, target);
      },
    });
  }

  get uploadLimitBytes(): number { return this.#o.uploadLimitBytes; }
  get lifecycle(): Lifecycle { return this.#state; }

  // ───────────────────────────── lifecycle ─────────────────────────────

  async start(): Promise<void> {
    if (this.#state !== 'created') return;
    this.#state = 'started';
    this.recover();
    await this.supervisor.killOrphans();
    const targets = this.allowlist.current().targets;
    for (const t of targets) this.store.ensureTarget(t);
    this.#bus.registerSnapshotPart('targets', (view: SnapshotView) =>
      [...this.#verdicts.values()].filter((s) => view.canSeeTarget(s.target)));
    await this.#forEachBounded(targets, async (t) => {
      try { await this.#reconcileLocked(t, undefined, 'startup'); } catch { this.#enqueueAfterFailure(t); }
    });
    await this.#forEachBounded(targets, async (t) => { await this.status(t).catch(() => undefined); });
    if (this.#o.resyncIntervalMs > 0) {
      this.#resyncTimer = setInterval(() => { for (const t of this.allowlist.current().targets) this.#enqueue(t); }, this.#o.resyncIntervalMs);
      this.#resyncTimer.unref();
    }
  }

  /**
   * Crash recovery, before anything else runs: every operation left queued or running is marked
   * failed (`interrupted`); a promotion it interrupted never went live, so its version is marked failed
   * and the desired version goes back to what it was; every lock is cleared; the release store removes
   * half-written files. Safe to run twice.
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

  async close(): Promise<void> {
    if (this.#state === 'closed' || this.#state === 'closing') { while (this.#state !== 'closed') await sleep(20); return; }
    this.#state = 'closing';
    if (this.#resyncTimer) clearInterval(this.#resyncTimer);
    for (const b of this.#backoff.values()) if (b.timer) clearTimeout(b.timer);
    this.#queue.clear();
    await Promise.allSettled([...this.#running.values()]);
    await this.supervisor.close();
    this.#state = 'closed';
  }

  #assertOpen(): void {
    if (this.#state === 'closing' || this.#state === 'closed') throw new UnavailableError('The control plane is shutting down.');
  }

  // ───────────────────────────── reads ─────────────────────────────

  inventory(): Record<string, unknown> {
    const list = this.allowlist.current();
    return {
      v: 1,
      inventory: 'Managed deployable artifacts of this Quarry, derived from the allowlist that every control-plane operation reads.',
      source: relativeToRepo(list.file),
      revision: list.revision,
      generated_at: this.#now().toISOString(),
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

  getOp(opId: string): OpView {
    const op = this.store.getOp(opId);
    if (!op) throw new NotFoundError(`No operation ${JSON.stringify(opId)}.`, 'op_id');
    return opView(op);
  }

  /** Resolves when the operation has finished (for the CLI and tests). */
  async waitOp(opId: string): Promise<OpView> {
    await this.#running.get(opId);
    return this.getOp(opId);
  }

  /** Verdicts of one target or all, each computed now from disk and the process table. */
  async status(target?: string): Promise<TargetStatus[]> {
    const targets = target === undefined ? this.allowlist.current().targets : [this.allowlist.check(target)];
    const out = await Promise.all(targets.map(async (t) => {
      const s = await this.#computeStatus(t);
      this.#verdicts.set(t, s);
      return s;
    }));
    return out;
  }

  /**
   * What is actually there: the live pointer, the files of the live release, the supervised process
   * and (with `probe`) one health probe of it. Without `probe`, the last probe's answer is used: that
   * is the synchronous form the event-stream snapshot needs.
   */
  async observe(target: string): Promise<TargetObservation> {
    const obs = this.#observeSync(target);
    const p = this.supervisor.current(target);
    if (obs.process && p && obs.process.state === 'running') {
      let recipe: Recipe | undefined;
      try { recipe = loadRecipe(this.targetsDir, target); } catch { recipe = undefined; }
      if (recipe?.health.type === 'http') {
        const ok = await probeHttp(p.port, recipe.health.path, Math.max(recipe.health.timeoutMs, this.#o.statusProbeTimeoutMs));
        const last = this.#lastProbe.get(target);
        const failures = ok ? 0 : (last?.pid === p.pid ? last.failures : 0) + 1;
        this.#lastProbe.set(target, { pid: p.pid, failures });
        obs.process.healthy = failures < this.#o.statusProbeFailureThreshold;
      }
    }
    return obs;
  }

  #observeSync(target: string): TargetObservation {
    let recipe: Recipe | undefined;
    try { recipe = loadRecipe(this.targetsDir, target); } catch { recipe = undefined; }
    const liveVersion = this.releases.readLive(target);
    const manifest = liveVersion ? this.releases.readManifest(target, liveVersion) : undefined;
    const obs: TargetObservation = {
      target, kind: recipe?.kind ?? 'unknown', liveVersion, liveDigest: manifest?.digest,
      modified: liveVersion ? this.releases.verify(target, liveVersion) : undefined,
    };
    if (recipe?.kind === 'service') {
      const p = this.supervisor.current(target);
      if (p) {
        const alive = this.supervisor.isAlive(p);
        const last = this.#lastProbe.get(target);
        obs.process = {
          version: p.version, pid: p.pid, port: p.port, state: alive ? p.state : (p.state === 'backoff' ? 'backoff' : 'exited'), restarts: p.restarts,
          // A process that passed its start-up health check counts as healthy until a probe says otherwise.
          healthy: alive ? !(last && last.pid === p.pid && last.failures >= this.#o.statusProbeFailureThreshold) : undefined,
        };
      }
    } else if (recipe?.kind === 'static' && liveVersion && recipe.health.type === 'file') {
      obs.healthFile = existsSync(join(this.releases.releaseDir(target, liveVersion), recipe.health.path));
    }
    return obs;
  }

  async #computeStatus(target: string): Promise<TargetStatus> {
    return this.#statusFrom(target, await this.observe(target).catch((err: Error) => err));
  }

  #statusFrom(target: string, obs: TargetObservation | Error): TargetStatus {
    const spec = this.store.getTarget(target);
    const lastOp = this.store.lastOp(target);
    const lockOp = spec.lock_op ? this.store.getOp(spec.lock_op) : undefined;
    if (obs instanceof Error) {
      return this.#statusShell(target, spec, lastOp, lockOp, { verdict: 'unknown', sync: 'unknown', health: 'unknown', reasons: [`observation_failed: ${obs.message}`] }, undefined);
    }
    return this.#statusShell(target, spec, lastOp, lockOp, judge(spec, obs, lockOp, lastOp, spec.desired_version ? this.store.getVersion(target, spec.desired_version) : undefined), obs);
  }

  /** Recomputes a target's cached verdict without probing (state first, then the event: bus contract). */
  #refreshVerdictSync(target: string): void {
    let obs: TargetObservation | Error;
    try { obs = this.#observeSync(target); } catch (err) { obs = err as Error; }
    this.#verdicts.set(target, this.#statusFrom(target, obs));
  }

  #statusShell(target: string, spec: TargetSpec, lastOp: OpRecord | undefined, lockOp: OpRecord | undefined,
    j: { verdict: Verdict; sync: TargetStatus['sync']; health: TargetStatus['health']; reasons: string[] }, obs: TargetObservation | undefined): TargetStatus {
    const desired = spec.desired_version ? this.store.getVersion(target, spec.desired_version) : undefined;
    const stable = this.store.listVersions(target).filter((v) => v.state === 'live' || v.state === 'superseded').map((v) => v.version);
    return {
      target,
      verdict: j.verdict, sync: j.sync, health: j.health,
      desired: spec.desired_version ? { version: spec.desired_version, digest: desired?.digest ?? '' } : null,
      live: obs?.liveVersion ? {
        version: obs.liveVersion, digest: obs.liveDigest ?? null, path: this.releases.livePath(target),
        ...(obs.process && obs.process.version === obs.liveVersion ? { endpoint: `http://127.0.0.1:${obs.process.port}` } : {}),
      } : null,
      generation: spec.generation,
      lock: spec.lock_op ? { op_id: spec.lock_op, kind: lockOp?.kind ?? 'reconcile', since: this.store.lockedAt(target) } : null,
      last_op: lastOp ? { op_id: lastOp.op_id, kind: lastOp.kind, state: lastOp.state, updated_at: lastOp.updated_at } : null,
      stable_versions: stable,
      reasons: j.reasons,
    };
  }

  versions(target: string): VersionRecord[] { return this.store.listVersions(this.allowlist.check(target)); }

  // ───────────────────────────── authority ─────────────────────────────

  /** Allowlist first (CONTRACT §6: before any other work), then the right for that target. */
  authorize(principal: Principal, right: Right, target: unknown, action: string): string {
    const name = this.allowlist.check(target);
    this.#checkRight(principal, right, name, action);
    return name;
  }

  #checkRight(principal: Principal, right: Right, target: string | undefined, action: string): void {
    if (principal.can(right, target)) return;
    appendAudit(this.#db, {
      actor: principal.capId, account: principal.account, action: `control.${action}`, target, result: 'denied',
      detail: { right },
    }, this.#now());
    if (principal.kind === 'anonymous') throw new UnauthenticatedError(`${right} is required for this operation.`);
    throw new ForbiddenError(`This capability does not grant ${right}${target ? ` on ${target}` : ''}.`);
  }

  /** Read access: `mgmt.read` on the target (or on any target, for the whole inventory). */
  authorizeRead(principal: Principal, target?: string): void {
    this.#checkRight(principal, 'mgmt.read', target, 'read');
  }

  // ───────────────────────────── operations ─────────────────────────────

  async build(principal: Principal, body: { target?: unknown }): Promise<OpAnswer> {
    this.#assertOpen();
    const target = this.authorize(principal, 'mgmt.build', body.target, 'build');
    const recipe = loadRecipe(this.targetsDir, target);
    return this.#launch(principal, target, 'build', {}, async (run) => {
      await this.#buildSlot();
      try {
        this.store.updateOp(run.op.op_id, { state: 'running' });
        this.#publish('build.started', { op_id: run.op.op_id }, target);
        const logFile = join(this.releases.logsDir(target), `build-${run.op.op_id}.log`);
        let result;
        try {
          result = await runBuild(recipe, {
            scratchDir: this.releases.scratchDir, logFile,
            onLine: (line) => { run.log(line); this.#publish('build.log', { op_id: run.op.op_id, line }, target); },
          });
        } catch (err) {
          const code = err instanceof BuildFailedError ? 'build_failed' : QuarryError.is(err) ? err.code : 'build_failed';
          this.#publish('build.failed', { op_id: run.op.op_id, error: (err as Error).message }, target);
          throw new OpFailure(code, (err as Error).message);
        }
        const version = versionOf(result.digest);
        this.releases.adoptArtifact(result.tarFile, result.digest);
        const existing = this.store.getVersion(target, version);
        if (!existing || existing.state === 'pruned' || existing.state === 'build_failed') {
          this.store.upsertVersion(target, version, result.digest, 'built', 'build');
        }
        this.store.updateOp(run.op.op_id, { version, digest: result.digest });
        run.log(`built ${target} ${version} ${result.digest}`);
        this.#publish('build.succeeded', { op_id: run.op.op_id, version, digest: result.digest }, target);
        this.#pruneHistory(target);
      } finally { this.#releaseBuildSlot(); }
    });
  }

  /** Stages a built version: unpacks its artifact into a complete release on disk. */
  async stage(principal: Principal, body: { target?: unknown; version?: unknown }): Promise<OpAnswer> {
    this.#assertOpen();
    const target = this.authorize(principal, 'mgmt.stage', body.target, 'stage');
    if (typeof body.version !== 'string' || body.version === '') throw new BadRequestError('version is required (or upload an artifact as the body).', 'version');
    const v = this.store.getVersion(target, body.version);
    if (!v || v.state === 'pruned') throw new NotFoundError(`${target} has no version ${JSON.stringify(body.version)}.`, 'version');
    if (v.state === 'build_failed') throw new BadRequestError(`Version ${v.version} of ${target} did not build.`, 'version');
    return this.#launch(principal, target, 'stage', { version: v.version, digest: v.digest }, async (run) => {
      this.store.updateOp(run.op.op_id, { state: 'running' });
      await this.#materializeForStage(run, target, v.version, v.digest);
    });
  }

  /**
   * Stages an artifact uploaded as the request body. The body is streamed to a temp file (at most
   * `uploadLimitBytes`), its digest checked against `digest`, and every tar header inspected, all before
   * the lock is released to the background and before anything is written under releases/: a hostile
   * or mismatched upload is a 400 and leaves nothing behind.
   */
  async stageUpload(principal: Principal, query: { target?: unknown; digest?: unknown }, body: AsyncIterable<Buffer>): Promise<OpAnswer> {
    this.#assertOpen();
    const target = this.authorize(principal, 'mgmt.stage', query.target, 'stage');
    if (!isDigest(query.digest)) throw new BadRequestError('digest must be sha256:<64 lowercase hex digits>.', 'digest');
    const digest = query.digest;
    const version = versionOf(digest);
    const opId = this.store.newOpId();
    if (!this.store.tryLock(target, opId)) throw this.#conflict(target);
    const tmp = join(this.releases.uploadsDir, `${opId}.tar`);
    try {
      const got = await receive(body, tmp, this.#o.uploadLimitBytes);
      if (got !== digest) throw new BadRequestError(`The body's digest is ${got}, not the expected ${digest}.`, 'digest');
      await inspectArtifact(tmp, this.releases.limits);
    } catch (err) {
      rmSync(tmp, { force: true });
      this.store.unlock(target, opId);
      appendAudit(this.#db, { actor: principal.capId, account: principal.account, action: 'control.stage', target, to: version, result: 'rejected', reason: (err as Error).message, detail: { digest } }, this.#now());
      this.#publish('stage.failed', { version, digest, error: (err as Error).message }, target);
      throw err;
    }
    this.releases.adoptArtifact(tmp, digest);
    const existing = this.store.getVersion(target, version);
    if (!existing || existing.state === 'pruned' || existing.state === 'stage_failed') this.store.upsertVersion(target, version, digest, 'built', 'upload');
    return this.#launch(principal, target, 'stage', { version, digest, opId, locked: true }, async (run) => {
      this.store.updateOp(run.op.op_id, { state: 'running' });
      await this.#materializeForStage(run, target, version, digest);
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
    this.#pruneHistory(target);
  }

  async deploy(principal: Principal, body: { target?: unknown; version?: unknown; dry_run?: unknown; reason?: unknown; expected_generation?: unknown }): Promise<OpAnswer | PlanAnswer> {
    this.#assertOpen();
    const target = this.authorize(principal, 'mgmt.deploy', body.target, 'deploy');
    const reason = optionalString(body.reason, 'reason');
    const spec = this.store.getTarget(target);
    if (body.expected_generation !== undefined) {
      if (typeof body.expected_generation !== 'number' || !Number.isInteger(body.expected_generation)) throw new BadRequestError('expected_generation must be an integer.', 'expected_generation');
      if (body.expected_generation !== spec.generation) throw new ConflictError(`${target} is at generation ${spec.generation}, not ${body.expected_generation}.`);
    }
    let v: VersionRecord | undefined;
    if (body.version === undefined) {
      v = this.store.listVersions(target).find((x) => x.state === 'staged');
      if (!v) throw new BadRequestError(`${target} has no staged version to deploy; build and stage one, or name a version.`, 'version');
    } else {
      if (typeof body.version !== 'string') throw new BadRequestError('version must be a string.', 'version');
      v = this.store.getVersion(target, body.version);
      if (!v || v.state === 'pruned') throw new NotFoundError(`${target} has no version ${JSON.stringify(body.version)}.`, 'version');
      if (!PROMOTABLE.has(v.state)) throw new BadRequestError(`Version ${v.version} of ${target} is ${v.state}; only a staged version can be promoted (stage it with POST /api/upload).`, 'version');
    }
    const chosen = v;
    if (body.dry_run === true) return this.#plan(target, 'deploy', spec, chosen);
    return this.#launch(principal, target, 'deploy', { version: chosen.version, digest: chosen.digest, reason, from: spec.desired_version }, (run) =>
      this.#promote(run, target, chosen, 'deploy'));
  }

  async rollback(principal: Principal, body: { target?: unknown; to?: unknown; dry_run?: unknown; reason?: unknown }): Promise<OpAnswer | PlanAnswer> {
    this.#assertOpen();
    const target = this.authorize(principal, 'mgmt.rollback', body.target, 'rollback');
    const reason = optionalString(body.reason, 'reason');
    const spec = this.store.getTarget(target);
    const to = body.to ?? 'previous';
    if (typeof to !== 'string' || to === '') throw new BadRequestError('to must be "previous" or a version.', 'to');
    let v: VersionRecord | undefined;
    if (to === 'previous') {
      // The newest known-good version that is not the current one. Failed versions are never chosen here.
      v = this.store.listVersions(target).find((x) => x.state === 'superseded' && x.version !== spec.desired_version && this.#hasRelease(target, x));
      if (!v) throw new BadRequestError(`${target} has no previous version to roll back to.`, 'to');
    } else {
      v = this.store.getVersion(target, to);
      if (!v || v.state === 'pruned') throw new NotFoundError(`${target} has no version ${JSON.stringify(to)}.`, 'to');
      if (v.state === 'failed') throw new BadRequestError(`Version ${to} of ${target} failed; a rollback never selects a failed version (deploy it explicitly to retry).`, 'to');
      if (!PROMOTABLE.has(v.state)) throw new BadRequestError(`Version ${to} of ${target} is ${v.state}, not a deployable release.`, 'to');
    }
    const chosen = v;
    if (body.dry_run === true) return this.#plan(target, 'rollback', spec, chosen);
    return this.#launch(principal, target, 'rollback', { version: chosen.version, digest: chosen.digest, reason, from: spec.desired_version }, (run) =>
      this.#promote(run, target, chosen, 'rollback'));
  }

  async reconcile(principal: Principal, body: { target?: unknown }): Promise<OpAnswer> {
    this.#assertOpen();
    if (body.target === undefined || body.target === null) {
      for (const t of this.allowlist.current().targets) this.#checkRight(principal, 'mgmt.reconcile', t, 'reconcile');
      const opId = this.store.newOpId();
      const op = this.store.createOp({ op_id: opId, target: null, kind: 'reconcile', actor: principal.capId });
      return this.#run(principal, op, undefined, async (run) => {
        this.store.updateOp(opId, { state: 'running' });
        const failed: string[] = [];
        await this.#forEachBounded(this.allowlist.current().targets, async (t) => {
          const lockId = `${opId}:${t}`;
          if (!this.store.tryLock(t, lockId)) { run.log(`${t}: skipped, locked by ${this.store.getTarget(t).lock_op}`); return; }
          try {
            const actions = await this.#reconcileLocked(t, run, 'request');
            run.log(`${t}: ${actions.length ? actions.join(', ') : 'in sync'}`);
          } catch (err) { failed.push(t); run.log(`${t}: failed: ${(err as Error).message}`); } finally { this.store.unlock(t, lockId); }
        });
        if (failed.length) throw new OpFailure('reconcile_failed', `Reconcile failed for ${failed.join(', ')}.`);
      });
    }
    const target = this.authorize(principal, 'mgmt.reconcile', body.target, 'reconcile');
    return this.#launch(principal, target, 'reconcile', {}, async (run) => {
      this.store.updateOp(run.op.op_id, { state: 'running' });
      const actions = await this.#reconcileLocked(target, run, 'request');
      run.log(actions.length ? actions.join('\n') : 'in sync: nothing to do');
    });
  }

  async restart(principal: Principal, body: { target?: unknown; reason?: unknown }): Promise<OpAnswer> {
    this.#assertOpen();
    const target = this.authorize(principal, 'mgmt.restart', body.target, 'restart');
    const reason = optionalString(body.reason, 'reason');
    const recipe = loadRecipe(this.targetsDir, target);
    const live = this.releases.readLive(target);
    return this.#launch(principal, target, 'restart', { version: live, reason }, async (run) => {
      this.store.updateOp(run.op.op_id, { state: 'running' });
      if (recipe.kind !== 'service') { run.log(`${target} is a static target: nothing runs, nothing to restart`); return; }
      const version = this.releases.readLive(target);
      if (!version) throw new OpFailure('not_deployed', `${target} has nothing live to restart.`);
      await this.#startService(run, recipe, version, 'restart');
      this.#publish('target.restarted', { op_id: run.op.op_id, version, cause: 'request' }, target);
    });
  }

  /**
   * The MCP `service_mgmt` tool's entry point (CONTRACT §7): `{action: build|deploy|rollback|reconcile|
   * restart|status, target?, version?, dry_run?, reason?}` → the same answers as the REST routes, with
   * the same checks. `status` answers the verdicts (the caller's readable targets when none is named).
   */
  async mgmtAction(principal: Principal, args: Record<string, unknown>): Promise<Record<string, unknown>> {
    const { action, target, version, dry_run, reason } = args;
    switch (action) {
      case 'build': return { ...(await this.build(principal, { target })) };
      case 'deploy': return { ...(await this.deploy(principal, { target, version, dry_run, reason })) };
      case 'rollback': return { ...(await this.rollback(principal, { target, to: version ?? 'previous', dry_run, reason })) };
      case 'reconcile': return { ...(await this.reconcile(principal, { target })) };
      case 'restart': return { ...(await this.restart(principal, { target, reason })) };
      case 'status': {
        if (target !== undefined) {
          const name = this.allowlist.check(target);
          this.authorizeRead(principal, name);
          return { v: 1, targets: await this.status(name) };
        }
        this.authorizeRead(principal);
        return { v: 1, targets: (await this.status()).filter((s) => principal.can('mgmt.read', s.target)) };
      }
      default:
        throw new BadRequestError('action must be one of build, deploy, rollback, reconcile, restart, status.', 'action');
    }
  }

  /** The idempotency wrapper the faces use: the first answer for (actor, key, route) is replayed for the TTL. */
  async idempotent(actor: string, key: string | undefined, route: string, fn: () => Promise<{ status: number; json: Record<string, unknown> }>): Promise<{ status: number; json: Record<string, unknown>; replayed: boolean }> {
    if (key === undefined) return { ...(await fn()), replayed: false };
    if (key.length === 0 || key.length > 255) throw new BadRequestError('Idempotency-Key must be 1–255 characters.', 'Idempotency-Key');
    const stored = this.store.getIdempotent(actor, key, route, this.#o.idempotencyTtlMs);
    if (stored) return { status: stored.status, json: stored.answer, replayed: true };
    const slot = `${actor}\0${key}\0${route}`;
    const inflight = this.#inflightIdem.get(slot);
    if (inflight) return { ...(await inflight), replayed: true };
    const p = fn();
    this.#inflightIdem.set(slot, p);
    try {
      const answer = await p;
      if (answer.status < 300) this.store.putIdempotent(actor, key, route, answer.status, answer.json);
      return { ...answer, replayed: false };
    } finally { this.#inflightIdem.delete(slot); }
  }

  // ───────────────────────────── steps ─────────────────────────────

  #hasRelease(target: string, v: VersionRecord): boolean {
    return this.releases.isComplete(target, v.version) || this.releases.hasArtifact(v.digest);
  }

  #plan(target: string, kind: OpKind, spec: TargetSpec, v: VersionRecord): PlanAnswer {
    const recipe = loadRecipe(this.targetsDir, target);
    const live = this.releases.readLive(target);
    const steps = [
      ...(this.releases.isComplete(target, v.version) ? [] : [`materialize release ${v.version} from ${v.digest}`]),
      `set desired version ${spec.desired_version ?? '(none)'} → ${v.version} (generation ${spec.generation} → ${spec.generation + 1})`,
      `switch live pointer ${live ?? '(none)'} → ${v.version}`,
      ...(recipe.kind === 'service'
        ? [`start ${v.version} and wait for GET ${recipe.health.path} within ${(recipe.health as { deadlineMs: number }).deadlineMs} ms`, 'stop the previous process']
        : [`verify the release files and ${recipe.health.path}`]),
      `on failure: mark ${v.version} failed and return to ${spec.desired_version ?? '(nothing live)'}`,
    ];
    return {
      v: 1, dry_run: true, target, kind,
      plan: { from: spec.desired_version, live, to: v.version, digest: v.digest, state: v.state, generation: spec.generation, next_generation: spec.generation + 1, steps },
    };
  }

  /**
   * Promotion (deploy and rollback): desired moves first (so a crash leaves an op to mark failed and a
   * `from_version` to return to), then the release is made complete, the live pointer switched, and the
   * new version verified within the health deadline. A failure returns desired and live to the previous
   * version (`deploy.failed`, then `deploy.rolled_back`) and marks the version failed.
   */
  async #promote(run: OpRun, target: string, v: VersionRecord, kind: 'deploy' | 'rollback'): Promise<void> {
    const recipe = loadRecipe(this.targetsDir, target);
    const opId = run.op.op_id;
    const from = this.store.getTarget(target).desired_version;
    const previousLive = this.releases.readLive(target);
    const cur = this.supervisor.current(target);
    if (from === v.version && previousLive === v.version && v.state === 'live' && this.releases.verify(target, v.version)?.length === 0
      && (recipe.kind !== 'service' || (cur?.version === v.version && this.supervisor.isAlive(cur)))) {
      // Applying the spec that is already true changes nothing (no generation bump, no restart).
      this.store.updateOp(opId, { state: 'running', from_version: from });
      run.log(`${target} ${v.version} is already live and in sync: nothing to do`);
      return;
    }
    let generation = 0;
    this.#db.transaction(() => {
      this.store.updateOp(opId, { state: 'running', from_version: from, prior_state: this.store.getVersion(target, v.version)?.state ?? v.state });
      this.store.setVersionState(target, v.version, 'promoting');
      generation = this.store.setDesiredInTx(target, v.version);
    }).immediate();
    this.#publish('deploy.started', { op_id: opId, op_kind: kind, version: v.version, digest: v.digest, from, generation }, target);
    try {
      await this.releases.materialize(target, v.version, v.digest);
      this.store.setVersionState(target, v.version, 'verifying');
      this.releases.switchLive(target, v.version);
      run.log(`live pointer → ${v.version}`);
      this.#publish('deploy.verifying', { op_id: opId, version: v.version, digest: v.digest }, target);
      if (recipe.kind === 'service') {
        await this.#startService(run, recipe, v.version, 'deploy');
      } else {
        const diff = this.releases.verify(target, v.version);
        if (!diff || diff.length) throw new OpFailure('verify_failed', `release ${v.version} does not match its manifest (${(diff ?? ['incomplete']).join(', ')})`);
        if (recipe.health.type === 'file' && !existsSync(join(this.releases.releaseDir(target, v.version), recipe.health.path))) {
          throw new OpFailure('health_check_failed', `${recipe.health.path} is missing from release ${v.version}`);
        }
      }
    } catch (err) {
      const message = (err as Error).message;
      const code = err instanceof OpFailure ? err.code : QuarryError.is(err) ? err.code : 'deploy_failed';
      this.store.setVersionState(target, v.version, 'failed');
      this.#publish('deploy.failed', { op_id: opId, version: v.version, digest: v.digest, error: message }, target);
      run.log(`failed: ${message}`);
      await this.#revert(run, target, recipe, v.version, from, previousLive);
      throw new OpFailure(code, message);
    }
    this.#db.transaction(() => {
      for (const other of this.store.listVersions(target)) {
        if (other.version !== v.version && other.state === 'live') this.store.setVersionState(target, other.version, 'superseded');
      }
      this.store.setVersionState(target, v.version, 'live');
    }).immediate();
    run.log(`${target} ${v.version} is live`);
    if (kind === 'rollback') this.#publish('deploy.rolled_back', { op_id: opId, from, to: v.version, digest: v.digest, automatic: false }, target);
    this.#publish('deploy.succeeded', { op_id: opId, version: v.version, digest: v.digest, generation }, target);
    this.#pruneHistory(target);
  }

  /** Returns a target to `to` after a failed promotion of `failed`: desired, live pointer, process. */
  async #revert(run: OpRun, target: string, recipe: Recipe, failed: string, to: string | null, previousLive: string | undefined): Promise<void> {
    const back = to !== null && this.releases.isComplete(target, to) ? to : (previousLive && this.releases.isComplete(target, previousLive) ? previousLive : null);
    this.#db.transaction(() => { this.store.setDesiredInTx(target, back); }).immediate();
    if (back) {
      this.releases.switchLive(target, back);
      if (recipe.kind === 'service') {
        const cur = this.supervisor.current(target);
        if (!cur || cur.version !== back || !this.supervisor.isAlive(cur)) {
          try { await this.#startService(run, recipe, back, 'rollback'); } catch (err) { run.log(`restarting ${back} failed: ${(err as Error).message}`); }
        }
      }
      run.log(`rolled back to ${back}`);
    } else {
      this.releases.removeLive(target);
      if (recipe.kind === 'service') await this.supervisor.stopTarget(target);
      run.log('nothing to roll back to: the target is not live');
    }
    this.#publish('deploy.rolled_back', { op_id: run.op.op_id, from: failed, to: back, automatic: true }, target);
  }

  /**
   * Starts `version` of a service beside the current process, waits for its health check within the
   * deadline, then makes it current and stops the old one. On failure the new process is stopped and
   * the old one keeps serving.
   */
  async #startService(run: OpRun | undefined, recipe: Recipe, version: string, why: string): Promise<void> {
    if (recipe.health.type !== 'http' || !recipe.run) throw new OpFailure('bad_recipe', `${recipe.target}: a service needs run.command and an http health check.`);
    const proc = await this.supervisor.start(recipe.target, version, this.releases.releaseDir(recipe.target, version), recipe.run.command);
    run?.log(`${why}: started ${recipe.target} ${version} pid ${proc.pid} on port ${proc.port}`);
    const ok = await this.#waitHealthy(proc, recipe.health.path, recipe.health.timeoutMs, recipe.health.deadlineMs);
    if (!ok) {
      await this.supervisor.stop(proc);
      throw new OpFailure('health_check_failed', `GET ${recipe.health.path} of ${recipe.target} ${version} did not answer 2xx within ${recipe.health.deadlineMs} ms`);
    }
    const old = this.supervisor.makeCurrent(proc);
    run?.log(`${recipe.target} ${version} healthy on port ${proc.port}`);
    if (old) await this.supervisor.stop(old);
  }

  async #waitHealthy(proc: ServiceProcess, path: string, timeoutMs: number, deadlineMs: number): Promise<boolean> {
    const deadline = Date.now() + deadlineMs;
    while (Date.now() < deadline) {
      if (proc.child && (proc.child.exitCode !== null || proc.child.signalCode !== null)) return false;
      if (await probeHttp(proc.port, path, Math.min(timeoutMs, Math.max(1, deadline - Date.now())))) return true;
      await sleep(50);
    }
    return false;
  }

  /**
   * One reconcile of one target, under its lock: re-read desired and observed, and converge with steps
   * that are safe to repeat. Returns the actions taken (empty when in sync). Never selects a failed
   * version; a target with nothing desired is left alone.
   */
  async #reconcileLocked(target: string, run: OpRun | undefined, why: string): Promise<string[]> {
    const actions: string[] = [];
    const spec = this.store.getTarget(target);
    let recipe: Recipe;
    try { recipe = loadRecipe(this.targetsDir, target); } catch (err) {
      // An invalid spec: recorded, not retried (retrying cannot fix it).
      run?.log(`${target}: invalid recipe: ${(err as Error).message}`);
      return actions;
    }
    const desired = spec.desired_version;
    if (!desired) {
      // Nothing should be live, e.g. after a first promotion was interrupted by a crash. The pointer
      // lives in our own directory, so it is ours to remove.
      const live = this.releases.readLive(target);
      if (live) {
        this.#publish('target.drifted', { version: null, live, reasons: ['live_without_desired'] }, target);
        this.releases.removeLive(target);
        actions.push(`removed live pointer to ${live}: nothing desired`);
      }
      if (recipe.kind === 'service' && this.supervisor.current(target)) { await this.supervisor.stopTarget(target); actions.push('stopped process: nothing desired'); }
      for (const a of actions) run?.log(`${target}: ${a}`);
      return actions;
    }
    const v = this.store.getVersion(target, desired);
    if (!v) { run?.log(`${target}: desired version ${desired} has no record`); return actions; }
    if (v.state === 'failed') { run?.log(`${target}: desired version ${desired} is failed; not selecting it`); return actions; }
    if (!this.releases.isComplete(target, desired)) {
      await this.releases.materialize(target, desired, v.digest);
      actions.push(`materialized ${desired}`);
    }
    const modified = this.releases.verify(target, desired) ?? [];
    if (modified.length) {
      this.#publish('target.drifted', { version: desired, reasons: ['live_files_modified'], paths: modified.slice(0, 20) }, target);
      await this.releases.repair(target, desired);
      actions.push(`restored ${modified.length} file(s) of ${desired}`);
    }
    const live = this.releases.readLive(target);
    if (live !== desired) {
      this.#publish('target.drifted', { version: desired, live: live ?? null, reasons: [live ? 'live_version_mismatch' : 'live_pointer_missing'] }, target);
      this.releases.switchLive(target, desired);
      actions.push(`live pointer ${live ?? '(none)'} → ${desired}`);
    }
    if (recipe.kind === 'service') {
      const cur = this.supervisor.current(target);
      if (!cur || cur.version !== desired || (cur.state !== 'running' && cur.state !== 'backoff')) {
        if (why !== 'startup') this.#publish('target.drifted', { version: desired, reasons: [cur ? 'process_version_mismatch' : 'process_missing'] }, target);
        await this.#startService(run, recipe, desired, `reconcile (${why})`);
        actions.push(`started ${desired}`);
      }
    }
    if (v.state !== 'live') {
      this.#db.transaction(() => {
        for (const other of this.store.listVersions(target)) if (other.version !== desired && other.state === 'live') this.store.setVersionState(target, other.version, 'superseded');
        this.store.setVersionState(target, desired, 'live');
      }).immediate();
    }
    for (const a of actions) run?.log(`${target}: ${a}`);
    return actions;
  }

  // The background queue: names with capped exponential back-off.
  #enqueue(target: string): void {
    if (this.#state !== 'started') return;
    this.#queue.add(target);
    void this.#drain();
  }

  #enqueueAfterFailure(target: string): void {
    const b = this.#backoff.get(target) ?? { failures: 0 };
    b.failures++;
    const delay = Math.min(this.#o.reconcileBackoffMaxMs, this.#o.reconcileBackoffInitialMs * 2 ** (b.failures - 1));
    if (b.timer) clearTimeout(b.timer);
    b.timer = setTimeout(() => { b.timer = undefined; this.#enqueue(target); }, delay);
    this.#backoff.set(target, b);
  }

  async #drain(): Promise<void> {
    if (this.#queueRunning) return;
    this.#queueRunning = true;
    try {
      while (this.#queue.size && this.#state === 'started') {
        const target = this.#queue.values().next().value as string;
        this.#queue.delete(target);
        if (!this.allowlist.current().set.has(target)) continue;
        const st = await this.#computeStatus(target).catch(() => undefined);
        if (st) this.#verdicts.set(target, st);
        if (!st || st.verdict === 'in_sync' || st.lock || st.desired === null) continue;
        if (st.verdict === 'degraded' && st.reasons.every((r) => r === 'health_check_failing')) continue;
        const opId = this.store.newOpId();
        if (!this.store.tryLock(target, opId)) continue;
        const op = this.store.createOp({ op_id: opId, target, kind: 'reconcile', actor: 'controller', reason: `automatic: ${st.reasons.join(', ')}` });
        const p = this.#run(undefined, op, target, async (run) => {
          this.store.updateOp(opId, { state: 'running' });
          await this.#reconcileLocked(target, run, 'resync');
        }, true);
        await this.waitOp(p.op_id);
        if (this.store.getOp(p.op_id)?.state === 'failed') this.#enqueueAfterFailure(target);
        else this.#backoff.delete(target);
      }
    } finally { this.#queueRunning = false; }
  }

  /** Removes the oldest versions past the history limit (never the live or desired one). */
  #pruneHistory(target: string): void {
    const spec = this.store.getTarget(target);
    const live = this.releases.readLive(target);
    const candidates = this.store.listVersions(target).filter((v) => PRUNABLE.has(v.state) && v.version !== spec.desired_version && v.version !== live);
    for (const v of candidates.slice(this.#o.historyLimit)) {
      const shared = this.#db.prepare(`SELECT COUNT(*) AS n FROM control_versions WHERE digest = ? AND state != 'pruned' AND NOT (target = ? AND version = ?)`).get(v.digest, target, v.version) as { n: number };
      this.releases.prune(target, v.version, shared.n === 0 ? v.digest : undefined);
      this.store.setVersionState(target, v.version, 'pruned');
    }
  }

  // ───────────────────────────── operation plumbing ─────────────────────────────

  #conflict(target: string): ConflictError {
    const spec = this.store.getTarget(target);
    const op = spec.lock_op ? this.store.getOp(spec.lock_op) : undefined;
    return new ConflictError(`${target} is locked by ${op ? `${op.kind} operation ${op.op_id}` : `operation ${spec.lock_op}`}; one operation per target at a time.`);
  }

  /** Takes the lock (409 when held), records the op and runs `steps` in the background. */
  async #launch(principal: Principal, target: string, kind: OpKind,
    o: { version?: string | undefined; digest?: string | undefined; reason?: string | undefined; from?: string | null; opId?: string; locked?: boolean },
    steps: (run: OpRun) => Promise<void>): Promise<OpAnswer> {
    const opId = o.opId ?? this.store.newOpId();
    if (!o.locked && !this.store.tryLock(target, opId)) throw this.#conflict(target);
    const op = this.store.createOp({ op_id: opId, target, kind, actor: principal.capId, reason: o.reason, version: o.version, digest: o.digest, from_version: o.from ?? null });
    return this.#run(principal, op, target, steps);
  }

  #run(principal: Principal | undefined, op: OpRecord, lockedTarget: string | undefined, steps: (run: OpRun) => Promise<void>, system = false): OpAnswer {
    const opId = op.op_id;
    const run: OpRun = {
      op, actor: principal,
      log: (line) => this.store.appendOpLog(opId, `${line}\n`, this.#o.opLogMaxChars),
    };
    const p = (async () => {
      await Promise.resolve(); // the 202 answer is computed before any step runs
      let result: 'ok' | 'failed' = 'ok';
      let error: { code: string; message: string } | undefined;
      try {
        await steps(run);
        this.store.updateOp(opId, { state: 'succeeded' });
      } catch (err) {
        result = 'failed';
        error = { code: err instanceof OpFailure ? err.code : QuarryError.is(err) ? err.code : 'internal', message: (err as Error).message };
        this.store.updateOp(opId, { state: 'failed', error });
      } finally {
        if (lockedTarget) this.store.unlock(lockedTarget, opId);
      }
      const final = this.store.getOp(opId)!;
      appendAudit(this.#db, {
        actor: principal?.capId ?? (system ? 'controller' : undefined), account: principal?.account,
        action: `control.${op.kind}`, target: op.target ?? undefined,
        from: final.from_version ?? undefined, to: final.version ?? undefined,
        reason: final.reason ?? undefined, result, detail: { op_id: opId, ...(error ? { error } : {}), ...(final.digest ? { digest: final.digest } : {}) },
      }, this.#now());
      if (lockedTarget) await this.status(lockedTarget).catch(() => undefined);
    })();
    this.#running.set(opId, p);
    void p.finally(() => this.#running.delete(opId));
    return { v: 1, op_id: opId, target: op.target, kind: op.kind, state: 'queued' };
  }

  async #buildSlot(): Promise<void> {
    if (this.#buildsActive < this.#o.maxConcurrentBuilds) { this.#buildsActive++; return; }
    await new Promise<void>((resolve) => this.#buildSlots.push(resolve));
  }

  #releaseBuildSlot(): void {
    const next = this.#buildSlots.shift();
    if (next) next(); else this.#buildsActive--;
  }

  async #forEachBounded<T>(items: readonly T[], fn: (item: T) => Promise<void>): Promise<void> {
    let i = 0;
    const worker = async (): Promise<void> => { while (i < items.length) await fn(items[i++]!); };
    await Promise.all(Array.from({ length: Math.min(this.#o.reconcileConcurrency, items.length) }, worker));
  }

  #publish(kind: EventKind, payload: Record<string, unknown>, target: string): void {
    if (kind !== 'build.log') this.#refreshVerdictSync(target);
    this.#bus.publish(kind, payload, target);
  }
}

/**
 * The verdict of one target from its spec and observation. Precedence: an operation that changes what
 * runs → progressing; then failed, missing, drifted, degraded; in_sync only when everything matches.
 */
export function judge(spec: TargetSpec, obs: TargetObservation, lockOp: OpRecord | undefined, lastOp: OpRecord | undefined, desiredRec: VersionRecord | undefined):
  { verdict: Verdict; sync: TargetStatus['sync']; health: TargetStatus['health']; reasons: string[] } {
  const reasons: string[] = [];
  const desired = spec.desired_version;
  const changing = lockOp && (lockOp.kind === 'deploy' || lockOp.kind === 'rollback' || lockOp.kind === 'restart' || lockOp.kind === 'reconcile');
  if (obs.kind === 'unknown') reasons.push('invalid_recipe');
  let sync: TargetStatus['sync'];
  let health: TargetStatus['health'];
  let verdict: Verdict;
  const lastFailed = lastOp && (lastOp.kind === 'deploy' || lastOp.kind === 'rollback') && lastOp.state === 'failed';
  if (!desired) {
    if (!obs.liveVersion) {
      sync = 'synced'; health = 'missing';
      verdict = lastFailed ? 'failed' : 'missing';
      reasons.push(lastFailed ? 'last_deploy_failed' : 'never_deployed');
    } else {
      sync = 'out_of_sync'; health = 'unknown'; verdict = 'drifted'; reasons.push('live_without_desired');
    }
  } else {
    const drift: string[] = [];
    if (!obs.liveVersion) drift.push('live_pointer_missing');
    else if (obs.liveVersion !== desired) drift.push('live_version_mismatch');
    else if (obs.modified === undefined) drift.push('live_release_incomplete');
    else if (obs.modified.length) drift.push('live_files_modified');
    const unhealthy: string[] = [];
    if (obs.kind === 'service') {
      if (!obs.process) drift.push('process_missing');
      else if (obs.process.version !== desired) drift.push('process_version_mismatch');
      else if (obs.process.state === 'backoff') unhealthy.push('process_crashlooping');
      else if (obs.process.state !== 'running') unhealthy.push('process_not_running');
      else if (obs.process.healthy === false) unhealthy.push('health_check_failing');
    } else if (obs.kind === 'static' && obs.liveVersion && obs.healthFile === false) unhealthy.push('health_file_missing');
    reasons.push(...drift, ...unhealthy);
    sync = drift.length ? 'out_of_sync' : 'synced';
    health = !obs.liveVersion ? 'missing' : unhealthy.length ? 'degraded' : 'healthy';
    if (desiredRec?.state === 'failed') { verdict = 'failed'; reasons.push('desired_version_failed'); }
    else if (!obs.liveVersion) verdict = 'missing';
    else if (drift.length) verdict = 'drifted';
    else if (unhealthy.length) verdict = 'degraded';
    else verdict = 'in_sync';
    if (lastFailed && verdict === 'in_sync') reasons.push('last_deploy_failed_rolled_back');
  }
  // Without a valid recipe the health of what runs cannot be judged.
  if (obs.kind === 'unknown' && verdict === 'in_sync') { verdict = 'unknown'; health = 'unknown'; }
  if (changing) { verdict = 'progressing'; health = 'progressing'; reasons.unshift(`operation_in_progress:${lockOp.kind}`); }
  return { verdict, sync, health, reasons };
}

function opView(op: OpRecord): OpView {
  return { v: 1, op_id: op.op_id, target: op.target, kind: op.kind, state: op.state, version: op.version, digest: op.digest, error: op.error, log: op.log };
}

function optionalString(v: unknown, param: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v.length > 1000) throw new BadRequestError(`${param} must be a string of at most 1000 characters.`, param);
  return v;
}

function relativeToRepo(file: string): string {
  const i = file.lastIndexOf('/deploy/');
  return i >= 0 ? file.slice(i + 1) : file;
}

function sleep(ms: number): Promise<void> { return new Promise((r) => setTimeout(r, ms)); }

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
