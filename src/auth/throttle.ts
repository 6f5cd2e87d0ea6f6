/**
 * Login throttling: failures counted per account name and per client address, each key locked out for a
 * growing delay once it passes its free allowance. A caller that is locked out gets 429 `rate_limited`
 * with `Retry-After` at `login/start`, before any OPAQUE work — we answer rather than sleep, so a flood
 * of attempts costs the server nothing and holds no sockets open.
 *
 * Account names are counted whether or not the account exists, so an unknown name is throttled exactly
 * like a real one. A login counts as a failure when it starts; a valid finish takes that failure back, so
 * a login that is started and never finished (the cheap way to probe) is a failure.
 *
 * State is in memory: a restart forgets it, which an attacker cannot cause from outside. The number of
 * keys tracked is bounded; the oldest are dropped first.
 */
import { RateLimitedError } from '../kernel/errors.js';

export interface ThrottleOptions {
  /** Failures per account name allowed before delays start. Default 5. */
  accountFreeFailures?: number;
  /** Failures per client address allowed before delays start (covers spraying many names). Default 20. */
  addressFreeFailures?: number;
  /** The first delay; each further failure doubles it. Default 2,000 ms. */
  baseDelayMs?: number;
  /** The longest delay. Default 15 minutes. */
  maxDelayMs?: number;
  /** A key with no failure for this long starts afresh. Default 1 hour. */
  forgetAfterMs?: number;
  /** Most keys tracked at once (each account name and address is one key). Default 100,000. */
  maxKeys?: number;
  now?: () => Date;
}

interface Entry { failures: number; lockedUntil: number; lastFailure: number }

export class LoginThrottle {
  readonly #entries = new Map<string, Entry>();
  readonly #accountFree: number;
  readonly #addressFree: number;
  readonly #base: number;
  readonly #max: number;
  readonly #forget: number;
  readonly #maxKeys: number;
  readonly #now: () => Date;

  constructor(options: ThrottleOptions = {}) {
    this.#accountFree = options.accountFreeFailures ?? 5;
    this.#addressFree = options.addressFreeFailures ?? 20;
    this.#base = options.baseDelayMs ?? 2_000;
    this.#max = options.maxDelayMs ?? 15 * 60_000;
    this.#forget = options.forgetAfterMs ?? 60 * 60_000;
    this.#maxKeys = options.maxKeys ?? 100_000;
    this.#now = options.now ?? (() => new Date());
  }

  /** Throws RateLimitedError when the account name or the address is locked out now. */
  check(account: string, address: string): void {
    const now = this.#now().getTime();
    let until = 0;
    for (const key of [`a:${account}`, `i:${address}`]) {
      const e = this.#live(key, now);
      if (e !== undefined && e.lockedUntil > now) until = Math.max(until, e.lockedUntil);
    }
    if (until > now) throw new RateLimitedError(Math.max(1, Math.ceil((until - now) / 1000)));
  }

  fail(account: string, address: string): void {
    const now = this.#now().getTime();
    this.#fail(`a:${account}`, this.#accountFree, now);
    this.#fail(`i:${address}`, this.#addressFree, now);
  }

  /** A valid finish: the account starts afresh; the address gets back the failure its start counted. */
  succeed(account: string, address: string): void {
    this.#entries.delete(`a:${account}`);
    const e = this.#entries.get(`i:${address}`);
    if (e !== undefined) {
      e.failures = Math.max(0, e.failures - 1);
      if (e.failures <= this.#addressFree) e.lockedUntil = 0;
    }
  }

  #live(key: string, now: number): Entry | undefined {
    const e = this.#entries.get(key);
    if (e !== undefined && now - e.lastFailure > this.#forget && e.lockedUntil <= now) {
      this.#entries.delete(key);
      return undefined;
    }
    return e;
  }

  #fail(key: string, free: number, now: number): void {
    let e = this.#live(key, now);
    if (e === undefined) {
      e = { failures: 0, lockedUntil: 0, lastFailure: now };
      if (this.#entries.size >= this.#maxKeys) {
        const oldest = this.#entries.keys().next().value;
        if (oldest !== undefined) this.#entries.delete(oldest);
      }
    } else {
      this.#entries.delete(key); // re-insert below: Map order then tracks recency for eviction
    }
    e.failures++;
    e.lastFailure = now;
    if (e.failures > free) {
      const delay = Math.min(this.#max, this.#base * 2 ** Math.min(30, e.failures - free - 1));
      e.lockedUntil = Math.max(e.lockedUntil, now + delay);
    }
    this.#entries.set(key, e);
  }
}
