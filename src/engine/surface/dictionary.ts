/**
 * The surface dictionary: every surface form of a searcher snapshot (analyzed, folded, NOT stemmed) with
 * the number of documents that contain it, the vocabulary that completion (../suggest) completes prefixes
 * from and spelling correction (../spell) looks for corrections in.
 *
 * The forms are in ascending UTF-16 code-unit order, with their dfs in a parallel array, because a sorted
 * array is already an implicit trie: the forms sharing a prefix are one contiguous range, found by binary
 * search. That one layout serves both readers without a second structure per form (a node-per-char trie
 * over ~1M forms costs hundreds of MB in JS objects); each reader builds its own index over it on first
 * use (completion a segment tree of range-argmax, correction jump tables and reversed copies).
 *
 * The forms are packed, their code units in one Uint16Array and each one's start in an Int32Array, not
 * held as strings: a million-document index has millions of forms, which as strings were 56 MB of the
 * JavaScript heap that every full garbage collection of a serving process marked (50–80 ms a collection
 * on the 1M-article Wikipedia index); packed, they are two objects. A form is made a string only when
 * it is returned.
 *
 * Immutable once built; one per searcher snapshot.
 */

/** What `update` made, and where it put the forms of the dictionary it started from: what a reader's index follows. */
export interface DictionaryUpdate {
  /** The dictionary updated from. */
  readonly base: SurfaceDictionary;
  /** The new dictionary. */
  readonly dictionary: SurfaceDictionary;
  /** Each base form's index in the new dictionary, −1 when it is gone. */
  readonly moved: Int32Array;
  /** New indices of the forms base did not have, ascending. */
  readonly inserted: readonly number[];
  /**
   * The forms whose df differs between base and the new dictionary (new ones and gone ones included),
   * each with the size of its change as its df: what an answer computed over base may depend on.
   */
  readonly changed: SurfaceDictionary;
}

/** Code units per `String.fromCharCode` call when a form is made a string. */
const FORM_CHUNK = 4096;

/** Packed forms and dfs as they are appended, ascending (the caller's order, checked by `merge`). */
class Builder {
  chars: Uint16Array;
  offsets: Int32Array;
  dfs: Uint32Array;
  size = 0;
  private length = 0;

  /** A builder with room for `forms` forms of `units` code units in all before it grows. */
  constructor(forms = 1024, units = 4096) {
    this.chars = new Uint16Array(Math.max(units, 16));
    this.offsets = new Int32Array(forms + 1);
    this.dfs = new Uint32Array(forms + 1);
  }

  /** Appends form `s` with `df`. */
  push(s: string, df: number): void {
    this.room(s.length);
    const at = this.length;
    for (let c = 0; c < s.length; c++) this.chars[at + c] = s.charCodeAt(c);
    this.close(s.length, df);
  }

  /** Appends form `i` of `d` with `df`. */
  copy(d: SurfaceDictionary, i: number, df: number): void {
    const from = d.offsets[i]!;
    const len = d.offsets[i + 1]! - from;
    this.room(len);
    this.chars.set(d.chars.subarray(from, from + len), this.length);
    this.close(len, df);
  }

  /** Appends forms [from, to) of `d` with their dfs: one copy of their code units and of their dfs. */
  copyRun(d: SurfaceDictionary, from: number, to: number): void {
    const count = to - from;
    if (count <= 0) return;
    const start = d.offsets[from]!;
    const len = d.offsets[to]! - start;
    this.room(len, count);
    this.chars.set(d.chars.subarray(start, start + len), this.length);
    const shift = this.length - start;
    for (let k = 0; k < count; k++) this.offsets[this.size + k] = d.offsets[from + k]! + shift;
    this.dfs.set(d.dfs.subarray(from, to), this.size);
    this.size += count;
    this.length += len;
  }

  /** Adds `df` to the last form's. */
  addToLast(df: number): void {
    this.dfs[this.size - 1]! += df;
  }

  /**
   * The dictionary built. Arrays at most 1/16 larger than their contents are handed over as views (an
   * update sized for its forms fills its arrays but for the forms removed), larger ones copied to size.
   */
  done(): SurfaceDictionary {
    this.offsets[this.size] = this.length;
    return new SurfaceDictionary(fitted(this.chars, this.length), fitted(this.offsets, this.size + 1), fitted(this.dfs, this.size));
  }

  /** Room for `forms` more forms of `len` code units in all. */
  private room(len: number, forms = 1): void {
    if (this.length + len > this.chars.length) this.chars = grown(this.chars, this.length + len);
    if (this.size + forms + 1 > this.offsets.length) {
      this.offsets = grown(this.offsets, this.size + forms + 1);
      this.dfs = grown(this.dfs, this.size + forms + 1);
    }
  }

  private close(len: number, df: number): void {
    this.offsets[this.size] = this.length;
    this.dfs[this.size++] = df;
    this.length += len;
  }
}

/** The first `n` elements of `a`: a view when `a` is at most 1/16 longer, else a copy. */
function fitted<T extends Uint16Array | Int32Array | Uint32Array>(a: T, n: number): T {
  return (a.length - n <= a.length >>> 4 ? a.subarray(0, n) : a.slice(0, n)) as T;
}

/** A copy of `a` with room for at least `need` elements (doubling). */
function grown<T extends Uint16Array | Int32Array | Uint32Array>(a: T, need: number): T {
  let n = a.length * 2;
  while (n < need) n *= 2;
  const b = new (a.constructor as new (n: number) => T)(n);
  b.set(a);
  return b;
}

export class SurfaceDictionary {
  /** The forms' UTF-16 code units, concatenated in ascending order (distinct forms). */
  readonly chars: Uint16Array;
  /** Form i is `chars[offsets[i], offsets[i + 1])`; `size + 1` entries. */
  readonly offsets: Int32Array;
  /** `dfs[i]` = documents containing form i. */
  readonly dfs: Uint32Array;

  /** Use `merge`, `update` or `empty`. */
  constructor(chars: Uint16Array, offsets: Int32Array, dfs: Uint32Array) {
    this.chars = chars;
    this.offsets = offsets;
    this.dfs = dfs;
  }

  /** An empty dictionary (an empty index). */
  static empty(): SurfaceDictionary {
    return new SurfaceDictionary(new Uint16Array(0), new Int32Array(1), new Uint32Array(0));
  }

  /**
   * Merges per-segment sources, each ascending in code-unit order as `SegmentReader.surfaceForms()`
   * yields them; the dfs of a form present in several sources are summed. A source out of order throws
   * (an `Error`: it is a bug in the index, never caused by input).
   */
  static merge(sources: Iterable<readonly [form: string, df: number]>[]): SurfaceDictionary {
    const out = new Builder();
    let last: string | undefined;
    const push = (form: string, df: number) => {
      if (last === form) {
        out.addToLast(df);
        return;
      }
      if (last !== undefined && last > form) throw new Error(`surface forms out of order: ${JSON.stringify(last)} before ${JSON.stringify(form)}`);
      out.push(form, df);
      last = form;
    };

    const iterators = sources.map((s) => s[Symbol.iterator]());
    if (iterators.length === 1) {
      for (let r = iterators[0]!.next(); !r.done; r = iterators[0]!.next()) push(r.value[0], r.value[1]);
    } else if (iterators.length > 1) {
      // k-way merge through a binary min-heap of the sources' current heads
      const heads: (readonly [string, number])[] = [];
      const heap: number[] = [];
      const less = (a: number, b: number) => heads[a]![0] < heads[b]![0] || (heads[a]![0] === heads[b]![0] && a < b);
      const siftDown = (i: number) => {
        const n = heap.length;
        for (;;) {
          const l = 2 * i + 1;
          if (l >= n) return;
          const c = l + 1 < n && less(heap[l + 1]!, heap[l]!) ? l + 1 : l;
          if (!less(heap[c]!, heap[i]!)) return;
          [heap[c], heap[i]] = [heap[i]!, heap[c]!];
          i = c;
        }
      };
      iterators.forEach((it, k) => {
        const r = it.next();
        heads[k] = r.done ? ['', 0] : r.value;
        if (!r.done) heap.push(k);
      });
      for (let i = (heap.length >> 1) - 1; i >= 0; i--) siftDown(i);
      while (heap.length > 0) {
        const k = heap[0]!;
        const [form, df] = heads[k]!;
        push(form, df);
        const r = iterators[k]!.next();
        if (r.done) {
          heap[0] = heap[heap.length - 1]!;
          heap.pop();
        } else {
          if (r.value[0] < form) throw new Error(`surface forms out of order: ${JSON.stringify(form)} before ${JSON.stringify(r.value[0])}`);
          heads[k] = r.value;
        }
        if (heap.length > 0) siftDown(0);
      }
    }
    return out.done();
  }

  /**
   * The dictionary of `base`'s sources without `removed` and with `added` (each ascending, as for
   * `merge`): equal to `merge` of the new set of sources, in time linear in `base`'s size plus the
   * changes, with no sort of the whole vocabulary. A commit that adds a small segment, or a merge that
   * replaces segments by one with the same forms, thus costs a pass over the arrays instead of a rebuild.
   * It also says where each form went, for the readers' indexes to follow.
   * A form removed more often than it was added throws (an `Error`: the sources are not base's).
   */
  static update(base: SurfaceDictionary, removed: Iterable<readonly [form: string, df: number]>[],
    added: Iterable<readonly [form: string, df: number]>[]): DictionaryUpdate {
    const plus = SurfaceDictionary.merge(added);
    const minus = SurfaceDictionary.merge(removed);
    const n = base.size;
    const out = new Builder(n + plus.size, base.chars.length + plus.chars.length);
    /** Each base form's index in the new dictionary, −1 when it is gone. */
    const moved = new Int32Array(n);
    /** New indices of the forms base did not have, ascending. */
    const inserted: number[] = [];
    // sized as it grows: a merge adds and removes many forms and changes few
    const changed = new Builder();
    let i = 0;
    let p = 0;
    let q = 0;
    for (;;) {
      // the next changed form: the least of plus's and minus's next ones
      const a = p < plus.size ? p : -1;
      const b = q < minus.size ? q : -1;
      const fromPlus = a >= 0 && (b < 0 || compareForms(plus, a, minus, b) <= 0);
      const fromMinus = b >= 0 && (a < 0 || compareForms(minus, b, plus, a) <= 0);
      const [next, at] = fromPlus ? [plus, a] : fromMinus ? [minus, b] : [undefined, -1];
      // base's forms before the next change come over as they are
      const stop = next === undefined ? n : base.lowerBound((k) => compareForms(base, k, next, at) < 0, i, n);
      for (let k = i, first = out.size; k < stop; k++) moved[k] = first + k - i;
      out.copyRun(base, i, stop);
      i = stop;
      if (next === undefined) break;
      const inBase = i < n && compareForms(base, i, next, at) === 0;
      const was = inBase ? base.dfs[i]! : 0;
      let df = was;
      if (fromPlus) df += plus.dfs[p++]!;
      if (fromMinus) df -= minus.dfs[q++]!;
      if (df < 0) throw new Error(`surface form ${JSON.stringify(next.form(at))} removed more often than it was added`);
      if (df !== was) changed.copy(next, at, Math.abs(df - was));
      if (df > 0) {
        if (inBase) moved[i] = out.size;
        else inserted.push(out.size);
        out.copy(next, at, df);
      } else if (inBase) {
        moved[i] = -1;
      }
      if (inBase) i++;
    }
    return { base, dictionary: out.done(), moved, inserted, changed: changed.done() };
  }

  /** The forms of `d` at `indices` (ascending), with their dfs: a dictionary of part of its forms. */
  static subset(d: SurfaceDictionary, indices: Int32Array): SurfaceDictionary {
    let units = 0;
    for (let k = 0; k < indices.length; k++) units += d.offsets[indices[k]! + 1]! - d.offsets[indices[k]!]!;
    const out = new Builder(indices.length, units);
    for (let k = 0; k < indices.length; k++) {
      const i = indices[k]!;
      if (k > 0 && !(indices[k - 1]! < i)) throw new Error(`subset indices out of order at ${k}`);
      out.copy(d, i, d.dfs[i]!);
    }
    return out.done();
  }

  /**
   * Checks the invariants the readers rely on and throws an `Error` naming the first one broken: forms
   * strictly ascending with positive dfs.
   */
  verify(): void {
    const { offsets, dfs } = this;
    if (offsets.length !== dfs.length + 1 || offsets[0] !== 0 || offsets[dfs.length] !== this.chars.length) throw new Error('offsets do not cover the forms');
    for (let i = 0; i < this.size; i++) {
      if (offsets[i + 1]! < offsets[i]!) throw new Error(`form ${i} ends before it starts`);
      if (i > 0 && !(compareForms(this, i - 1, this, i) < 0)) throw new Error(`forms out of order at ${i}`);
      if (!(dfs[i]! > 0)) throw new Error(`form ${JSON.stringify(this.form(i))} has df ${dfs[i]}`);
    }
  }

  /** Number of distinct forms. */
  get size(): number {
    return this.dfs.length;
  }

  /** Form `i`, as a string (code unit for code unit: a lone surrogate stays one). */
  form(i: number): string {
    const from = this.offsets[i]!;
    const to = this.offsets[i + 1]!;
    // `apply` passes each code unit as an argument: a form of any length (a token may be a megabyte of
    // letters) is made a chunk at a time, within the stack
    let s = '';
    for (let at = from; at < to; at += FORM_CHUNK) {
      s += String.fromCharCode.apply(null, this.chars.subarray(at, Math.min(to, at + FORM_CHUNK)) as unknown as number[]);
    }
    return s;
  }

  /** Every (form, df), ascending: a source for `merge`. */
  *entries(): Generator<readonly [form: string, df: number]> {
    for (let i = 0; i < this.size; i++) yield [this.form(i), this.dfs[i]!];
  }

  /** Documents containing `form` (0 when absent). */
  df(form: string): number {
    const i = this.lowerBound((k) => this.compareTo(k, form) < 0, 0, this.size);
    return i < this.size && this.compareTo(i, form) === 0 ? this.dfs[i]! : 0;
  }

  /** [lo, hi): the forms that start with `prefix` (the prefix itself first when it is a form). */
  prefixRange(prefix: string): [lo: number, hi: number] {
    const lo = this.lowerBound((k) => this.compareTo(k, prefix) < 0, 0, this.size);
    const { chars, offsets } = this;
    const len = prefix.length;
    const has = (k: number) => {
      const at = offsets[k]!;
      if (offsets[k + 1]! - at < len) return false;
      for (let c = len - 1; c >= 0; c--) if (chars[at + c] !== prefix.charCodeAt(c)) return false;
      return true;
    };
    return [lo, gallopEnd(lo, this.size, has)];
  }

  /** Form `i` against `key` in code-unit order: negative, 0 or positive. */
  private compareTo(i: number, key: string): number {
    const { chars, offsets } = this;
    const at = offsets[i]!;
    const len = offsets[i + 1]! - at;
    const n = Math.min(len, key.length);
    for (let c = 0; c < n; c++) {
      const d = chars[at + c]! - key.charCodeAt(c);
      if (d !== 0) return d;
    }
    return len - key.length;
  }

  /** First index in [lo, hi) whose form is not `below` the key sought (the forms below it come first). */
  private lowerBound(below: (i: number) => boolean, lo: number, hi: number): number {
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (below(mid)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** Form `i` of `a` against form `j` of `b` in code-unit order: negative, 0 or positive. */
function compareForms(a: SurfaceDictionary, i: number, b: SurfaceDictionary, j: number): number {
  const ac = a.chars;
  const bc = b.chars;
  const at = a.offsets[i]!;
  const bt = b.offsets[j]!;
  const al = a.offsets[i + 1]! - at;
  const bl = b.offsets[j + 1]! - bt;
  const n = Math.min(al, bl);
  for (let c = 0; c < n; c++) {
    const d = ac[at + c]! - bc[bt + c]!;
    if (d !== 0) return d;
  }
  return al - bl;
}

/**
 * First index in [from, n] where `has` fails, given that it holds on a prefix of [from, n) and fails on
 * the rest. Gallops from `from` before bisecting: the walk's skips are mostly short.
 */
export function gallopEnd(from: number, n: number, has: (k: number) => boolean): number {
  let lo = from;
  let step = 1;
  let hi = from + 1;
  while (hi < n && has(hi)) {
    lo = hi;
    step <<= 1;
    hi = from + step;
  }
  if (hi > n) hi = n;
  // every index before lo has it; hi does not (or hi = n)
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (has(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
