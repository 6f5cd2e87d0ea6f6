/**
 * The term cache of postings read at their offsets: bounded (a term larger than an eighth of it is never
 * kept), a closed segment's terms dropped, its bound grown with the index unless one is given; and
 * postings read through no cache, a tiny one and the default one are the same, after merges too (the
 * cache never changes what a cursor returns).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { POSTINGS_CACHE_SHARE, TermBytesCache } from '../../../src/engine/index/segment-reader.js';
import { resolveIndexOptions } from '../../../src/engine/index/options.js';
import { Index, NO_MORE_DOCS } from '../../../src/engine/index/index.js';
import { tempDir } from './fixtures.js';

test('the term cache stays within its bound and drops a closed core', () => {
  const c = new TermBytesCache(8 * (100 + 64));
  const a = c.coreKey();
  const b = c.coreKey();
  c.set(a + 0, new Uint8Array(100));
  c.set(b + 0, new Uint8Array(100));
  c.set(a + 1, new Uint8Array(200)); // over an eighth: not kept
  assert.equal(c.get(a + 1), undefined);
  assert.equal(c.size, 2 * 164);
  c.drop(a);
  assert.equal(c.get(a + 0), undefined);
  assert.ok(c.get(b + 0) !== undefined);
  for (let k = 0; k < 20; k++) c.set(b + 2 + k, new Uint8Array(100));
  assert.ok(c.size <= c.maxBytes);
});

test('a growing term cache follows the open postings bytes up, never down; a given bound stays', () => {
  const grows = new TermBytesCache(1000, true);
  grows.fitTo(999 * POSTINGS_CACHE_SHARE);
  assert.equal(grows.maxBytes, 1000); // the least bound stands
  grows.fitTo(10_000 * POSTINGS_CACHE_SHARE + 1);
  assert.equal(grows.maxBytes, 10_001);
  grows.fitTo(100); // a merge's fewer bytes: what it replaced is dropped, the bound kept
  assert.equal(grows.maxBytes, 10_001);
  grows.set(grows.coreKey(), new Uint8Array(1_100)); // an eighth of the grown bound, over the least one's
  assert.equal(grows.size, 1_164);
  const fixed = new TermBytesCache(1000);
  fixed.fitTo(10_000 * POSTINGS_CACHE_SHARE);
  assert.equal(fixed.maxBytes, 1000);
  assert.equal(resolveIndexOptions({}).postingsCacheGrows, true);
  assert.equal(resolveIndexOptions({ postingsCacheBytes: 0 }).postingsCacheGrows, false);
  assert.equal(resolveIndexOptions({ postingsCacheBytes: 1 << 20 }).postingsCacheGrows, false);
});

test('postings through no term cache, a tiny one and the default are the same', async (t) => {
  const dir = tempDir(t);
  let seed = 11;
  const rand = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
  const words = Array.from({ length: 60 }, (_, i) => 'w' + i);
  {
    const index = await Index.open(dir, { mergeFactor: 2 });
    const w = await index.openWriter();
    for (let batch = 0; batch < 4; batch++) {
      for (let i = 0; i < 300; i++) w.upsert({ cid: BigInt(batch * 300 + i + 1), title: '', text: Array.from({ length: 1 + rand(40) }, () => words[rand(words.length) % (1 + rand(words.length))]).join(' ') });
      await w.commit();
    }
    await index.close();
  }
  const read = async (postingsCacheBytes: number | undefined): Promise<string[]> => {
    const index = await Index.open(dir, postingsCacheBytes === undefined ? {} : { postingsCacheBytes });
    const out: string[] = [];
    for (let round = 0; round < 2; round++) {
      for (const seg of index.snapshot().segments) {
        for (const word of words) {
          const c = seg.postings(word, { positions: true });
          if (c === undefined) continue;
          const got: string[] = [];
          for (let d = c.nextDoc(); d !== NO_MORE_DOCS; d = c.nextDoc()) got.push(`${d}:${Array.from(c.positions()).join(',')}`);
          out.push(`${seg.name} ${word} ${got.join(' ')}`);
        }
      }
    }
    await index.close();
    return out;
  };
  const none = await read(0);
  assert.ok(none.length > 0);
  assert.deepEqual(await read(512), none);
  assert.deepEqual(await read(undefined), none);
});
