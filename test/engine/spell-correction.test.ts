// Did-you-mean candidates (CONTRACT §2) from the surface dictionary: the bounded trie walk against a
// naive optimal-string-alignment distance over every form, on random dictionaries.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Correction } from '../../src/engine/spell/index.js';
import { Completion } from '../../src/engine/suggest/index.js';
import { SurfaceDictionary } from '../../src/engine/surface/index.js';

/** Reference: optimal string alignment distance, the full matrix. */
function osa(a: string, b: string): number {
  const d: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    d.push([]);
    for (let j = 0; j <= b.length; j++) {
      if (i === 0 || j === 0) { d[i]![j] = i + j; continue; }
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** Reference: CONTRACT §2 candidate choice by scanning every form. */
function naiveCorrect(entries: Map<string, number>, word: string, totalDocs: number): string | undefined {
  if (word.length < 4 || word.length > 48) return undefined;
  const own = entries.get(word) ?? 0;
  if (own > 0.001 * totalDocs) return undefined;
  const max = word.length >= 9 ? 2 : 1;
  let best: [string, number, number] | undefined;
  for (const [form, df] of entries) {
    if (form === word || df <= own) continue;
    const d = osa(form, word);
    if (d > max) continue;
    if (!best || d < best[1] || (d === best[1] && (df > best[2] || (df === best[2] && form < best[0])))) best = [form, d, df];
  }
  return best?.[0];
}

function build(entries: Map<string, number>, parts = 1): Correction {
  // split the entries over `parts` ascending sources to exercise the merge too
  const sorted = [...entries].sort((x, y) => (x[0] < y[0] ? -1 : 1));
  const sources: [string, number][][] = Array.from({ length: parts }, () => []);
  sorted.forEach(([f, df], i) => {
    if (parts > 1 && df > 1 && i % 2 === 0) {
      sources[0]!.push([f, 1]);
      sources[1 + (i % (parts - 1))]!.push([f, df - 1]);
    } else sources[i % parts]!.push([f, df]);
  });
  return new Correction(SurfaceDictionary.merge(sources));
}

const word = fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'd', 'e'), minLength: 1, maxLength: 11 });
const dictionary = fc.dictionary(word, fc.integer({ min: 1, max: 30 }), { minKeys: 1, maxKeys: 120 }).map((o) => new Map(Object.entries(o)));

test('forms within distance k are exactly those the naive distance finds', () => {
  fc.assert(fc.property(dictionary, word, fc.integer({ min: 0, max: 3 }), fc.integer({ min: 1, max: 3 }), (entries, w, k, parts) => {
    const dict = build(entries, parts);
    const got = dict.within(w, k).map((x) => `${x.form}:${x.distance}:${x.df}`);
    const want = [...entries].map(([f, df]) => [f, osa(f, w), df] as const).filter((x) => x[1] <= k)
      .sort((x, y) => (x[0] < y[0] ? -1 : 1)).map((x) => `${x[0]}:${x[1]}:${x[2]}`);
    assert.deepEqual(got, want);
  }), { numRuns: 300 });
});

test('correct() chooses what the contract rule chooses over every form', () => {
  fc.assert(fc.property(dictionary, word, fc.integer({ min: 1, max: 40_000 }), (entries, w, totalDocs) => {
    assert.equal(build(entries, 2).correct(w, totalDocs), naiveCorrect(entries, w, totalDocs));
  }), { numRuns: 400 });
});

test('typical corrections: distance 1 below 9 letters, 2 from 9, rarer forms never win', () => {
  const dict = build(new Map([
    ['search', 500], ['serch', 1], ['research', 40], ['searches', 90], ['documentation', 300], ['lucene', 20],
    ['the', 9000], ['latency', 50], ['patency', 60],
  ]));
  assert.equal(dict.correct('serch', 10_000), 'search'); // rare (1 doc) and a more frequent form at distance 1
  assert.equal(dict.correct('saerch', 10_000), 'search'); // a transposition is one edit
  assert.equal(dict.correct('documntaton', 10_000), 'documentation'); // 11 letters: distance 2 allowed
  assert.equal(dict.correct('lucen', 10_000), 'lucene');
  assert.equal(dict.correct('sarch', 10_000), 'search');
  assert.equal(dict.correct('xatency', 10_000), 'patency'); // same distance: higher df wins
  assert.equal(dict.correct('teh', 10_000), undefined); // under 4 characters
  assert.equal(dict.correct('search', 10_000), undefined); // common: 5% of documents
  assert.equal(dict.correct('lucene', 100_000), undefined); // rare but nothing more frequent within 1
  assert.equal(dict.correct('serchh', 10_000), 'serch'); // absent: the rare 'serch' (df 1 > 0) is the only form within 1
});

test('a dictionary updated over commits and merges answers as one built from scratch, whatever its correction\'s tiers', () => {
  type Source = [string, number][];
  const source = dictionary.map((m): Source => [...m].sort((x, y) => (x[0] < y[0] ? -1 : 1)));
  // a step: drop some of the live sources (a merge folds them into one new source, or they are just gone),
  // add new ones; whether to ask a correction first, and how, decides what exists to carry over (a short
  // word walks the forms forward only, a long one builds the reversed forms too). The correction's tiers
  // fold never (1e-9), at every change (1e9) or by the default rule.
  const step = fc.record({ drop: fc.array(fc.nat(), { maxLength: 3 }), fold: fc.boolean(), add: fc.array(source, { maxLength: 2 }), warm: fc.constantFrom('none', 'forward', 'both') });
  fc.assert(fc.property(fc.array(source, { minLength: 1, maxLength: 3 }), fc.array(step, { minLength: 1, maxLength: 5 }), fc.array(word, { minLength: 1, maxLength: 8 }),
    fc.constantFrom(1e-9, 1e9, undefined),
    (initial, steps, probes, foldLimit) => {
      let live: Source[] = initial;
      let dict = SurfaceDictionary.merge(live);
      let correction = new Correction(dict);
      for (const { drop, fold, add, warm } of steps) {
        if (warm === 'forward') correction.within('ab', 1);
        if (warm === 'both') correction.within('abcdeabcde', 2);
        const dropped = new Set(drop.map((d) => d % live.length));
        const removed = live.filter((_, i) => dropped.has(i));
        const added = [...add];
        if (fold && removed.length > 0) {
          const sum = new Map<string, number>();
          for (const src of removed) for (const [f, df] of src) sum.set(f, (sum.get(f) ?? 0) + df);
          added.push([...sum].sort((x, y) => (x[0] < y[0] ? -1 : 1)));
        }
        const updated = SurfaceDictionary.update(dict, removed, added);
        dict = updated.dictionary;
        correction = Correction.after(correction, updated, foldLimit);
        dict.verify();
        correction.verify();
        live = [...live.filter((_, i) => !dropped.has(i)), ...added];
      }
      const fresh = SurfaceDictionary.merge(live);
      const freshCorrection = new Correction(fresh);
      assert.equal(dict.size, fresh.size);
      for (const [f] of live.flat()) assert.equal(dict.df(f), fresh.df(f), f);
      for (const w of probes) {
        for (const k of [1, 2]) assert.deepEqual(correction.within(w, k), freshCorrection.within(w, k), `${w} within ${k}`);
        assert.deepEqual(new Completion(dict).complete(w.slice(0, 2), 5), new Completion(fresh).complete(w.slice(0, 2), 5));
        assert.equal(correction.correct(w, 1000), freshCorrection.correct(w, 1000));
      }
      fresh.verify();
      freshCorrection.verify();
    }), { numRuns: 300 });
});

test('a correction kept across updates is the fresh one whenever answersAsBefore says so', () => {
  type Source = [string, number][];
  const source = dictionary.map((m): Source => [...m].sort((x, y) => (x[0] < y[0] ? -1 : 1)));
  const step = fc.record({ drop: fc.array(fc.nat(), { maxLength: 2 }), add: fc.array(source, { maxLength: 2 }), total: fc.integer({ min: 1_000, max: 30_000 }) });
  let kept = 0;
  fc.assert(fc.property(fc.array(source, { minLength: 1, maxLength: 3 }), fc.array(step, { minLength: 1, maxLength: 5 }), fc.array(word, { minLength: 1, maxLength: 8 }),
    fc.integer({ min: 1_000, max: 30_000 }),
    (initial, steps, probes, firstTotal) => {
      let live: Source[] = initial;
      let dict = SurfaceDictionary.merge(live);
      // words of the dictionary too, whose own df can be rare under one total and not under the next
      const asked = [...probes, ...initial[0]!.slice(0, 6).map(([f]) => f)];
      const answers = asked.map((w) => ({ w, total: firstTotal, answer: new Correction(dict).correct(w, firstTotal) }));
      let changes = SurfaceDictionary.empty();
      for (const { drop, add, total } of steps) {
        const dropped = new Set(drop.map((d) => d % live.length));
        const updated = SurfaceDictionary.update(dict, live.filter((_, i) => dropped.has(i)), add);
        dict = updated.dictionary;
        live = [...live.filter((_, i) => !dropped.has(i)), ...add];
        changes = SurfaceDictionary.merge([changes.entries(), updated.changed.entries()]);
        const now = new Correction(dict);
        const check = new Correction(changes);
        for (const a of answers) {
          if (!now.answersAsBefore(a.w, a.total, total, check)) continue;
          kept++;
          assert.equal(a.answer, now.correct(a.w, total), `${a.w}: kept from ${a.total} documents to ${total}`);
        }
      }
    }), { numRuns: 300 });
  assert.ok(kept > 100, `answers kept: ${kept}`);
});

test('an update says which forms changed df, by how much', () => {
  const base = SurfaceDictionary.merge([[['alpha', 2], ['beta', 1], ['gamma', 4]]]);
  const { changed } = SurfaceDictionary.update(base, [[['beta', 1], ['gamma', 4]]], [[['delta', 3], ['gamma', 4]], [['alpha', 1]]]);
  assert.deepEqual([...changed.entries()], [['alpha', 1], ['beta', 1], ['delta', 3]]);
});

test('an update that removes a form more often than it was added is refused', () => {
  const dict = SurfaceDictionary.merge([[['abc', 1]]]);
  assert.throws(() => SurfaceDictionary.update(dict, [[['abc', 2]]], []), /removed more often/);
});

test('an empty dictionary corrects nothing', () => {
  assert.equal(new Correction(SurfaceDictionary.empty()).correct('anything', 10), undefined);
  assert.equal(new Correction(SurfaceDictionary.merge([])).correct('anything', 10), undefined);
});

test('a source out of order is refused', () => {
  assert.throws(() => SurfaceDictionary.merge([[['b', 1], ['a', 1]]]), /out of order/);
  assert.throws(() => SurfaceDictionary.merge([[['b', 1], ['a', 1]], [['c', 1]]]), /out of order/);
});
