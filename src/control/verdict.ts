/**
 * Verdicts: the pure rules that turn a target's spec (desired version, lock, last operation) and its
 * observation (pointer, files, process) into `deploy_status` (CONTRACT §6). No disk, no processes: the
 * observer gathers the facts, this module only judges them.
 */
import type { OpRecord, TargetObservation, TargetSpec, TargetStatus, Verdict, VersionRecord } from './types.js';

export interface Judgement { verdict: Verdict; sync: TargetStatus['sync']; health: TargetStatus['health']; reasons: string[] }

/**
 * The verdict of one target from its spec and observation. Precedence: an operation that changes what
 * runs → progressing; then failed, missing, drifted, degraded; in_sync only when everything matches.
 */
export function judge(spec: TargetSpec, obs: TargetObservation, lockOp: OpRecord | undefined, lastOp: OpRecord | undefined, desiredRec: VersionRecord | undefined): Judgement {
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

/** Everything a status is built from besides the judgement; all of it read from the spec side. */
export interface StatusFacts {
  spec: TargetSpec;
  desiredRec: VersionRecord | undefined;
  lockOp: OpRecord | undefined;
  lockedAt: string | null;
  lastOp: OpRecord | undefined;
  /** Known-good versions (live and superseded), newest first. */
  stable: string[];
  /** The live pointer's path (where a static target is served from). */
  livePath: string;
}

/** One element of `deploy_status.targets`: the judgement of `obs` (or of a failed observation). */
export function statusOf(target: string, facts: StatusFacts, obs: TargetObservation | Error): TargetStatus {
  const { spec, lockOp, lastOp } = facts;
  const j: Judgement = obs instanceof Error
    ? { verdict: 'unknown', sync: 'unknown', health: 'unknown', reasons: [`observation_failed: ${obs.message}`] }
    : judge(spec, obs, lockOp, lastOp, facts.desiredRec);
  const seen = obs instanceof Error ? undefined : obs;
  return {
    target,
    verdict: j.verdict, sync: j.sync, health: j.health,
    desired: spec.desired_version ? { version: spec.desired_version, digest: facts.desiredRec?.digest ?? '' } : null,
    live: seen?.liveVersion ? {
      version: seen.liveVersion, digest: seen.liveDigest ?? null, path: facts.livePath,
      ...(seen.process && seen.process.version === seen.liveVersion ? { endpoint: `http://127.0.0.1:${seen.process.port}` } : {}),
    } : null,
    generation: spec.generation,
    lock: spec.lock_op ? { op_id: spec.lock_op, kind: lockOp?.kind ?? 'reconcile', since: facts.lockedAt } : null,
    last_op: lastOp ? { op_id: lastOp.op_id, kind: lastOp.kind, state: lastOp.state, updated_at: lastOp.updated_at } : null,
    stable_versions: facts.stable,
    reasons: j.reasons,
  };
}
