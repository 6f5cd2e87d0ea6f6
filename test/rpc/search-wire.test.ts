// The dedicated writer of SearchResponse against the generic encoder of @bufbuild/protobuf: for generated
// messages (empty and set optional fields, multi-byte text, cids and totals past 2^32 and 2^53, negative
// scores) the bytes are identical, and the generic decoder reads them back to the same message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { create, equals, fromBinary, toBinary } from '@bufbuild/protobuf';
import { Scope, SearchResponseSchema } from '../../src/rpc/gen/quarry/v1/search_pb.js';
import { encodeSearchResponse } from '../../src/rpc/search-wire.js';

const text = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 200 }), fc.constant(''));
const u64 = fc.oneof(fc.constant(0n), fc.bigInt({ min: 0n, max: 2n ** 32n }), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }));
const i64 = fc.oneof(fc.constant(0n), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.bigInt({ min: 1n, max: 10n ** 9n }));

const result = fc.record({
  cid: u64, score: i64, title: text, doc: text,
  snippet: fc.option(text, { nil: undefined }), url: fc.option(text, { nil: undefined }), host: fc.option(text, { nil: undefined }),
});

const response = fc.record({
  query: text,
  scope: fc.constantFrom(Scope.UNSPECIFIED, Scope.OWN, Scope.WEB, Scope.TRUSTED),
  page: fc.oneof(fc.constant(0), fc.nat({ max: 2 ** 32 - 1 })),
  total: u64,
  nresults: fc.oneof(fc.constant(0), fc.nat({ max: 2 ** 32 - 1 })),
  results: fc.array(result, { maxLength: 25 }),
  phraseExact: fc.option(fc.boolean(), { nil: undefined }),
  didYouMean: fc.option(text, { nil: undefined }),
});

/** The init without its undefined members: `create` treats an absent optional field as unset. */
function init<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

test('the dedicated SearchResponse writer writes the canonical bytes of the generic encoder', () => {
  fc.assert(fc.property(response, (r) => {
    const message = create(SearchResponseSchema, init({ ...r, results: r.results.map(init) }));
    const expected = toBinary(SearchResponseSchema, message);
    const written = encodeSearchResponse(message);
    assert.deepEqual(new Uint8Array(written), expected);
    assert.ok(equals(SearchResponseSchema, fromBinary(SearchResponseSchema, written), message));
  }), { numRuns: 2000 });
});

test('a typical page: twenty results with snippets, ids past 2^53', () => {
  const message = create(SearchResponseSchema, {
    query: 'héllo wörld', scope: Scope.WEB, page: 3, total: 9_007_199_254_740_993n, nresults: 20, phraseExact: false,
    results: Array.from({ length: 20 }, (_, i) => ({
      cid: 2n ** 63n + BigInt(i), score: BigInt(1_000_000 - i), title: `Title ${i} — ünïcode`, snippet: `a <b>snippet</b> ${'x'.repeat(i * 13)}`,
      doc: `/api/doc?cid=${i}&scope=web`, url: `https://example.org/${i}`, host: 'example.org',
    })),
  });
  assert.deepEqual(new Uint8Array(encodeSearchResponse(message)), toBinary(SearchResponseSchema, message));
});
