/**
 * The state database: one SQLite file (`state.sqlite`) in the data directory, shared by the parts of the
 * service that keep state (accounts, capabilities, audit, control plane). WAL mode, foreign keys on, a
 * busy timeout so a CLI and the server can share it. Schema changes are numbered migrations, the files
 * `src/store/migrations/NNN_name.sql`, applied in order on open, each in its own transaction; the applied
 * numbers are kept in `schema_migrations`. Ranges: 001–099 store/auth, 100–199 control plane, 200–299
 * corpora/crawl.
 */
import Database from 'better-sqlite3';
import { readdirSync, readFileSync, mkdirSync, existsSync, chmodSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InternalError } from '../kernel/errors.js';

export type Db = Database.Database;

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

export interface Migration { version: number; name: string; sql: string }

export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const out: Migration[] = [];
  for (const file of readdirSync(dir).sort()) {
    const m = /^(\d{3})_([a-z0-9_]+)\.sql$/.exec(file);
    if (!m) continue;
    out.push({ version: Number(m[1]), name: m[2]!, sql: readFileSync(join(dir, file), 'utf8') });
  }
  for (let i = 1; i < out.length; i++) {
    if (out[i]!.version === out[i - 1]!.version) {
      throw new InternalError(`Two migrations share number ${out[i]!.version}: ${out[i - 1]!.name} and ${out[i]!.name}.`);
    }
  }
  return out;
}

/** Opens (creating if needed) the state database at `file` and applies pending migrations. */
export function openDb(file: string, migrations: Migration[] = loadMigrations()): Db {
  mkdirSync(dirname(file), { recursive: true });
  const fresh = !existsSync(file);
  const db = new Database(file);
  // Accounts, capability records and the audit trail are nobody else's business; SQLite gives the -wal
  // and -shm files the database file's mode, so setting it before WAL is enabled covers all three.
  if (fresh) chmodSync(file, 0o600);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL'); // an acknowledged write survives power loss, not only a process crash
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
  const applied = new Set(
    (db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version),
  );
  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  for (const m of migrations) {
    if (applied.has(m.version)) continue;
    db.transaction(() => {
      db.exec(m.sql);
      record.run(m.version, m.name, new Date().toISOString());
    }).immediate();
  }
  return db;
}
