/**
 * Long natural-language queries: a 300-word query (a pasted paragraph, an agent's question) over a corpus
 * with a Zipfian vocabulary, through the real on-disk index, answers exactly what the reference
 * evaluator answers — the common-terms rule included, since the most frequent words of such a corpus are
 * in most documents — for every disjunction plan.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Index, createSearcher, type Searcher } from '../../../src/engine/index.js';
import type { StoredDocument } from '../../../src/engine/index/types.js';
import { seededRandom } from '../../../bench/measure.js';
import { referenceSearch } from './reference.js';

const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'to', 'vi', 'ze', 'qua', 'bel', 'dor'];
/** Word of rank r: distinct syllable strings (no English stems, so analysis keeps them apart). */
const word = (r: number) => {
  let w = '';
  let x = r + SYLLABLES.length;
  while (x > 0) { w += SYLLABLES[x % SYLLABLES.length]; x = Math.floor(x / SYLLABLES.length); }
  return w;
};
const VOCABULARY = 3000;

/** Draws word ranks with probability ∝ 1/(rank + 1) (Zipf, exponent 1). */
function zipf(rand: () => number): () => number {
  const cdf = new Float64Array(VOCABULARY);
  let sum = 0;
  for (let r = 0; r < VOCABULARY; r++) cdf[r] = sum += 1 / (r + 1);
  return () => {
    const x = rand() * sum;
    let lo = 0;
    let hi = VOCABULARY - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cdf[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

const rand = seededRandom(13); // the corpus and the query are the same on every run
const draw = zipf(rand);
const words = (n: number) => Array.from({ length: n }, () => word(draw())).join(' ');
const DOCS: StoredDocument[] = Array.from({ length: 1500 }, (_, i) => ({
  cid: BigInt(i * 7919 + 1), title: words(3), text: words(20 + Math.floor(rand() * 120)),
}));
/** 300 words as someone would paste them: frequent words repeat, a few are unknown to the corpus. */
const QUERY = Array.from({ length: 300 }, (_, i) => (i % 50 === 49 ? `unknown${i}` : word(draw()))).join(' ');

let dir: string;
let index: Index;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'quarry-long-query-'));
  index = await Index.open(dir);
  const w = await index.openWriter();
  for (const d of DOCS.slice(0, 900)) w.upsert(d);
  await w.commit(); // two segments: statistics and the common-term cutoff are global
  for (const d of DOCS.slice(900)) w.upsert(d);
  await w.commit();
  await w.close();
});

after(async () => {
  await index.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a 300-word query answers the reference top 20 and exact total, under every plan', () => {
  const want = referenceSearch(DOCS, QUERY);
  const wantAll = referenceSearch(DOCS, QUERY, 1); // the rule off: every optional term matches
  assert.ok(want.total > 20, 'the query matches more than a page');
  assert.ok(want.total < wantAll.total, 'the common-terms rule applies: documents with only common words do not match');
  const auto = index.searcher() as Searcher;
  const segments = [...index.snapshot().segments];
  for (const s of [auto, createSearcher(segments, auto.generation, { plan: 'maxscore' }), createSearcher(segments, auto.generation, { plan: 'accumulate' })]) {
    const got = s.search(QUERY, { snippets: false });
    assert.equal(got.total, want.total);
    assert.deepEqual(got.hits.map((h) => [h.cid, h.score]), want.hits.slice(0, 20).map((h) => [h.cid, h.score]));
    const page3 = s.search(QUERY, { page: 3, snippets: false });
    assert.deepEqual(page3.hits.map((h) => [h.cid, h.score]), want.hits.slice(60, 80).map((h) => [h.cid, h.score]));
  }
  const off = createSearcher(segments, auto.generation, { commonTermRatio: 1 }).search(QUERY, { snippets: false });
  assert.equal(off.total, wantAll.total);
  assert.deepEqual(off.hits.map((h) => [h.cid, h.score]), wantAll.hits.slice(0, 20).map((h) => [h.cid, h.score]));
});

test('the same long query with a required term and a phrase answers the reference', () => {
  const first = word(draw());
  const q = `${QUERY.split(' ').slice(0, 150).join(' ')} +${first} "${word(0)} ${word(1)}"`;
  const want = referenceSearch(DOCS, q);
  const got = (index.searcher() as Searcher).search(q, { pageSize: 50, snippets: false });
  assert.equal(got.total, want.total);
  assert.equal(got.phraseExact, want.phraseExact);
  assert.deepEqual(got.hits.map((h) => [h.cid, h.score]), want.hits.slice(0, 50).map((h) => [h.cid, h.score]));
});
