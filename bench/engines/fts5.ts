/**
 * SQLite FTS5 through better-sqlite3, on disk: one column, tokenize 'porter unicode61 remove_diacritics 2',
 * ranked by bm25() (k1 = 1.2, b = 0.75, fixed by FTS5). The query is an OR of the quoted words (quoting
 * keeps AND/OR/NOT/NEAR words and `:` literal). Top 20 and the exact total come from one statement:
 * `count(*) OVER ()` over the full match set, which FTS5 scores entirely for ORDER BY rank anyway.
 * Built in one transaction then merged with 'optimize' (Quarry also ends its build with one commit).
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CorpusDoc } from '../dataset.js';
import { body, TOP_K, type BenchEngine, type SearchAnswer } from './types.js';

export function create(): BenchEngine {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-bench-fts5-'));
  const file = join(dir, 'fts.db');
  let db: Database.Database | undefined;
  let stmt: Database.Statement | undefined;
  return {
    name: 'sqlite-fts5',
    method: "SQLite FTS5 (better-sqlite3), one column, tokenize 'porter unicode61 remove_diacritics 2', ORDER BY rank (bm25, k1 1.2, b 0.75) LIMIT 20 with count(*) OVER () as the exact total, one statement; built in one transaction + 'optimize'; bytes = database file size",
    async build(docs: readonly CorpusDoc[]) {
      db = new Database(file);
      db.pragma('journal_mode = OFF');
      db.pragma('synchronous = OFF');
      db.exec("CREATE VIRTUAL TABLE docs USING fts5(body, tokenize = 'porter unicode61 remove_diacritics 2')");
      const ins = db.prepare('INSERT INTO docs(rowid, body) VALUES (?, ?)');
      db.transaction(() => { for (let i = 0; i < docs.length; i++) ins.run(i + 1, body(docs[i]!)); })();
      db.exec("INSERT INTO docs(docs) VALUES ('optimize')");
      stmt = db.prepare(`SELECT rowid AS id, count(*) OVER () AS total FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT ${TOP_K}`);
    },
    search(q: string): SearchAnswer {
      const words = q.split(/\s+/).filter((w) => w !== '');
      if (words.length === 0) return { top: [], total: 0 };
      const rows = stmt!.all(words.map((w) => `"${w.replace(/"/g, '""')}"`).join(' OR ')) as { id: number; total: number }[];
      return { top: rows.map((r) => r.id - 1), total: rows.length === 0 ? 0 : rows[0]!.total };
    },
    async bytes() { return statSync(file).size; },
    async close() { db?.close(); rmSync(dir, { recursive: true, force: true }); },
  };
}
