/**
 * The control plane's vocabulary (CONTRACT §6). Spec (what is desired, kept in the database) and status
 * (what was observed on disk and in the process table) are separate types on purpose: status is never
 * written from the spec, only from an observation.
 */
import type { Digest } from './artifact.js';

export type VersionState =
  | 'built' | 'build_failed'
  | 'staged' | 'stage_failed'
  | 'promoting' | 'verifying' | 'live' | 'failed'
  | 'superseded' | 'pruned';

export type OpKind = 'build' | 'stage' | 'deploy' | 'rollback' | 'reconcile' | 'restart';
export type OpState = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

export interface VersionRecord {
  target: string;
  version: string;
  digest: Digest;
  state: VersionState;
  origin: 'build' | 'upload';
  created_at: string;
  updated_at: string;
}

/** Desired state of a target: the spec. */
export interface TargetSpec {
  target: string;
  desired_version: string | null;
  generation: number;
  lock_op: string | null;
}

export interface OpRecord {
  op_id: string;
  target: string | null;
  kind: OpKind;
  state: OpState;
  version: string | null;
  digest: string | null;
  from_version: string | null;
  /** Deploy/rollback: the version's state before it went `promoting` (restored if a crash interrupts). */
  prior_state: string | null;
  error: { code: string; message: string } | null;
  log: string;
  actor: string | null;
  reason: string | null;
  created_at: string;
  updated_at: string;
}

export type Verdict = 'in_sync' | 'progressing' | 'degraded' | 'drifted' | 'failed' | 'missing' | 'unknown';
export type SyncStatus = 'synced' | 'out_of_sync' | 'unknown';
export type HealthStatus = 'healthy' | 'progressing' | 'degraded' | 'missing' | 'unknown';

/** What was observed about a target, the raw facts a verdict is computed from: the status. */
export interface TargetObservation {
  target: string;
  kind: 'static' | 'service' | 'unknown';
  /** Version the live pointer names (undefined: no pointer). */
  liveVersion: string | undefined;
  liveDigest: Digest | undefined;
  /** Paths of the live release that differ from its manifest; undefined when the release is incomplete. */
  modified: string[] | undefined;
  /** Service targets: the supervised process, if any. */
  process?: { version: string; pid: number; port: number; state: string; restarts: number; healthy: boolean | undefined };
  /** Static targets: whether the health file is present in the live release. */
  healthFile?: boolean;
}

/** One element of `deploy_status.targets` (CONTRACT §6). */
export interface TargetStatus {
  target: string;
  verdict: Verdict;
  sync: SyncStatus;
  health: HealthStatus;
  desired: { version: string; digest: string } | null;
  /** `path`: the live pointer (where a static target is served from); `endpoint`: where a service listens. */
  live: { version: string; digest: string | null; path: string; endpoint?: string } | null;
  generation: number;
  lock: { op_id: string; kind: string; since: string | null } | null;
  last_op: { op_id: string; kind: string; state: OpState; updated_at: string } | null;
  stable_versions: string[];
  reasons: string[];
}
