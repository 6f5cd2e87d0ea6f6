/**
 * Common-word pair terms (analysis/common-grams.ts): written for every adjacent pair of common words,
 * never across the title/text gap, and answering phrases of common words exactly — alone, beside the
 * gram-less segments of the format-v1 fixture, and after a merge with them (which drops the grams).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createSearcher, Index, type Searcher } from '../../../src/engine/index.js';
import { gramTerm, type SegmentView } from '../../../src/engine/index/index.js';
import { referenceSearch } from '../query/reference.js';
import { liveDocuments, tempDir } from './fixtures.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/format-v1', import.meta.url));

const DOCS = [
  { cid: 101n, title: 'Of the people', text: 'government of the people, by the people, for the people' },
  { cid: 102n, title: 'The end', text: 'to be or not to be: that is the question' },
  { cid: 103n, title: 'Of', text: 'the text starts here' }, // "of" | "the" across the gap: no pair
  { cid: 104n, title: 'Neither', text: 'of course the people' }, // "of" then "course": not a pair of common words
];

/** The live documents of an index as StoredDocuments, for the reference evaluator. */
function live(index: Index) {
  return [...liveDocuments(index)].map(([cid, d]) => ({ cid, ...d }));
}

const PHRASES = ['"of the"', '"the people"', '"to be or not to be"', '"to be"', '"of the" people', '+"by the" "for the"', '"that is the"', '"of the" -question'];

function assertLikeReference(index: Index, searcher: Searcher): void {
  for (const q of PHRASES) {
    const want = referenceSearch(live(index), q);
    const got = searcher.search(q, { pageSize: 100, snippets: false });
    assert.equal(got.total, want.total, `total of ${q}`);
    assert.equal(got.phraseExact, want.phraseExact, `phraseExact of ${q}`);
    assert.deepEqual(got.hits.map((h) => [h.cid, h.score]), want.hits.map((h) => [h.cid, h.score]), `hits of ${q}`);
  }
}

test('pairs of adjacent common words are indexed, without positions, never across title and text', async (t) => {
  const index = await Index.open(join(tempDir(t), 'index'));
  try {
    const w = await index.openWriter();
    for (const d of DOCS) w.upsert(d);
    await w.commit();
    await w.close();
    const [seg] = index.snapshot().segments as SegmentView[];
    assert.equal(seg!.commonGrams, true);
    const docsOf = (a: string, b: string) => {
      const c = seg!.postings(gramTerm(a, b));
      const out: [bigint, number][] = [];
      if (c) for (let d = c.nextDoc(); d < seg!.maxDoc; d = c.nextDoc()) out.push([seg!.cid(d), c.freq()]);
      return out;
    };
    assert.deepEqual(docsOf('of', 'the'), [[101n, 2]]); // title "Of the" and text "of the"; 103's pair spans the gap
    assert.deepEqual(docsOf('to', 'be'), [[102n, 2]]);
    assert.deepEqual(docsOf('the', 'peopl'), [], '"people" is not a common word');
    assertLikeReference(index, index.searcher());
  } finally {
    await index.close();
  }
});

test('phrases of common words over segments with and without grams, before and after they merge', async (t) => {
  const dir = join(tempDir(t), 'index');
  cpSync(FIXTURE, dir, { recursive: true }); // two segments written before grams existed
  const index = await Index.open(dir, { mergeFactor: 2, mergeFloorBytes: 1 });
  try {
    const w = await index.openWriter();
    for (const d of DOCS.slice(0, 2)) w.upsert(d);
    await w.commit();
    const mixed = index.snapshot().segments as SegmentView[];
    assert.deepEqual(mixed.map((s) => s.commonGrams).sort(), [false, false, true].slice(3 - mixed.length).sort());
    assertLikeReference(index, index.searcher());
    for (const d of DOCS.slice(2)) w.upsert(d);
    await w.commit();
    await w.close();
    const merged = index.snapshot().segments as SegmentView[];
    assert.ok(merged.some((s) => !s.commonGrams), 'a merge with a gram-less segment has no grams');
    assertLikeReference(index, index.searcher());
    for (const plan of ['maxscore', 'accumulate'] as const) assertLikeReference(index, createSearcher([...merged], 1, { plan }));
  } finally {
    await index.close();
  }
});
