/**
 * The reference-equivalence property again, through the real on-disk Index (STYLE §6: the query side is
 * tested over every implementation of the segment seam): each batch of a random history is a commit,
 * with updates and deletes, so the searcher sees several segments (and merges) with deleted documents.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { Index, createSearcher, type Searcher } from '../../../src/engine/index.js';
import type { StoredDocument } from '../../../src/engine/index/types.js';
import { WORDS, cidOf, docArb, historyArb, queryArb, type History } from './arbitraries.js';
import { REFERENCE_COMMON_RATIO, referenceSearch } from './reference.js';

/** Common-term cutoffs besides the default (the `auto` searcher's), under which this small vocabulary has rare and common terms. */
const ratioArb = fc.constantFrom(0.1, 0.5, 0.7);

async function buildOnDisk(dir: string, history: History): Promise<{ index: Index; live: StoredDocument[] }> {
  const index = await Index.open(dir);
  const writer = await index.openWriter();
  const live = new Map<bigint, StoredDocument>();
  for (const batch of history) {
    for (const [slot, d] of batch.docs) {
      const doc: StoredDocument = { cid: cidOf(slot), title: d.title, text: d.text };
      if (d.host) doc.host = d.host;
      writer.upsert(doc);
      live.set(doc.cid, doc);
    }
    for (const slot of batch.deletes) {
      writer.delete(cidOf(slot));
      live.delete(cidOf(slot));
    }
    await writer.commit();
  }
  await writer.close();
  return { index, live: [...live.values()] };
}

test('the engine over the on-disk index equals the reference evaluator', async () => {
  const root = mkdtempSync(join(tmpdir(), 'quarry-query-disk-'));
  let n = 0;
  try {
    await fc.assert(fc.asyncProperty(historyArb(12), fc.array(queryArb, { minLength: 1, maxLength: 6 }), fc.integer({ min: 1, max: 5 }), ratioArb, async (history, queries, pageSize, ratio) => {
      const { index, live } = await buildOnDisk(join(root, String(n++)), history);
      try {
        const auto = index.searcher() as Searcher;
        assert.equal(auto.docCount, live.length);
        const segments = [...index.snapshot().segments];
        const forced = (['maxscore', 'accumulate'] as const).map((plan) => createSearcher(segments, auto.generation, { plan, commonTermRatio: ratio }));
        // exact block bounds for every term, searched twice (computed, then also the floor they give)
        const bounded = createSearcher(segments, auto.generation, { plan: 'maxscore', blockBoundsMinPostings: 1 });
        for (const q of queries) for (const searcher of [auto, ...forced, bounded, bounded]) {
          const want = referenceSearch(live, q, searcher === auto || searcher === bounded ? REFERENCE_COMMON_RATIO : ratio);
          const all = searcher.search(q, { pageSize: 1000, snippets: false });
          assert.equal(all.total, want.total, `total of ${q}`);
          assert.equal(all.phraseExact, want.phraseExact, `phraseExact of ${q}`);
          assert.deepEqual(all.hits.map((h) => [h.cid, h.score]), want.hits.map((h) => [h.cid, h.score]), `hits of ${q}`);
          const page1 = searcher.search(q, { page: 1, pageSize, snippets: false });
          assert.deepEqual(page1.hits.map((h) => [h.cid, h.score]), want.hits.slice(pageSize, 2 * pageSize).map((h) => [h.cid, h.score]), `page 1 of ${q}`);
        }
      } finally {
        await index.close();
      }
    }), { numRuns: 60 });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('the engine over the on-disk index equals the reference on corpora with many blocks per term', async () => {
  const root = mkdtempSync(join(tmpdir(), 'quarry-query-disk-big-'));
  let n = 0;
  const big = fc.array(fc.record({
    docs: fc.array(fc.tuple(fc.integer({ min: 0, max: 3000 }), docArb), { minLength: 200, maxLength: 500 }),
    deletes: fc.array(fc.integer({ min: 0, max: 3000 }), { maxLength: 40 }),
  }), { minLength: 1, maxLength: 3 });
  const terms = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 7 }).map((ws) => ws.join(' '));
  try {
    await fc.assert(fc.asyncProperty(big, fc.array(terms, { minLength: 1, maxLength: 4 }), fc.integer({ min: 1, max: 10 }), ratioArb, async (history, queries, pageSize, ratio) => {
      const { index, live } = await buildOnDisk(join(root, String(n++)), history);
      try {
        const auto = index.searcher() as Searcher;
        const segments = [...index.snapshot().segments];
        const forced = (['maxscore', 'accumulate'] as const).map((plan) => createSearcher(segments, auto.generation, { plan, commonTermRatio: ratio }));
        const bounded = createSearcher(segments, auto.generation, { plan: 'maxscore', blockBoundsMinPostings: 1 });
        for (const q of queries) {
          for (const searcher of [auto, ...forced, bounded, bounded]) {
            const want = referenceSearch(live, q, searcher === auto || searcher === bounded ? REFERENCE_COMMON_RATIO : ratio);
            const got = searcher.search(q, { pageSize, snippets: false });
            assert.equal(got.total, want.total, `total of ${q}`);
            assert.deepEqual(got.hits.map((h) => [h.cid, h.score]), want.hits.slice(0, pageSize).map((h) => [h.cid, h.score]), `hits of ${q}`);
          }
        }
      } finally {
        await index.close();
      }
    }), { numRuns: 8 });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
