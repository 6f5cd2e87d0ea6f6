/**
 * Typed queries over the control plane's tables (migration 100). The database holds the spec (desired
 * version, generation), version records, operations, locks and idempotency answers; never an observed
 * verdict. Functions named `…InTx` must run inside a transaction the caller opened.
 */
import { randomBytes } from 'node:crypto';
import type { Statement } from 'better-sqlite3';
import type { Db } from '../store/db.js';
import type { Digest } from './artifact.js';
import type { OpKind, OpRecord, OpState, TargetSpec, VersionRecord, VersionState } from './types.js';

interface OpRow extends Omit<OpRecord, 'error'> { error: string | null }

export class ControlStore {
  readonly db: Db;
  readonly #now: () => Date;
  /**
   * Prepared statements by SQL text. Every observation and operation runs a dozen of these queries on the
   * event loop that serves search; compiling each anew cost more than running it.
   */
  readonly #statements = new Map<string, Statement>();

  constructor(db: Db, now: () => Date = () => new Date()) { this.db = db; this.#now = now; }

  #sql(text: string): Statement {
    let st = this.#statements.get(text);
    if (!st) { st = this.db.prepare(text); this.#statements.set(text, st); }
    return st;
  }

  #ts(): string { return this.#now().toISOString(); }

  ensureTarget(target: string): void {
    this.#sql('INSERT OR IGNORE INTO control_targets (target, generation, updated_at) VALUES (?, 0, ?)').run(target, this.#ts());
  }

  getTarget(target: string): TargetSpec {
    this.ensureTarget(target);
    return this.#sql('SELECT target, desired_version, generation, lock_op FROM control_targets WHERE target = ?').get(target) as TargetSpec;
  }

  lockedAt(target: string): string | null {
    return (this.#sql('SELECT locked_at FROM control_targets WHERE target = ?').get(target) as { locked_at: string | null } | undefined)?.locked_at ?? null;
  }

  /** Takes the per-target lock for `opId`; false when another operation holds it. */
  tryLock(target: string, opId: string): boolean {
    this.ensureTarget(target);
    return this.#sql('UPDATE control_targets SET lock_op = ?, locked_at = ? WHERE target = ? AND lock_op IS NULL')
      .run(opId, this.#ts(), target).changes === 1;
  }

  unlock(target: string, opId: string): void {
    this.#sql('UPDATE control_targets SET lock_op = NULL, locked_at = NULL WHERE target = ? AND lock_op = ?').run(target, opId);
  }

  /** Moves the desired version; every move bumps the generation. Returns the new generation. */
  setDesiredInTx(target: string, version: string | null): number {
    this.#sql('UPDATE control_targets SET desired_version = ?, generation = generation + 1, updated_at = ? WHERE target = ?')
      .run(version, this.#ts(), target);
    return this.getTarget(target).generation;
  }

  upsertVersion(target: string, version: string, digest: Digest, state: VersionState, origin: 'build' | 'upload'): void {
    const ts = this.#ts();
    this.#sql(`INSERT INTO control_versions (target, version, digest, state, origin, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (target, version) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`)
      .run(target, version, digest, state, origin, ts, ts);
  }

  setVersionState(target: string, version: string, state: VersionState): void {
    this.#sql('UPDATE control_versions SET state = ?, updated_at = ? WHERE target = ? AND version = ?').run(state, this.#ts(), target, version);
  }

  getVersion(target: string, version: string): VersionRecord | undefined {
    return this.#sql('SELECT * FROM control_versions WHERE target = ? AND version = ?').get(target, version) as VersionRecord | undefined;
  }

  /** Newest first (by last state change, then creation). */
  listVersions(target: string): VersionRecord[] {
    return this.#sql('SELECT * FROM control_versions WHERE target = ? ORDER BY updated_at DESC, rowid DESC').all(target) as VersionRecord[];
  }

  newOpId(): string { return `op_${randomBytes(9).toString('base64url')}`; }

  createOp(op: { op_id: string; target: string | null; kind: OpKind; actor?: string | undefined; reason?: string | undefined; version?: string | undefined; digest?: string | undefined; from_version?: string | null | undefined }): OpRecord {
    const ts = this.#ts();
    this.#sql(`INSERT INTO control_ops (op_id, target, kind, state, version, digest, from_version, actor, reason, created_at, updated_at)
      VALUES (?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?)`).run(
      op.op_id, op.target, op.kind, op.version ?? null, op.digest ?? null, op.from_version ?? null,
      op.actor ?? null, op.reason ?? null, ts, ts);
    return this.getOp(op.op_id)!;
  }

  updateOp(opId: string, patch: Partial<{ state: OpState; version: string; digest: string; from_version: string | null; prior_state: string; error: { code: string; message: string } }>): void {
    const sets: string[] = ['updated_at = ?'];
    const vals: unknown[] = [this.#ts()];
    for (const [k, v] of Object.entries(patch)) {
      sets.push(`${k} = ?`);
      vals.push(k === 'error' ? JSON.stringify(v) : v);
    }
    this.#sql(`UPDATE control_ops SET ${sets.join(', ')} WHERE op_id = ?`).run(...vals, opId);
  }

  /** Appends lines to an operation's log, keeping its last `maxChars` characters. */
  appendOpLog(opId: string, text: string, maxChars: number): void {
    this.#sql(`UPDATE control_ops SET log = substr(log || ?, -?) , updated_at = ? WHERE op_id = ?`).run(text, maxChars, this.#ts(), opId);
  }

  getOp(opId: string): OpRecord | undefined {
    const row = this.#sql('SELECT * FROM control_ops WHERE op_id = ?').get(opId) as OpRow | undefined;
    return row && { ...row, error: row.error === null ? null : JSON.parse(row.error) };
  }

  lastOp(target: string): OpRecord | undefined {
    const row = this.#sql('SELECT op_id FROM control_ops WHERE target = ? ORDER BY created_at DESC, rowid DESC LIMIT 1').get(target) as { op_id: string } | undefined;
    return row && this.getOp(row.op_id);
  }

  /** The newest `limit` operations of a target, newest first, without their logs. */
  listOps(target: string, limit: number): Omit<OpRecord, 'log'>[] {
    const rows = this.#sql(`SELECT op_id, target, kind, state, version, digest, from_version, prior_state, error, actor, reason, created_at, updated_at
      FROM control_ops WHERE target = ? ORDER BY created_at DESC, rowid DESC LIMIT ?`).all(target, limit) as Omit<OpRow, 'log'>[];
    return rows.map((row) => ({ ...row, error: row.error === null ? null : JSON.parse(row.error) }));
  }

  /** Operations a crash interrupted: every op still queued or running. */
  interruptedOps(): OpRecord[] {
    return (this.#sql(`SELECT op_id FROM control_ops WHERE state IN ('queued', 'running')`).all() as { op_id: string }[])
      .map((r) => this.getOp(r.op_id)!);
  }

  clearAllLocks(): number {
    return this.#sql('UPDATE control_targets SET lock_op = NULL, locked_at = NULL WHERE lock_op IS NOT NULL').run().changes;
  }

  getIdempotent(actor: string, key: string, route: string, ttlMs: number): { status: number; answer: Record<string, unknown> } | undefined {
    const since = new Date(this.#now().getTime() - ttlMs).toISOString();
    const row = this.#sql('SELECT status, answer FROM control_idempotency WHERE actor = ? AND key = ? AND route = ? AND created_at >= ?')
      .get(actor, key, route, since) as { status: number; answer: string } | undefined;
    return row && { status: row.status, answer: JSON.parse(row.answer) };
  }

  putIdempotent(actor: string, key: string, route: string, status: number, answer: Record<string, unknown>): void {
    this.#sql(`INSERT INTO control_idempotency (actor, key, route, status, answer, created_at) VALUES (?, ?, ?, ?, ?, ?)
      ON CONFLICT (actor, key, route) DO UPDATE SET status = excluded.status, answer = excluded.answer, created_at = excluded.created_at`)
      .run(actor, key, route, status, JSON.stringify(answer), this.#ts());
  }

  pruneIdempotency(ttlMs: number): void {
    this.#sql('DELETE FROM control_idempotency WHERE created_at < ?').run(new Date(this.#now().getTime() - ttlMs).toISOString());
  }
}
