/**
 * The merge policy keeps the segment count small under steady small commits, merges keep every live
 * document and drop deleted ones, and a segment whose documents are all deleted disappears. A forced
 * merge leaves at most the segments asked for, none with deletes, past the policy's size bound, and
 * answers as the segments it replaced did. A merge without deletes writes the `.idx` that one buffer of
 * the same documents writes, byte for byte.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { BadRequestError } from '../../../src/kernel/errors.js';
import { checkIndex, Index } from '../../../src/engine/index/index.js';
import { findMerges, nextForcedMerge } from '../../../src/engine/index/merge-policy.js';
import type { SegmentView } from '../../../src/engine/index/segment-reader.js';
import { Index as SearchableIndex } from '../../../src/engine/index.js';
import { referenceSearch } from '../query/reference.js';
import { liveDocuments, tempDir } from './fixtures.js';

test('steady one-document commits keep the segment count bounded and every live doc', async (t) => {
  const dir = tempDir(t);
  const index = await Index.open(dir, { mergeFactor: 4, mergeFloorBytes: 2048 });
  const w = await index.openWriter();
  let maxSegments = 0;
  const expected = new Set<bigint>();
  for (let i = 0; i < 300; i++) {
    const cid = BigInt(i % 220);
    w.upsert({ cid, title: `doc ${i}`, text: `body ${i} `.repeat(1 + (i % 13)) });
    expected.add(cid);
    if (i % 10 === 9) {
      w.delete(BigInt(i - 5));
      expected.delete(BigInt(i - 5));
    }
    const info = await w.commit();
    maxSegments = Math.max(maxSegments, info.segments);
  }
  const snap = index.snapshot();
  assert.ok(maxSegments <= 12, `up to ${maxSegments} segments`);
  assert.deepEqual(new Set(liveDocuments(index).keys()), expected);
  assert.equal(snap.docs, expected.size);
  assert.ok(checkIndex(dir).ok);
  // merged segments carry few dead slots: total slots stay close to live docs
  const slots = snap.segments.reduce((n, s) => n + s.maxDoc, 0);
  assert.ok(slots < expected.size * 1.6, `${slots} slots for ${expected.size} live docs`);
  await w.close();
  await index.close();
});

test('a merge drops deleted documents; a fully deleted segment is dropped', async (t) => {
  const dir = tempDir(t);
  const index = await Index.open(dir, { mergeFactor: 2, mergeFloorBytes: 1 << 20 });
  const w = await index.openWriter();
  for (let i = 0; i < 10; i++) w.upsert({ cid: BigInt(i), title: 'a', text: `first batch ${i}` });
  await w.commit();
  for (let i = 0; i < 10; i += 2) w.delete(BigInt(i));
  for (let i = 100; i < 105; i++) w.upsert({ cid: BigInt(i), title: 'b', text: `second batch ${i}` });
  const info = await w.commit();
  assert.equal(info.segments, 1, 'the two segments of the tier merged');
  const [seg] = index.snapshot().segments;
  assert.equal(seg!.maxDoc, 10, 'five deleted slots dropped');
  assert.equal(seg!.liveDocs, 10);
  // a term only deleted documents held is left out of the merged dictionary, one a live one holds is kept
  const terms = new Set((seg as SegmentView).terms());
  assert.ok(!terms.has('4') && seg!.docFreq('4') === 0, 'the term of deleted document 4');
  assert.ok(terms.has('5') && seg!.docFreq('5') === 1);
  for (let i = 1; i < 10; i += 2) w.delete(BigInt(i));
  for (let i = 100; i < 105; i++) w.delete(BigInt(i));
  const empty = await w.commit();
  assert.equal(empty.segments, 0);
  assert.equal(empty.docs, 0);
  assert.ok(checkIndex(dir).ok);
  await w.close();
  await index.close();
});

test('the policy merges a full tier and rewrites a mostly deleted segment alone', () => {
  const seg = (name: string, bytes: number, maxDoc = 10, deleted = 0) => ({ name, bytes, maxDoc, deleted, deletes: deleted ? `${name}.del_000001` : null });
  const o = { mergeFactor: 3, floorBytes: 100, maxMergedBytes: 0 };
  assert.deepEqual(findMerges([seg('a', 10), seg('b', 50)], o), []);
  assert.deepEqual(findMerges([seg('a', 10), seg('b', 50), seg('c', 90), seg('big', 10_000)], o), [['a', 'b', 'c']]);
  assert.deepEqual(findMerges([seg('a', 1000, 10, 6), seg('b', 10)], o), [['a']]);
  assert.deepEqual(findMerges([seg('x', 100_000), seg('y', 100_000), seg('z', 100_000)], { ...o, maxMergedBytes: 50_000 }), []);
});

test('a merge never produces more than maxMergedBytes: a full tier merges the smallest that fit, or waits', () => {
  const seg = (name: string, bytes: number) => ({ name, bytes, maxDoc: 10, deleted: 0, deletes: null });
  const o = { mergeFactor: 3, floorBytes: 100, maxMergedBytes: 2_500 };
  // one tier (1,000–2,999 bytes): all three together would make 3,300 bytes
  assert.deepEqual(findMerges([seg('c', 1_200), seg('a', 1_000), seg('b', 1_100)], o), [['a', 'b']]);
  // no two fit together
  assert.deepEqual(findMerges([seg('a', 1_300), seg('b', 1_400), seg('c', 1_500)], o), []);
  // without the bound the whole tier merges
  assert.deepEqual(findMerges([seg('c', 1_200), seg('a', 1_000), seg('b', 1_100)], { ...o, maxMergedBytes: 0 }), [['a', 'b', 'c']]);
});

test('a tier holding several full groups merges all of them at once, smallest first', () => {
  const seg = (name: string, bytes: number) => ({ name, bytes, maxDoc: 10, deleted: 0, deletes: null });
  const o = { mergeFactor: 3, floorBytes: 100, maxMergedBytes: 0 };
  const tier = ['g', 'b', 'e', 'a', 'h', 'c', 'f', 'd'].map((n) => seg(n, 1_000 + n.charCodeAt(0)));
  assert.deepEqual(findMerges(tier, o), [['a', 'b', 'c'], ['d', 'e', 'f']]);
});

test('a forced merge reads at most maxMergeAtOnce segments at a time, smallest first, writing few documents twice', () => {
  const seg = (i: number, bytes = 1_000, dictionaryBytes = 10) => ({ name: `s${i}`, bytes, maxDoc: 10, deleted: 0, deletes: null, dictionaryBytes });
  /**
   * Runs the rounds a forced merge would (a merged segment's dictionary taken as its sources' together, the
   * most it can be): the groups' sizes and the bytes written by all of them.
   */
  const plan = (sizes: number[], maxSegments: number, maxSources: number, { dictionary = 10, maxDictionaryBytes = 0 } = {}) => {
    let segments = sizes.map((b, i) => seg(i, b, dictionary));
    const groups: number[] = [];
    let written = 0;
    for (let group; (group = nextForcedMerge(segments, maxSegments, { maxSources, maxDictionaryBytes })) !== undefined;) {
      const merged = segments.filter((s) => group.includes(s.name));
      const bytes = merged.reduce((n, s) => n + s.bytes, 0);
      const dictionaryBytes = merged.reduce((n, s) => n + s.dictionaryBytes, 0);
      segments = [...segments.filter((s) => !group.includes(s.name)), seg(1000 + groups.length, bytes, dictionaryBytes)];
      groups.push(group.length);
      written += bytes;
    }
    return { groups, written, left: segments.length };
  };
  const equal = (n: number) => Array.from({ length: n }, () => 1_000);
  assert.deepEqual(plan(equal(5), 1, 32), { groups: [5], written: 5_000, left: 1 });
  assert.deepEqual(plan(equal(3), 5, 32), { groups: [], written: 0, left: 3 });
  // the 194 flushed segments of a 5M-article bulk load into one: five full rounds, one of 8, then the last of 32
  const many = plan(equal(194), 1, 32);
  assert.deepEqual(many.groups, [32, 32, 32, 32, 32, 8, 32]);
  assert.equal(many.written, (5 * 32 + 8) * 1_000 + 194_000, 'the smallest written twice, the rest once');
  assert.ok(many.groups.every((g) => g <= 32));
  assert.deepEqual(plan(equal(40), 3, 32), { groups: [7, 32], written: 39_000, left: 3 }, 'the first round as large as the last needs');
  assert.deepEqual(plan(equal(9), 1, 2).groups, [2, 2, 2, 2, 2, 2, 2, 2]);
  // the smallest go first, whatever their order
  assert.deepEqual(nextForcedMerge([seg(0, 500), seg(1, 10), seg(2, 300), seg(3, 20), seg(4, 400)], 1, { maxSources: 3, maxDictionaryBytes: 0 }), ['s1', 's3', 's2']);

  // the last merge reads more than maxSources when their dictionaries fit the budget: the 55 segments of a
  // million-article bulk load, written once
  assert.deepEqual(plan(equal(55), 1, 32, { dictionary: 6, maxDictionaryBytes: 384 }), { groups: [55], written: 55_000, left: 1 });
  assert.deepEqual(plan(equal(55), 1, 32, { dictionary: 7, maxDictionaryBytes: 384 }).groups, [24, 32], 'over the budget: rounds of maxSources');
  assert.deepEqual(plan(equal(40), 3, 32, { dictionary: 6, maxDictionaryBytes: 384 }).groups, [38], 'the smallest that leave maxSegments');
  // never more than four times maxSources, however small the dictionaries: rounds of maxSources until the
  // rest fit, the merged ones' dictionaries counted
  const small = plan(equal(200), 1, 32, { dictionary: 1, maxDictionaryBytes: 1_000 });
  assert.deepEqual(small.groups, [32, 32, 32, 107]);
  assert.ok(small.groups.every((g) => g <= 128));
  // the budget counts the segments the last merge reads, the smallest: after one round of 32, the 50 left to merge fit
  assert.deepEqual(plan(equal(100), 20, 32, { dictionary: 1, maxDictionaryBytes: 81 }).groups, [81]);
  assert.deepEqual(plan(equal(100), 20, 32, { dictionary: 1, maxDictionaryBytes: 80 }).groups, [32, 50]);
});

// A searcher's dictionary keeps a segment's surface forms past a merge: taken before the merge (a dictionary
// built on the old snapshot), or after it (an old snapshot's searcher building its dictionary late). Either
// way the forms must stay readable once the old core's descriptor is closed, so they must not pin it.
for (const taken of ['before', 'after'] as const) {
  test(`a merged-away segment's surface forms, taken ${taken} the merge, stay readable without its files`, async (t) => {
    const dir = tempDir(t);
    const index = await Index.open(dir, { mergeFactor: 2, mergeFloorBytes: 1 << 20 });
    const w = await index.openWriter();
    w.upsert({ cid: 1n, title: 'Zebras', text: 'striped zebras graze' });
    await w.commit();
    const [first] = index.snapshot().segments;
    let forms = taken === 'before' ? first!.surfaceForms() : undefined;
    w.upsert({ cid: 2n, title: 'Okapis', text: 'okapis browse' });
    await w.commit();
    assert.equal(index.snapshot().segments.length, 1, 'the two segments merged');
    assert.notEqual(index.snapshot().segments[0]!.name, first!.name);
    forms ??= first!.surfaceForms();
    (first as SegmentView).core.close();
    assert.deepEqual(new Map(forms), new Map([['graze', 1], ['striped', 1], ['zebras', 1]]));
    await w.close();
    await index.close();
  });
}

const forcedMerges: { maxMergeAtOnce: number; maxMergeDictionaryBytes?: number; threadBytes?: number }[] = [
  { maxMergeAtOnce: 32 },
  { maxMergeAtOnce: 2, maxMergeDictionaryBytes: 0 }, // in rounds of two
  { maxMergeAtOnce: 2 }, // the last merge of more, its sources' dictionaries being small
  { maxMergeAtOnce: 32, threadBytes: 0 },
];
for (const { maxMergeAtOnce, maxMergeDictionaryBytes, threadBytes } of forcedMerges) {
  const how = `${maxMergeAtOnce} at once${maxMergeDictionaryBytes === 0 ? ' whatever the dictionaries' : ''}${threadBytes === 0 ? ', stored text merged in a thread' : ''}`;
  test(`forceMerge leaves at most the segments asked for, none with deletes, and answers as the reference does (${how})`, async (t) => {
    const dir = tempDir(t);
    // a policy that never merges: every commit adds a segment
    const index = await SearchableIndex.open(dir, { mergeFactor: 100, maxMergedBytes: 1, maxMergeAtOnce, maxMergeDictionaryBytes, threadBytes, buildThreads: 0 });
    const w = await index.openWriter();
    const words = ['granite', 'basalt', 'quarry', 'chisel', 'marble', 'of', 'the', 'slate'];
    const expected = new Set<bigint>();
    for (let batch = 0; batch < 6; batch++) {
      for (let i = 0; i < 15; i++) {
        const n = batch * 15 + i;
        const cid = BigInt(n % 70); // later batches replace earlier documents
        w.upsert({ cid, title: `${words[n % 8]} ${n}`, text: Array.from({ length: 3 + (n % 9) }, (_, k) => words[(n * 7 + k * 3) % 8]).join(' ') });
        expected.add(cid);
      }
      w.delete(BigInt(batch * 11));
      expected.delete(BigInt(batch * 11));
      await w.commit();
    }
    assert.equal(index.snapshot().segments.length, 5, 'one segment per commit, the first replaced entirely by later ones');
    assert.ok(index.snapshot().segments.some((s) => s.liveDocs < s.maxDoc), 'some segment holds deleted documents');
    const queries = ['quarry', 'granite marble', '"of the"', '+chisel -slate', 'basalt "the quarry"'];
    const live = () => [...liveDocuments(index)].map(([cid, d]) => ({ cid, ...d }));
    const answers = (q: string) => index.searcher().search(q, { pageSize: 100, snippets: false });

    const two = await w.forceMerge(2);
    assert.equal(two.segments, 2);
    assert.ok(index.snapshot().segments.every((s) => s.liveDocs === s.maxDoc), 'no deleted slot is left');

    const one = await w.forceMerge(1);
    assert.equal(one.segments, 1);
    assert.equal(one.docs, expected.size);
    const [seg] = index.snapshot().segments;
    assert.equal(seg!.maxDoc, expected.size);
    assert.deepEqual(new Set(liveDocuments(index).keys()), expected);
    for (const q of queries) {
      const want = referenceSearch(live(), q);
      const got = answers(q);
      assert.equal(got.total, want.total, `total of ${q}`);
      assert.deepEqual(got.hits.map((h) => [h.cid, h.score]), want.hits.map((h) => [h.cid, h.score]), `hits of ${q}`);
    }
    assert.ok(checkIndex(dir).ok);

    // one segment and a delete: the segment is rewritten without it
    w.delete(1n);
    const again = await w.forceMerge(1);
    assert.equal(again.docs, expected.size - 1);
    assert.equal(index.snapshot().segments[0]!.maxDoc, expected.size - 1);
    await assert.rejects(w.forceMerge(0), BadRequestError);
    w.upsert({ cid: 500n, title: 'still', text: 'the writer is usable' });
    assert.equal((await w.commit()).docs, expected.size);
    await w.close();
    await index.close();
  });
}

test('a forced merge in rounds closes the sources of each round it wrote since the last commit', async (t) => {
  const dir = tempDir(t);
  /** This process's open descriptors of the index's segment files, unlinked ones included. */
  const openSegmentFiles = () => readdirSync('/proc/self/fd').filter((fd) => {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      return target.startsWith(dir) && /seg_\d+\.(idx|sto)( \(deleted\))?$/.test(target);
    } catch {
      return false; // the descriptor readdir itself used
    }
  }).length;
  const index = await Index.open(dir, { maxBufferedBytes: 1, mergeFactor: 100, maxMergeAtOnce: 2 });
  const w = await index.openWriter();
  w.upsert({ cid: 100n, title: 'committed', text: 'a segment the current commit names' });
  await w.commit();
  for (let i = 0; i < 6; i++) w.upsert({ cid: BigInt(i), title: `t${i}`, text: `flushed alone ${i}` }); // a segment each
  let most = 0;
  let sampling = true;
  const sample = () => {
    most = Math.max(most, openSegmentFiles());
    if (sampling) setImmediate(sample);
  };
  sample();
  const info = await w.forceMerge(1);
  sampling = false;
  assert.equal(info.segments, 1);
  // 7 segments open at the start; each round writes one and closes the uncommitted of its two sources
  assert.ok(most <= 2 * 8, `${most} segment files open at once`);
  assert.ok(openSegmentFiles() <= 2 * 2, 'the merged segment, and the committed one until it is collected');
  assert.equal(index.snapshot().docs, 7);
  await w.close();
  await index.close();
});

test('a merge leaves its sources holding neither their term dictionaries nor their heads', async (t) => {
  const dir = tempDir(t);
  const index = await Index.open(dir, { mergeFactor: 100 });
  const w = await index.openWriter();
  for (let batch = 0; batch < 3; batch++) {
    for (let i = 0; i < 10; i++) w.upsert({ cid: BigInt(batch * 10 + i), title: `title ${i}`, text: `granite ${batch} marble ${i}` });
    await w.commit();
  }
  const sources = index.snapshot().segments.map((s) => (s as SegmentView).core);
  assert.equal(sources.length, 3);
  await w.forceMerge(1);
  for (const core of sources) {
    assert.notEqual(core.termsOnce(), core.termsOnce(), `${core.name}: its dictionary is decoded again, not held`);
    assert.notEqual(core.headsOnce(), core.headsOnce(), `${core.name}: its heads are decoded again, not held`);
  }
  const held = sources[0]!.terms;
  assert.equal(sources[0]!.termsOnce(), held, 'a dictionary a search decoded is shared');
  assert.deepEqual([...sources[0]!.termsOnce()].slice(0, 3), [...held].slice(0, 3));
  await w.close();
  await index.close();
});

test("a merge reads its sources' heads without the sources holding them", async (t) => {
  const dir = tempDir(t);
  const index = await Index.open(dir);
  const w = await index.openWriter();
  for (let i = 0; i < 20; i++) w.upsert({ cid: BigInt(i), title: `title ${i}`, url: `https://example.com/${i}`, text: `text ${i}` });
  await w.commit();
  const core = (index.snapshot().segments[0] as SegmentView).core;
  const once = core.headsOnce();
  assert.notEqual(core.headsOnce(), once, 'decoded for one pass, not held');
  const held = core.heads;
  assert.equal(core.headsOnce(), held, 'heads a search decoded are shared');
  for (const d of [0, 7, 19]) assert.deepEqual(once.record(d), held.record(d));
  await w.close();
  await index.close();
});

test('a merge of segments without deletes writes the .idx one buffer of the same documents writes', async (t) => {
  const words = ['granite', 'basalt', 'quarry', 'chisel', 'marble', 'of', 'the', 'slate', 'gneiss', 'schist'];
  // rare words (one document, or a few of one part), words of one part only in full blocks (≥ 128
  // documents), words of every part, common-word pairs and site: terms
  const docs = Array.from({ length: 720 }, (_, n) => ({
    cid: BigInt(n),
    title: `${words[n % 10]} title${n % 37}`,
    text: `${Array.from({ length: 4 + (n % 30) }, (_, k) => words[(n * 7 + k * k) % 10]).join(' ')} n${n} part${Math.floor(n / 240)} few${n % 90}${n < 240 ? '' : 'x'}`,
    host: `h${n % 5}.example.org`,
  }));
  const idxOf = async (parts: number) => {
    const dir = tempDir(t);
    const index = await Index.open(dir, { mergeFactor: 1000, buildThreads: 0 });
    const w = await index.openWriter();
    const per = docs.length / parts;
    for (let p = 0; p < parts; p++) {
      for (const d of docs.slice(p * per, (p + 1) * per)) w.upsert(d);
      await w.commit();
    }
    assert.equal(index.snapshot().segments.length, parts);
    await w.forceMerge(1);
    const [segment] = index.snapshot().segments;
    const bytes = readFileSync(join(dir, `${segment!.name}.idx`));
    await w.close();
    await index.close();
    return bytes;
  };
  const whole = await idxOf(1);
  for (const parts of [3, 6]) assert.ok((await idxOf(parts)).equals(whole), `${parts} segments merged`);
});
