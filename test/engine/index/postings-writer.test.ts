/**
 * The postings writer takes a term a document at a time and holds its compressed blocks, not its
 * postings: positions leave for their file between blocks. What it writes reads back through the
 * cursor as the documents, freqs and positions given, for terms of one doc, of a partial block, of
 * exactly full blocks and of many blocks, with and without positions.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ByteWriter } from '../../../src/engine/index/bytes.js';
import { TermPostingsWriter } from '../../../src/engine/index/postings-writer.js';
import { BlockPostingsCursor } from '../../../src/engine/index/postings-reader.js';
import { BLOCK_SIZE, NO_MORE_DOCS } from '../../../src/engine/index/types.js';

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
