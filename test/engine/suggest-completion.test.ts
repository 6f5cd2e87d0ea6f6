// Completion (CONTRACT §2 /api/suggest) from the surface dictionary: range by binary search, top-k by df
// through the range-argmax tree, against a naive filter-and-sort, on random dictionaries.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Completion } from '../../src/engine/suggest/index.js';
import { SurfaceDictionary } from '../../src/engine/surface/index.js';

// one-byte, two-byte and supplementary-plane characters: the dictionary packs forms as UTF-16 code units
const UNITS = ['a', 'b', 'c', 'é', 'z', '中', '😀'];
const word = fc.string({ unit: fc.constantFrom(...UNITS), minLength: 1, maxLength: 6 });

/** complete() on the dictionary of `o` (form → df) against filtering by prefix, sorting by df then alphabetically. */
function completesAsNaive(o: Record<string, number>, prefix: string, limit: number): void {
  const entries = Object.entries(o).sort((x, y) => (x[0] < y[0] ? -1 : 1));
  const dict = new Completion(SurfaceDictionary.merge([entries]));
  const want = entries.filter(([f]) => f.startsWith(prefix))
    .sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1)).slice(0, limit).map(([f]) => f);
  assert.deepEqual(dict.complete(prefix, limit), want);
}

test('complete() equals filter by prefix, sort by df then alphabetically, cut to limit', () => {
  fc.assert(fc.property(
    fc.dictionary(word, fc.integer({ min: 1, max: 5 }), { minKeys: 0, maxKeys: 400 }),
    fc.string({ unit: fc.constantFrom(...UNITS), maxLength: 3 }),
    fc.integer({ min: 0, max: 30 }),
    completesAsNaive), { numRuns: 300 });
});

test('complete() over hundreds of forms equals the naive order: ranges span the tree\'s blocks and their ends', () => {
  // fast-check keeps generated dictionaries small by default; these are large enough that a prefix's
  // range covers whole blocks of the argmax tree and partial ones at both ends, with tied dfs and distinct ones
  fc.assert(fc.property(
    fc.dictionary(word, fc.oneof(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 100_000 })), { minKeys: 100, maxKeys: 1500 }),
    fc.string({ unit: fc.constantFrom(...UNITS), maxLength: 1 }),
    fc.integer({ min: 1, max: 40 }),
    completesAsNaive), { numRuns: 150 });
});

test('merge sums the dfs of a form across segments', () => {
  const dict = SurfaceDictionary.merge([
    [['apple', 2], ['apply', 5]],
    [['apple', 4], ['banana', 1]],
    [],
    [['apple', 1], ['applet', 7]],
  ]);
  assert.equal(dict.size, 4);
  assert.equal(dict.df('apple'), 7);
  assert.equal(dict.df('apply'), 5);
  assert.equal(dict.df('cherry'), 0);
  const completion = new Completion(dict);
  assert.deepEqual(completion.complete('app'), ['apple', 'applet', 'apply']);
  assert.deepEqual(completion.complete('apple'), ['apple', 'applet']);
  assert.deepEqual(completion.complete('x'), []);
});

test('default limit is 10 and ties go alphabetically', () => {
  const forms = Array.from({ length: 30 }, (_, i) => [`w${String(i).padStart(2, '0')}`, i % 3] as [string, number]);
  const got = new Completion(SurfaceDictionary.merge([forms])).complete('w');
  assert.equal(got.length, 10);
  assert.deepEqual(got, ['w02', 'w05', 'w08', 'w11', 'w14', 'w17', 'w20', 'w23', 'w26', 'w29']);
});

test('a form of hundreds of thousands of characters is packed and given back whole', () => {
  // a token may be a megabyte of letters: making it a string must not pass each code unit on the stack
  const long = `z${'é'.repeat(150_000)}😀${'q'.repeat(150_000)}`;
  const dict = SurfaceDictionary.merge([[['apple', 2], [long, 3]]]);
  dict.verify();
  assert.equal(dict.df(long), 3);
  assert.deepEqual(new Completion(dict).complete('z'), [long]);
  assert.deepEqual(new Completion(dict).complete(''), [long, 'apple']);
});
