/**
 * The operation runner: lock → operation record → steps in the background → audit → unlock. Every
 * build, stage, deploy, rollback, reconcile and restart goes through it, so "one operation per target",
 * the op record's life (`queued → running → succeeded | failed`) and the audit entry are written once.
 *
 * The lock is taken before anything about the request's versions is checked (`underLock`), so a second
 * operation while one runs is always `409 conflict`, whatever the state of the versions it names.
 */
import type { Principal } from '../kernel/principal.js';
import { ConflictError, QuarryError } from '../kernel/errors.js';
import { appendAudit } from '../store/audit.js';
import type { Db } from '../store/db.js';
import type { ControlStore } from './store.js';
import type { OpKind, OpRecord, OpState } from './types.js';

export interface OpAnswer { v: 1; op_id: string; target: string | null; kind: OpKind; state: OpState }
export interface OpView extends OpAnswer { version: string | null; digest: string | null; error: { code: string; message: string } | null; log: string }

/** A step failed with a code of the operation vocabulary (`build_failed`, `health_check_failed`, …). */
export class OpFailure extends Error {
  readonly code: string;
  constructor(code: string, message: string) { super(message); this.code = code; }
}

/**
 * The context of one running operation: log lines go to the op record's `log`, gathered for up to
 * `OP_LOG_FLUSH_MS` and written in one statement (each write is a commit, an fsync on the event loop that
 * serves search, and rewrites the log's row), and always before the op's end is committed or the op is read.
 */
export interface OpRun {
  op: OpRecord;
  actor: Principal | undefined;
  log(line: string): void;
}

export type Steps = (run: OpRun) => Promise<void>;

/** How long log lines of a running operation wait to be written together. */
const OP_LOG_FLUSH_MS = 100;

export interface LaunchOptions {
  version?: string | undefined;
  digest?: string | undefined;
  reason?: string | undefined;
  from?: string | null | undefined;
}

export interface OperationRunnerOptions {
  db: Db;
  store: ControlStore;
  now: () => Date;
  /** Characters of output kept in an operation's `log`. */
  opLogMaxChars: number;
  /** Called synchronously whenever a target's lock is released (its cached verdict shows the lock). */
  onUnlocked(target: string): void;
  /** Called after a target's operation ended and was audited (the observer refreshes it fully). */
  onSettled(target: string): Promise<void>;
}

export class OperationRunner {
  readonly #o: OperationRunnerOptions;
  readonly #running = new Map<string, Promise<void>>();
  /** Log lines of running operations not yet written, and the timer that writes them. */
  readonly #unwritten = new Map<string, { text: string; timer: NodeJS.Timeout }>();

  constructor(o: OperationRunnerOptions) { this.#o = o; }

  /**
   * Takes `target`'s lock for a new operation id (409 when held) and calls `fn` with it. When `fn`
   * throws, the lock is released and the error passes on; when it returns, the lock belongs to the
   * operation `fn` launched with that id.
   */
  async underLock<T>(target: string, fn: (opId: string) => Promise<T> | T): Promise<T> {
    const opId = this.#o.store.newOpId();
    if (!this.#o.store.tryLock(target, opId)) throw this.conflict(target);
    try { return await fn(opId); } catch (err) { this.#unlock(target, opId); throw err; }
  }

  conflict(target: string): ConflictError {
    const spec = this.#o.store.getTarget(target);
    const op = spec.lock_op ? this.#o.store.getOp(spec.lock_op) : undefined;
    return new ConflictError(`${target} is locked by ${op ? `${op.kind} operation ${op.op_id}` : `operation ${spec.lock_op}`}; one operation per target at a time.`);
  }

  /** Records operation `opId` (whose lock on `target` the caller holds) and runs `steps` in the background. */
  launch(actor: Principal, target: string, kind: OpKind, opId: string, o: LaunchOptions, steps: Steps): OpAnswer {
    const op = this.#o.store.createOp({ op_id: opId, target, kind, actor: actor.capId, reason: o.reason, version: o.version, digest: o.digest, from_version: o.from ?? null });
    return this.run(actor, op, target, steps);
  }

  /**
   * Runs a recorded operation's steps in the background: `running` is the steps' own to set, then
   * `succeeded` or `failed` (with the error's code), the lock on `lockedTarget` released, the audit
   * entry appended (`controller` when there is no actor). Answers at once with the op's `queued` state.
   */
  run(actor: Principal | undefined, op: OpRecord, lockedTarget: string | undefined, steps: Steps): OpAnswer {
    const { store } = this.#o;
    const opId = op.op_id;
    const run: OpRun = { op, actor, log: (line) => this.#log(opId, line) };
    const p = (async () => {
      await Promise.resolve(); // the answer is computed before any step runs
      let result: 'ok' | 'failed' = 'ok';
      let error: { code: string; message: string } | undefined;
      try {
        await steps(run);
      } catch (err) {
        result = 'failed';
        error = { code: err instanceof OpFailure ? err.code : QuarryError.is(err) ? err.code : 'internal', message: (err as Error).message };
      }
      // The op's end is one commit (its state, the lock, the audit entry): each commit is an fsync that
      // holds the event loop, and a crash then sees all of it or none.
      try {
        this.#o.db.transaction(() => {
          this.#writeLog(opId);
          store.updateOp(opId, result === 'ok' ? { state: 'succeeded' } : { state: 'failed', error: error! });
          if (lockedTarget) store.unlock(lockedTarget, opId);
          const final = store.getOp(opId)!;
          appendAudit(this.#o.db, {
            actor: actor ? actor.capId : 'controller', account: actor?.account,
            action: `control.${op.kind}`, target: op.target ?? undefined,
            from: final.from_version ?? undefined, to: final.version ?? undefined,
            reason: final.reason ?? undefined, result, detail: { op_id: opId, ...(error ? { error } : {}), ...(final.digest ? { digest: final.digest } : {}) },
          }, this.#o.now());
        }).immediate();
      } finally {
        // Released even when the commit failed (a no-op when it did not).
        if (lockedTarget) this.#unlock(lockedTarget, opId);
      }
      if (lockedTarget) await this.#o.onSettled(lockedTarget).catch(() => undefined);
    })();
    this.#running.set(opId, p);
    void p.finally(() => this.#running.delete(opId));
    return { v: 1, op_id: opId, target: op.target, kind: op.kind, state: 'queued' };
  }

  #log(opId: string, line: string): void {
    const unwritten = this.#unwritten.get(opId);
    if (unwritten) { unwritten.text += `${line}\n`; return; }
    this.#unwritten.set(opId, { text: `${line}\n`, timer: setTimeout(() => this.#writeLog(opId), OP_LOG_FLUSH_MS) });
  }

  /** Writes the op's unwritten log lines, if any. */
  #writeLog(opId: string): void {
    const unwritten = this.#unwritten.get(opId);
    if (!unwritten) return;
    this.#unwritten.delete(opId);
    clearTimeout(unwritten.timer);
    this.#o.store.appendOpLog(opId, unwritten.text, this.#o.opLogMaxChars);
  }

  #unlock(target: string, opId: string): void {
    this.#o.store.unlock(target, opId);
    this.#o.onUnlocked(target);
  }

  /** The operation as `GET /api/ops/{op_id}` shows it; undefined when there is none. */
  view(opId: string): OpView | undefined {
    this.#writeLog(opId);
    const op = this.#o.store.getOp(opId);
    return op && { v: 1, op_id: op.op_id, target: op.target, kind: op.kind, state: op.state, version: op.version, digest: op.digest, error: op.error, log: op.log };
  }

  /** Resolves when the operation has finished (at once when it is not running). */
  async settled(opId: string): Promise<void> { await this.#running.get(opId); }

  /** Resolves when every running operation has finished. */
  async drain(): Promise<void> { await Promise.allSettled([...this.#running.values()]); }
}

/** A counting semaphore: at most `size` holders; more wait in arrival order. */
export class Slots {
  readonly #size: number;
  readonly #waiting: (() => void)[] = [];
  #active = 0;

  constructor(size: number) { this.#size = size; }

  async acquire(): Promise<void> {
    if (this.#active < this.#size) { this.#active++; return; }
    await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  release(): void {
    const next = this.#waiting.shift();
    if (next) next(); else this.#active--;
  }
}
