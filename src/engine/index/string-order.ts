/**
 * The order of a segment's terms and surface forms: ascending by UTF-16 code units, as `<` compares
 * strings. Sorting their indices with a comparator calls back into JavaScript for every comparison and
 * reads two strings each time: ~0.35 s for each of a perturbed Wikipedia flush's ~270k terms and forms.
 *
 * This is an MSD radix sort instead. A digit is a few code units, each as 10 bits (unit + 1, so that the
 * end of a string sorts first; units above 1021 share the top value), packed with the string's index into
 * one float that a typed array's native sort orders; strings that tie on a digit are ordered by the next
 * one, a few strings by insertion, and a group whose digit holds the shared top value (the units after it
 * left out of the digit) by full comparisons.
 */

const UNIT_BITS = 10;
/** The digit value of a code unit at or above 1022, which such units share. */
const TOP = (1 << UNIT_BITS) - 1;
/** Groups up to this size are sorted by insertion. */
const SMALL = 16;
/** Float64 integers are exact to 2^53: the bits a digit and an index share. */
const EXACT_BITS = 53;

/** Indices of `strings` in ascending order (equal strings by index). */
export function orderOfStrings(strings: readonly string[]): Int32Array {
  const n = strings.length;
  const order = new Int32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  if (n < 2) return order;
  const indexBits = Math.max(1, Math.ceil(Math.log2(n)));
  const units = Math.floor((EXACT_BITS - indexBits) / UNIT_BITS);
  if (units < 1) {
    sortByComparison(strings, order, 0, n);
    return order;
  }
  const scale = 2 ** indexBits;
  const keys = new Float64Array(n);
  // groups still to order: [from, to, first unit of their next digit] (every string in a group agrees before it)
  const pending = [0, n, 0];
  while (pending.length > 0) {
    const at = pending.pop()!;
    const to = pending.pop()!;
    const from = pending.pop()!;
    if (to - from <= SMALL) {
      insertionSort(strings, order, from, to);
      continue;
    }
    let ended = true;
    for (let p = from; p < to; p++) {
      const i = order[p]!;
      const s = strings[i]!;
      if (s.length > at) ended = false;
      let digit = 0;
      let top = false; // after a unit at the shared top, the units it hides decide, so the rest count as 0
      for (let u = at; u < at + units; u++) {
        const v: number = top || u >= s.length ? 0 : Math.min(s.charCodeAt(u) + 1, TOP);
        top ||= v === TOP;
        digit = digit * (TOP + 1) + v;
      }
      keys[p] = digit * scale + i;
    }
    if (ended) continue; // equal strings, by index already (a key's low bits)
    keys.subarray(from, to).sort();
    for (let p = from; p < to; p++) order[p] = keys[p]! % scale;
    for (let p = from; p < to;) {
      const digit = Math.floor(keys[p]! / scale);
      let q = p + 1;
      while (q < to && Math.floor(keys[q]! / scale) === digit) q++;
      if (q - p > 1) {
        if (holdsTop(digit, units)) sortByComparison(strings, order, p, q);
        else pending.push(p, q, at + units);
      }
      p = q;
    }
  }
  return order;
}

/** Whether a digit holds a unit's shared top value (its units then differ in ways it does not show). */
function holdsTop(digit: number, units: number): boolean {
  for (let u = 0; u < units; u++, digit = Math.floor(digit / (TOP + 1))) if (digit % (TOP + 1) === TOP) return true;
  return false;
}

const before = (strings: readonly string[], a: number, b: number): boolean => {
  const x = strings[a]!;
  const y = strings[b]!;
  return x < y || (x === y && a < b);
};

function insertionSort(strings: readonly string[], order: Int32Array, from: number, to: number): void {
  for (let p = from + 1; p < to; p++) {
    const i = order[p]!;
    let q = p;
    while (q > from && before(strings, i, order[q - 1]!)) {
      order[q] = order[q - 1]!;
      q--;
    }
    order[q] = i;
  }
}

function sortByComparison(strings: readonly string[], order: Int32Array, from: number, to: number): void {
  order.subarray(from, to).sort((a, b) => (before(strings, a, b) ? -1 : before(strings, b, a) ? 1 : 0));
}
