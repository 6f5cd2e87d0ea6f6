// A segment's terms and surface forms are written in ascending UTF-16 order (the term dictionary's binary
// searches and the merges' walks depend on it): the radix order must be exactly the comparator's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { orderOfStrings } from '../../../src/engine/index/string-order.js';

function reference(strings: readonly string[]): number[] {
  return strings.map((_, i) => i).sort((a, b) => (strings[a]! < strings[b]! ? -1 : strings[a]! > strings[b]! ? 1 : a - b));
}

// low units, units at and around the 10-bit digits' shared top (1021–1023), two-byte and surrogate units
const UNITS = ['a', 'b', 'z', '0', ' ', '\u0000', '\u03fd', '\u03fe', '\u03ff', 'Ѐ', '中', '\ud83d', '\ude00', '\uffff'];
const word = (units: readonly string[]) => fc.array(fc.constantFrom(...units), { maxLength: 9 }).map((u) => u.join(''));

test('any strings, duplicates and empty ones included, come in the comparator\'s order, ties by index', () => {
  fc.assert(fc.property(fc.array(word(UNITS), { maxLength: 300 }), (strings) => {
    assert.deepEqual(Array.from(orderOfStrings(strings)), reference(strings));
  }), { numRuns: 300 });
  // few units, so that groups tying on several digits are common
  fc.assert(fc.property(fc.array(word([' ', 'a', '\u03fe', '\u03ff', 'Ѐ']), { minLength: 200, maxLength: 2000 }), (strings) => {
    assert.deepEqual(Array.from(orderOfStrings(strings)), reference(strings));
  }), { numRuns: 60 });
});

test('large groups sharing long prefixes are ordered through several digits', () => {
  const strings: string[] = [];
  let x = 7;
  const next = () => (x = (x * 1103515245 + 12345) % 2147483648);
  for (let i = 0; i < 20_000; i++) {
    const tail = Array.from({ length: next() % 6 }, () => UNITS[next() % UNITS.length]).join('');
    strings.push(['', 'inter', 'international', 'internationalisation'][next() % 4] + tail);
  }
  assert.deepEqual(Array.from(orderOfStrings(strings)), reference(strings));
});
