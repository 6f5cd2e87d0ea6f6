/**
 * Exact per-block score bounds (Snapshot.blockBounds) on a real on-disk index: the floor they give a
 * search (the k-th largest bound, which k live documents attain) must come from live documents only. Here
 * the documents that score best for a word are deleted; a floor taken from them would skip the blocks
 * that hold the best live documents.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BLOCK_SIZE } from '../../../src/engine/index/types.js';
import { Index, createSearcher, type Searcher } from '../../../src/engine/index.js';
import type { StoredDocument } from '../../../src/engine/index/types.js';
import { REFERENCE_COMMON_RATIO, referenceSearch } from './reference.js';

test('block bounds and the floor they give ignore deleted documents', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-block-bounds-'));
  const index = await Index.open(dir);
  try {
    const docs: StoredDocument[] = [];
    // 16 blocks of "word": in each of the first 8, one short, word-dense document (later deleted) among
    // long ones that have the word once; the last 8 hold the best live documents (the word twice, short)
    for (let i = 0; i < 16 * BLOCK_SIZE; i++) {
      const block = Math.floor(i / BLOCK_SIZE);
      const text = block < 8
        ? (i % BLOCK_SIZE === 0 ? 'word word word word word' : `word filler ${'other '.repeat(10 + (i % 7))}`)
        : `word word ${'other '.repeat(3 + (i % 5))}`;
      docs.push({ cid: BigInt(i + 1), title: '', text });
    }
    // documents without the word give it an idf under which its scores differ
    for (let i = 0; i < 4 * 16 * BLOCK_SIZE; i++) docs.push({ cid: BigInt(100_000 + i), title: '', text: `filler ${'other '.repeat(i % 9)}` });
    const writer = await index.openWriter();
    for (const d of docs) writer.upsert(d);
    await writer.commit();
    const deleted = docs.filter((_, i) => i < 8 * BLOCK_SIZE && i % BLOCK_SIZE === 0);
    for (const d of deleted) writer.delete(d.cid);
    await writer.commit();
    await writer.close();
    const live = docs.filter((d) => !deleted.includes(d));

    const gen = (index.searcher() as Searcher).generation;
    const bounded = createSearcher([...index.snapshot().segments], gen, { plan: 'maxscore', blockBoundsMinPostings: 1 });
    for (const pageSize of [1, 3, 8]) {
      const want = referenceSearch(live, 'word', REFERENCE_COMMON_RATIO);
      for (const round of ['computes the bounds', 'prunes from their floor']) {
        const got = bounded.search('word', { pageSize, snippets: false });
        assert.equal(got.total, want.total, `${round}: total`);
        assert.deepEqual(got.hits.map((h) => [h.cid, h.score]), want.hits.slice(0, pageSize).map((h) => [h.cid, h.score]), `${round}: top ${pageSize}`);
      }
    }
  } finally {
    await index.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
