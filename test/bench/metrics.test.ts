// trec_eval's nDCG@10 and Recall@100 (bench/metrics.ts) on hand-computed examples, and the loaders'
// handling of qrels and query text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evaluate, ndcgAt, recallAt } from '../../bench/metrics.js';
import { parseQrels, plainQuery } from '../../bench/dataset.js';

const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-9, `${a} ≠ ${b}`);

test('nDCG with binary gains: one relevant document at rank 2', () => {
  // DCG = 1/log2(3); ideal = 1/log2(2) = 1
  close(ndcgAt(10, ['x', 'a', 'y'], new Map([['a', 1]])), 1 / Math.log2(3));
});

test('nDCG with graded gains and an ideal built from every judged document', () => {
  const judged = new Map([['a', 3], ['b', 2], ['c', 1]]);
  // ranking b, x, a: DCG = 2/1 + 0 + 3/log2(4) = 3.5; ideal a, b, c = 3 + 2/log2(3) + 1/2
  close(ndcgAt(10, ['b', 'x', 'a'], judged), 3.5 / (3 + 2 / Math.log2(3) + 0.5));
  close(ndcgAt(10, ['a', 'b', 'c'], judged), 1);
  // the cut: a relevant document at rank 11 counts for nothing
  close(ndcgAt(10, [...'0123456789'.split(''), 'a'], judged), 0);
  // an ideal larger than k is cut at k too: 12 relevant documents, all retrieved in order
  const many = new Map(Array.from({ length: 12 }, (_, i) => [`d${i}`, 1] as [string, number]));
  close(ndcgAt(10, [...many.keys()], many), 1);
});

test('recall counts relevant documents in the first k over all judged relevant ones', () => {
  const judged = new Map([['a', 1], ['b', 1], ['c', 2], ['d', 1]]);
  close(recallAt(100, ['a', 'x', 'c'], judged), 0.5);
  close(recallAt(2, ['a', 'x', 'c'], judged), 0.25);
  close(recallAt(100, [], judged), 0);
});

test('evaluate averages over every judged query, a missing run counting zero', () => {
  const qrels = parseQrels('query-id\tcorpus-id\tscore\n1\ta\t1\n2\tb\t1\n2\tz\t0\n');
  assert.equal(qrels.size, 2);
  assert.equal(qrels.get('2')!.has('z'), false); // score 0 is not relevant
  const e = evaluate(qrels, new Map([['1', ['a']]]));
  assert.equal(e.queries, 2);
  close(e.ndcg10, 0.5);
  close(e.recall100, 0.5);
});

test('plainQuery turns operators and punctuation into spaces: a plain OR of the words', () => {
  assert.equal(plainQuery('0-dimensional biomaterials lack "inductive" properties.'), '0 dimensional biomaterials lack inductive properties');
  assert.equal(plainQuery('+IL-6 site:example.com -x'), 'IL 6 site example com x');
  assert.equal(plainQuery('Café naïve'), 'Café naïve');
  assert.equal(plainQuery('  ---  '), '');
});
