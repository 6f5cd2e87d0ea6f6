/**
 * Promotion (deploy and rollback): the desired version moves first, then the release is made complete,
 * the live pointer switched atomically (rename of a symlink), and the new version verified within its
 * health deadline. A failure marks the version failed and returns desired, pointer and process to the
 * previous version automatically (`deploy.failed`, then `deploy.rolled_back`).
 *
 * Runs inside an operation that holds the target's lock.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { EventKind } from '../events/bus.js';
import { QuarryError } from '../kernel/errors.js';
import type { Db } from '../store/db.js';
import { OpFailure, type OpRun } from './operations.js';
import type { Observer } from './observer.js';
import { loadRecipe, type Recipe } from './recipe.js';
import type { ReleaseStore } from './releases.js';
import type { ControlStore } from './store.js';
import { probeHttp, type ServiceProcess, type Supervisor } from './supervisor.js';
import type { VersionRecord } from './types.js';

export type Publish = (kind: EventKind, payload: Record<string, unknown>, target: string) => void;

export interface PromoterOptions {
  db: Db;
  store: ControlStore;
  releases: ReleaseStore;
  supervisor: Supervisor;
  observer: Observer;
  targetsDir: string;
  publish: Publish;
  /** Called after a promotion succeeded (history past the limit is pruned). */
  onPromoted(target: string): Promise<void>;
}

export class Promoter {
  readonly #o: PromoterOptions;

  constructor(o: PromoterOptions) { this.#o = o; }

  /**
   * Promotes `v` of `target` (deploy or rollback). Desired moves first, in one transaction with the op
   * record, so a crash leaves an op to mark interrupted and a `from_version` to return to.
   */
  async promote(run: OpRun, target: string, v: VersionRecord, kind: 'deploy' | 'rollback'): Promise<void> {
    const { db, store, releases, supervisor, observer, publish } = this.#o;
    const recipe = loadRecipe(this.#o.targetsDir, target);
    const opId = run.op.op_id;
    const from = store.getTarget(target).desired_version;
    const previousLive = releases.readLive(target);
    const cur = supervisor.current(target);
    if (from === v.version && previousLive === v.version && v.state === 'live' && (await observer.verify(target, v.version))?.length === 0
      && (recipe.kind !== 'service' || (cur?.version === v.version && supervisor.isAlive(cur)))) {
      // Applying the spec that is already true changes nothing (no generation bump, no restart).
      store.updateOp(opId, { state: 'running', from_version: from });
      run.log(`${target} ${v.version} is already live and in sync: nothing to do`);
      return;
    }
    let generation = 0;
    db.transaction(() => {
      store.updateOp(opId, { state: 'running', from_version: from, prior_state: store.getVersion(target, v.version)?.state ?? v.state });
      store.setVersionState(target, v.version, 'promoting');
      generation = store.setDesiredInTx(target, v.version);
    }).immediate();
    publish('deploy.started', { op_id: opId, op_kind: kind, version: v.version, digest: v.digest, from, generation }, target);
    try {
      await releases.materialize(target, v.version, v.digest);
      store.setVersionState(target, v.version, 'verifying');
      releases.switchLive(target, v.version);
      run.log(`live pointer → ${v.version}`);
      publish('deploy.verifying', { op_id: opId, version: v.version, digest: v.digest }, target);
      if (recipe.kind === 'service') {
        await this.startService(run, recipe, v.version, 'deploy');
      } else {
        const diff = await observer.verify(target, v.version);
        if (!diff || diff.length) throw new OpFailure('verify_failed', `release ${v.version} does not match its manifest (${(diff ?? ['incomplete']).join(', ')})`);
        if (recipe.health.type === 'file' && !existsSync(join(releases.releaseDir(target, v.version), recipe.health.path))) {
          throw new OpFailure('health_check_failed', `${recipe.health.path} is missing from release ${v.version}`);
        }
      }
    } catch (err) {
      const message = (err as Error).message;
      const code = err instanceof OpFailure ? err.code : QuarryError.is(err) ? err.code : 'deploy_failed';
      store.setVersionState(target, v.version, 'failed');
      publish('deploy.failed', { op_id: opId, version: v.version, digest: v.digest, error: message }, target);
      run.log(`failed: ${message}`);
      await this.#revert(run, target, recipe, v.version, from, previousLive);
      throw new OpFailure(code, message);
    }
    this.markLive(target, v.version);
    run.log(`${target} ${v.version} is live`);
    if (kind === 'rollback') publish('deploy.rolled_back', { op_id: opId, from, to: v.version, digest: v.digest, automatic: false }, target);
    publish('deploy.succeeded', { op_id: opId, version: v.version, digest: v.digest, generation }, target);
    await this.#o.onPromoted(target);
  }

  /** `version` becomes the target's live version record; the one that was live is superseded. */
  markLive(target: string, version: string): void {
    const { db, store } = this.#o;
    db.transaction(() => {
      for (const other of store.listVersions(target)) if (other.version !== version && other.state === 'live') store.setVersionState(target, other.version, 'superseded');
      store.setVersionState(target, version, 'live');
    }).immediate();
  }

  /** Returns a target to `to` after a failed promotion of `failed`: desired, live pointer, process. */
  async #revert(run: OpRun, target: string, recipe: Recipe, failed: string, to: string | null, previousLive: string | undefined): Promise<void> {
    const { db, store, releases, supervisor, publish } = this.#o;
    const back = to !== null && releases.isComplete(target, to) ? to : (previousLive && releases.isComplete(target, previousLive) ? previousLive : null);
    db.transaction(() => { store.setDesiredInTx(target, back); }).immediate();
    if (back) {
      releases.switchLive(target, back);
      if (recipe.kind === 'service') {
        const cur = supervisor.current(target);
        if (!cur || cur.version !== back || !supervisor.isAlive(cur)) {
          try { await this.startService(run, recipe, back, 'rollback'); } catch (err) { run.log(`restarting ${back} failed: ${(err as Error).message}`); }
        }
      }
      run.log(`rolled back to ${back}`);
    } else {
      releases.removeLive(target);
      if (recipe.kind === 'service') await supervisor.stopTarget(target);
      run.log('nothing to roll back to: the target is not live');
    }
    publish('deploy.rolled_back', { op_id: run.op.op_id, from: failed, to: back, automatic: true }, target);
  }

  /**
   * Starts `version` of a service beside the current process, waits for its health check within the
   * deadline, then makes it current and stops the old one. On failure the new process is stopped and
   * the old one keeps serving.
   */
  async startService(run: OpRun | undefined, recipe: Recipe, version: string, why: string): Promise<void> {
    const { releases, supervisor } = this.#o;
    if (recipe.health.type !== 'http' || !recipe.run) throw new OpFailure('bad_recipe', `${recipe.target}: a service needs run.command and an http health check.`);
    const proc = await supervisor.start(recipe.target, version, releases.releaseDir(recipe.target, version), recipe.run.command);
    run?.log(`${why}: started ${recipe.target} ${version} pid ${proc.pid} on port ${proc.port}`);
    const ok = await waitHealthy(proc, recipe.health.path, recipe.health.timeoutMs, recipe.health.deadlineMs);
    if (!ok) {
      await supervisor.stop(proc);
      throw new OpFailure('health_check_failed', `GET ${recipe.health.path} of ${recipe.target} ${version} did not answer 2xx within ${recipe.health.deadlineMs} ms`);
    }
    const old = supervisor.makeCurrent(proc);
    run?.log(`${recipe.target} ${version} healthy on port ${proc.port}`);
    if (old) await supervisor.stop(old);
  }
}

async function waitHealthy(proc: ServiceProcess, path: string, timeoutMs: number, deadlineMs: number): Promise<boolean> {
  const deadline = Date.now() + deadlineMs;
  while (Date.now() < deadline) {
    if (proc.child && !proc.child.running) return false;
    if (await probeHttp(proc.port, path, Math.min(timeoutMs, Math.max(1, deadline - Date.now())))) return true;
    await sleep(50);
  }
  return false;
}

function sleep(ms: number): Promise<void> { return new Promise((r) => setTimeout(r, ms)); }
