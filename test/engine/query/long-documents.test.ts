/**
 * Scores of documents of 65,535 tokens and more: the scoring loops hold lengths in 16 bits and read a
 * longer document's exact length from its segment (query/norms.ts). Every plan must still give the
 * reference evaluator's integer scores, in which one token of length changes the norm.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Index, createSearcher, type Searcher } from '../../../src/engine/index.js';
import type { StoredDocument } from '../../../src/engine/index/types.js';
import { tempDir } from '../index/fixtures.js';
import { REFERENCE_COMMON_RATIO, referenceSearch } from './reference.js';

/** A text of `length` tokens (with the one-word title) holding `alpha` `tf` times and `beta` once. */
function text(length: number, tf: number): string {
  const words = new Array<string>(length - 1).fill('filler');
  for (let i = 0; i < tf; i++) words[(i * 7919) % words.length] = 'alpha';
  words[words.length - 1] = 'beta';
  return words.join(' ');
}

test('documents past 65,535 tokens score with their exact length in every plan', async (t) => {
  const dir = tempDir(t);
  const index = await Index.open(dir);
  const writer = await index.openWriter();
  const docs: StoredDocument[] = [];
  // lengths about the 16-bit edge, each with the same tf: only the length tells their scores apart
  const lengths = [65_533, 65_534, 65_535, 65_536, 65_537, 70_000, 131_072, 40, 300];
  lengths.forEach((length, i) => docs.push({ cid: BigInt(i + 1), title: 'doc', text: text(length, 60) }));
  for (let i = 0; i < 30; i++) docs.push({ cid: BigInt(100 + i), title: 'doc', text: `filler ${'gamma '.repeat(i)}` });
  for (const d of docs) writer.upsert(d);
  await writer.commit();
  await writer.close();
  const auto = index.searcher() as Searcher;
  const segments = [...index.snapshot().segments];
  const searchers = [
    auto,
    ...(['maxscore', 'accumulate'] as const).map((plan) => createSearcher(segments, auto.generation, { plan })),
    createSearcher(segments, auto.generation, { plan: 'maxscore', blockBoundsMinPostings: 1 }),
  ];
  for (const q of ['alpha', 'alpha beta', 'beta', '+alpha +beta', '"alpha filler"']) {
    const want = referenceSearch(docs, q, REFERENCE_COMMON_RATIO);
    for (const s of searchers) {
      const got = s.search(q, { pageSize: 100, snippets: false });
      assert.equal(got.total, want.total, q);
      assert.deepEqual(got.hits.map((h) => [h.cid, h.score]), want.hits.map((h) => [h.cid, h.score]), q);
    }
  }
  // a clipped length read as 65,535 would give these three one score: they differ by their lengths alone
  const scores = auto.search('alpha', { pageSize: 100, snippets: false }).hits.filter((h) => [3n, 6n, 7n].includes(h.cid)).map((h) => h.score);
  assert.equal(new Set(scores).size, 3);
  await index.close();
});
