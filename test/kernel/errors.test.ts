// Errors crossing a thread as data (`errorToWire`/`errorFromWire`): each comes back as the same kind of
// QuarryError with the fields a face turns into its answer, and a bug keeps the stack of where it was
// thrown, for the log on the other side.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BadRequestError, errorFromWire, errorToWire, InternalError, PayloadTooLargeError, QuarryError, RateLimitedError, UnavailableError,
} from '../../src/kernel/errors.js';

const across = (err: unknown): QuarryError => errorFromWire(structuredClone(errorToWire(err)));

test('a QuarryError comes back as the same kind, with its parameter, limit and retry hint', () => {
  const bad = across(new BadRequestError('digest must be sha256.', 'digest'));
  assert.equal(bad.code, 'bad_request');
  assert.equal(bad.message, 'digest must be sha256.');
  assert.equal(bad.param, 'digest');

  const big = across(new PayloadTooLargeError(1024));
  assert.ok(big instanceof PayloadTooLargeError);
  assert.equal(big.limit, 1024);

  const busy = across(new UnavailableError('Restarting.', 7));
  assert.ok(busy instanceof UnavailableError);
  assert.equal(busy.retryAfterSeconds, 7);

  const limited = across(new RateLimitedError(3));
  assert.ok(limited instanceof RateLimitedError);
  assert.equal(limited.retryAfterSeconds, 3);
});

test('a bug comes back as internal, with the stack of where it was thrown', () => {
  function deepInThePlane(): never { throw new TypeError('x is undefined'); }
  let thrown: Error | undefined;
  try { deepInThePlane(); } catch (err) { thrown = err as Error; }
  const back = across(thrown);
  assert.ok(back instanceof InternalError);
  assert.equal(back.message, 'x is undefined');
  assert.match(back.stack ?? '', /deepInThePlane/);
  assert.equal(across('a string').code, 'internal');
});
