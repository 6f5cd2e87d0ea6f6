// The byte-bounded LRU behind the term, block and bitset caches: bounded, evicts the least recently used,
// and an entry that keeps being read stays however many others pass through.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { LruCache } from '../../../src/engine/index/lru.js';

const unit = () => new LruCache<string>(10, () => 1);

test('the least recently used entry goes first, a read counting as a use', () => {
  const c = unit();
  for (let k = 0; k < 10; k++) c.set(k, `v${k}`);
  assert.equal(c.get(0), 'v0'); // the oldest, read: now the newest
  c.set(10, 'v10');
  assert.equal(c.get(1), undefined, 'the least recent went');
  assert.equal(c.get(0), 'v0');
  c.set(11, 'v11');
  assert.equal(c.get(2), undefined);
  assert.equal(c.size, 10);
});

test('an entry read between insertions survives any number of them; the others leave in order', () => {
  const c = unit();
  c.set(-1, 'hot');
  for (let k = 0; k < 10_000; k++) {
    assert.equal(c.get(-1), 'hot', `after ${k} insertions`);
    c.set(k, 'cold');
    if (k >= 9) assert.equal(c.get(k - 9), undefined, `${k - 9} evicted`);
  }
});

test('property: the bytes held never pass the bound (one entry may), and what is kept is what was set last', () => {
  fc.assert(fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 1, max: 40 }), fc.boolean())), (ops) => {
    const c = new LruCache<number>(64, (v) => v);
    const last = new Map<number, number>();
    for (const [key, bytes, read] of ops) {
      if (read) {
        const v = c.get(key);
        if (v !== undefined) assert.equal(v, last.get(key));
      } else {
        c.set(key, bytes);
        last.set(key, bytes);
        assert.ok(c.size <= 64 || c.size === bytes, `${c.size} bytes held`);
        assert.equal(c.get(key), bytes, 'what was just set is there');
      }
    }
  }));
});

test('dropRange drops the keys in the range and their bytes', () => {
  const c = new LruCache<number>(1000, (v) => v);
  for (let k = 0; k < 10; k++) c.set(k, 10);
  c.dropRange(3, 7);
  assert.equal(c.size, 60);
  for (let k = 0; k < 10; k++) assert.equal(c.get(k), k >= 3 && k < 7 ? undefined : 10);
});
