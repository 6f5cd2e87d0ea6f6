/**
 * Bad input to the engine library raises typed errors that the faces map to CONTRACT §1 (bad_query,
 * bad_page, bad_cid, bad_request) and never anything untyped; arbitrary strings never crash or hang.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { QuarryError } from '../../../src/kernel/errors.js';
import { MAX_CID, parseCid } from '../../../src/kernel/cid.js';
import { createSearcher } from '../../../src/engine/query/searcher.js';
import { MAX_QUERY_BYTES } from '../../../src/engine/query/parser.js';
import { MemorySegment } from '../support/memory-segment.js';

const searcher = createSearcher([new MemorySegment('s', [
  { cid: 1n, title: 'alpha beta', text: 'gamma "quoted" delta', host: 'a.com' },
  { cid: 2n, title: 'beta', text: 'site: + - alpha', host: 'b.a.com' },
])], 3);

const code = (f: () => unknown): string => {
  try { f(); return 'ok'; } catch (e) { assert.ok(QuarryError.is(e), `untyped error: ${String(e)}`); return e.code; }
};

test('bad pages are bad_page: negative, fractional, NaN, non-numbers, past the deep-paging bound', () => {
  for (const page of [-1, 1.5, NaN, Infinity, '1', null, 500, 10_000]) {
    assert.equal(code(() => searcher.search('alpha', { page: page as number })), 'bad_page', String(page));
  }
  assert.equal(code(() => searcher.search('alpha', { page: 499 })), 'ok');
  assert.deepEqual(searcher.search('alpha', { page: 499 }).hits, []);
  assert.equal(searcher.search('alpha', { page: 499 }).total, 2);
});

test('bad pageSize is bad_request; bad queries are bad_query', () => {
  for (const pageSize of [0, -3, 2.5, NaN, 10_001]) assert.equal(code(() => searcher.search('alpha', { pageSize })), 'bad_request');
  for (const q of ['', ' ', undefined, null, 7, 'a'.repeat(MAX_QUERY_BYTES + 1)]) assert.equal(code(() => searcher.search(q as string)), 'bad_query');
  for (const p of ['', '   ', undefined]) assert.equal(code(() => searcher.suggest(p as string)), 'bad_query');
  assert.equal(code(() => searcher.search('alpha', null as never)), 'ok');
});

test('parseCid accepts exactly 1–19 digits without a leading zero, up to 2^63−1', () => {
  assert.equal(parseCid('0'), 0n);
  assert.equal(parseCid('123'), 123n);
  assert.equal(parseCid(MAX_CID.toString()), MAX_CID);
  for (const bad of ['', '01', '-1', '+1', '1.0', ' 1', '1 ', 'abc', '12345678901234567890', (MAX_CID + 1n).toString(), '１２', 5, null]) {
    assert.equal(code(() => parseCid(bad)), 'bad_cid', String(bad));
  }
});

test('an empty index answers every query with nothing', () => {
  const empty = createSearcher([], 0);
  assert.deepEqual(empty.search('alpha "beta" site:a.com'), { total: 0, hits: [], phraseExact: true });
  assert.deepEqual(empty.suggest('al'), []);
  assert.deepEqual(empty.stats(), { docs: 0, segments: 0, generation: 0, bytes: 0 });
});

test('arbitrary strings and pages never raise anything but typed errors', () => {
  const qArb = fc.oneof(fc.string({ maxLength: 80 }), fc.string({ unit: 'grapheme', maxLength: 40 }), fc.stringMatching(/^[+\-" a-z:.]{0,40}$/));
  fc.assert(fc.property(qArb, fc.oneof(fc.integer({ min: -2, max: 600 }), fc.double(), fc.constant(undefined)), (q, page) => {
    const c = code(() => searcher.search(q, { page }));
    assert.ok(['ok', 'bad_query', 'bad_page'].includes(c), c);
    const sc = code(() => searcher.suggest(q));
    assert.ok(['ok', 'bad_query'].includes(sc), sc);
  }), { numRuns: 500 });
});
