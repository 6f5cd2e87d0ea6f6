/**
 * Stored text coded with each segment's vocabulary of words and separators: any text reads back as it
 * was written (its UTF-8), through flushes, deletes and merges that re-code documents from their ranks;
 * codes of one to four bytes round-trip; a malformed code is an error, never a wrong text.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { ByteWriter, IntBuffer } from '../../../src/engine/index/bytes.js';
import { MAGIC } from '../../../src/engine/index/footer.js';
import { checkIndex, Index } from '../../../src/engine/index/index.js';
import { SegmentFile } from '../../../src/engine/index/segment-file.js';
import { storeMagic, StoreWriter, type StoredReader } from '../../../src/engine/index/store.js';
import { InternalError } from '../../../src/kernel/errors.js';
import { MAX_VOCABULARY, tokenCounts, VocabularyBuilder, WordModel, writeRank } from '../../../src/engine/index/word-codes.js';
import { liveDocuments, tempDir } from './fixtures.js';

/** What a stored text reads back as: its UTF-8 decoded (a lone surrogate becomes U+FFFD). */
const asStored = (s: string) => Buffer.from(s, 'utf8').toString('utf8');

/** Texts made of the pieces the word model treats specially, and of anything at all. */
const PIECE = fc.oneof(
  fc.constantFrom(' ', '  ', '\n', '\t', ' \n ', ', ', '. ', '—', ' – ', '«', '¿', '\u00a0', '\u2028', '\0', 'é', '日本', '😀', '\ud800', '\udc00x'),
  fc.constantFrom('the', 'The', 'THE', 'of', 'word', 'Wörter', 'x1', '42', 'naïve', 'Ωμέγα', 'a'),
  fc.string({ maxLength: 6 }),
  fc.string({ unit: 'binary', maxLength: 4 }),
);
const TEXT = fc.array(PIECE, { maxLength: 30 }).map((p) => p.join(''));

test('any text reads back as written, through flushes, deletes, merges and a reopen', async (t) => {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.record({ cid: fc.bigInt({ min: 0n, max: 20n }), text: TEXT, drop: fc.boolean() }), { minLength: 1, maxLength: 40 }),
      fc.constantFrom(1, 400, 1 << 20),
      async (docs, maxBufferedBytes) => {
        const dir = tempDir(t, `quarry-words-${run++}-`);
        const expected = new Map<bigint, { title: string; text: string }>();
        let index = await Index.open(dir, { mergeFactor: 2, mergeFloorBytes: 256, storedBlockBytes: 64, maxBufferedBytes });
        try {
          const writer = await index.openWriter();
          for (const d of docs) {
            writer.upsert({ cid: d.cid, title: 't', text: d.text });
            expected.set(d.cid, { title: 't', text: asStored(d.text) });
            if (d.drop) {
              writer.delete(d.cid === 0n ? 20n : d.cid - 1n);
              expected.delete(d.cid === 0n ? 20n : d.cid - 1n);
            }
          }
          await writer.commit();
          assert.deepEqual(liveDocuments(index), expected);
          await writer.forceMerge(1);
          assert.deepEqual(liveDocuments(index), expected);
          await writer.close();
        } finally {
          await index.close();
        }
        assert.ok(checkIndex(dir).ok);
        index = await Index.open(dir);
        try {
          assert.deepEqual(liveDocuments(index), expected);
        } finally {
          await index.close();
        }
      },
    ),
    { numRuns: 60 },
  );
});

test('tokens of tens of thousands of code units, and texts longer than any before them, read back through a merge', async (t) => {
  const dir = tempDir(t);
  const index = await Index.open(dir, { mergeFactor: 2, mergeFloorBytes: 1 });
  try {
    const writer = await index.openWriter();
    const word = 'ab'.repeat(35_000) + '\ud83d\ude00'.repeat(10);
    const separators = '-= '.repeat(7_000) + '\u2014';
    const texts = ['short one', `${word}${separators}${word} end`, 'x', `${separators}é${'z'.repeat(9_000)}`, `again ${word}`];
    texts.forEach((text, i) => writer.upsert({ cid: BigInt(i), title: 't', text }));
    await writer.commit();
    const expected = new Map(texts.map((text, i) => [BigInt(i), { title: 't', text }]));
    assert.deepEqual(liveDocuments(index), expected);
    writer.upsert({ cid: 9n, title: 't', text: word });
    await writer.commit();
    await writer.forceMerge(1);
    expected.set(9n, { title: 't', text: word });
    assert.deepEqual(liveDocuments(index), expected);
    await writer.close();
  } finally {
    await index.close();
  }
});

test('a segment with tens of thousands of distinct words codes them in one to three bytes and reads them back', async (t) => {
  const dir = tempDir(t);
  const index = await Index.open(dir, { mergeFactor: 2, mergeFloorBytes: 1 });
  try {
    const writer = await index.openWriter();
    const texts: string[] = [];
    // 20,000 distinct words (so ranks pass 128 and 16,512), each used a different number of times
    for (let d = 0; d < 200; d++) {
      const words: string[] = [];
      for (let k = 0; k < 100; k++) words.push(`w${(d * 100 + k).toString(36)}`);
      words.push('common', 'the', d % 2 === 0 ? 'even' : 'odd');
      texts.push(words.join(' '));
      writer.upsert({ cid: BigInt(d), title: '', text: texts[d]! });
      if (d === 99) await writer.commit(); // two segments, merged below into one vocabulary
    }
    await writer.commit();
    await writer.forceMerge(1);
    const segs = index.snapshot().segments;
    assert.equal(segs.length, 1);
    const live = liveDocuments(index);
    for (let d = 0; d < 200; d++) assert.equal(live.get(BigInt(d))?.text, texts[d]);
    assert.equal(storeMagic(readFileSync(join(dir, `${segs[0]!.name}.sto`))), MAGIC.wordStored);
    await writer.close();
  } finally {
    await index.close();
  }
});

test("a merged segment's vocabulary counts its live documents' tokens, whether its sources had deletes or not", async (t) => {
  const dir = tempDir(t);
  const index = await Index.open(dir, { mergeFactor: 100, storedBlockBytes: 256 });
  try {
    const writer = await index.openWriter();
    const words = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta'];
    // three segments; the second loses documents to deletes, the others keep all of theirs
    for (let seg = 0; seg < 3; seg++) {
      for (let d = 0; d < 40; d++) {
        const n = seg * 40 + d;
        const separator = n % 4 === 0 ? ', ' : ' ';
        const text = Array.from({ length: 1 + (n % 7) }, (_, k) => words[(n * (k + 3)) % (seg + 5)]).join(separator);
        writer.upsert({ cid: BigInt(n), title: '', text });
      }
      await writer.commit();
    }
    for (let n = 40; n < 80; n += 3) writer.delete(BigInt(n));
    await writer.commit();
    await writer.forceMerge(1);
    const [seg] = index.snapshot().segments as unknown as { core: { maxDoc: number; store: StoredReader } }[];
    const { store, maxDoc } = seg!.core;
    const model = store.wordModel()!;
    const counted = new Float64Array(model.size);
    const ranks = new IntBuffer();
    for (let d = 0; d < maxDoc; d++) {
      ranks.length = 0;
      store.ranks(d, model, ranks);
      for (const r of ranks.view()) counted[r]!++;
    }
    assert.deepEqual([...store.tokenCounts()!], [...counted]);
    // most frequent first: the ranks are the counts' order
    for (let r = 1; r < counted.length; r++) assert.ok(counted[r - 1]! >= counted[r]!, `rank ${r}`);
    await writer.close();
  } finally {
    await index.close();
  }
});

test('a merge refuses a token its source vocabulary did not count rather than code it', (t) => {
  const builder = new VocabularyBuilder();
  builder.addText('alpha beta');
  const file = new SegmentFile(tempDir(t), 'seg_000001.sto');
  try {
    const w = new StoreWriter({ blockBytes: 1024, quality: 3 }, file, builder.rank());
    w.addMapped(Int32Array.of(0, 1), 0, 2, Int32Array.of(1, 0)); // both ranks mapped: accepted
    assert.throws(() => w.addMapped(Int32Array.of(0, 1), 0, 2, Int32Array.of(1, -1)), InternalError);
  } finally {
    file.abort();
  }
});

test('ranks round-trip through codes of one to four bytes; a rank past four bytes is refused', () => {
  const builder = new VocabularyBuilder();
  builder.addText('a');
  const ranks = [0, 1, 127, 128, 129, 16_511, 16_512, 16_513, 2_113_663, 2_113_664, MAX_VOCABULARY - 1];
  const w = new ByteWriter();
  const lengths: number[] = [];
  for (const r of ranks) {
    const before = w.length;
    writeRank(w, r);
    lengths.push(w.length - before);
  }
  assert.deepEqual(lengths, [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4]);
  assert.throws(() => writeRank(new ByteWriter(), MAX_VOCABULARY), /beyond/);
  // decoded by a model of empty words just large enough for the four-byte ranks below the last
  const model = fakeModel(2_113_665);
  const out = new IntBuffer();
  const fits = w.length - 4;
  model.ranks(w.view(), 0, fits, out);
  assert.deepEqual([...out.view()], ranks.slice(0, -1));
  assert.throws(() => model.ranks(w.view(), fits, w.length, new IntBuffer()), /beyond the model/);
});

test('a malformed code is an error, never a wrong text', () => {
  const builder = new VocabularyBuilder();
  builder.addText('alpha beta, gamma');
  const vocabulary = builder.rank();
  const model = new WordModel(vocabulary.encodeModel());
  const w = new ByteWriter();
  vocabulary.writeText(w, 'alpha beta, gamma');
  assert.equal(model.decode(w.view(), 0, w.length), 'alpha beta, gamma');
  // a code cut before its last byte, and a rank past the model's end
  const cut = new ByteWriter();
  writeRank(cut, 20_000);
  assert.throws(() => model.decode(cut.view(), 0, cut.length - 1), RangeError);
  assert.throws(() => model.decode(cut.view(), 0, cut.length), RangeError);
  const past = new ByteWriter();
  writeRank(past, model.size);
  assert.throws(() => model.decode(past.view(), 0, past.length), RangeError);
  assert.throws(() => model.ranks(past.view(), 0, past.length, new IntBuffer()), RangeError);
  // four or five leading bytes are no code
  assert.throws(() => model.decode(Uint8Array.of(1, 1, 1, 1, 0x80), 0, 5), RangeError);
  assert.throws(() => model.decode(Uint8Array.of(1, 1, 1, 1, 1, 0x80), 0, 6), RangeError);
  assert.throws(() => model.ranks(Uint8Array.of(1, 1, 1, 1, 1, 0x80), 0, 6, new IntBuffer()), RangeError);
});

test('a merge carries tokens over from their models: same token, same kind, one id, counts summed', () => {
  const texts = ['naïve café — déjà vu', 'plain ascii words, and more', '東京 😀 x², a—b', 'café plain 😀'];
  const models = texts.map((s) => {
    const b = new VocabularyBuilder();
    b.addText(s);
    b.addText(s);
    return new WordModel(b.rank().encodeModel());
  });
  const merged = new VocabularyBuilder();
  const ids = new Map<string, number>();
  const expected = new Map<string, number>();
  for (const m of models) {
    for (let r = 0; r < m.size; r++) {
      const id = merged.addFrom(m, r, 3);
      const token = m.token(r);
      assert.equal(merged.token(id), token);
      assert.equal(merged.isWord(id), m.isWord(r), `kind of ${JSON.stringify(token)}`);
      if (ids.has(token)) assert.equal(id, ids.get(token), `one id for ${JSON.stringify(token)}`);
      ids.set(token, id);
      expected.set(token, (expected.get(token) ?? 0) + 3);
    }
  }
  // the merged vocabulary holds each token once, with the counts of every model it came from
  const vocabulary = merged.rank();
  const mergedModel = new WordModel(vocabulary.encodeModel());
  const counts = tokenCounts(vocabulary.encodeModel());
  assert.equal(mergedModel.size, expected.size);
  for (let r = 0; r < mergedModel.size; r++) assert.equal(counts[r], expected.get(mergedModel.token(r)), `count of ${JSON.stringify(mergedModel.token(r))}`);
  assert.ok(expected.get('café')! > expected.get('東京')!);
});

test('a space is implied only between two words', () => {
  const builder = new VocabularyBuilder();
  const texts = ['a b', 'a  b', 'a b ', ' a b', 'a, b', 'a ,b', 'a', ' ', '', 'a\u00a0b', 'a—b c'];
  for (const s of texts) builder.addText(s);
  const vocabulary = builder.rank();
  const model = new WordModel(vocabulary.encodeModel());
  for (const s of texts) {
    const w = new ByteWriter();
    vocabulary.writeText(w, s);
    assert.equal(model.decode(w.view(), 0, w.length), s);
  }
  // "a b" is two tokens, no space coded
  const w = new ByteWriter();
  vocabulary.writeText(w, 'a b');
  assert.equal(w.length, 2);
});

test('every occurrence of a token gets its one id, among tens of thousands of short tokens that share hash slots', () => {
  // short words (the ones found through the table of recent tokens), some past its length, of units
  // high and low, many pairs differing in their last unit only
  const units = ['a', 'b', 'z', '0', 'é', '가', '\uffef', '😀'];
  const words = fc.sample(fc.array(fc.constantFrom(...units), { minLength: 1, maxLength: 10 }).map((u) => u.join('')), { numRuns: 30_000, seed: 7 });
  const builder = new VocabularyBuilder();
  const idOf = new Map<string, number>();
  for (let round = 0; round < 3; round++) {
    for (let at = 0; at < words.length; at += 50) {
      const chunk = words.slice(at, at + 50);
      const ids = builder.addText(chunk.join(' '));
      assert.equal(ids.length, chunk.length);
      for (let k = 0; k < chunk.length; k++) {
        const id = ids.a[k]!;
        assert.equal(builder.token(id), chunk[k], `token ${k} of chunk ${at} in round ${round}`);
        const known = idOf.get(chunk[k]!);
        if (known === undefined) idOf.set(chunk[k]!, id);
        else assert.equal(id, known, chunk[k]);
      }
    }
  }
  assert.equal(new Set(idOf.values()).size, idOf.size, 'distinct tokens, distinct ids');
  // pairs of the same length and the same 32-bit FNV-1a hash over their code units (the table's hash):
  // only their units tell them apart
  for (const pair of [['ubfdvm', 'xdqfxu'], ['ipivmd', 'lsbyrs'], ['uvmkhf', 'vuwvru']]) {
    const ids = Array.from(builder.addText(`${pair.join(' ')} ${pair.join(' ')}`).view());
    assert.deepEqual(ids.map((id) => builder.token(id)), [...pair, ...pair]);
  }
});

test('ids past 65,535 are found again, as are tokens longer than the table of recent tokens holds', () => {
  const builder = new VocabularyBuilder();
  const n = 70_000;
  const word = (k: number): string => `token${k.toString(36).padStart(6, '0')}`; // 11 units: past the recent tokens' 8
  for (let at = 0; at < n; at += 1000) {
    const ids = builder.addText(Array.from({ length: 1000 }, (_, k) => word(at + k)).join(' '));
    for (let k = 0; k < 1000; k++) assert.equal(ids.a[k], at + k);
  }
  const again = [3, 65_535, 65_536, 65_537, 69_999];
  assert.deepEqual(Array.from(builder.addText(again.map(word).join(' ')).view()), again);
  assert.deepEqual(again.map((id) => builder.token(id)), again.map(word));
});

/** A model of `size` ranks whose tokens are all empty words. */
function fakeModel(size: number): WordModel {
  const w = new ByteWriter(size + 8);
  w.varint(size);
  for (let r = 0; r < size; r++) w.byte(1);
  for (let r = 0; r < size; r++) w.byte(1); // occurrences
  return new WordModel(w.view());
}
