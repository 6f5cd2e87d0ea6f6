// The token bucket behind CONTRACT §1's rate limit, on a clock the test moves: a burst, then the rate;
// Retry-After is the whole seconds until the next token; buckets are per key; 0 disables; idle buckets
// are forgotten without changing any answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RateLimiter } from '../../src/http/rate-limiter.js';

function limiter(ratePerSecond: number, burst: number) {
  let now = 0;
  const rl = new RateLimiter({ ratePerSecond, burst, now: () => now });
  return { rl, advance: (ms: number) => { now += ms; } };
}

test('a burst of `burst` requests passes, the next waits for the rate', () => {
  const { rl, advance } = limiter(2, 3);
  assert.deepEqual([rl.take('a'), rl.take('a'), rl.take('a')], [0, 0, 0]);
  assert.equal(rl.take('a'), 1, 'half a second to the next token rounds up to 1 s');
  advance(500);
  assert.equal(rl.take('a'), 0);
  assert.equal(rl.take('a'), 1);
  advance(10_000);
  assert.deepEqual([rl.take('a'), rl.take('a'), rl.take('a'), rl.take('a')], [0, 0, 0, 1], 'refill stops at the burst');
});

test('Retry-After is the whole seconds until a token is back', () => {
  const { rl } = limiter(0.1, 1);
  assert.equal(rl.take('k'), 0);
  assert.equal(rl.take('k'), 10);
});

test('keys have separate buckets', () => {
  const { rl } = limiter(1, 1);
  assert.equal(rl.take('cap:a'), 0);
  assert.equal(rl.take('cap:b'), 0);
  assert.equal(rl.take('ip:127.0.0.1'), 0);
  assert.equal(rl.take('cap:a'), 1);
});

test('rate 0 disables limiting', () => {
  const { rl } = limiter(0, 1);
  assert.equal(rl.enabled, false);
  for (let i = 0; i < 1000; i++) assert.equal(rl.take('a'), 0);
});

test('sweeping forgets only full buckets: answers are the same as without sweeping', () => {
  const { rl, advance } = limiter(1, 2);
  assert.equal(rl.take('busy'), 0);
  assert.equal(rl.take('busy'), 0);
  for (let i = 0; i < 2000; i++) rl.take(`idle-${i}`); // triggers sweeps
  assert.equal(rl.take('busy'), 1, 'the busy bucket was not reset by a sweep');
  advance(5000);
  assert.equal(rl.take('idle-1'), 0);
});
