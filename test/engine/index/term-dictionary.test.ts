/**
 * The packed dictionaries a segment serves from: every term is found at its ordinal, absent strings are
 * not, metadata decodes to what was written whatever the order of lookups, and the surface table lists
 * its strings back — including strings mixing the Basic Multilingual Plane above U+E000 with surrogate
 * pairs, where UTF-8 byte order and the JS (UTF-16) order the writer sorts by disagree.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ByteReader, ByteWriter } from '../../../src/engine/index/bytes.js';
import { PackedStrings } from '../../../src/engine/index/packed-strings.js';
import { newTermInfo, TermDictionary } from '../../../src/engine/index/term-dictionary.js';

const unit = fc.constantFrom('a', 'b', 'z', 'é', '\u0800', '\ud7ff', '\ue000', '\uffee', '😀', '𐀀', '\u{10ffff}');
const strings = fc.uniqueArray(fc.string({ unit, maxLength: 5 }), { maxLength: 80 });

test('packed dictionaries find every term in UTF-16 order and decode its metadata', () => {
  fc.assert(
    fc.property(strings, fc.array(fc.string({ unit, maxLength: 5 }), { maxLength: 20 }), fc.array(fc.nat(), { maxLength: 60 }), (raw, probes, order) => {
      const terms = [...raw].sort(); // code-unit order, as the writer sorts
      const text = Buffer.from(terms.join(''), 'utf8');
      const meta = new ByteWriter();
      const info = terms.map((t, i) => ({ docFreq: i + 1, p: (i * 7) % 300, q: (i * 13) % 5000, maxFreq: i % 4, minLength: t.length }));
      terms.forEach((t, i) => {
        const m = info[i]!;
        for (const v of [t.length, m.docFreq, m.p, m.q, m.maxFreq, m.minLength]) meta.varint(v);
      });
      const dict = new TermDictionary(text, new ByteReader(meta.view()), terms.length, 'test');
      const ml = new ByteReader(meta.view());
      const packed = PackedStrings.fromUtf16Lengths(text, terms.length, () => {
        const len = ml.varint();
        for (let k = 0; k < 5; k++) ml.varint();
        return len;
      }, 'test');
      assert.deepEqual([...dict], terms);
      assert.deepEqual([...packed], terms);
      // lookups in a random order, so the dictionary's remembered position is exercised from anywhere
      const ords = [...order.map((o) => (terms.length === 0 ? 0 : o % terms.length)), ...terms.keys()];
      const starts = info.reduce<number[]>((a, m) => [...a, a[a.length - 1]! + m.p], [0]);
      const qstarts = info.reduce<number[]>((a, m) => [...a, a[a.length - 1]! + m.q], [0]);
      for (const ord of ords) {
        if (ord >= terms.length) continue;
        const t = terms[ord]!;
        assert.equal(dict.find(t), ord, `find ${JSON.stringify(t)}`);
        const got = dict.info(ord, newTermInfo());
        const m = info[ord]!;
        assert.deepEqual(got, { docFreq: m.docFreq, postingsStart: starts[ord], postingsEnd: starts[ord + 1], positionsStart: qstarts[ord], positionsEnd: qstarts[ord + 1], maxFreq: m.maxFreq, minLength: m.minLength });
        assert.equal(dict.at(ord), t);
      }
      for (const p of probes) {
        const want = terms.indexOf(p);
        assert.equal(dict.find(p), want, `probe ${JSON.stringify(p)}`);
      }
    }),
    { numRuns: 300 },
  );
});

test('a dictionary decoded for a range of keys holds exactly the terms in it, at the ordinals and offsets of the whole', () => {
  const key = fc.option(fc.string({ unit, maxLength: 5 }), { nil: undefined });
  fc.assert(
    fc.property(strings, key, key, fc.array(fc.nat(), { maxLength: 40 }), (raw, from, to, order) => {
      const terms = [...raw].sort();
      const text = Buffer.from(terms.join(''), 'utf8');
      const meta = new ByteWriter();
      terms.forEach((t, i) => {
        for (const v of [t.length, i + 1, (i * 7) % 300, (i * 13) % 5000, i % 4, t.length]) meta.varint(v);
      });
      const whole = new TermDictionary(text, new ByteReader(meta.view()), terms.length, 'test');
      const part = new TermDictionary(text, new ByteReader(meta.view()), terms.length, 'test', { from, to });
      const held = terms.map((t, ord) => ({ t, ord })).filter(({ t }) => (from === undefined || t >= from) && (to === undefined || t < to));
      assert.deepEqual([...part], held.map((h) => h.t));
      assert.equal(part.length, terms.length);
      assert.equal(part.postingsBytes, whole.postingsBytes);
      assert.equal(part.positionsBytes, whole.positionsBytes);
      if (held.length > 0) assert.deepEqual([part.first, part.end], [held[0]!.ord, held[held.length - 1]!.ord + 1]);
      else assert.equal(part.end, part.first);
      // in a random order, so the remembered position is exercised from anywhere in the range
      for (const o of [...order, ...held.keys()]) {
        if (held.length === 0) break;
        const { t, ord } = held[o % held.length]!;
        assert.equal(part.at(ord), t);
        assert.deepEqual(part.info(ord, newTermInfo()), whole.info(ord, newTermInfo()));
        assert.equal(part.find(t), ord);
      }
      // the first held term not below a key, for keys inside, between and outside the held terms
      for (const k of [from, to, '', ...terms].filter((x): x is string => x !== undefined)) {
        const at = held.find((h) => h.t >= k);
        assert.equal(part.ceiling(k), at === undefined ? part.end : at.ord, `ceiling ${JSON.stringify(k)}`);
      }
      if (part.first > 0) assert.throws(() => part.at(part.first - 1), /No term/);
      if (part.end < terms.length) assert.throws(() => part.info(part.end, newTermInfo()), /No term/);
    }),
    { numRuns: 300 },
  );
});
