/** A least-recently-used map from keys (numbers by default) to values, bounded by the values' total size in bytes. */
export class LruCache<V, K = number> {
  private readonly map = new Map<K, V>();
  private bytes = 0;

  constructor(readonly maxBytes: number, private readonly sizeOf: (v: V) => number) {}

  get(key: K): V | undefined {
    const hit = this.map.get(key);
    if (hit !== undefined) {
      // Map iteration order is insertion order: re-inserting makes it the most recent.
      this.map.delete(key);
      this.map.set(key, hit);
    }
    return hit;
  }

  /** Stores `value`, then evicts the least recent entries while over the bound (keeping at least one). */
  set(key: K, value: V): void {
    const old = this.map.get(key);
    if (old !== undefined) {
      this.map.delete(key);
      this.bytes -= this.sizeOf(old);
    }
    this.map.set(key, value);
    this.bytes += this.sizeOf(value);
    while (this.bytes > this.maxBytes && this.map.size > 1) {
      const [k, v] = this.map.entries().next().value!;
      this.map.delete(k);
      this.bytes -= this.sizeOf(v);
    }
  }

  /** Drops the entries with keys in [lo, hi). */
  dropRange(this: LruCache<V, number>, lo: number, hi: number): void {
    for (const [k, v] of this.map) {
      if (k >= lo && k < hi) {
        this.map.delete(k);
        this.bytes -= this.sizeOf(v);
      }
    }
  }

  /** Bytes held. */
  get size(): number {
    return this.bytes;
  }
}
