/**
 * The common-terms rule (docs/ranking.md) on a hand-made corpus: "the" is in 9 of 10 documents (common
 * under the default cutoff, df > 0.3·N), "zebra" in 2 (rare). Each case says why its answer is right.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Index, type Searcher } from '../../../src/engine/index.js';

const DOCS = [
  { cid: 1n, title: 'The zebra', text: 'the zebra stripes' },
  { cid: 2n, title: 'Zebra', text: 'a zebra without the article twice' },
  { cid: 3n, title: 'The the the', text: 'the the the the' },
  ...Array.from({ length: 6 }, (_, i) => ({ cid: BigInt(10 + i), title: `the page ${i}`, text: 'the quick fox' })),
  { cid: 20n, title: 'Nothing', text: 'quick fox' },
];

let dir: string;
let index: Index;
let s: Searcher;
const run = (q: string) => {
  const r = s.search(q, { pageSize: 50, snippets: false });
  return { total: r.total, cids: r.hits.map((h) => Number(h.cid)), scores: r.hits.map((h) => h.score) };
};

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'quarry-common-'));
  index = await Index.open(dir);
  const w = await index.openWriter();
  for (const d of DOCS) w.upsert(d);
  await w.commit();
  await w.close();
  s = index.searcher() as Searcher;
});

after(async () => {
  await index.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a common optional term beside a rare one only scores the documents the rare one matches', () => {
  const r = run('the zebra');
  // only the two zebra documents match (doc 3, "the" eight times, does not); doc 1 wins on "the" (tf 3)
  assert.deepEqual(r.cids, [1, 2]);
  assert.equal(r.total, 2);
  // ... and "the" still adds to their scores: each is above its "zebra"-only score
  const zebraOnly = run('zebra');
  assert.ok(r.scores[0]! > zebraOnly.scores[zebraOnly.cids.indexOf(1)]!);
  assert.ok(r.scores[1]! > zebraOnly.scores[zebraOnly.cids.indexOf(2)]!);
});

test('without a rare term the common ones match as usual', () => {
  assert.equal(run('the').total, 9); // a query of common words only is not changed
  assert.equal(run('the unknownword').total, 9); // a word in no document is not a rare term
  assert.equal(run('the quick').total, 10); // both common ("quick" is in 7 of 10)
});

test('required clauses and phrases: the rule only concerns optional terms when nothing is required', () => {
  assert.equal(run('+the zebra').total, 9); // "+the" is required: every "the" document matches, zebra scores
  // the rule needs a rare *term*: a phrase alone leaves the common terms matching (it may match nothing)
  assert.equal(run('the "zebra stripes"').total, 9);
  // once it applies, optional phrases match beside the rare terms: only doc 3 ("the" alone) is left out
  assert.deepEqual(run('the zebra "quick fox"').cids.sort((a, b) => a - b), [1, 2, 10, 11, 12, 13, 14, 15, 20]);
  assert.equal(run('the zebra -stripes').total, 1);
});
