// The dedicated writer of SearchResponse against the generic encoder of @bufbuild/protobuf: for generated
// messages (empty and set optional fields, multi-byte text, cids and totals past 2^32 and 2^53, negative
// scores) the bytes are identical, and the generic decoder reads them back to the same message. The
// dedicated readers of Call and SearchRequest against the generic decoder: every message the generic
// encoder writes is read to the same message, and of any bytes, what they read at all is what the
// generic decoder reads (the rest they leave to it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { create, equals, fromBinary, toBinary } from '@bufbuild/protobuf';
import { CallSchema } from '../../src/rpc/gen/quarry/v1/call_pb.js';
import { Scope, SearchRequestSchema, SearchResponseSchema } from '../../src/rpc/gen/quarry/v1/search_pb.js';
import { decodeCall, decodeSearchRequest, encodeSearchResponse } from '../../src/rpc/search-wire.js';

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/** Text with lone surrogates too: both encoders write them as U+FFFD. */
const unpaired = fc.array(fc.oneof(fc.string({ maxLength: 3 }), fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c))), { maxLength: 20 }).map((p) => p.join(''));
const text = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 200 }), fc.constant(''), unpaired, fc.string({ unit: 'grapheme', minLength: 50, maxLength: 3000 }));
const u64 = fc.oneof(fc.constant(0n), fc.bigInt({ min: 0n, max: 2n ** 32n }), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }));
const i64 = fc.oneof(fc.constant(0n), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.bigInt({ min: 1n, max: 10n ** 9n }));

const result = fc.record({
  cid: u64, score: i64, title: text, doc: text,
  snippet: fc.option(text, { nil: undefined }), url: fc.option(text, { nil: undefined }), host: fc.option(text, { nil: undefined }),
});

const response = fc.record({
  query: text,
  scope: fc.oneof(fc.constantFrom(Scope.UNSPECIFIED, Scope.OWN, Scope.WEB, Scope.TRUSTED), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })),
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
    // a lone surrogate reads back as U+FFFD: only well-formed text comes back as it was
    const strings = [r.query, r.didYouMean ?? '', ...r.results.flatMap((x) => [x.title, x.doc, x.snippet ?? '', x.url ?? '', x.host ?? ''])];
    if (strings.every((x) => !LONE_SURROGATE.test(x))) assert.ok(equals(SearchResponseSchema, fromBinary(SearchResponseSchema, written), message));
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

const request = fc.record({
  q: text,
  scope: fc.oneof(fc.constantFrom(Scope.UNSPECIFIED, Scope.OWN, Scope.WEB, Scope.TRUSTED), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })),
  page: fc.oneof(fc.constant(0), fc.nat({ max: 100 }), fc.nat({ max: 2 ** 32 - 1 })),
});

test('the dedicated readers read what the generic encoder writes, as the generic decoder does', () => {
  fc.assert(fc.property(request, fc.string({ maxLength: 60 }), (r, procedure) => {
    const inner = toBinary(SearchRequestSchema, create(SearchRequestSchema, r));
    const generic = fromBinary(SearchRequestSchema, inner);
    const read = decodeSearchRequest(inner);
    // a scope or page past the readers' simple varints is the generic decoder's
    if (r.scope >= 0 && r.scope < 2 ** 28 && r.page < 2 ** 28) assert.ok(read !== undefined);
    if (read !== undefined) assert.ok(equals(SearchRequestSchema, read, generic));
    const bytes = toBinary(CallSchema, create(CallSchema, { procedure, message: inner }));
    const call = decodeCall(bytes);
    assert.ok(call !== undefined);
    assert.ok(equals(CallSchema, call, fromBinary(CallSchema, bytes)));
  }), { numRuns: 2000 });
});

/** Bytes near the usual form: valid fields, with repeated, unknown and truncated ones mixed in. */
const fieldBytes = fc.oneof(
  fc.tuple(fc.constantFrom(0x0a, 0x12, 0x1a, 0x08, 0x10, 0x18, 0x20, 0x22), fc.uint8Array({ maxLength: 12 })).map(([t, b]) => [t, b.length, ...b]),
  fc.tuple(fc.constantFrom(0x08, 0x10, 0x18), fc.nat({ max: 300 })).map(([t, v]) => (v < 128 ? [t, v] : [t, (v & 0x7f) | 0x80, v >> 7])),
  fc.uint8Array({ maxLength: 6 }).map((b) => [...b]),
  fc.constant([0x0a, 0x03, 0xff, 0xfe, 0x41]),
);
const nearMessages = fc.array(fieldBytes, { maxLength: 6 }).map((parts) => new Uint8Array(parts.flat()));

test('of any bytes, the dedicated readers read only what the generic decoder reads the same', () => {
  fc.assert(fc.property(nearMessages, (bytes) => {
    for (const [schema, read] of [[CallSchema, decodeCall], [SearchRequestSchema, decodeSearchRequest]] as const) {
      const mine = read(bytes);
      if (mine === undefined) continue;
      const generic = fromBinary(schema as typeof CallSchema, bytes);
      assert.ok(equals(schema as typeof CallSchema, mine as never, generic), `${schema.typeName} of ${Buffer.from(bytes).toString('hex')}`);
      assert.equal((generic as { $unknown?: unknown }).$unknown, undefined);
    }
  }), { numRuns: 20000 });
});
