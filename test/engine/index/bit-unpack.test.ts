/**
 * The generated block unpackers: for each width, the doc ids and freqs they give are those a bit-by-bit
 * reader's values make (MSB first, from a byte boundary, 128 values: prev + gap + 1, freq − 1 + 1), no
 * byte past the 16 × width they own changes them, and the checked-in file is what its generator writes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { MAX_UNPACK_WIDTH, UNPACK_DOCS, UNPACK_FREQS } from '../../../src/engine/index/bit-unpack.js';
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

/** What the unpackers of `width` give for the block at byte `at` of `b` after doc `prev`. */
function unpacked(b: Uint8Array, at: number, width: number, prev: number): { docs: Int32Array; last: number; freqs: Int32Array } {
  const docs = new Int32Array(BLOCK_SIZE).fill(-1);
  const freqs = new Int32Array(BLOCK_SIZE).fill(-1);
  const last = UNPACK_DOCS[width]!(b, at, docs, prev);
  UNPACK_FREQS[width]!(b, at, freqs);
  return { docs, last, freqs };
}

test('every width gives the doc ids and freqs a bit-by-bit reader gives, and reads no byte past its block', () => {
  assert.equal(BLOCK_SIZE, 128);
  fc.assert(
    fc.property(fc.integer({ min: 1, max: MAX_UNPACK_WIDTH }), fc.integer({ min: 0, max: 9 }), fc.integer({ min: -1, max: 1 << 20 }), fc.integer({ min: 0 }), (width, at, prev, seed) => {
      const used = 16 * width;
      // the block's bytes, then bytes that would change a value if one were read
      const b = new Uint8Array(at + used + 8);
      let x = seed >>> 0;
      for (let i = 0; i < at + used; i++) b[i] = (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) >>> 24;
      const got = unpacked(b, at, width, prev);
      let doc = prev;
      for (let i = 0; i < BLOCK_SIZE; i++) {
        const v = referenceValue(b, at, width, i);
        doc += v + 1;
        assert.equal(got.docs[i], doc, `width ${width}, doc ${i}`);
        assert.equal(got.freqs[i], v + 1, `width ${width}, freq ${i}`);
      }
      assert.equal(got.last, doc);
      b.fill(0xff, at + used);
      assert.deepEqual(unpacked(b, at, width, prev), got);
    }),
    { numRuns: 600 },
  );
  // all-ones values: the widest of each width, where a sign or a lost high bit would show
  for (let width = 1; width <= MAX_UNPACK_WIDTH; width++) {
    const { freqs, last } = unpacked(new Uint8Array(16 * width).fill(0xff), 0, width, -1);
    assert.ok(freqs.every((v) => v === 2 ** width), `width ${width}`);
    assert.equal(last, BLOCK_SIZE * 2 ** width - 1, `width ${width}`);
  }
});

test('the unpackers are what scripts/gen-bit-unpack.mjs writes', () => {
  const script = fileURLToPath(new URL('../../../scripts/gen-bit-unpack.mjs', import.meta.url));
  const r = spawnSync(process.execPath, [script, '--check'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
});
