/** Appends to the audit log (migration 001). One function so every part writes the same shape. */
import type { Db } from './db.js';

export interface AuditEntry {
  actor?: string | undefined;
  account?: string | undefined;
  address?: string | undefined;
  action: string;
  target?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
  reason?: string | undefined;
  result: string;
  detail?: Record<string, unknown> | undefined;
}

export function appendAudit(db: Db, entry: AuditEntry, now: Date = new Date()): void {
  db.prepare(
    `INSERT INTO audit_log (at, actor, account, address, action, target, from_ref, to_ref, reason, result, detail)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    now.toISOString(), entry.actor ?? null, entry.account ?? null, entry.address ?? null, entry.action,
    entry.target ?? null, entry.from ?? null, entry.to ?? null, entry.reason ?? null, entry.result,
    entry.detail === undefined ? null : JSON.stringify(entry.detail),
  );
}

export interface AuditRecord {
  id: number; at: string; actor: string | null; account: string | null; action: string; target: string | null;
  from_ref: string | null; to_ref: string | null; reason: string | null; result: string; detail: unknown;
}

/** The newest `limit` audit entries about `target`, newest first. */
export function readAudit(db: Db, target: string, limit: number): AuditRecord[] {
  const rows = db.prepare(
    `SELECT id, at, actor, account, action, target, from_ref, to_ref, reason, result, detail
     FROM audit_log WHERE target = ? ORDER BY id DESC LIMIT ?`,
  ).all(target, limit) as (AuditRecord & { detail: string | null })[];
  return rows.map((r) => ({ ...r, detail: r.detail === null ? null : JSON.parse(r.detail) as unknown }));
}
