// The one JSON serialization of the faces: bigints anywhere in a value come out as decimal strings, and a
// value without any is written exactly as JSON.stringify writes it (key order, escapes, undefined members
// left out, toJSON honoured).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toJson } from '../../src/kernel/json.js';

test('bigints become decimal strings, at any depth', () => {
  assert.equal(toJson({ cid: 18446744073709551615n }), '{"cid":"18446744073709551615"}');
  assert.equal(toJson({ v: 1, results: [{ cid: 7n, title: 'a' }, { cid: 2n ** 63n }] }), '{"v":1,"results":[{"cid":"7","title":"a"},{"cid":"9223372036854775808"}]}');
  assert.equal(toJson([1n, -2n]), '["1","-2"]');
});

test('a value without bigints is written as JSON.stringify writes it', () => {
  const value = { v: 1, q: 'caf\u00e9 \u2026 "quoted" \\ \n', skip: undefined, at: new Date(0), list: [1, null, 'x'], nested: { z: 1, a: 2 } };
  assert.equal(toJson(value), JSON.stringify(value));
});

test('a value JSON cannot hold still fails', () => {
  const circular: Record<string, unknown> = { cid: 1n };
  circular.self = circular;
  assert.throws(() => toJson(circular), TypeError);
});
