/**
 * Operation rules: what each operation requires of the versions it names (CONTRACT §6), and the plan a
 * dry run answers. Pure decisions over the store's records; they run after the lock is taken (a second
 * operation is 409 before any of these can answer 400 or 404) and change nothing.
 */
import { BadRequestError, ConflictError, NotFoundError } from '../kernel/errors.js';
import type { Recipe } from './recipe.js';
import type { OpKind, TargetSpec, VersionRecord, VersionState } from './types.js';

export interface PlanAnswer { v: 1; dry_run: true; target: string; kind: OpKind; plan: Record<string, unknown> }

/** Version states that can be promoted by an explicit request. */
const PROMOTABLE: ReadonlySet<VersionState> = new Set(['staged', 'superseded', 'live', 'failed']);
/** Version states counted against the history limit (and pruned past it). */
const PRUNABLE: ReadonlySet<VersionState> = new Set(['superseded', 'built', 'staged', 'build_failed', 'stage_failed']);

/** Stage: a recorded version that built. */
export function stageCandidate(target: string, v: VersionRecord | undefined, asked: string): VersionRecord {
  if (!v || v.state === 'pruned') throw new NotFoundError(`${target} has no version ${JSON.stringify(asked)}.`, 'version');
  if (v.state === 'build_failed') throw new BadRequestError(`Version ${v.version} of ${target} did not build.`, 'version');
  return v;
}

/** `expected_generation`, when given, must be the target's generation (409 otherwise: someone moved it). */
export function checkGeneration(spec: TargetSpec, expected: number | undefined): void {
  if (expected !== undefined && expected !== spec.generation) throw new ConflictError(`${spec.target} is at generation ${spec.generation}, not ${expected}.`);
}

/**
 * Deploy: the named version when promotable (a failed one only when named), or by default the newest
 * staged one. `versions` is newest first.
 */
export function deployCandidate(target: string, versions: readonly VersionRecord[], asked: string | undefined): VersionRecord {
  if (asked === undefined) {
    const v = versions.find((x) => x.state === 'staged');
    if (!v) throw new BadRequestError(`${target} has no staged version to deploy; build and stage one, or name a version.`, 'version');
    return v;
  }
  const v = versions.find((x) => x.version === asked);
  if (!v || v.state === 'pruned') throw new NotFoundError(`${target} has no version ${JSON.stringify(asked)}.`, 'version');
  if (!PROMOTABLE.has(v.state)) throw new BadRequestError(`Version ${v.version} of ${target} is ${v.state}; only a staged version can be promoted (stage it with POST /api/upload).`, 'version');
  return v;
}

/**
 * Rollback: `previous` is the newest known-good (superseded) version other than the desired one that
 * can still be materialized; a named version must be promotable and never failed. A rollback never
 * selects a failed version.
 */
export function rollbackCandidate(target: string, spec: TargetSpec, versions: readonly VersionRecord[], to: string, available: (v: VersionRecord) => boolean): VersionRecord {
  if (to === 'previous') {
    const v = versions.find((x) => x.state === 'superseded' && x.version !== spec.desired_version && available(x));
    if (!v) throw new BadRequestError(`${target} has no previous version to roll back to.`, 'to');
    return v;
  }
  const v = versions.find((x) => x.version === to);
  if (!v || v.state === 'pruned') throw new NotFoundError(`${target} has no version ${JSON.stringify(to)}.`, 'to');
  if (v.state === 'failed') throw new BadRequestError(`Version ${to} of ${target} failed; a rollback never selects a failed version (deploy it explicitly to retry).`, 'to');
  if (!PROMOTABLE.has(v.state)) throw new BadRequestError(`Version ${to} of ${target} is ${v.state}, not a deployable release.`, 'to');
  return v;
}

/** What a promotion of `v` would do, step by step (the dry-run answer). */
export function promotionPlan(recipe: Recipe, kind: OpKind, spec: TargetSpec, v: VersionRecord, live: string | undefined, complete: boolean): PlanAnswer {
  const steps = [
    ...(complete ? [] : [`materialize release ${v.version} from ${v.digest}`]),
    `set desired version ${spec.desired_version ?? '(none)'} → ${v.version} (generation ${spec.generation} → ${spec.generation + 1})`,
    `switch live pointer ${live ?? '(none)'} → ${v.version}`,
    ...(recipe.kind === 'service' && recipe.health.type === 'http'
      ? [`start ${v.version} and wait for GET ${recipe.health.path} within ${recipe.health.deadlineMs} ms`, 'stop the previous process']
      : [`verify the release files and ${recipe.health.path}`]),
    `on failure: mark ${v.version} failed and return to ${spec.desired_version ?? '(nothing live)'}`,
  ];
  return {
    v: 1, dry_run: true, target: spec.target, kind,
    plan: { from: spec.desired_version, live, to: v.version, digest: v.digest, state: v.state, generation: spec.generation, next_generation: spec.generation + 1, steps },
  };
}

/** Versions past the history limit, oldest last: never the desired or the live one. `versions` is newest first. */
export function pruneCandidates(versions: readonly VersionRecord[], spec: TargetSpec, live: string | undefined, historyLimit: number): VersionRecord[] {
  return versions.filter((v) => PRUNABLE.has(v.state) && v.version !== spec.desired_version && v.version !== live).slice(historyLimit);
}
