// The Connect wire form of the whole error catalogue, from the one table of src/http/errors.ts: each
// code's status, Connect code, message and headers, and the quarry.v1.ErrorDetail naming Quarry's code,
// the parameter at fault and the retry delay; internal errors never leak their message; the caller's own
// deadline answered as deadline_exceeded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fromBinary } from '@bufbuild/protobuf';
import * as errors from '../../src/kernel/errors.js';
import { ERROR_CODES } from '../../src/http/errors.js';
import { ErrorDetailSchema } from '../../src/rpc/gen/quarry/v1/call_pb.js';
import { errorReply, withDeadline } from '../../src/rpc/protocol.js';

// Connect's codes (connectrpc.com/docs/protocol#error-codes) and the status the catalogue gives each code.
const EXPECTED: Record<errors.ErrorCode, [string, number]> = {
  bad_query: ['invalid_argument', 400], bad_scope: ['invalid_argument', 400], bad_page: ['invalid_argument', 400],
  bad_cid: ['invalid_argument', 400], bad_request: ['invalid_argument', 400], unauthenticated: ['unauthenticated', 401],
  forbidden: ['permission_denied', 403], not_found: ['not_found', 404], unknown_target: ['not_found', 404],
  method_not_allowed: ['unimplemented', 405], conflict: ['aborted', 409], payload_too_large: ['resource_exhausted', 413],
  unsupported_media_type: ['invalid_argument', 415], rate_limited: ['resource_exhausted', 429], internal: ['internal', 500],
  not_implemented: ['unimplemented', 501], unavailable: ['unavailable', 503], deadline_exceeded: ['deadline_exceeded', 504],
};

const INSTANCES: errors.QuarryError[] = [
  new errors.BadQueryError('q is empty.'), new errors.BadScopeError('no'), new errors.BadPageError('no'), new errors.BadCidError('no'),
  new errors.BadRequestError('no', 'body'), new errors.UnauthenticatedError(), new errors.ForbiddenError('no'), new errors.NotFoundError('no', 'cid'),
  new errors.UnknownTargetError('zzz'), new errors.MethodNotAllowedError('PUT', '/x', ['POST']), new errors.ConflictError('locked'),
  new errors.PayloadTooLargeError(10), new errors.UnsupportedMediaTypeError('text/plain', 'application/proto'), new errors.RateLimitedError(3),
  new errors.InternalError('index corrupt at /secret'), new errors.NotImplementedError('later'), new errors.UnavailableError('later', 2),
  new errors.DeadlineExceededError(5),
];

test('every catalogue code has a Connect form: status, code, message, detail and headers', () => {
  assert.deepEqual(INSTANCES.map((e) => e.code).sort(), [...ERROR_CODES].sort(), 'one instance per catalogue code');
  for (const err of INSTANCES) {
    const [connect, status] = EXPECTED[err.code];
    const r = errorReply(err, { 'rpc-contract': 'sha256:x' });
    assert.equal(r.status, status, err.code);
    assert.equal(r.contentType, 'application/json');
    assert.equal(r.headers?.['rpc-contract'], 'sha256:x');
    const body = JSON.parse(String(r.body)) as { code: string; message: string; details: { type: string; value: string }[] };
    assert.equal(body.code, connect, err.code);
    const detail = fromBinary(ErrorDetailSchema, Buffer.from(body.details[0]!.value, 'base64'));
    assert.equal(body.details[0]!.type, 'quarry.v1.ErrorDetail');
    assert.equal(detail.code, err.code);
    if (err.code === 'internal') {
      assert.doesNotMatch(body.message, /secret|corrupt/);
      assert.equal(detail.param, '');
    } else {
      assert.equal(body.message, err.message);
      assert.equal(detail.param, err.param ?? '');
    }
  }
  const retry = (e: errors.QuarryError) => fromBinary(ErrorDetailSchema, Buffer.from(JSON.parse(String(errorReply(e, {}).body)).details[0].value, 'base64')).retryAfterSeconds;
  assert.equal(retry(new errors.RateLimitedError(3)), 3);
  assert.equal(errorReply(new errors.RateLimitedError(3), {}).headers?.['retry-after'], '3');
  assert.equal(retry(new errors.UnavailableError('later', 2)), 2);
  assert.equal(errorReply(new errors.UnauthenticatedError(), {}).headers?.['www-authenticate'], 'Bearer realm="quarry"');
  assert.equal(errorReply(new errors.MethodNotAllowedError('PUT', '/x', ['POST']), {}).headers?.allow, 'POST');
});

test('anything that is not a QuarryError is internal, with a generic message', () => {
  for (const thrown of [new Error('/secret/path'), new TypeError('x is undefined'), 'str', undefined]) {
    const body = JSON.parse(String(errorReply(thrown, {}).body));
    assert.equal(body.code, 'internal');
    assert.doesNotMatch(body.message, /secret|undefined|str/);
  }
});

test("a call that gives up at the caller's deadline is deadline_exceeded, not unavailable; one that fails earlier keeps its error", async () => {
  // The search budget is the sooner of the server's and the caller's deadline; cut at the caller's, the
  // engine says `unavailable`, but Connect's answer to the caller's own timeout is `deadline_exceeded`.
  const cutAtDeadline = (deadline: number | undefined) => {
    while (Date.now() < deadline!) { /* the engine's work, up to its budget */ }
    return Promise.reject(new errors.UnavailableError('The search did not finish within its time budget.', 1));
  };
  await assert.rejects(withDeadline(5, cutAtDeadline), (err: unknown) => errors.QuarryError.is(err) && err.code === 'deadline_exceeded');
  const failsAtOnce = () => Promise.reject(new errors.UnavailableError('The search pool is closed.', 1));
  await assert.rejects(withDeadline(60_000, failsAtOnce), (err: unknown) => errors.QuarryError.is(err) && err.code === 'unavailable');
  assert.equal(await withDeadline(60_000, async (deadline) => typeof deadline), 'number');
  assert.equal(await withDeadline(undefined, async (deadline) => deadline), undefined);
});
