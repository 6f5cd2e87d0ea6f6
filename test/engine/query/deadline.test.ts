/**
 * A search honours its deadline: the executor checks it between blocks of work, so a query that would
 * take seconds stops at its budget with `unavailable`, and a search within its budget answers as if it
 * had none.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Index } from '../../../src/engine/index.js';
import { QuarryError } from '../../../src/kernel/errors.js';
import { SLOW_QUERY, writeSlowCorpus } from '../../support/slow-corpus.js';

test('a query that would take seconds is cut at its budget with unavailable; others answer as before', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-deadline-'));
  try {
    await writeSlowCorpus(dir);
    const index = await Index.open(dir);
    try {
      const searcher = index.searcher();
      assert.throws(() => searcher.search(SLOW_QUERY, { deadline: Date.now() + 20 }), (err: unknown) => {
        assert.ok(QuarryError.is(err));
        assert.equal(err.code, 'unavailable');
        assert.match(err.message, /time budget/);
        return true;
      });
      // A deadline already past stops even a cheap search before it starts.
      assert.throws(() => searcher.search('omega', { deadline: Date.now() - 1 }), /time budget/);
      // Within a generous budget, the same answer as without one.
      const free = searcher.search('omega zeta', { page: 0, pageSize: 5 });
      const budgeted = searcher.search('omega zeta', { page: 0, pageSize: 5, deadline: Date.now() + 600_000 });
      assert.deepEqual(budgeted, free);
      assert.equal(free.total, 400);
    } finally {
      await index.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
