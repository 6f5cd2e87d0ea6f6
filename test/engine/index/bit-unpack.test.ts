/**
 * The generated block unpackers: each width reads exactly what a bit-by-bit reader reads (MSB first,
 * from a byte boundary, 128 values), touches no byte past its 16 × width, and the checked-in file is what
 * its generator writes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { MAX_UNPACK_WIDTH, UNPACK } from '../../../src/engine/index/bit-unpack.js';
import { BLOCK_SIZE } from '../../../src/engine/index/index.js';

/** Value `i` of `width` bits from byte `at`, one bit at a time. */
function referenceValue(b: Uint8Array, at: number, width: number, i: number): number {
  let v = 0;
  for (let k = 0; k < width; k++) {
    const bit = at * 8 + i * width + k;
    v = v * 2 + ((b[bit >>> 3]! >>> (7 - (bit & 7))) & 1);
  }
  return v;
}

test('every width unpacks the 128 values a bit-by-bit reader reads, and reads no byte past them', () => {
  assert.equal(BLOCK_SIZE, 128);
  fc.assert(
    fc.property(fc.integer({ min: 1, max: MAX_UNPACK_WIDTH }), fc.integer({ min: 0, max: 9 }), fc.integer({ min: 0 }), (width, at, seed) => {
      const used = 16 * width;
      // the block's bytes, then bytes that would change a value if one were read
      const b = new Uint8Array(at + used + 8);
      let x = seed >>> 0;
      for (let i = 0; i < at + used; i++) b[i] = (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) >>> 24;
      const out = new Int32Array(BLOCK_SIZE).fill(-1);
      UNPACK[width]!(b, at, out);
      for (let i = 0; i < BLOCK_SIZE; i++) assert.equal(out[i], referenceValue(b, at, width, i), `width ${width}, value ${i}`);
      b.fill(0xff, at + used);
      const again = new Int32Array(BLOCK_SIZE);
      UNPACK[width]!(b, at, again);
      assert.deepEqual(again, out);
    }),
    { numRuns: 600 },
  );
  // all-ones values: the widest of each width, where a sign or a lost high bit would show
  for (let width = 1; width <= MAX_UNPACK_WIDTH; width++) {
    const out = new Int32Array(BLOCK_SIZE);
    UNPACK[width]!(new Uint8Array(16 * width).fill(0xff), 0, out);
    assert.ok(out.every((v) => v === 2 ** width - 1), `width ${width}`);
  }
});

test('the unpackers are what scripts/gen-bit-unpack.mjs writes', () => {
  const script = fileURLToPath(new URL('../../../scripts/gen-bit-unpack.mjs', import.meta.url));
  const r = spawnSync(process.execPath, [script, '--check'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
});
