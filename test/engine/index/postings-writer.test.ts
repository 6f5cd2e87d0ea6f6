/**
 * The postings writer takes a term a document at a time and holds its compressed blocks, not its
 * postings: positions leave for their file between blocks. What it writes reads back through the
 * cursor as the documents, freqs and positions given, for terms of one doc, of a partial block, of
 * exactly full blocks and of many blocks, with and without positions; positions copied as another
 * segment coded them write the same bytes. A full block's few outlying gaps and freqs are patched
 * exceptions, not a wider run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ByteWriter } from '../../../src/engine/index/bytes.js';
import { TermPostingsWriter } from '../../../src/engine/index/postings-writer.js';
import { BlockPostingsCursor } from '../../../src/engine/index/postings-reader.js';
import { BLOCK_SIZE, NO_MORE_DOCS } from '../../../src/engine/index/types.js';
import { riceParameter, type CodedPositions } from '../../../src/engine/index/postings-format.js';

test('a term written a document at a time reads back whole; its positions drain between blocks', () => {
  let seed = 11;
  const rand = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
  const maxDoc = 20_000;
  const lengths = Uint32Array.from({ length: maxDoc }, () => 1 + rand(3000));
  for (const docFreq of [1, 77, BLOCK_SIZE, 3 * BLOCK_SIZE, 40 * BLOCK_SIZE + 5]) {
    for (const term of ['word', 'gram:of the']) {
      const docs = Array.from(new Set(Array.from({ length: docFreq * 3 }, () => rand(maxDoc)))).slice(0, docFreq).sort((a, b) => a - b);
      assert.equal(docs.length, docFreq);
      const positions = docs.map((d) => {
        const f = 1 + (rand(10) === 0 ? rand(Math.min(lengths[d]!, 300)) : 0);
        const set = new Set<number>();
        while (set.size < f) set.add(rand(lengths[d]! + 16));
        return [...set].sort((a, b) => a - b);
      });
      const out = new ByteWriter();
      const posOut = new ByteWriter();
      const drained: Uint8Array[] = [];
      let largest = 0;
      const writer = new TermPostingsWriter(lengths, out, posOut, () => {
        largest = Math.max(largest, posOut.length);
        drained.push(posOut.view().slice());
        posOut.length = 0;
      });
      writer.begin(term);
      docs.forEach((d, i) => writer.add(d, positions[i]!.length, positions[i]!, 0));
      const { docFreq: written, maxFreq, minLength } = writer.finish();
      assert.equal(written, docFreq);
      const blocks = Math.ceil(docFreq / BLOCK_SIZE);
      assert.equal(drained.length, blocks, 'positions handed over once a block');
      const withPositions = term === 'word';
      if (withPositions && blocks > 1) {
        const perBlock = Math.max(...drained.map((b) => b.length));
        assert.ok(largest <= perBlock, 'never more than a block of positions held');
      }
      const posData = new Uint8Array(drained.reduce((n, b) => n + b.length, 0));
      drained.reduce((at, b) => (posData.set(b, at), at + b.length), 0);
      assert.equal(posData.length > 0, withPositions);
      const c = new BlockPostingsCursor(out.view(), 0, docFreq, maxFreq, minLength, withPositions ? posData : null, 0, lengths);
      let i = 0;
      for (let d = c.nextDoc(); d !== NO_MORE_DOCS; d = c.nextDoc(), i++) {
        assert.equal(d, docs[i], `doc ${i} of ${docFreq}`);
        assert.equal(c.freq(), positions[i]!.length);
        if (withPositions) assert.deepEqual([...c.positions()], positions[i], `positions of doc ${d}`);
      }
      assert.equal(i, docFreq);
      assert.equal(maxFreq, Math.max(...positions.map((p) => p.length)));
      assert.equal(minLength, Math.min(...docs.map((d) => lengths[d]!)));
    }
  }
});

test('a full block packs its few outlying gaps and freqs as exceptions and reads them back', () => {
  // One block of a term without positions, written from gaps and freqs; its bytes and what reads back.
  const write = (gaps: number[], freqs: number[]) => {
    const docs: number[] = [];
    gaps.reduce((prev, g) => (docs.push(prev + g + 1), prev + g + 1), -1);
    const lengths = new Uint32Array(docs.at(-1)! + 1).fill(7);
    const out = new ByteWriter();
    const writer = new TermPostingsWriter(lengths, out, new ByteWriter());
    writer.begin('gram:of the');
    docs.forEach((d, i) => writer.add(d, freqs[i]!, [], 0));
    const { maxFreq, minLength } = writer.finish();
    const c = new BlockPostingsCursor(out.view(), 0, docs.length, maxFreq, minLength, null, 0, lengths);
    const read: number[][] = [];
    for (let d = c.nextDoc(); d !== NO_MORE_DOCS; d = c.nextDoc()) read.push([d, c.freq()]);
    assert.deepEqual(read, docs.map((d, i) => [d, freqs[i]]));
    // advancing into the block after an exception lands on the same docs
    const a = new BlockPostingsCursor(out.view(), 0, docs.length, maxFreq, minLength, null, 0, lengths);
    assert.equal(a.advance(docs[100]!), docs[100]);
    assert.equal(a.freq(), freqs[100]);
    return out.length;
  };
  const small = (i: number) => (i * 7) % 4; // 2 bits
  const ones = new Array<number>(BLOCK_SIZE).fill(1);
  const base = 2 + 16 * 2; // the two head bytes and 128 gaps of 2 bits; freqs of 1 take no bits

  assert.equal(write(Array.from({ length: BLOCK_SIZE }, (_, i) => small(i)), ones), base, 'no exception');
  const oneFar = Array.from({ length: BLOCK_SIZE }, (_, i) => (i === 40 ? 1000 : small(i)));
  assert.equal(write(oneFar, ones), base + 2, 'one gap of 10 bits: 8 high bits patched');
  const tooFar = Array.from({ length: BLOCK_SIZE }, (_, i) => (i === 40 ? 5000 : small(i)));
  assert.equal(write(tooFar, ones), 2 + 16 * 5 + 2, 'a gap of 13 bits: the width grows until 8 high bits hold the rest');
  const sevenFar = Array.from({ length: BLOCK_SIZE }, (_, i) => (i % 18 === 5 ? 300 : small(i)));
  assert.equal(write(sevenFar, ones), base + 7 * 2, 'seven exceptions');
  const eightFar = Array.from({ length: BLOCK_SIZE }, (_, i) => (i % 16 === 5 ? 300 : small(i)));
  assert.equal(write(eightFar, ones), 2 + 16 * 9, 'eight outliers: the run is as wide as its widest value');

  // values of 3 bits, seven of 4: patching saves 2 bytes, which a run of freqs takes and one of gaps
  // does not (a patched gap costs a pass over the block's docs as it is read)
  const nearly = Array.from({ length: BLOCK_SIZE }, (_, i) => (i % 18 === 5 ? 15 : i % 8));
  assert.equal(write(nearly, ones), 2 + 16 * 4, 'gaps that would save 2 bytes: plain');
  assert.equal(write(Array.from({ length: BLOCK_SIZE }, (_, i) => small(i)), nearly.map((v) => v + 1)), base + 16 * 3 + 7 * 2, 'freqs that save 2 bytes: patched');

  const gaps = Array.from({ length: BLOCK_SIZE }, (_, i) => small(i));
  const sevenFreqs = ones.map((f, i) => (i % 19 === 3 ? 256 : f));
  assert.equal(write(gaps, sevenFreqs), base + 7 * 2, 'freqs of 1 with seven of 256: no width, seven patches');
  const lastFreq = ones.map((f, i) => (i === BLOCK_SIZE - 1 ? 3 : f));
  assert.equal(write(gaps, lastFreq), base + 2, 'the last value patched');
  const firstBoth = Array.from({ length: BLOCK_SIZE }, (_, i) => (i === 0 ? 255 : small(i)));
  assert.equal(write(firstBoth, ones.map((f, i) => (i === 0 ? 90 : f))), base + 4, 'the first gap and freq patched');

  // blocks of every mix read back, each no larger than a plain frame of reference would be
  let seed = 5;
  const rand = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
  for (let round = 0; round < 300; round++) {
    const outliers = rand(12);
    const width = rand(10);
    const g = Array.from({ length: BLOCK_SIZE }, () => rand(1 << width));
    const f = Array.from({ length: BLOCK_SIZE }, () => 1 + rand(rand(4) === 0 ? 40 : 2));
    for (let k = 0; k < outliers; k++) {
      g[rand(BLOCK_SIZE)] = rand(1 << (width + rand(10)));
      f[rand(BLOCK_SIZE)] = 1 + rand(1 << rand(20));
    }
    const bits = (v: number) => 32 - Math.clz32(v);
    const plain = 2 + 16 * bits(Math.max(...g)) + 16 * bits(Math.max(...f) - 1);
    assert.ok(write(g, f) <= plain, `round ${round}`);
  }
});

test('a term none of whose documents was added writes nothing', () => {
  const out = new ByteWriter();
  const posOut = new ByteWriter();
  const writer = new TermPostingsWriter(new Uint32Array(4).fill(5), out, posOut);
  writer.begin('word');
  assert.equal(writer.finish().docFreq, 0);
  assert.equal(out.length + posOut.length, 0);
  // and the next term starts clean
  writer.begin('next');
  writer.add(2, 1, [3], 0);
  assert.deepEqual(writer.finish(), { docFreq: 1, maxFreq: 1, minLength: 5 });
});

test('positions copied as coded (a merge) write what coding them writes, escaped gaps included', () => {
  let seed = 5;
  // the generator's high bits: its low ones repeat with short periods
  const rand = (n: number) => Math.floor(((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296) * n);
  const maxDoc = 3000;
  const lengths = Uint32Array.from({ length: maxDoc }, () => 1 + rand(rand(8) === 0 ? 200_000 : 3000));
  const docs = Array.from({ length: maxDoc }, (_, d) => d).filter(() => rand(3) > 0);
  // clustered positions with an occasional far one: gaps whose Rice quotient escapes, some wider than 16 bits
  const positions = docs.map((d) => {
    const set = new Set<number>();
    const f = 1 + rand(rand(4) === 0 ? 400 : 6);
    const span = lengths[d]! + 16;
    while (set.size < Math.min(f, span)) set.add(rand(10) === 0 ? rand(span) : rand(Math.min(span, 40)));
    return [...set].sort((a, b) => a - b);
  });
  const write = (add: (w: TermPostingsWriter, i: number) => void) => {
    const out = new ByteWriter();
    const posOut = new ByteWriter();
    const w = new TermPostingsWriter(lengths, out, posOut);
    w.begin('word');
    docs.forEach((_, i) => add(w, i));
    const summary = w.finish();
    return { out: out.view().slice(), pos: posOut.view().slice(), summary };
  };
  const coded = write((w, i) => w.add(docs[i]!, positions[i]!.length, positions[i]!, 0));
  const escapes = docs.some((d, i) => positions[i]!.some((p, j) => p - (j > 0 ? positions[i]![j - 1]! : -1) - 1 >= 16 << riceParameter(lengths[d]!, positions[i]!.length)));
  assert.ok(escapes, 'the positions hold escaped gaps');
  const c = new BlockPostingsCursor(coded.out, 0, docs.length, coded.summary.maxFreq, coded.summary.minLength, coded.pos, 0, lengths);
  const range: CodedPositions = { data: new Uint8Array(0), from: 0, to: 0 };
  const copied = write((w, i) => {
    assert.equal(c.nextDoc(), docs[i]);
    assert.ok(c.codedPositions(range));
    w.addCoded(docs[i]!, c.freq(), range);
  });
  assert.deepEqual(copied, coded);

  // one term of two sources, as a merge reads it: the second's blocks start mid-block of the term written,
  // so the copied runs of codes are cut where the written blocks end, not only where a source's do
  const h = 301;
  const source = (from: number, to: number) => {
    const out = new ByteWriter();
    const posOut = new ByteWriter();
    const w = new TermPostingsWriter(lengths, out, posOut);
    w.begin('word');
    for (let i = from; i < to; i++) w.add(docs[i]!, positions[i]!.length, positions[i]!, 0);
    const s = w.finish();
    return new BlockPostingsCursor(out.view().slice(), 0, to - from, s.maxFreq, s.minLength, posOut.view().slice(), 0, lengths);
  };
  const sources = [source(0, h), source(h, docs.length)];
  const merged = write((w, i) => {
    const s = sources[i < h ? 0 : 1]!;
    assert.equal(s.nextDoc(), docs[i]);
    assert.ok(s.codedPositions(range));
    w.addCoded(docs[i]!, s.freq(), range);
  });
  assert.deepEqual(merged, coded);

  // a cursor that skipped documents (whose positions were never read) finds the next one's bits
  const skipping = new BlockPostingsCursor(coded.out, 0, docs.length, coded.summary.maxFreq, coded.summary.minLength, coded.pos, 0, lengths);
  for (let i = 0; i < docs.length; i += 1 + rand(300)) {
    assert.equal(skipping.advance(docs[i]!), docs[i]);
    if (rand(2) === 0) assert.deepEqual([...skipping.positions()], positions[i]);
    assert.ok(skipping.codedPositions(range));
    const one = new ByteWriter();
    const w = new TermPostingsWriter(lengths, new ByteWriter(), one);
    w.begin('word');
    w.addCoded(docs[i]!, positions[i]!.length, range);
    w.finish();
    const alone = new ByteWriter();
    const v = new TermPostingsWriter(lengths, new ByteWriter(), alone);
    v.begin('word');
    v.add(docs[i]!, positions[i]!.length, positions[i]!, 0);
    v.finish();
    assert.deepEqual(one.view(), alone.view(), `doc ${docs[i]}`);
    assert.deepEqual([...skipping.positions()], positions[i], 'positions() after codedPositions');
  }
});
