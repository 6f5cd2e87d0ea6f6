/**
 * A segment's writer reads each text's analyzer tokens from its stored-text tokens: for any texts, in any
 * order through one segment's shared cache, the forms it gives are the analyzer's, or it declines and the
 * writer tokenizes the text whole. Plain ASCII text is never declined, nor text with the symbols the
 * analyzer folds into words; what it declines is what the two tokenizations split differently.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { analyzeSurfaces } from '../../../src/engine/analysis/analyzer.js';
import { IntBuffer } from '../../../src/engine/index/bytes.js';
import { StoredTextsBuilder } from '../../../src/engine/index/store.js';
import { StoredTokenAnalysis } from '../../../src/engine/index/stored-token-analysis.js';

/** One segment's texts and analysis; `forms` reads back the analysis's interned forms. */
function segment() {
  const texts = new StoredTextsBuilder();
  const forms: string[] = [];
  const numbers = new Map<string, number>();
  const analysis = new StoredTokenAnalysis(texts.tokens, (surface) => {
    let n = numbers.get(surface);
    if (n === undefined) {
      n = forms.length;
      forms.push(surface);
      numbers.set(surface, n);
    }
    return n;
  });
  const out = new IntBuffer();
  /** The text's forms as the analysis reads them, or undefined when it declines the text. */
  return (text: string): string[] | undefined => {
    const ids = texts.add(text);
    if (!analysis.surfacesOf(ids.a, ids.length, out)) return undefined;
    return Array.from(out.view(), (n) => forms[n]!);
  };
}

/** Pieces where the stored-text tokens and the analyzer's could disagree, and anything at all. */
const PIECE = fc.oneof(
  fc.constantFrom(' ', '  ', '\n', ', ', '. ', '-', "'", '—', ' – ', '’', '«', '¿', '\u00a0', '\u2028', '\u200b', '\u2060', '\0'),
  fc.constantFrom('²', '³', '¹', '½', '¼', 'ª', 'º', 'µ', '°', '£', '€', '™', 'ﬁ', 'Ⅻ', '\u0301', 'e\u0301', '\u20d7', '⁄'),
  fc.constantFrom('the', 'The', 'THE', 'km', 'x', 'naïve', 'Straße', 'Ωμέγα', '日本', '😀', '\ud800', '\udc00', 'A1', '42'),
  fc.string({ maxLength: 5 }),
  fc.string({ unit: 'binary', maxLength: 4 }),
);
const TEXT = fc.array(PIECE, { maxLength: 24 }).map((p) => p.join(''));

test('the forms read from stored tokens are the analyzer\'s, through one segment\'s cache', () => {
  fc.assert(
    fc.property(fc.array(TEXT, { minLength: 1, maxLength: 30 }), (texts) => {
      const read = segment();
      for (const text of texts) {
        const forms = read(text);
        if (forms !== undefined) assert.deepEqual(forms, analyzeSurfaces(text), JSON.stringify(text));
      }
    }),
    { numRuns: 400 },
  );
});

test('plain ASCII text is never declined', () => {
  fc.assert(
    fc.property(fc.array(fc.string({ unit: fc.integer({ min: 0, max: 127 }).map((c) => String.fromCharCode(c)), maxLength: 200 }), { minLength: 1, maxLength: 20 }), (texts) => {
      const read = segment();
      for (const text of texts) assert.deepEqual(read(text), analyzeSurfaces(text), JSON.stringify(text));
    }),
  );
});

test('characters the analyzer folds into words are word characters to the stored text: no text holding them is declined', () => {
  const read = segment();
  // `²`, `½`, `º` and `µ` are Latin-1 symbols, but the analyzer folds them to digits and letters
  for (const text of ['an area of 12 km² here', 'x½', '1º lugar', '5 µm', 'the km and x']) {
    assert.deepEqual(read(text), analyzeSurfaces(text), text);
  }
  // separators the analyzer splits at, ASCII or not, and words it splits inside (`€`, a ligature)
  for (const text of ['a — b – c’s “d” e\u00a0f', 'naïve café, Straße', '5€ ﬁve', 'e\u0301t\u00e9']) {
    assert.deepEqual(read(text), analyzeSurfaces(text), text);
  }
});

test('a text with a separator token the analyzer does not split at is declined, and the rest of the segment is not affected', () => {
  // tokens as a scanner that took `²` for a separator would give them: "x", "²", " "
  const tokens = ['x', '²', ' '];
  const words = [true, false, false];
  const forms: string[] = [];
  const analysis = new StoredTokenAnalysis({ token: (id) => tokens[id]!, isWord: (id) => words[id]! }, (surface) => forms.push(surface) - 1);
  const out = new IntBuffer();
  assert.equal(analysis.surfacesOf(Int32Array.of(0, 1, 0), 3, out), false, 'x²x: the analyzer reads "x2x"');
  assert.equal(analysis.surfacesOf(Int32Array.of(0, 2, 0), 3, out), true);
  assert.deepEqual(Array.from(out.view(), (n) => forms[n]), ['x', 'x']);
  assert.equal(analysis.surfacesOf(Int32Array.of(1), 1, out), false, 'declined again, from its recorded analysis');
});
