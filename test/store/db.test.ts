import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb, loadMigrations } from '../../src/store/db.js';
import { appendAudit } from '../../src/store/audit.js';

test('migrations apply once, in order, and survive reopening', () => {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-db-'));
  try {
    const file = join(dir, 'state.sqlite');
    const db = openDb(file);
    appendAudit(db, { action: 'test', result: 'ok', detail: { a: 1 } });
    db.close();
    const again = openDb(file);
    const versions = (again.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as { version: number }[]).map((r) => r.version);
    assert.deepEqual(versions, loadMigrations().map((m) => m.version));
    assert.equal((again.prepare('SELECT count(*) AS n FROM audit_log').get() as { n: number }).n, 1);
    assert.equal(again.pragma('journal_mode', { simple: true }), 'wal');
    again.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
