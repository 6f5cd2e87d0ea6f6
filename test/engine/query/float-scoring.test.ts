/**
 * The internal float scoring mode (for the nDCG cost of integer scores, bench/eval.ts): the same matches
 * and totals as integer scoring, each score within half a point per matched term of the integer one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createSearcher } from '../../../src/engine/query/searcher.js';
import { build, historyArb, queryArb } from './arbitraries.js';

test('float scores differ from integer scores only by the rounding of each contribution', () => {
  fc.assert(fc.property(historyArb(12), queryArb, (history, q) => {
    const { segments } = build(history);
    const int = createSearcher(segments, 1).search(q, { pageSize: 1000, snippets: false });
    const float = createSearcher(segments, 1, { scoring: 'float' }).search(q, { pageSize: 1000, snippets: false });
    assert.equal(float.total, int.total);
    assert.equal(float.phraseExact, int.phraseExact);
    const byCid = new Map(float.hits.map((h) => [h.cid, h.score]));
    assert.equal(byCid.size, int.hits.length);
    const terms = new Set(q.toLowerCase().split(/[^a-z]+/)).size + 1;
    for (const h of int.hits) {
      assert.ok(Number.isInteger(h.score));
      assert.ok(Math.abs(byCid.get(h.cid)! - h.score) <= 0.5 * terms, `${q}: ${byCid.get(h.cid)} vs ${h.score}`);
    }
  }), { numRuns: 200 });
});
