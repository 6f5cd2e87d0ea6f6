/**
 * Exact per-block score bounds (Snapshot.blockBounds, phraseBounds) on a real on-disk index, and the
 * skipping they allow: the floor they give a search (the k-th largest bound, which k live documents
 * attain) must come from live documents only; a walk over one postings list, counted from its length,
 * must skip only windows that cannot compete; a score-only term must be bounded by every block a
 * MaxScore window spans. Each case places its best documents where a bound or a skip that is off by a
 * little would lose them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BLOCK_SIZE } from '../../../src/engine/index/types.js';
import { Index, createSearcher, type IndexWriter, type Searcher, type SearcherOptions } from '../../../src/engine/index.js';
import type { StoredDocument } from '../../../src/engine/index/types.js';
import { REFERENCE_COMMON_RATIO, referenceSearch } from './reference.js';

/** An on-disk index in a temporary directory holding `docs` in one commit; `use` gets it and its writer. */
async function withIndex(docs: StoredDocument[], use: (index: Index, writer: IndexWriter) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-block-bounds-'));
  const index = await Index.open(dir);
  try {
    const writer = await index.openWriter();
    for (const d of docs) writer.upsert(d);
    await writer.commit();
    await use(index, writer);
    await writer.close();
  } finally {
    await index.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A searcher over the index's current commit. */
function searcherOf(index: Index, options: SearcherOptions): Searcher {
  return createSearcher([...index.snapshot().segments], (index.searcher() as Searcher).generation, options);
}

/** `q` answers with the reference's total and top hits at every page size. */
function assertLikeReference(s: Searcher, live: StoredDocument[], q: string, pageSizes: number[], label = q): void {
  const want = referenceSearch(live, q, REFERENCE_COMMON_RATIO);
  for (const pageSize of pageSizes) {
    const got = s.search(q, { pageSize, snippets: false });
    assert.equal(got.total, want.total, `${label}: total`);
    assert.deepEqual(got.hits.map((h) => [h.cid, h.score]), want.hits.slice(0, pageSize).map((h) => [h.cid, h.score]), `${label}: top ${pageSize}`);
  }
}

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

// A phrase decided by its pair term, and a single required term, are counted from their postings' length
// when every document is live: the walk then visits only the windows whose bounds can reach the top k.
// The best documents are scattered, so a window skipped too far would lose some; deletes turn the
// shortcut off and the walk counts again.
for (const start of [7, 8, 9, 10]) test(`a walk over one postings list counts from its length and skips only windows that cannot compete (seed ${start})`, async () => {
  let seed = start;
  const rand = (n: number) => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return (seed >>> 8) % n; };
  const docs: StoredDocument[] = [];
  for (let i = 0; i < 40 * BLOCK_SIZE; i++) {
    const words: string[] = [];
    const pairs = rand(300) === 0 ? 5 + rand(4) : rand(4) === 0 ? 0 : 1;
    for (let p = 0; p < pairs; p++) words.push('of the');
    if (rand(3) === 0) words.push('stone');
    if (rand(30) === 0) words.push('basalt');
    if (rand(5) === 0) words.push(rand(3) === 0 ? 'the the the' : 'the the');
    for (let f = rand(30); f > 0; f--) words.push(['quarry', 'granite', 'in', 'marble'][rand(4)]!);
    docs.push({ cid: BigInt(i + 1), title: '', text: words.join(' ') || 'empty' });
  }
  const queries = ['"of the"', '"the the"', '+basalt the quarry', '+stone granite of', 'stone'];
  await withIndex(docs, async (index, writer) => {
    const check = (live: StoredDocument[], label: string) => {
      const s = searcherOf(index, { blockBoundsMinPostings: 1 });
      for (const q of queries) assertLikeReference(s, live, q, [1, 5, 20], `${label} ${q}`);
    };
    check(docs, 'all live');
    for (let i = 0; i < docs.length; i += 97) writer.delete(docs[i]!.cid);
    await writer.commit();
    check(docs.filter((_, i) => i % 97 !== 0), 'with deletes');
  });
});

// Every document has the pair once, so the pair's blocks are the documents' own; the best ones open
// blocks that follow blocks the walk skips, where a skip one document too far would miss them.
test('a lone phrase skipped by its blocks lands on the first document of the next block that can compete', async () => {
  const best = new Set([10, 21, 33].map((b) => b * BLOCK_SIZE));
  const docs: StoredDocument[] = [];
  for (let i = 0; i < 40 * BLOCK_SIZE; i++) {
    const text = best.has(i) ? 'of the of the of the quarry' : `of the ${'granite '.repeat(1 + (i % 3))}`;
    docs.push({ cid: BigInt(i + 1), title: '', text });
  }
  for (let i = 0; i < 20 * BLOCK_SIZE; i++) docs.push({ cid: BigInt(1_000_000 + i), title: '', text: 'marble' });
  await withIndex(docs, async (index) => {
    const want = referenceSearch(docs, '"of the"', REFERENCE_COMMON_RATIO);
    assert.deepEqual(want.hits.slice(0, 3).map((h) => Number(h.cid) - 1).sort((a, b) => a - b), [...best]);
    assertLikeReference(searcherOf(index, { blockBoundsMinPostings: 1 }), docs, '"of the"', [1, 2, 3, 4]);
  });
});

// A rare word beside a common one: the common word only scores (docs/ranking.md), its many short blocks
// do not end MaxScore's windows, and its bound in a window must hold for every one of its blocks the
// window spans. The best documents hold the common word often, deep inside windows the rare word's
// blocks make.
test('a score-only term\'s bound in a window holds for every one of its blocks the window spans', async () => {
  // each better than the one before, so the threshold is high when the later ones come; all but the
  // first lie past the first block of the common word in their window
  const best = new Map([[5, 8], [1_015, 7], [2_347, 6], [4_444, 5]]);
  const docs: StoredDocument[] = [];
  for (let i = 0; i < 40 * BLOCK_SIZE; i++) {
    const rare = i % 10 === 0 || best.has(i) ? 'basalt ' : '';
    const common = i % 5 < 2 ? 'the ' : ''; // in 40% of the documents: common, and still worth scoring
    const text = best.has(i) ? `${rare}${'the '.repeat(best.get(i)!)}` : `${rare}${common}${'granite '.repeat(6 + (i % 4))}`;
    docs.push({ cid: BigInt(i + 1), title: '', text });
  }
  await withIndex(docs, async (index) => {
    const want = referenceSearch(docs, 'basalt the', REFERENCE_COMMON_RATIO);
    assert.deepEqual(want.hits.slice(0, 4).map((h) => Number(h.cid) - 1), [...best.keys()].reverse());
    for (const blockBoundsMinPostings of [1, 1_000_000]) {
      const s = searcherOf(index, { plan: 'maxscore', blockBoundsMinPostings });
      assertLikeReference(s, docs, 'basalt the', [1, 2, 4, 10], `bounds from ${blockBoundsMinPostings} postings`);
    }
  });
});

test('several essential terms are scored an inner window at a time, across windows longer than one', async () => {
  // three sparse terms (a block of each spans more than 4,096 documents, so a MaxScore window is cut
  // into inner windows) with tfs and lengths that vary, some documents holding two or three of them,
  // and deletes, so that the filter of live documents applies in every inner window
  const docs: StoredDocument[] = [];
  for (let i = 0; i < 30_000; i++) {
    const words: string[] = [];
    if (i % 37 === 0) words.push(...Array<string>(1 + (i % 4)).fill('alpha'));
    if (i % 41 === 0) words.push(...Array<string>(1 + (i % 3)).fill('beta'));
    if (i % 43 === 0) words.push('gamma');
    words.push(...Array<string>(2 + (i % 11)).fill('filler'));
    docs.push({ cid: BigInt(i + 1), title: '', text: words.join(' ') });
  }
  await withIndex(docs, async (index, writer) => {
    const gone = docs.filter((_, i) => i % (37 * 41) === 0 || i % 1_001 === 0);
    for (const d of gone) writer.delete(d.cid);
    await writer.commit();
    const live = docs.filter((d) => !gone.includes(d));
    const s = searcherOf(index, { plan: 'maxscore' });
    for (const q of ['alpha beta', 'alpha beta gamma', 'beta gamma']) assertLikeReference(s, live, q, [1, 10, 1000]);
  });
});

test('a window whose bound equals the threshold is passed over only when none of its cids wins the tie', async () => {
  // 24 blocks of postings of documents that score alike on "word" (and on "word other", and on the phrase
  // "of the"), a block spanning two or three runs of cid floors: the top k is decided by cid alone. The
  // cids run in doc order, against it, scattered, and above 2^53 (where their floors round), so the
  // winners of the tie sit in the first blocks, the last, or anywhere.
  const n = 36 * BLOCK_SIZE;
  const orders: [string, (i: number) => bigint][] = [
    ['ascending', (i) => BigInt(i + 1)],
    ['descending', (i) => BigInt(n - i)],
    ['scattered', (i) => BigInt(((i * 7919) % 10_007) + 1)],
    ['above 2^53', (i) => 2n ** 60n + BigInt(((i * 7919) % 10_007) * 1_000)],
  ];
  for (const [label, cidOf] of orders) {
    const docs: StoredDocument[] = [];
    for (let i = 0; i < n; i++) docs.push({ cid: cidOf(i), title: '', text: i % 3 === 2 ? 'other filler' : i % 97 === 5 ? 'word other filler of the' : 'word word other of the' });
    for (let i = 0; i < n; i++) docs.push({ cid: 2n ** 62n + BigInt(i), title: '', text: 'filler other' });
    await withIndex(docs, async (index, writer) => {
      const gone = docs.filter((_, i) => i % 211 === 3);
      for (const d of gone) writer.delete(d.cid);
      await writer.commit();
      const live = docs.filter((d) => !gone.includes(d));
      for (const blockBoundsMinPostings of [1, 1_000_000]) {
        const s = searcherOf(index, { plan: 'maxscore', blockBoundsMinPostings });
        // the phrase is walked from its pair term's postings, bounded by the phrase's own block bounds
        for (const q of ['word', 'word other', '"of the"']) assertLikeReference(s, live, q, [1, 5, 20, 200], `${label}, bounds from ${blockBoundsMinPostings}: ${q}`);
      }
    });
  }
});

test('required words that all have bitsets are counted from them and ranked by MaxScore under every plan', async () => {
  // words in 60, 45 and 30 % of 6,000 documents, with tfs and lengths that vary, and deletes: "+a +b" is
  // counted by intersecting bitsets and ranked over the words with a document accepted where all hold it
  const docs: StoredDocument[] = [];
  for (let i = 0; i < 6_000; i++) {
    const words: string[] = [];
    if (i % 5 < 3) words.push(...Array<string>(1 + (i % 4)).fill('alpha'));
    if (i % 20 < 9) words.push(...Array<string>(1 + (i % 3)).fill('beta'));
    if (i % 10 < 3) words.push('gamma');
    words.push(...Array<string>(1 + (i % 13)).fill('filler'));
    docs.push({ cid: BigInt(((i * 7919) % 6_007) + 1), title: '', text: words.join(' ') });
  }
  const queries = ['+alpha +beta', '+alpha +beta +gamma', '+beta +gamma'];
  await withIndex(docs, async (index, writer) => {
    for (const plan of ['auto', 'maxscore', 'accumulate'] as const) {
      const s = searcherOf(index, { plan });
      for (const q of queries) assertLikeReference(s, docs, q, [1, 10, 1000], `${plan}, every document live: ${q}`);
    }
    const gone = docs.filter((_, i) => i % 17 === 4);
    for (const d of gone) writer.delete(d.cid);
    await writer.commit();
    const live = docs.filter((d) => !gone.includes(d));
    for (const plan of ['auto', 'maxscore', 'accumulate'] as const) {
      const s = searcherOf(index, { plan });
      for (const q of queries) assertLikeReference(s, live, q, [1, 10, 1000], `${plan}, after deletes: ${q}`);
    }
  });
});
