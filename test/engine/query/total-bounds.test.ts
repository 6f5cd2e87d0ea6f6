/**
 * Bounds of a query's total from document frequencies (executor.ts `totalBounds`): on random corpora
 * (several segments, updates, deletes) and random queries in the whole language, under several
 * common-term cutoffs, the exact total always lies between them; the did-you-mean decision that reads
 * them offers only corrections that match more documents.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { execute, totalBounds } from '../../../src/engine/query/executor.js';
import { toLogical } from '../../../src/engine/query/logical.js';
import { parseQuery } from '../../../src/engine/query/parser.js';
import { createSearcher } from '../../../src/engine/query/searcher.js';
import { Snapshot } from '../../../src/engine/query/snapshot.js';
import { WORDS, build, historyArb, queryArb } from './arbitraries.js';
import { REFERENCE_COMMON_RATIO } from './reference.js';

const ratioArb = fc.constantFrom(REFERENCE_COMMON_RATIO, 0.1, 0.5, 1);

test('the exact total lies within the bounds from document frequencies', () => {
  let decided = 0;
  fc.assert(fc.property(historyArb(12), fc.array(queryArb, { minLength: 1, maxLength: 6 }), ratioArb, (history, queries, ratio) => {
    const { segments } = build(history);
    const snap = new Snapshot(segments, 'int', 'auto', ratio);
    for (const q of queries) {
      const logical = toLogical(parseQuery(q));
      const { total } = execute(snap, logical, 0);
      const { low, high } = totalBounds(snap, logical);
      assert.ok(low <= total && total <= high, `${q}: ${low} ≤ ${total} ≤ ${high}`);
      if (low === high) decided++;
    }
  }), { numRuns: 400 });
  // the bounds are not vacuous: many queries (a lone term, a term beside rarer ones) are pinned exactly
  assert.ok(decided > 100, `${decided} queries with low = high`);
});

test('a did-you-mean correction is offered only when it matches more documents', () => {
  // misspellings of the corpus words, beside the words themselves
  const typos = ['alpah', 'gamam', 'dleta', 'bteta', 'zetta', 'runing', 'catts'];
  const wordsArb = fc.array(fc.constantFrom(...typos, ...WORDS, '+alpah', '-gamam', 'site:a.com'), { minLength: 1, maxLength: 4 }).map((ws) => ws.join(' '));
  let offered = 0;
  fc.assert(fc.property(historyArb(12), fc.array(wordsArb, { minLength: 1, maxLength: 4 }), ratioArb, (history, queries, ratio) => {
    const { segments } = build(history);
    const s = createSearcher(segments, 1, { commonTermRatio: ratio });
    for (const q of queries) {
      const r = s.search(q, { snippets: false });
      if (r.didYouMean === undefined) continue;
      offered++;
      assert.ok(s.search(r.didYouMean, { snippets: false }).total > r.total, `${q} → ${r.didYouMean}`);
    }
  }), { numRuns: 200 });
  assert.ok(offered > 50, `${offered} corrections offered`);
});
