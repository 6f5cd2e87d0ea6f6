/**
 * A least-recently-used map from keys (numbers by default) to values, bounded by the values' total size in
 * bytes.
 *
 * Recency is the Map's insertion order: an entry is moved to the end by deleting and setting it again. A
 * search reads a few dozen entries, mostly ones it or the search before it just used, and moving each on
 * every read cost more than the read (a delete leaves a hole the Map compacts later). So a read moves an
 * entry only once it has drifted into the older half of the order, measured by a clock of moves and
 * insertions: an entry in the newer half has at least half the map in front of it before it can be
 * evicted, and one that is read keeps returning to the end before it gets there.
 */
interface Entry<V> { value: V; bytes: number; at: number }

export class LruCache<V, K = number> {
  private readonly map = new Map<K, Entry<V>>();
  private bytes = 0;
  /** Counts insertions and moves: an entry's `at` is the clock when it last went to the end. */
  private clock = 0;

  constructor(private bound: number, private readonly sizeOf: (v: V) => number) {}

  /** The most bytes the entries may take. */
  get maxBytes(): number {
    return this.bound;
  }

  /** Raises the bound to `bytes` when it is lower (a cache whose entries grow with what they cache). */
  atLeast(bytes: number): void {
    if (bytes > this.bound) this.bound = bytes;
  }

  get(key: K): V | undefined {
    const e = this.map.get(key);
    if (e === undefined) return undefined;
    if (this.clock - e.at > this.map.size >> 1) {
      this.map.delete(key);
      this.map.set(key, e);
      e.at = ++this.clock;
    }
    return e.value;
  }

  /** Stores `value`, then evicts the least recent entries while over the bound (keeping at least one). */
  set(key: K, value: V): void {
    const old = this.map.get(key);
    if (old !== undefined) {
      this.map.delete(key);
      this.bytes -= old.bytes;
    }
    const bytes = this.sizeOf(value);
    this.map.set(key, { value, bytes, at: ++this.clock });
    this.bytes += bytes;
    while (this.bytes > this.bound && this.map.size > 1) {
      const [k, e] = this.map.entries().next().value!;
      this.map.delete(k);
      this.bytes -= e.bytes;
    }
  }

  /** Drops the entries with keys in [lo, hi). */
  dropRange(this: LruCache<V, number>, lo: number, hi: number): void {
    for (const [k, e] of this.map) {
      if (k >= lo && k < hi) {
        this.map.delete(k);
        this.bytes -= e.bytes;
      }
    }
  }

  /** Bytes held. */
  get size(): number {
    return this.bytes;
  }
}
