/**
 * Correctness by reference (issue 2 item 8): random small corpora — several segments, updates and
 * deletes — and random queries in the whole language; the engine must return exactly what the brute-force
 * reference evaluator returns: the same documents, integer scores, order, total and phraseExact, for the
 * full result list and for small pages (where pruning bites).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { StoredDocument } from '../../../src/engine/index/types.js';
import { createSearcher } from '../../../src/engine/query/searcher.js';
import type { MemorySegment } from '../support/memory-segment.js';
import { TEMPLATES, WORDS, build, docArb, historyArb, longQueryArb, queryArb } from './arbitraries.js';
import { REFERENCE_COMMON_RATIO, referenceSearch } from './reference.js';

/**
 * Common-term cutoffs (df/N) the properties draw from: the default and others, so that the small
 * vocabulary of these corpora is split into rare and common terms in several ways; 1 turns the rule off.
 */
const ratioArb = fc.constantFrom(REFERENCE_COMMON_RATIO, 0.1, 0.5, 0.7, 1);

/**
 * Checks every disjunction plan: the automatic choice and each one forced; then the automatic one with
 * exact block bounds for every term (Snapshot.blockBounds, which real corpora give only frequent terms),
 * twice: the first search computes the bounds, the second also starts pruning from the floor they give.
 */
function check(segments: MemorySegment[], live: StoredDocument[], q: string, pageSize: number, page: number, ratio: number): void {
  const want = referenceSearch(live, q, ratio);
  const expected = want.hits.slice(page * pageSize, (page + 1) * pageSize);
  const bounded = createSearcher(segments, 1, { plan: 'maxscore', commonTermRatio: ratio, blockBoundsMinPostings: 1 });
  const runs = [
    ...(['auto', 'maxscore', 'accumulate'] as const).map((plan) => ({ name: plan, searcher: createSearcher(segments, 1, { plan, commonTermRatio: ratio }) })),
    { name: 'block bounds', searcher: bounded }, { name: 'block bounds, again', searcher: bounded },
  ];
  for (const { name, searcher } of runs) {
    const got = searcher.search(q, { page, pageSize, snippets: false });
    assert.equal(got.total, want.total, `total of ${q} (${name})`);
    assert.equal(got.phraseExact, want.phraseExact, `phraseExact of ${q} (${name})`);
    assert.deepEqual(got.hits.map((h) => [h.cid, h.score]), expected.map((h) => [h.cid, h.score]), `hits of ${q} page ${page}/${pageSize} (${name})`);
  }
}

test('engine equals the reference evaluator on random corpora and queries (full lists)', () => {
  fc.assert(fc.property(historyArb(12), fc.array(queryArb, { minLength: 1, maxLength: 5 }), ratioArb, (history, queries, ratio) => {
    const { segments, live } = build(history);
    for (const q of queries) check(segments, live, q, 1000, 0, ratio);
  }), { numRuns: 300 });
});

test('engine equals the reference evaluator on small pages, where top-k pruning skips documents', () => {
  fc.assert(fc.property(historyArb(12), queryArb, fc.integer({ min: 1, max: 4 }), fc.integer({ min: 0, max: 3 }), ratioArb, (history, q, pageSize, page, ratio) => {
    const { segments, live } = build(history);
    check(segments, live, q, pageSize, page, ratio);
  }), { numRuns: 300 });
});

test('engine equals the reference on corpora with many blocks per postings list (block-max bounds)', () => {
  const big = fc.array(
    fc.record({
      docs: fc.array(fc.tuple(fc.integer({ min: 0, max: 2000 }), docArb), { minLength: 150, maxLength: 400 }),
      deletes: fc.array(fc.integer({ min: 0, max: 2000 }), { maxLength: 30 }),
    }),
    { minLength: 1, maxLength: 2 },
  );
  const terms = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 6 }).map((ws) => ws.join(' '));
  fc.assert(fc.property(big, terms, fc.integer({ min: 1, max: 10 }), ratioArb, (history, q, pageSize, ratio) => {
    const { segments, live } = build(history);
    check(segments, live, q, pageSize, 0, ratio);
  }), { numRuns: 25 });
});

test('engine equals the reference on corpora of repeated documents (score ties at the pruning threshold)', () => {
  const history = fc.array(
    fc.record({
      docs: fc.array(fc.tuple(fc.integer({ min: 0, max: 300 }), fc.constantFrom(...TEMPLATES)), { minLength: 1, maxLength: 60 }),
      deletes: fc.array(fc.integer({ min: 0, max: 300 }), { maxLength: 5 }),
    }),
    { minLength: 1, maxLength: 3 },
  );
  const q = fc.array(fc.constantFrom('alpha', 'beta', 'gamma', 'cat', 'run', 'the', '+alpha', '-cat', 'site:a.com'), { minLength: 1, maxLength: 4 }).map((ws) => ws.join(' '));
  fc.assert(fc.property(history, q, fc.integer({ min: 1, max: 5 }), fc.integer({ min: 0, max: 2 }), ratioArb, (h, query, pageSize, page, ratio) => {
    const { segments, live } = build(h);
    check(segments, live, query, pageSize, page, ratio);
  }), { numRuns: 200 });
});

test('engine equals the reference on long queries (many-clause unions, phrases among them)', () => {
  fc.assert(fc.property(historyArb(12), longQueryArb, fc.integer({ min: 1, max: 5 }), ratioArb, (history, q, pageSize, ratio) => {
    const { segments, live } = build(history);
    check(segments, live, q, pageSize, 0, ratio);
    check(segments, live, q, 1000, 0, ratio);
  }), { numRuns: 150 });
});
