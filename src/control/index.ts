/**
 * The deployment control plane (CONTRACT §6) as a library: allowlist → inventory, recipes,
 * reproducible builds, staging, atomic promotion, verdicts, rollback, reconcile and restart. Faces call
 * its application service (`ControlService`). The server calls `createControlThread`, which runs the plane
 * on a thread of its own; `createControlPlane` runs it on the caller's thread (tests, tools). Either way
 * the caller hands `service` to the faces, and calls `start()` once and `close()` on shutdown.
 */
import { ControlPlane, type ControlPlaneOptions } from './control-plane.js';
import { ControlService } from './service.js';
import { ControlThread, type ControlThreadOptions } from './thread.js';

export { ControlPlane } from './control-plane.js';
export type { ControlPlaneOptions, DeployOptions, RollbackOptions } from './control-plane.js';
export { ControlThread } from './thread.js';
export type { ControlThreadOptions } from './thread.js';
export { ControlService, CONTROL_REQUESTS, BuildRequest, StageRequest, DeployRequest, RollbackRequest, ReconcileRequest, RestartRequest } from './service.js';
export type { Submitted, SubmitOptions } from './service.js';
export { judge } from './verdict.js';
export type { OpAnswer, OpView } from './operations.js';
export type { PlanAnswer } from './rules.js';
export type { TargetStatus, Verdict, VersionState, OpKind, OpState } from './types.js';

export interface ControlPlaneHandle {
  /** What every face calls. */
  service: ControlService;
  /** The library underneath (tests, the benchmark). */
  plane: ControlPlane;
  start(): Promise<void>;
  close(): Promise<void>;
}

export function createControlPlane(options: ControlPlaneOptions): ControlPlaneHandle {
  const plane = new ControlPlane(options);
  return {
    service: new ControlService(plane),
    plane,
    start: () => plane.start(),
    close: () => plane.close(),
  };
}

/** The plane on a thread of its own (the server): its work never runs on the caller's event loop. */
export function createControlThread(options: ControlThreadOptions): Omit<ControlPlaneHandle, 'plane'> {
  const thread = new ControlThread(options);
  return {
    service: new ControlService(thread),
    start: () => thread.start(),
    close: () => thread.close(),
  };
}
