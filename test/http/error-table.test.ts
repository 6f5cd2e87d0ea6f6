// The one table from error code to wire codes: every code of the catalogue has an HTTP status, a JSON-RPC
// code and a Connect code; the CONTRACT §1 body and the headers some codes need; internal errors never
// leak their message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as errors from '../../src/kernel/errors.js';
import { ERROR_CODES, WIRE_CODES, httpError } from '../../src/http/errors.js';

const expected: Record<errors.ErrorCode, number> = {
  bad_query: 400, bad_scope: 400, bad_page: 400, bad_cid: 400, bad_request: 400, unauthenticated: 401,
  forbidden: 403, not_found: 404, unknown_target: 404, method_not_allowed: 405, conflict: 409,
  payload_too_large: 413, unsupported_media_type: 415, rate_limited: 429, internal: 500, not_implemented: 501,
  unavailable: 503, deadline_exceeded: 504,
};

test('every error code maps to its CONTRACT §1 status and has a Connect code', () => {
  assert.deepEqual([...ERROR_CODES].sort(), Object.keys(expected).sort());
  for (const code of ERROR_CODES) {
    assert.equal(WIRE_CODES[code].status, expected[code], code);
    assert.match(WIRE_CODES[code].connect, /^[a-z_]+$/, code);
  }
});

test('each catalogue class becomes its status, body and headers', () => {
  const cases: [errors.QuarryError, number, Record<string, string>, string | undefined][] = [
    [new errors.BadQueryError('q is empty.'), 400, {}, 'q'],
    [new errors.BadScopeError('no'), 400, {}, 'scope'],
    [new errors.BadPageError('no'), 400, {}, 'page'],
    [new errors.BadCidError('no'), 400, {}, 'cid'],
    [new errors.BadRequestError('no', 'body'), 400, {}, 'body'],
    [new errors.UnauthenticatedError(), 401, { 'www-authenticate': 'Bearer realm="quarry"' }, undefined],
    [new errors.ForbiddenError('no'), 403, {}, undefined],
    [new errors.NotFoundError('no', 'cid'), 404, {}, 'cid'],
    [new errors.UnknownTargetError('zzz'), 404, {}, 'target'],
    [new errors.MethodNotAllowedError('PUT', '/x', ['GET', 'HEAD']), 405, { allow: 'GET, HEAD' }, undefined],
    [new errors.ConflictError('no'), 409, {}, undefined],
    [new errors.PayloadTooLargeError(10), 413, {}, undefined],
    [new errors.UnsupportedMediaTypeError('text/plain', 'application/json'), 415, {}, undefined],
    [new errors.RateLimitedError(3), 429, { 'retry-after': '3' }, undefined],
    [new errors.UnavailableError('later', 2), 503, { 'retry-after': '2' }, undefined],
  ];
  for (const [err, status, headers, param] of cases) {
    const e = httpError(err);
    assert.equal(e.status, status, err.code);
    assert.deepEqual(e.headers, headers, err.code);
    assert.equal(e.body.v, 1);
    assert.equal(e.body.error.code, err.code);
    assert.equal(e.body.error.message, err.message);
    assert.equal(e.body.error.param, param, err.code);
    assert.equal(e.internal, false);
  }
});

test('anything else is 500 internal with a generic message (the original is never sent)', () => {
  for (const thrown of [new Error('/secret/path failed'), new TypeError('x is undefined'), 'a string', undefined, new errors.InternalError('index corrupt at /data/x')]) {
    const e = httpError(thrown);
    assert.equal(e.status, 500);
    assert.equal(e.internal, true);
    assert.equal(e.body.error.code, 'internal');
    assert.doesNotMatch(e.body.error.message, /secret|undefined|string|corrupt/);
    assert.equal(e.body.error.param, undefined);
  }
});
