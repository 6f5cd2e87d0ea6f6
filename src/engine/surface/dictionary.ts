/**
 * The surface dictionary: every surface form of a searcher snapshot (analyzed, folded, NOT stemmed) with
 * the number of documents that contain it, the vocabulary that completion (../suggest) completes prefixes
 * from and spelling correction (../spell) looks for corrections in.
 *
 * It is two parallel arrays, forms in ascending UTF-16 code-unit order and their dfs, because a sorted
 * array is already an implicit trie: the forms sharing a prefix are one contiguous range, found by binary
 * search. That one layout serves both readers without a second structure per form (a node-per-char trie
 * over ~1M forms costs hundreds of MB in JS objects); each reader builds its own index over it on first
 * use (completion a segment tree of range-argmax, correction packed and reversed copies of the forms).
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
}

export class SurfaceDictionary {
  /** Ascending, distinct. */
  readonly forms: readonly string[];
  /** `dfs[i]` = documents containing `forms[i]`. */
  readonly dfs: Uint32Array;

  private constructor(forms: string[], dfs: Uint32Array) {
    this.forms = forms;
    this.dfs = dfs;
  }

  /** An empty dictionary (an empty index). */
  static empty(): SurfaceDictionary {
    return new SurfaceDictionary([], new Uint32Array(0));
  }

  /**
   * Merges per-segment sources, each ascending in code-unit order as `SegmentReader.surfaceForms()`
   * yields them; the dfs of a form present in several sources are summed. A source out of order throws
   * (an `Error`: it is a bug in the index, never caused by input).
   */
  static merge(sources: Iterable<readonly [form: string, df: number]>[]): SurfaceDictionary {
    const forms: string[] = [];
    let dfs = new Uint32Array(1024);
    const push = (form: string, df: number) => {
      const n = forms.length;
      if (n > 0 && forms[n - 1] === form) {
        dfs[n - 1]! += df;
        return;
      }
      if (n > 0 && forms[n - 1]! > form) throw new Error(`surface forms out of order: ${JSON.stringify(forms[n - 1])} before ${JSON.stringify(form)}`);
      if (n === dfs.length) {
        const grown = new Uint32Array(n * 2);
        grown.set(dfs);
        dfs = grown;
      }
      forms.push(form);
      dfs[n] = df;
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
    return new SurfaceDictionary(forms, dfs.slice(0, forms.length));
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
    const n = base.forms.length;
    const forms: string[] = [];
    const dfs = new Uint32Array(n + plus.forms.length);
    /** Each base form's index in the new dictionary, −1 when it is gone. */
    const moved = new Int32Array(n);
    /** New indices of the forms base did not have, ascending. */
    const inserted: number[] = [];
    let i = 0;
    let p = 0;
    let q = 0;
    for (;;) {
      const a = plus.forms[p];
      const b = minus.forms[q];
      const next = a === undefined ? b : b === undefined || a < b ? a : b;
      // base's forms before the next change come over as they are
      const stop = next === undefined ? n : base.lowerBound(next, i, n);
      for (; i < stop; i++) {
        moved[i] = forms.length;
        dfs[forms.length] = base.dfs[i]!;
        forms.push(base.forms[i]!);
      }
      if (next === undefined) break;
      const inBase = i < n && base.forms[i] === next;
      let df = inBase ? base.dfs[i]! : 0;
      if (next === a) df += plus.dfs[p++]!;
      if (next === b) df -= minus.dfs[q++]!;
      if (df < 0) throw new Error(`surface form ${JSON.stringify(next)} removed more often than it was added`);
      if (df > 0) {
        if (inBase) moved[i] = forms.length;
        else inserted.push(forms.length);
        dfs[forms.length] = df;
        forms.push(next);
      } else if (inBase) {
        moved[i] = -1;
      }
      if (inBase) i++;
    }
    return { base, dictionary: new SurfaceDictionary(forms, dfs.slice(0, forms.length)), moved, inserted };
  }

  /**
   * Checks the invariants the readers rely on and throws an `Error` naming the first one broken: forms
   * strictly ascending with positive dfs.
   */
  verify(): void {
    const { forms, dfs } = this;
    for (let i = 0; i < forms.length; i++) {
      if (i > 0 && !(forms[i - 1]! < forms[i]!)) throw new Error(`forms out of order at ${i}`);
      if (!(dfs[i]! > 0)) throw new Error(`form ${JSON.stringify(forms[i])} has df ${dfs[i]}`);
    }
  }

  /** Number of distinct forms. */
  get size(): number {
    return this.forms.length;
  }

  /** Documents containing `form` (0 when absent). */
  df(form: string): number {
    const i = this.lowerBound(form, 0, this.forms.length);
    return i < this.forms.length && this.forms[i] === form ? this.dfs[i]! : 0;
  }

  /** [lo, hi): the forms that start with `prefix` (the prefix itself first when it is a form). */
  prefixRange(prefix: string): [lo: number, hi: number] {
    const lo = this.lowerBound(prefix, 0, this.forms.length);
    return [lo, prefixEnd(this.forms, prefix, prefix.length, lo)];
  }

  /** First index in [lo, hi) whose form is ≥ `key`. */
  private lowerBound(key: string, lo: number, hi: number): number {
    const forms = this.forms;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (forms[mid]! < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

}

/**
 * First index ≥ `from` whose form does not start with the first `len` code units of `key`, given that the
 * forms from `from` on are ≥ that prefix.
 */
function prefixEnd(forms: readonly string[], key: string, len: number, from: number): number {
  const n = forms.length;
  const has = (k: number) => {
    const f = forms[k]!;
    if (f.length < len) return false;
    for (let c = len - 1; c >= 0; c--) if (f.charCodeAt(c) !== key.charCodeAt(c)) return false;
    return true;
  };
  return gallopEnd(from, n, has);
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
