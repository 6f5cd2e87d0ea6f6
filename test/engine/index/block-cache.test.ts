/**
 * The stored-text block cache: bounded by raw bytes across all readers of an index, least recently used
 * first out, a closed reader's blocks dropped; texts read through a tiny cache equal those read
 * through a large one (the cache never changes what a fetch returns); a merge's walk stays out of it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { IntBuffer } from '../../../src/engine/index/bytes.js';
import { BlockCache, StoredReader } from '../../../src/engine/index/store.js';
import { Index } from '../../../src/engine/index/index.js';
import { tempDir } from './fixtures.js';

const block = (n: number) => ({ raw: new Uint8Array(n), starts: new Int32Array(0), docs: 0 });

test('the block cache keeps at most maxBytes, evicts the least recently used, drops a closed reader', () => {
  const c = new BlockCache(300);
  const a = c.readerId();
  const b = c.readerId();
  const key = (r: number, k: number) => r * 2 ** 26 + k;
  c.set(key(a, 0), block(100));
  c.set(key(a, 1), block(100));
  c.set(key(b, 0), block(100));
  assert.equal(c.size, 300);
  assert.ok(c.get(key(a, 0)) !== undefined); // now the most recent
  c.set(key(b, 1), block(100)); // evicts a/1, the least recent
  assert.equal(c.get(key(a, 1)), undefined);
  assert.ok(c.get(key(a, 0)) !== undefined);
  assert.equal(c.size, 300);
  c.dropReader(b);
  assert.equal(c.size, 100);
  assert.equal(c.get(key(b, 0)), undefined);
  const tiny = new BlockCache(0); // keeps the last block only
  tiny.set(1, block(50));
  tiny.set(2, block(50));
  assert.equal(tiny.size, 50);
  assert.ok(tiny.get(2) !== undefined);
});

test('texts read through a zero-byte cache equal those through the default cache, in any order', async (t) => {
  for (const storedBlockBytes of [1024, 65536]) {
    const dir = tempDir(t);
    let seed = 7;
    const rand = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
    const texts = Array.from({ length: 400 }, (_, i) => `document ${i} ` + Array.from({ length: rand(300) }, () => 'w' + rand(500)).join(' '));
    {
      const index = await Index.open(dir, { storedBlockBytes });
      const w = await index.openWriter();
      texts.forEach((text, i) => w.upsert({ cid: BigInt(i + 1), title: `t${i}`, text }));
      await w.commit();
      await index.close();
    }
    // Early documents of a block come from a decompressed prefix; later ones then need the whole block.
    const order = [5, 0, 1, 2, 399, 150, 6, 5, 398, 40, 41, 120, 3, ...Array.from({ length: 60 }, () => rand(400))];
    for (const storedCacheBytes of [0, 4096, undefined]) {
      const index = await Index.open(dir, storedCacheBytes === undefined ? {} : { storedCacheBytes });
      const seg = index.snapshot().segments[0]!;
      for (const doc of order) assert.equal(seg.stored(doc).text, texts[doc], `doc ${doc}, cache ${storedCacheBytes}, block ${storedBlockBytes}`);
      for (let doc = 0; doc < texts.length; doc++) assert.equal(seg.stored(doc).text, texts[doc]);
      await index.close();
    }
  }
});

test("a merge's walk of the stored ranks reads every text without filling the shared cache or keeping the vocabulary", async (t) => {
  const dir = tempDir(t);
  const texts = Array.from({ length: 300 }, (_, i) => `doc ${i}: ` + Array.from({ length: 40 + (i % 70) }, (_, k) => `w${(i * 31 + k * 7) % 211}`).join(' ') + '.');
  {
    const index = await Index.open(dir, { storedBlockBytes: 1024 });
    const w = await index.openWriter();
    texts.forEach((text, i) => w.upsert({ cid: BigInt(i + 1), title: `t${i}`, text }));
    await w.commit();
    await index.close();
  }
  const sto = readdirSync(dir).find((f) => f.endsWith('.sto'))!;
  const cache = new BlockCache(1 << 20);
  const reader = new StoredReader(join(dir, sto), cache);
  t.after(() => reader.close());
  // a merge reads the vocabulary without the reader keeping it; a search's read keeps it, and a merge then shares it
  const unkept = reader.wordModel(false)!;
  assert.notEqual(reader.wordModel(false), unkept);
  const model = reader.wordModel()!;
  assert.equal(reader.wordModel(false), model);
  assert.deepEqual([model.size, model.token(0)], [unkept.size, unkept.token(0)]);
  const textOf = (ranks: Int32Array) => {
    let s = '';
    let prevWord = false;
    for (const r of ranks) {
      if (prevWord && model.isWord(r)) s += ' ';
      s += model.token(r);
      prevWord = model.isWord(r);
    }
    return s;
  };
  const ranks = new IntBuffer();
  // in order, as a merge walks them, then out of order: the same texts either way
  for (const doc of [...texts.keys(), 299, 0, 150, 151, 3]) {
    ranks.length = 0;
    reader.ranks(doc, model, ranks);
    assert.equal(textOf(ranks.view()), texts[doc], `doc ${doc}`);
  }
  assert.equal(cache.size, 0);
  assert.equal(reader.get(7), texts[7]);
  assert.ok(cache.size > 0);
});
