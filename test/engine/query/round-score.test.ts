/**
 * The scoring loops round each contribution with `roundScore` instead of `Math.round` (rank/bm25.ts):
 * it must give the very integers docs/ranking.md defines, on every value a contribution can take,
 * including halves, the doubles next to them and the powers of two where `x + 0.5` changes binade.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { roundScore } from '../../../src/engine/rank/bm25.js';

/** The double just below and just above `x`. */
function neighbours(x: number): [number, number] {
  const f = new Float64Array([x]);
  const i = new BigInt64Array(f.buffer);
  const v = i[0]!;
  i[0] = v - 1n;
  const below = f[0]!;
  i[0] = v + 1n;
  return [below, f[0]!];
}

test('roundScore equals Math.round at halves, their neighbours and binade edges', () => {
  const edges: number[] = [0, Number.MIN_VALUE, 0.25, 0.5, 1, 2 ** 31 - 1];
  for (let n = 0; n < 70_000; n += n < 64 ? 1 : 997) edges.push(n, n + 0.5);
  for (let e = -3; e < 31; e++) edges.push(2 ** e, 2 ** e - 0.5, 2 ** e + 0.5);
  let checked = 0;
  for (const x of edges) {
    for (const v of [x, ...neighbours(x)]) {
      if (!(v >= 0 && v < 2 ** 31 - 0.5)) continue; // not a contribution (NaN from 0's lower bits, negatives)
      assert.equal(roundScore(v), Math.round(v), `roundScore(${v})`);
      checked++;
    }
  }
  // the double just under one half, where x + 0.5 itself rounds up to 1
  assert.equal(roundScore(0.49999999999999994), 0);
  assert.ok(checked > 1000);
});

test('roundScore equals Math.round on contributions of any weight, tf and norm', () => {
  const contribution = fc.tuple(fc.double({ min: 0, max: 110_000, noNaN: true }), fc.integer({ min: 1, max: 10_000 }), fc.double({ min: 0.3, max: 1e6, noNaN: true }))
    .map(([weight, tf, norm]) => (weight * tf) / (tf + norm));
  fc.assert(fc.property(fc.oneof(contribution, fc.double({ min: 0, max: 2 ** 31 - 1, noNaN: true })), (v) => {
    const x = v + 0; // a contribution is never −0
    assert.equal(roundScore(x), Math.round(x));
  }), { numRuns: 20_000 });
});
