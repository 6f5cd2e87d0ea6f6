/**
 * The control plane's application service: what every face (REST, CLI through REST, MCP's
 * `service_mgmt`) calls, with the caller's principal and the request's input. It holds every rule that
 * is about the caller rather than the targets:
 *
 *   1. the input must be a JSON object (400), then the target must be in the allowlist (404
 *      `unknown_target`, before any other check, authentication included: CONTRACT §6);
 *   2. the caller must hold the target-scoped `mgmt.*` right (401 anonymous, 403 capability), and a
 *      refusal is audited as `denied`;
 *   3. the input is validated with its published schema (400 naming the field);
 *   4. an `Idempotency-Key` replays the first successful answer of (caller, key, operation);
 *   5. a dry run answers the plan; anything else goes to the control plane, which takes the target's
 *      lock (409) before the version rules (400/404).
 *
 * Reads: `status` filters every target's verdict down to what the caller may read (one implementation
 * for every face); `getOp` hides whether an operation exists from a caller who may not read it.
 */
import { requireRight, type Principal, type Right } from '../kernel/principal.js';
import { BadRequestError, NotFoundError } from '../kernel/errors.js';
import { bodySchema } from '../kernel/schema.js';
import { appendAudit, readAudit } from '../store/audit.js';
import type { AllowlistSource } from './allowlist.js';
import { type Digest, isDigest } from './artifact.js';
import { type DeployOptions, inventoryOf, type RollbackOptions } from './control-plane.js';
import type { OpAnswer, OpView } from './operations.js';
import type { PlanAnswer } from './rules.js';
import type { ControlStore } from './store.js';
import type { TargetStatus } from './types.js';

const V = { type: 'integer', const: 1, description: 'Protocol version; optional.' };
const TARGET = { type: 'string', description: 'A target of the allowlist.' };
const REASON = { type: ['string', 'null'], maxLength: 1000, description: 'Recorded in the operation and the audit log.' };
const DRY_RUN = { type: 'boolean', description: 'Answer the plan (200) and change nothing.' };

export interface BuildInput { target: string }
export interface StageInput { target: string; version: string }
export interface DeployInput { target: string; version?: string; dry_run?: boolean; reason?: string | null; expected_generation?: number }
export interface RollbackInput { target: string; to?: string; dry_run?: boolean; reason?: string | null }
export interface ReconcileInput { target?: string | null }
export interface RestartInput { target: string; reason?: string | null }

// Unknown fields are refused: a misspelt `dry_run` must not turn a plan into a deployment.
export const BuildRequest = bodySchema<BuildInput>('BuildRequest', {
  type: 'object', required: ['target'], additionalProperties: false, properties: { v: V, target: TARGET },
});
export const StageRequest = bodySchema<StageInput>('StageRequest', {
  type: 'object', required: ['target', 'version'], additionalProperties: false,
  properties: { v: V, target: TARGET, version: { type: 'string', minLength: 1, description: 'A built version of the target.' } },
});
export const DeployRequest = bodySchema<DeployInput>('DeployRequest', {
  type: 'object', required: ['target'], additionalProperties: false,
  properties: {
    v: V, target: TARGET, version: { type: 'string', description: 'Default: the newest staged version.' },
    dry_run: DRY_RUN, reason: REASON,
    expected_generation: { type: 'integer', description: '409 when the target is at another generation.' },
  },
});
export const RollbackRequest = bodySchema<RollbackInput>('RollbackRequest', {
  type: 'object', required: ['target'], additionalProperties: false,
  properties: { v: V, target: TARGET, to: { type: 'string', minLength: 1, description: '"previous" (default) or a version.' }, dry_run: DRY_RUN, reason: REASON },
});
export const ReconcileRequest = bodySchema<ReconcileInput>('ReconcileRequest', {
  type: 'object', additionalProperties: false,
  properties: { v: V, target: { type: ['string', 'null'], description: 'A target of the allowlist; absent or null: every target.' } },
});
export const RestartRequest = bodySchema<RestartInput>('RestartRequest', {
  type: 'object', required: ['target'], additionalProperties: false, properties: { v: V, target: TARGET, reason: REASON },
});

/** Every request-body schema of the control plane, for the contracts (OpenAPI components, MCP). */
export const CONTROL_REQUESTS = [BuildRequest, StageRequest, DeployRequest, RollbackRequest, ReconcileRequest, RestartRequest] as const;

/** What a submitted operation answers: the op (`queued`) or, for a dry run, the plan. */
export interface Submitted<A = OpAnswer | PlanAnswer> {
  answer: A;
  /** The answer is the stored one of an earlier request with the same Idempotency-Key. */
  replayed: boolean;
}

export interface SubmitOptions {
  /** Replays the first successful answer of (caller, key, operation) for the plane's idempotency TTL. */
  idempotencyKey?: string | undefined;
}

/**
 * What the service asks of the control plane: the plane itself (`ControlPlane`, on the caller's thread)
 * or, in the server, the client of the plane's own thread (`ControlThread`). The allowlist and the
 * records are read here directly (the same file, the same database); everything the plane does or
 * keeps in memory is asked of it.
 */
export interface Plane {
  readonly allowlist: AllowlistSource;
  readonly store: ControlStore;
  readonly uploadLimitBytes: number;
  readonly idempotencyTtlMs: number;
  now(): Date;
  getOp(opId: string): OpView | undefined | Promise<OpView | undefined>;
  status(targets: readonly string[]): Promise<TargetStatus[]>;
  build(actor: Principal, target: string): Promise<OpAnswer>;
  stage(actor: Principal, target: string, version: string): Promise<OpAnswer>;
  stageUpload(actor: Principal, target: string, digest: Digest, body: AsyncIterable<Buffer>): Promise<OpAnswer>;
  deploy(actor: Principal, target: string, o: DeployOptions): Promise<OpAnswer>;
  planDeploy(target: string, o: DeployOptions): PlanAnswer | Promise<PlanAnswer>;
  rollback(actor: Principal, target: string, o: RollbackOptions): Promise<OpAnswer>;
  planRollback(target: string, o: RollbackOptions): PlanAnswer | Promise<PlanAnswer>;
  reconcile(actor: Principal, target: string): Promise<OpAnswer>;
  reconcileAll(actor: Principal): Promise<OpAnswer>;
  restart(actor: Principal, target: string, reason: string | undefined): Promise<OpAnswer>;
}

/** Operations and audit entries `history` returns per target. */
const HISTORY_LIMIT = 50;

export class ControlService {
  readonly plane: Plane;
  readonly #inflight = new Map<string, Promise<OpAnswer | PlanAnswer>>();

  constructor(plane: Plane) { this.plane = plane; }

  get uploadLimitBytes(): number { return this.plane.uploadLimitBytes; }

  // ───────────────────────────── reads ─────────────────────────────

  inventory(principal: Principal): Record<string, unknown> {
    this.#require(principal, 'mgmt.read', undefined, 'read');
    return inventoryOf(this.plane.allowlist.current(), this.plane.now());
  }

  /** Verdicts of one target, or of every target the caller may read. */
  async status(principal: Principal, input: { target?: string | null | undefined } = {}): Promise<{ v: 1; targets: TargetStatus[] }> {
    if (input.target !== undefined && input.target !== null) {
      const target = this.plane.allowlist.check(input.target);
      this.#require(principal, 'mgmt.read', target, 'read');
      return { v: 1, targets: await this.plane.status([target]) };
    }
    this.#require(principal, 'mgmt.read', undefined, 'read');
    const readable = this.plane.allowlist.current().targets.filter((t) => principal.can('mgmt.read', t));
    return { v: 1, targets: await this.plane.status(readable) };
  }

  /**
   * One operation. Existence is not disclosed to a caller who may not read it: without `mgmt.read` at
   * all, every id answers 401 (anonymous) or 403 (capability), known or not; with `mgmt.read` scoped
   * to other targets, an operation of a target it may not read answers the same 404 as an unknown id
   * (and an operation over every target needs read access to every target).
   */
  async getOp(principal: Principal, opId: string): Promise<OpView> {
    this.#require(principal, 'mgmt.read', undefined, 'read');
    const op = await this.plane.getOp(opId);
    const readable = op && (op.target === null
      ? this.plane.allowlist.current().targets.every((t) => principal.can('mgmt.read', t))
      : principal.can('mgmt.read', op.target));
    if (!op || !readable) {
      if (op) this.#audit(principal, 'read', op.target ?? undefined, 'mgmt.read');
      throw new NotFoundError(`No operation ${JSON.stringify(opId)}.`, 'op_id');
    }
    return op;
  }

  /** What happened to one target: its versions, its last operations and its audit entries, newest first. */
  history(principal: Principal, input: { target?: string | null | undefined }): Record<string, unknown> {
    const target = this.plane.allowlist.check(input.target);
    this.#require(principal, 'mgmt.read', target, 'read');
    const limit = HISTORY_LIMIT;
    return {
      v: 1, target,
      versions: this.plane.store.listVersions(target).map(({ version, digest, state, origin, created_at, updated_at }) => ({ version, digest, state, origin, created_at, updated_at })),
      ops: this.plane.store.listOps(target, limit),
      audit: readAudit(this.plane.store.db, target, limit),
    };
  }

  // ───────────────────────────── operations ─────────────────────────────

  async build(principal: Principal, input: unknown, o: SubmitOptions = {}): Promise<Submitted<OpAnswer>> {
    const target = this.#authorize(principal, 'mgmt.build', input, 'build');
    BuildRequest.parse(input);
    return this.#idempotent(principal, o, 'build', () => this.plane.build(principal, target)) as Promise<Submitted<OpAnswer>>;
  }

  /** Stages a built version (`{target, version}`). */
  async stage(principal: Principal, input: unknown, o: SubmitOptions = {}): Promise<Submitted<OpAnswer>> {
    const target = this.#authorize(principal, 'mgmt.stage', input, 'stage');
    const { version } = StageRequest.parse(input);
    return this.#idempotent(principal, o, 'stage', () => this.plane.stage(principal, target, version)) as Promise<Submitted<OpAnswer>>;
  }

  /** Stages an artifact sent as a byte stream; `digest` is its expected `sha256:<hex>`. */
  async stageUpload(principal: Principal, input: { target?: unknown; digest?: unknown }, body: AsyncIterable<Buffer>, o: SubmitOptions = {}): Promise<Submitted<OpAnswer>> {
    const target = this.#authorize(principal, 'mgmt.stage', input, 'stage');
    const { digest } = input;
    if (!isDigest(digest)) throw new BadRequestError('digest must be sha256:<64 lowercase hex digits>.', 'digest');
    return this.#idempotent(principal, o, 'stage', () => this.plane.stageUpload(principal, target, digest, body)) as Promise<Submitted<OpAnswer>>;
  }

  async deploy(principal: Principal, input: unknown, o: SubmitOptions = {}): Promise<Submitted> {
    const target = this.#authorize(principal, 'mgmt.deploy', input, 'deploy');
    const body = DeployRequest.parse(input);
    const options = { version: body.version, reason: body.reason ?? undefined, expectedGeneration: body.expected_generation };
    return this.#idempotent(principal, o, 'deploy', async () =>
      body.dry_run === true ? this.plane.planDeploy(target, options) : this.plane.deploy(principal, target, options));
  }

  async rollback(principal: Principal, input: unknown, o: SubmitOptions = {}): Promise<Submitted> {
    const target = this.#authorize(principal, 'mgmt.rollback', input, 'rollback');
    const body = RollbackRequest.parse(input);
    const options = { to: body.to ?? 'previous', reason: body.reason ?? undefined };
    return this.#idempotent(principal, o, 'rollback', async () =>
      body.dry_run === true ? this.plane.planRollback(target, options) : this.plane.rollback(principal, target, options));
  }

  /** Reconciles one target, or every target when none is named (which needs the right on every target). */
  async reconcile(principal: Principal, input: unknown = {}, o: SubmitOptions = {}): Promise<Submitted<OpAnswer>> {
    const named = isObject(input) && input.target !== undefined && input.target !== null;
    if (named) {
      const target = this.#authorize(principal, 'mgmt.reconcile', input, 'reconcile');
      ReconcileRequest.parse(input);
      return this.#idempotent(principal, o, 'reconcile', () => this.plane.reconcile(principal, target)) as Promise<Submitted<OpAnswer>>;
    }
    ReconcileRequest.parse(input);
    for (const t of this.plane.allowlist.current().targets) this.#require(principal, 'mgmt.reconcile', t, 'reconcile');
    return this.#idempotent(principal, o, 'reconcile', () => this.plane.reconcileAll(principal)) as Promise<Submitted<OpAnswer>>;
  }

  async restart(principal: Principal, input: unknown, o: SubmitOptions = {}): Promise<Submitted<OpAnswer>> {
    const target = this.#authorize(principal, 'mgmt.restart', input, 'restart');
    const body = RestartRequest.parse(input);
    return this.#idempotent(principal, o, 'restart', () => this.plane.restart(principal, target, body.reason ?? undefined)) as Promise<Submitted<OpAnswer>>;
  }

  // ───────────────────────────── rules ─────────────────────────────

  /** Steps 1 and 2: a JSON object, an allowlisted target (404 before anything else), the right on it. */
  #authorize(principal: Principal, right: Right, input: unknown, action: string): string {
    if (!isObject(input)) throw new BadRequestError('The body must be a JSON object.', 'body');
    const target = this.plane.allowlist.check(input.target);
    this.#require(principal, right, target, action);
    return target;
  }

  #require(principal: Principal, right: Right, target: string | undefined, action: string): void {
    if (principal.can(right, target)) return;
    this.#audit(principal, action, target, right);
    requireRight(principal, right, target);
  }

  #audit(principal: Principal, action: string, target: string | undefined, right: Right): void {
    appendAudit(this.plane.store.db, {
      actor: principal.capId, account: principal.account, action: `control.${action}`, target, result: 'denied', detail: { right },
    }, this.plane.now());
  }

  /**
   * Step 4: the first successful answer for (caller, key, operation) is stored and replayed for the
   * TTL; concurrent requests with the same key share one answer. Error answers are not stored.
   */
  async #idempotent(principal: Principal, o: SubmitOptions, operation: string, fn: () => Promise<OpAnswer | PlanAnswer>): Promise<Submitted> {
    const key = o.idempotencyKey;
    if (key === undefined) return { answer: await fn(), replayed: false };
    if (key.length === 0 || key.length > 255) throw new BadRequestError('Idempotency-Key must be 1–255 characters.', 'Idempotency-Key');
    const actor = principal.capId ?? '';
    const { store } = this.plane;
    const stored = store.getIdempotent(actor, key, operation, this.plane.idempotencyTtlMs);
    if (stored) return { answer: stored.answer as unknown as OpAnswer | PlanAnswer, replayed: true };
    const slot = `${actor}\0${key}\0${operation}`;
    const inflight = this.#inflight.get(slot);
    if (inflight) return { answer: await inflight, replayed: true };
    const p = fn();
    this.#inflight.set(slot, p);
    try {
      const answer = await p;
      store.putIdempotent(actor, key, operation, 'dry_run' in answer ? 200 : 202, { ...answer });
      return { answer, replayed: false };
    } finally { this.#inflight.delete(slot); }
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
