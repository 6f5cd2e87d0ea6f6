/**
 * Bounds of a query's total from document frequencies (executor.ts `totalBounds`): on random corpora
 * (several segments, updates, deletes) and random queries in the whole language, under several
 * common-term cutoffs, the exact total always lies between them; whether a correction matches more
 * documents, told from the words that differ, is what counting both queries tells; the did-you-mean
 * decision that reads them offers only corrections that match more documents.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { execute, matchesMore, totalBounds } from '../../../src/engine/query/executor.js';
import { toLogical, type LogicalQuery } from '../../../src/engine/query/logical.js';
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

test('whether a correction matches more documents is told from the words that differ, as counting both tells', () => {
  const typos = ['alpah', 'gamam', 'dleta', 'runing', 'catts'];
  const wordArb = fc.constantFrom(...typos, ...WORDS);
  // a query and its "correction": some words replaced, now and then one with an operator
  const pairArb = fc.array(fc.tuple(wordArb, fc.option(wordArb, { freq: 2 })), { minLength: 1, maxLength: 4 })
    .chain((pairs) => fc.tuple(fc.constant(pairs), fc.constantFrom('', '', '', '+alpha', '-gamma', '"the cat"', 'site:a.com')))
    .map(([pairs, extra]) => [pairs.map(([w]) => w).join(' '), [...pairs.map(([w, fix]) => fix ?? w), extra].join(' ')] as const);
  const disjunction = (q: LogicalQuery) => q.must.length + q.mustNot.length + q.siteMust.length + q.siteShould.length + q.siteMustNot.length === 0 &&
    q.should.every((n) => n.kind === 'term');
  let decided = 0;
  let more = 0;
  fc.assert(fc.property(historyArb(12), fc.array(pairArb, { minLength: 1, maxLength: 6 }), ratioArb, (history, pairs, ratio) => {
    const { segments } = build(history);
    const snap = new Snapshot(segments, 'int', 'auto', ratio);
    for (const [from, to] of pairs) {
      const before = toLogical(parseQuery(from));
      const after = toLogical(parseQuery(to));
      const answer = matchesMore(snap, after, before);
      if (disjunction(before) && disjunction(after)) assert.notEqual(answer, undefined, `${from} → ${to}`);
      if (answer === undefined) continue;
      decided++;
      const counted = execute(snap, after, 0).total > execute(snap, before, 0).total;
      assert.equal(answer, counted, `${from} → ${to}`);
      if (counted) more++;
    }
  }), { numRuns: 400 });
  assert.ok(decided > 500 && more > 100 && decided - more > 100, `${decided} decided, ${more} of them more`);
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
