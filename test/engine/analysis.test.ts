// The analyzer (CONTRACT §2): NFKC, lower case, diacritics folded, split on anything that is not a letter
// or digit, Porter2 stems; tokens carry consecutive positions and the offsets of the original text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { analyze, analyzeSurfaces, analyzeTerms, tokenize } from '../../src/engine/analysis/analyzer.js';

/**
 * The contract's steps applied to the whole string at once, the plainest reading of CONTRACT §2. The
 * analyzer folds code point by code point (to keep offsets into the original text); the two must agree.
 */
function referenceSurfaces(text: string): string[] {
  const folded = text.normalize('NFKC').toLowerCase().normalize('NFD').replace(/\p{M}/gu, '');
  return folded.split(/[^\p{L}\p{N}]+/u).filter((s) => s !== '');
}

test('examples: case, diacritics, compatibility forms and stems', () => {
  assert.deepEqual(analyzeSurfaces('Résumé RUNNING, ﬁsh-tank'), ['resume', 'running', 'fish', 'tank']);
  assert.deepEqual(analyzeTerms('Résumé RUNNING, ﬁsh-tank'), ['resum', 'run', 'fish', 'tank']);
  assert.deepEqual(analyzeSurfaces('ÅNGSTRÖM naïve Ｆｕｌｌｗｉｄｔｈ'), ['angstrom', 'naive', 'fullwidth']);
  assert.deepEqual(analyzeTerms('indexers indexing indexed'), ['index', 'index', 'index']);
  assert.deepEqual(analyzeSurfaces('e\u0301cole cafe\u0301'), ['ecole', 'cafe'], 'combining marks fold away, not split');
  assert.deepEqual(analyzeSurfaces('x²+y½'), ['x2', 'y1', '2'], 'a character folding to a separator splits there');
  assert.deepEqual(analyzeSurfaces('C++ & node.js 2026'), ['c', 'node', 'js', '2026']);
});

test('positions are consecutive from the first position; offsets point into the original text', () => {
  const text = 'The  QUICK brown—Fox\tjumps!';
  const tokens = analyze(text, 7);
  assert.deepEqual(tokens.map((t) => t.position), [7, 8, 9, 10, 11]);
  assert.deepEqual(tokens.map((t) => text.slice(t.start, t.end)), ['The', 'QUICK', 'brown', 'Fox', 'jumps']);
  assert.equal(tokenize(text, () => {}, 7), 5);
});

test('a long token is kept whole, and its inflections share a stem', () => {
  const text = `${'x'.repeat(100)} Internationalization internationalization`;
  const tokens = analyze(text);
  assert.equal(tokens[0]!.surface, 'x'.repeat(100));
  assert.equal(tokens[1]!.term, tokens[2]!.term);
  assert.equal(tokens[1]!.surface, 'internationalization');
});


const alphabet = fc.constantFrom(
  'a', 'B', 'z', 'Q', '0', '9', ' ', '-', '.', '_', "'", 'é', 'É', 'e\u0301', '\u0301', '½', 'ﬁ', 'ß', 'İ', '𝐀', '😀',
  'Ω', 'ñ', '\u00a0', 'ı', 'ǅ', 'Å', 'Running', 'THE', 'résumé', '²', 'Ⅻ', '가', '\u1100\u1161', 'ｘ', 'Straße',
);

test('property: the surfaces are the contract steps applied to the whole text; spans are in order', () => {
  fc.assert(fc.property(fc.array(alphabet, { maxLength: 24 }).map((parts) => parts.join('')), (text) => {
    const tokens = analyze(text);
    assert.deepEqual(tokens.map((t) => t.surface), referenceSurfaces(text));
    // spans are non-empty and in order; they overlap only where one character folds into two tokens
    let previous = { start: 0, end: 0 };
    for (const t of tokens) {
      assert.ok(t.start < t.end && t.end <= text.length, JSON.stringify(t));
      assert.ok(t.start >= previous.start && t.end >= previous.end, JSON.stringify([previous, t]));
      if (t.start < previous.end) assert.ok(/[^\p{L}\p{N}\p{M}]/u.test(text.slice(t.start, previous.end).normalize('NFKC')), JSON.stringify([previous, t]));
      previous = t;
    }
  }), { numRuns: 2000 });
});

test('property: a first-unit filter passes exactly the tokens it wants, with their positions and offsets', () => {
  fc.assert(fc.property(fc.array(alphabet, { maxLength: 24 }).map((parts) => parts.join('')), fc.array(fc.constantFrom(...'abcefinqrstxzß0129ıω가𝐀'), { maxLength: 6 }), (text, firsts) => {
    const wanted = new Set(firsts.map((c) => c.charCodeAt(0)));
    const all: unknown[] = [];
    const count = tokenize(text, (term, surface, position, start, end) => { all.push({ term, surface, position, start, end }); }, 5, false);
    const kept: unknown[] = [];
    const keptCount = tokenize(text, (term, surface, position, start, end) => { kept.push({ term, surface, position, start, end }); }, 5, false, (unit) => wanted.has(unit));
    assert.equal(keptCount, count, 'a refused token still takes its position');
    assert.deepEqual(kept, all.filter((t) => wanted.has((t as { surface: string }).surface.charCodeAt(0))));
  }), { numRuns: 2000 });
});
