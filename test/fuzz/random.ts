/**
 * A seeded source of hostile values for the fuzz suite: the same seed gives the same inputs, so a
 * failure is replayed with `npm run fuzz -- --seed S --count N` (and `--only I` for one input).
 */

/** mulberry32: small, fast, and good enough to pick inputs (not for anything secret). */
export class Random {
  #state: number;
  constructor(seed: number) { this.#state = seed >>> 0; }

  /** A float in [0, 1). */
  next(): number {
    let t = (this.#state = (this.#state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number { return Math.floor(this.next() * n); }
  chance(p: number): boolean { return this.next() < p; }
  pick<T>(items: readonly T[]): T { return items[this.int(items.length)]!; }

  /** Picks by weight: `[[weight, value], …]`. */
  weighted<T>(items: readonly (readonly [number, T])[]): T {
    let total = 0;
    for (const [w] of items) total += w;
    let x = this.next() * total;
    for (const [w, v] of items) { if ((x -= w) < 0) return v; }
    return items[items.length - 1]![1];
  }

  bytes(n: number): Buffer {
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) b[i] = this.int(256);
    return b;
  }

  /** A length that is usually small and sometimes large (log-uniform up to `max`). */
  size(max: number): number { return Math.floor(Math.exp(this.next() * Math.log(max + 1))) - (this.chance(0.1) ? 1 : 0); }

  /** Text built from pieces that break naive parsers, plus random code points. */
  text(maxPieces = 12): string {
    let s = '';
    const n = this.int(maxPieces + 1);
    for (let i = 0; i < n; i++) s += this.#piece();
    return s;
  }

  #piece(): string {
    switch (this.int(6)) {
      case 0: return this.pick(NASTY);
      case 1: return this.pick(WORDS);
      case 2: return String.fromCodePoint(this.int(0x80));
      case 3: return String.fromCodePoint(this.int(0x10000));
      case 4: return String.fromCodePoint(this.int(0x110000));
      default: return this.pick(NASTY).repeat(this.size(300));
    }
  }

  /** A token of printable ASCII without separators (what HTTP allows in a header name or method). */
  token(max = 12): string {
    const chars = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let s = '';
    const n = 1 + this.int(max);
    for (let i = 0; i < n; i++) s += chars[this.int(chars.length)];
    return s;
  }

  /** Flips, inserts, deletes or duplicates a few bytes of `b`. */
  mutate(b: Buffer, edits = 1 + this.int(4)): Buffer {
    let out = Buffer.from(b);
    for (let e = 0; e < edits; e++) {
      const at = out.length === 0 ? 0 : this.int(out.length);
      switch (this.int(5)) {
        case 0: if (out.length > 0) out[at] = this.int(256); break;
        case 1: out = Buffer.concat([out.subarray(0, at), this.bytes(1 + this.int(8)), out.subarray(at)]); break;
        case 2: out = Buffer.concat([out.subarray(0, at), out.subarray(at + 1 + this.int(16))]); break;
        case 3: out = Buffer.concat([out.subarray(0, at), out.subarray(at, at + 1 + this.int(64)), out.subarray(at)]); break;
        default: if (out.length > 0) out[at] = out[at]! ^ (1 << this.int(8)); break;
      }
    }
    return out;
  }

  /** Any JSON value, nested up to `depth`. */
  json(depth = 3): unknown {
    const leaf = depth <= 0 || this.chance(0.5);
    if (leaf) {
      return this.weighted<() => unknown>([
        [3, () => this.text(4)], [2, () => this.int(1000)], [1, () => this.pick(NUMBERS)], [1, () => this.chance(0.5)],
        [1, () => null], [1, () => this.pick(WORDS)],
      ])();
    }
    if (this.chance(0.5)) return Array.from({ length: this.size(8) }, () => this.json(depth - 1));
    const o: Record<string, unknown> = {};
    const n = this.size(8);
    for (let i = 0; i < n; i++) o[this.chance(0.5) ? this.pick(WORDS) : this.text(2)] = this.json(depth - 1);
    return o;
  }
}

export const NASTY = [
  '"', "'", '+', '-', ':', 'site:', '-site:', '+"', ' ', '\t', '\n', '\r\n', '\u0000', '\u00e9', 'e\u0301', '\u{1F600}', '\ud800',
  '\udfff', '%', '%00', '%ZZ', '%ED%A0%80', '&', '=', '#', '?', '/', '\\', '*', '()', '{}', '[]', '..', '../', '<script>', '${x}',
  '\u202e', '\ufeff', '\uffff', 'ﬁ', 'İ', 'ß', '😀'.repeat(3), '0x', '-0', '1e309', 'NaN', 'null', 'true', '__proto__',
  'constructor', ',', ';', '|', '`', '\u0085', '\u2028',
];

export const WORDS = [
  'granite', 'elephant', 'quick', 'brown', 'fox', 'index', 'commit', 'manifest', 'example.com', 'docs', 'q', 'scope', 'page',
  'cid', 'target', 'version', 'rights', 'targets', 'ttl_s', 'cap_id', 'dry_run', 'reason', 'expected_generation', 'to',
  'username', 'request', 'invite', 'record', 'ke1', 'ke3', 'login_id', 'url', 'note', 'sites', 'docportal', 'previous', 'web',
  'trusted', 'own', 'search', 'mgmt.read', 'auth.admin', 'a', '',
];

const NUMBERS = [0, -1, 1.5, 2 ** 31, 2 ** 53, -(2 ** 63), 1e308, Number.MIN_VALUE, 9007199254740993];
