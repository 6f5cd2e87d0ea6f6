/**
 * Per-client request rate limiting (CONTRACT §1): a token bucket per client key (capability id, else IP
 * address) holding up to `burst` tokens, refilled at `ratePerSecond`. A request takes one token; with none
 * left it is refused with the seconds until one is back (the `Retry-After` value). A full bucket is the
 * same as no bucket, so full ones are swept away and memory stays bounded by the clients active in the
 * last `burst / rate` seconds.
 */

interface Bucket { tokens: number; at: number }

export interface RateLimiterOptions {
  /** Tokens added per second. 0 disables limiting (every `take` succeeds). */
  ratePerSecond: number;
  /** Bucket size, at least 1. */
  burst: number;
  /** Clock in milliseconds; tests may pass their own. */
  now?: () => number;
}

export class RateLimiter {
  readonly #rate: number;
  readonly #burst: number;
  readonly #now: () => number;
  readonly #buckets = new Map<string, Bucket>();
  #takesSinceSweep = 0;

  constructor(options: RateLimiterOptions) {
    this.#rate = options.ratePerSecond;
    this.#burst = Math.max(1, options.burst);
    this.#now = options.now ?? (() => performance.now());
  }

  get enabled(): boolean { return this.#rate > 0; }

  /** Takes a token for `key`: 0 when allowed, else the whole seconds (≥ 1) until a token is available. */
  take(key: string): number {
    if (this.#rate <= 0) return 0;
    const now = this.#now();
    if (++this.#takesSinceSweep >= 1024) this.#sweep(now);
    let b = this.#buckets.get(key);
    if (!b) {
      b = { tokens: this.#burst, at: now };
      this.#buckets.set(key, b);
    } else {
      b.tokens = Math.min(this.#burst, b.tokens + ((now - b.at) / 1000) * this.#rate);
      b.at = now;
    }
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / this.#rate));
  }

  #sweep(now: number): void {
    this.#takesSinceSweep = 0;
    for (const [key, b] of this.#buckets) {
      if (b.tokens + ((now - b.at) / 1000) * this.#rate >= this.#burst) this.#buckets.delete(key);
    }
  }
}
