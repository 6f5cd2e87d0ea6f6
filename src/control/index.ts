/**
 * The deployment control plane (issue 5, CONTRACT §6): allowlist → inventory, recipes, reproducible
 * builds, staging, atomic promotion, verdicts, rollback, reconcile and restart, as a library
 * (`ControlPlane`) and its HTTP route group. The composition root calls `createControlPlane`, mounts
 * `routes` and calls `start()` once and `close()` on shutdown.
 */
import type { RouteGroup } from '../http/route.js';
import { ControlPlane, type ControlPlaneOptions } from './control-plane.js';
import { controlRoutes } from './routes.js';

export { ControlPlane, judge } from './control-plane.js';
export type { ControlPlaneOptions, OpAnswer, OpView, PlanAnswer } from './control-plane.js';
export type { TargetStatus, Verdict, VersionState, OpKind, OpState } from './types.js';

export interface ControlPlaneHandle extends RouteGroup {
  plane: ControlPlane;
  start(): Promise<void>;
  close(): Promise<void>;
}

export function createControlPlane(options: ControlPlaneOptions): ControlPlaneHandle {
  const plane = new ControlPlane(options);
  const group = controlRoutes(plane);
  return {
    ...group,
    plane,
    start: () => plane.start(),
    close: () => plane.close(),
  };
}
