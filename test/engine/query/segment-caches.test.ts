/**
 * What an index's searchers keep of their segments across commits (segment-caches.ts): each term's impacts
 * (per block, the (tf, length) pairs no other live document of the block beats in both), frequent terms'
 * bitsets and common terms' frequency columns. A commit changes the statistics every score and bound
 * depends on but leaves the segments it did not touch as the same readers, so a later snapshot computes
 * its exact block bounds from the kept impacts: they must equal the largest contribution of each block's
 * live documents under its own statistics, and a segment whose deletes changed must be read again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Index, createSearcher, type Searcher } from '../../../src/engine/index.js';
import { BLOCK_SIZE, NO_MORE_DOCS, type SegmentReader, type StoredDocument } from '../../../src/engine/index/types.js';
import { roundScore } from '../../../src/engine/rank/bm25.js';
import { Norms } from '../../../src/engine/query/norms.js';
import { SegmentCaches, TERM_FREQS_CACHE_COLUMNS, TERM_FREQS_CLIPPED, impactsOf } from '../../../src/engine/query/segment-caches.js';
import { Snapshot } from '../../../src/engine/query/snapshot.js';
import { REFERENCE_COMMON_RATIO, referenceSearch } from './reference.js';

/** Per block of `term`'s postings in `s`, the largest contribution of a live document under `snap`'s statistics, document by document. */
function bruteBounds(snap: Snapshot, s: SegmentReader, term: string): number[] {
  const c = s.postings(term)!;
  const w = snap.bm25.weight(snap.df(term));
  const norms = new Norms(s, snap.bm25);
  const out = new Array<number>(Math.ceil(c.docFreq / BLOCK_SIZE)).fill(0);
  let i = 0;
  for (let d = c.nextDoc(); d !== NO_MORE_DOCS; d = c.nextDoc(), i++) {
    if (!s.isLive(d)) continue;
    const score = roundScore((w * c.freq()) / (c.freq() + norms.at(d)));
    const b = Math.floor(i / BLOCK_SIZE);
    if (score > out[b]!) out[b] = score;
  }
  return out;
}

/** `use` given an index opened in a temporary directory, closed and removed after. */
async function inIndex(use: (index: Index) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-segment-caches-'));
  const index = await Index.open(dir);
  try {
    await use(index);
  } finally {
    await index.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A document of `length` tokens holding `word` `tf` times (the rest filler). */
const doc = (cid: number, word: string, tf: number, length: number): StoredDocument =>
  ({ cid: BigInt(cid), title: '', text: `${`${word} `.repeat(tf)}${'filler '.repeat(Math.max(0, length - tf))}` });

test('impacts keep, per block, the live (tf, length) pairs no other beats in both', () => inIndex(async (index) => {
  // block 0: (1, 5) (2, 9) (3, 9) (3, 20) (1, 3), then tf 1 in longer ones: (3, 9) beats (3, 20) and (2, 9),
  // (1, 3) beats (1, 5) and the rest, so the pairs are
  // (3, 9) and (1, 3); block 1: tf 1 everywhere, lengths 4..; its shortest document deleted
  const docs: StoredDocument[] = [];
  const first = [[1, 5], [2, 9], [3, 9], [3, 20], [1, 3]];
  for (let i = 0; i < BLOCK_SIZE; i++) {
    const [tf, length] = first[i] ?? [1, 30 + i];
    docs.push(doc(i + 1, 'basalt', tf!, length!));
  }
  for (let i = 0; i < BLOCK_SIZE; i++) docs.push(doc(1000 + i, 'basalt', 1, 4 + i));
  const writer = await index.openWriter();
  for (const d of docs) writer.upsert(d);
  await writer.commit();
  const [seg] = index.snapshot().segments;
  const pairs = (s: SegmentReader, b: number) => {
    const { starts, tfs, lengths } = impactsOf(s, 'basalt');
    return Array.from({ length: starts[b + 1]! - starts[b]! }, (_, k) => [tfs[starts[b]! + k]!, lengths[starts[b]! + k]!]);
  };
  assert.deepEqual(pairs(seg!, 0), [[3, 9], [1, 3]]);
  assert.deepEqual(pairs(seg!, 1), [[1, 4]]);
  writer.delete(1000n);
  await writer.commit();
  await writer.close();
  const [after] = index.snapshot().segments;
  assert.notEqual(after, seg, 'a segment whose deletes changed is a new reader');
  assert.deepEqual(pairs(after!, 1), [[1, 5]]);
}));

test('bounds from kept impacts are each block\'s largest contribution after commits change the statistics', () => inIndex(async (index) => {
  let seed = 11;
  const rand = (n: number) => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return (seed >>> 8) % n; };
  const writer = await index.openWriter();
  const docs: StoredDocument[] = [];
  const add = (n: number) => {
    for (let k = 0; k < n; k++) {
      const i = docs.length;
      // a frequent word with tfs and lengths that vary block to block, and a document longer than 16
      // bits of length now and then (its norm read from the exact length)
      const length = i % 997 === 0 ? 70_000 : 3 + rand(60);
      const d = doc(i + 1, 'quartz', 1 + rand(rand(8) === 0 ? 12 : 3), length);
      if (rand(4) === 0) d.text += ' mica';
      docs.push(d);
      writer.upsert(d);
    }
  };
  const caches = new SegmentCaches();
  const snapshotOf = () => new Snapshot(index.snapshot().segments, 'int', 'auto', REFERENCE_COMMON_RATIO, 1, caches);
  const check = (label: string) => {
    const snap = snapshotOf();
    for (const s of snap.segments) {
      for (const term of ['quartz', 'mica']) {
        if (s.docFreq(term) === 0) continue;
        assert.deepEqual(Array.from(snap.blockBounds(s, term)!.perBlock), bruteBounds(snap, s, term), `${label}: ${s.name} ${term}`);
      }
    }
    return snap;
  };
  add(3_000);
  await writer.commit();
  const one = check('one commit');
  const kept = one.segments[0]!;
  add(500); // a second segment: N and avgdl change, the first segment does not
  await writer.commit();
  const two = check('a segment added');
  assert.equal(two.segments[0], kept, 'the untouched segment is the same reader');
  assert.equal(two.termBits(kept, 'quartz'), one.termBits(kept, 'quartz'), 'its bitset is kept');
  for (let i = 0; i < docs.length; i += 7) writer.delete(docs[i]!.cid);
  await writer.commit();
  check('with deletes');
  await writer.close();
}));

test('an index\'s searchers answer as the reference across commits that add and delete documents', () => inIndex(async (index) => {
  let seed = 5;
  const rand = (n: number) => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return (seed >>> 8) % n; };
  const words = ['granite', 'the', 'of', 'marble', 'basalt', 'slate'];
  const writer = await index.openWriter();
  const live = new Map<bigint, StoredDocument>();
  let next = 1;
  for (let round = 0; round < 4; round++) {
    for (let k = 0; k < 2_500; k++) {
      const text = Array.from({ length: 2 + rand(25) }, () => words[rand(rand(3) === 0 ? words.length : 3)]!).join(' ');
      const d: StoredDocument = { cid: BigInt(next++), title: '', text };
      live.set(d.cid, d);
      writer.upsert(d);
    }
    for (const cid of [...live.keys()].filter((_, i) => i % (11 + round) === 0)) {
      writer.delete(cid);
      live.delete(cid);
    }
    await writer.commit();
    const s = index.searcher() as Searcher;
    for (const q of ['granite', 'the marble', 'basalt of', 'slate granite the']) {
      const want = referenceSearch([...live.values()], q, REFERENCE_COMMON_RATIO);
      const got = s.search(q, { pageSize: 10, snippets: false });
      assert.equal(got.total, want.total, `round ${round} ${q}: total`);
      assert.deepEqual(got.hits.map((h) => [h.cid, h.score]), want.hits.slice(0, 10).map((h) => [h.cid, h.score]), `round ${round} ${q}`);
    }
  }
  await writer.close();
}));

test('a query scored by accumulation makes no bitsets; one counted beside MaxScore keeps its frequent terms\'', () => inIndex(async (index) => {
  // twenty words each in 5–25% of the documents: frequent enough for bitsets, too rare to be skipped by
  // MaxScore in so small a segment, so a query of all of them is dense and accumulated; "the" in 40%
  let seed = 3;
  const rand = (n: number) => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return (seed >>> 8) % n; };
  const words = Array.from({ length: 20 }, (_, i) => `mineral${String.fromCharCode(97 + i)}`);
  const docs: StoredDocument[] = [];
  for (let i = 0; i < 4_000; i++) {
    const text = words.filter((_, w) => rand(100) < 5 + w).concat(rand(10) < 4 ? ['the'] : [], ['rock']).join(' ');
    docs.push({ cid: BigInt(i + 1), title: '', text });
  }
  const writer = await index.openWriter();
  for (const d of docs) writer.upsert(d);
  await writer.commit();
  await writer.close();
  const caches = new SegmentCaches();
  const s = createSearcher([...index.snapshot().segments], 1, { caches });
  for (const [q, bits] of [[words.join(' '), false], ['the', true]] as const) {
    const want = referenceSearch(docs, q, REFERENCE_COMMON_RATIO);
    const got = s.search(q, { pageSize: 10, snippets: false });
    assert.equal(got.total, want.total, `${q}: total`);
    assert.deepEqual(got.hits.map((h) => [h.cid, h.score]), want.hits.slice(0, 10).map((h) => [h.cid, h.score]), q);
    assert.equal(caches.bitsetBytes > 0, bits, `${q}: bitsets kept`);
  }
}));

test('the bitset cache holds a number of the largest segment\'s bitsets, whatever its byte floor', () => inIndex(async (index) => {
  // 4,000 documents: a bitset is 500 bytes. Ten words each in half of them, all frequent enough for one.
  const words = Array.from({ length: 10 }, (_, i) => `garnet${String.fromCharCode(97 + i)}`);
  const writer = await index.openWriter();
  for (let i = 0; i < 4_000; i++) writer.upsert({ cid: BigInt(i + 1), title: '', text: words.filter((_, w) => (i >> (w % 4)) % 2 === 0).join(' ') || 'none' });
  await writer.commit();
  await writer.close();
  const [seg] = index.snapshot().segments;
  const bitsetBytes = 4 * Math.ceil(seg!.maxDoc / 32);
  // a floor of two bitsets' bytes: with room for eight of the segment's, the cache keeps all eight it was asked for
  const roomy = new SegmentCaches({ bitsBytes: 2 * bitsetBytes, bitsets: 8 });
  const kept = words.slice(0, 8).map((w) => roomy.termBits(seg!, w));
  assert.equal(roomy.bitsetBound, 8 * bitsetBytes);
  words.slice(0, 8).forEach((w, i) => assert.equal(roomy.termBits(seg!, w), kept[i], `${w}: the same bitset`));
  // with room for two, the first ones asked for are gone by the time the eighth is made
  const tight = new SegmentCaches({ bitsBytes: 2 * bitsetBytes, bitsets: 2 });
  const first = tight.termBits(seg!, words[0]!);
  for (const w of words.slice(1, 8)) tight.termBits(seg!, w);
  assert.equal(tight.bitsetBound, 2 * bitsetBytes);
  assert.notEqual(tight.termBits(seg!, words[0]!), first, 'rebuilt after eviction');
  // a byte floor above the bitsets' room is kept
  const floor = new SegmentCaches({ bitsBytes: 100 * bitsetBytes, bitsets: 2 });
  floor.termBits(seg!, words[0]!);
  assert.equal(floor.bitsetBound, 100 * bitsetBytes);
}));

test('a common term\'s frequency column holds each document\'s frequency, clipped; rarer terms have none', () => inIndex(async (index) => {
  // "the" in 3 of 5 documents, 1–400 times (so some at or past the clip); "rare" in 1 of 10
  const docs: StoredDocument[] = [];
  for (let i = 0; i < 500; i++) {
    const the = i % 5 < 3 ? 1 + ((i * 37) % 400) : 0;
    docs.push({ cid: BigInt(i + 1), title: '', text: `${'the '.repeat(the)}${i % 10 === 0 ? 'rare ' : ''}stone` });
  }
  const writer = await index.openWriter();
  for (const d of docs) writer.upsert(d);
  await writer.commit();
  await writer.close();
  const [seg] = index.snapshot().segments;
  const caches = new SegmentCaches();
  const column = caches.termFreqs(seg!, 'the')!;
  assert.equal(column.length, seg!.maxDoc);
  const want = new Uint8Array(seg!.maxDoc);
  const c = seg!.postings('the')!;
  let clipped = 0;
  for (let d = c.nextDoc(); d !== NO_MORE_DOCS; d = c.nextDoc()) {
    want[d] = Math.min(c.freq(), TERM_FREQS_CLIPPED);
    if (c.freq() >= TERM_FREQS_CLIPPED) clipped++;
  }
  assert.ok(clipped > 0, 'some frequencies are clipped');
  assert.deepEqual(column, want);
  assert.equal(caches.termFreqs(seg!, 'the'), column, 'kept');
  assert.equal(caches.termFreqs(seg!, 'rare'), undefined, 'a term in 10% of the documents has no column');
}));

test('queries that read common terms from their columns answer as the reference, clipped frequencies and deletes included', () => inIndex(async (index) => {
  // "the" and "of" common, frequencies up to 300 (past the clip); "quartz" and "basalt" rare
  let seed = 11;
  const rand = (n: number) => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return (seed >>> 8) % n; };
  const docs: StoredDocument[] = [];
  for (let i = 0; i < 3_000; i++) {
    const words: string[] = [];
    if (rand(10) < 7) words.push(...Array<string>(rand(8) === 0 ? 240 + rand(60) : 1 + rand(6)).fill('the'));
    if (rand(10) < 5) words.push(...Array<string>(1 + rand(4)).fill('of'));
    if (rand(10) < 1) words.push(...Array<string>(1 + rand(3)).fill('quartz'));
    if (rand(10) < 2) words.push('basalt');
    words.push(...Array<string>(rand(40)).fill('filler'));
    docs.push({ cid: BigInt(1 + rand(1_000_000_000)), title: '', text: words.join(' ') || 'filler' });
  }
  const unique = [...new Map(docs.map((d) => [d.cid, d])).values()];
  const writer = await index.openWriter();
  for (const d of unique) writer.upsert(d);
  await writer.commit();
  const queries = ['quartz the', 'quartz basalt the of', 'basalt of', '+quartz the of', 'the of', 'the', '+the +of basalt', 'quartz the "basalt filler"', '+quartz "the the" of'];
  const check = (live: StoredDocument[], round: string) => {
    const segments = [...index.snapshot().segments];
    for (const plan of ['auto', 'maxscore', 'accumulate'] as const) {
      const s = createSearcher(segments, 1, { plan, caches: new SegmentCaches() });
      // a page of 20 prunes; one of 1,000 holds every match of the rare terms, so each is probed
      for (const q of queries) {
        for (const pageSize of [20, 1_000]) {
          const want = referenceSearch(live, q, REFERENCE_COMMON_RATIO);
          const got = s.search(q, { pageSize, snippets: false });
          assert.equal(got.total, want.total, `${round} ${plan} ${q}: total`);
          assert.deepEqual(got.hits.map((h) => [h.cid, h.score]), want.hits.slice(0, pageSize).map((h) => [h.cid, h.score]), `${round} ${plan} ${q} (${pageSize})`);
        }
      }
    }
  };
  check(unique, 'written');
  // delete a third, among them documents that would rank: the columns still hold their frequencies
  const deleted = new Set(unique.filter((_, i) => i % 3 === 0).map((d) => d.cid));
  for (const cid of deleted) writer.delete(cid);
  await writer.commit();
  await writer.close();
  check(unique.filter((d) => !deleted.has(d.cid)), 'after deletes');
}));

test('the column cache holds its number of columns of the whole index, however many segments hold them', () => inIndex(async (index) => {
  // two commits, two segments of 3,000 and 1,000 documents; "the" and "of" in nine of ten, "basalt" in the tenth
  const writer = await index.openWriter();
  for (const [from, n] of [[0, 3_000], [3_000, 1_000]] as const) {
    for (let i = from; i < from + n; i++) writer.upsert({ cid: BigInt(i + 1), title: '', text: i % 10 === 0 ? `basalt w${i}` : `the of w${i}` });
    await writer.commit();
  }
  await writer.close();
  const segments = [...index.snapshot().segments];
  assert.equal(segments.length, 2);
  const docs = segments.reduce((n, s) => n + s.maxDoc, 0);
  // a floor under two columns of the index: the bound is TERM_FREQS_CACHE_COLUMNS columns of all 4,000 documents
  const caches = new SegmentCaches({ columnsBytes: 2 * docs });
  const s = createSearcher(segments, 1, { caches });
  assert.equal(caches.columnBound, TERM_FREQS_CACHE_COLUMNS * docs);
  s.search('basalt the of', { snippets: false });
  assert.equal(caches.columnBytes, 2 * docs, 'both words\' columns in both segments kept');
  // a floor above it stays
  const roomy = new SegmentCaches({ columnsBytes: 100 * docs });
  createSearcher(segments, 1, { caches: roomy });
  assert.equal(roomy.columnBound, 100 * docs);
}));
