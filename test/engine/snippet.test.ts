// Result snippets (CONTRACT §2): ≤ 240 code units, plain text, the window with the most distinct query
// terms, `…` where cut, white space collapsed, word-boundary cuts, the start when nothing matches.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { makeSnippet, Snippets } from '../../src/engine/snippet/index.js';
import { SCAN_LIMIT } from '../../src/engine/snippet/snippet.js';
import { analyze, analyzeTerms } from '../../src/engine/analysis/analyzer.js';

const terms = (q: string) => new Set(analyzeTerms(q));
const filler = (n: number) => Array.from({ length: n }, (_, i) => `word${i % 97}`).join(' ');

test('a short text comes back whole, white space collapsed, without ellipses', () => {
  assert.equal(makeSnippet('  Hello,\n\n   search\tworld.  ', terms('search')), 'Hello, search world.');
  assert.equal(makeSnippet('', terms('x')), '');
  assert.equal(makeSnippet('cells\u00a0divide\nquickly\tnow', terms('cells')), 'cells divide quickly now', 'each white-space unit alone becomes a space');
  assert.equal(makeSnippet('cells divide quickly', terms('cells')), 'cells divide quickly');
});

test('no matching term: the start of the text, cut on a word boundary', () => {
  const text = filler(200);
  const s = makeSnippet(text, terms('absent'));
  assert.ok(s.length <= 240);
  assert.ok(s.endsWith('…'));
  assert.ok(text.startsWith(s.slice(0, -1)));
  assert.match(s, /word\d+…$/); // ends after a whole word
  assert.ok(text.slice(s.length - 1).startsWith(' '), 'cut falls between words');
});

test('the window with the most distinct terms wins over one with repeated terms', () => {
  const text = `${filler(50)} apple apple apple apple ${filler(80)} apple banana cherry ${filler(80)}`;
  const s = makeSnippet(text, terms('apple banana cherry'));
  assert.ok(s.includes('apple banana cherry'), s);
  assert.ok(s.startsWith('…') && s.endsWith('…'));
  assert.ok(s.length <= 240);
});

test('terms match through stemming and folding, and the original text is shown', () => {
  const text = `${filler(100)} The Indexers were Running fast over Café menus. ${filler(100)}`;
  const s = makeSnippet(text, terms('indexer run cafe'));
  assert.ok(s.includes('The Indexers were Running fast over Café menus.'), s);
});

test('a term deep in a long document is shown with context before it', () => {
  const text = `${filler(2000)} needle ${filler(2000)}`;
  const s = makeSnippet(text, terms('needle'));
  assert.ok(s.includes(' needle '));
  assert.ok(s.indexOf('needle') > 10, 'some context precedes the term');
  assert.ok(s.length <= 240);
});

test('a 1 MiB document is handled (scan capped), never over the budget', () => {
  const text = 'x'.repeat(1 << 20);
  const s = makeSnippet(text, terms('x'));
  assert.equal(s.length, 240);
  assert.ok(s.endsWith('…'));
});

test('surrogate pairs are never split and the budget counts UTF-16 code units', () => {
  const text = '😀'.repeat(300);
  const s = makeSnippet(text, terms('nothing'), 240);
  assert.ok(s.length <= 240);
  assert.ok(!/[\ud800-\udbff](?![\udc00-\udfff])/.test(s) && !/(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s), 'no lone surrogate');
});

test('the context before a term never starts inside a surrogate pair', () => {
  // a one-code-unit lead-in before "beta" would begin on the low half of the emoji
  assert.equal(makeSnippet('😀beta', terms('beta'), 8), '…beta');
  assert.equal(makeSnippet('x😀beta', terms('beta'), 10), '…😀beta', 'a lead-in of two code units takes the whole pair');
});

test('property: any text and terms give ≤ maxChars, no double spaces, no lone surrogates, ellipsis only at the ends', () => {
  const chunk = fc.oneof(fc.constantFrom('alpha', 'beta', 'gamma', ' ', '\n\t', '. ', 'Ωmega', '😀', 'x'.repeat(300)), fc.string({ maxLength: 20 }));
  fc.assert(fc.property(fc.array(chunk, { maxLength: 120 }), fc.subarray(['alpha', 'beta', 'gamma', 'omega']), fc.integer({ min: 1, max: 300 }),
    (parts, q, max) => {
      const text = parts.join('');
      const s = makeSnippet(text, new Set(q.flatMap((w) => analyzeTerms(w))), max);
      assert.ok(s.length <= max, `${s.length} > ${max}`);
      assert.ok(!/\s\s/.test(s.replace(/\u2026/g, '')), 'white space collapsed');
      assert.ok(!/[\ud800-\udbff](?![\udc00-\udfff])/.test(s) && !/(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s), 'no lone surrogate');
      const inner = s.replace(/^\u2026/, '').replace(/\u2026$/, '');
      if (!text.includes('\u2026')) assert.ok(!inner.includes('\u2026'));
    }), { numRuns: 300 });
});

test('the stem-key prefilter: every word starts with its stem minus the last letter, bar dying/lying/tying', () => {
  // the invariant makeSnippet relies on to skip stemming most tokens, checked on random words
  // random letters, and words built on the suffixes Porter2 rewrites (steps 1-5)
  const suffix = fc.constantFrom('', 's', 'es', 'ies', 'ied', 'ed', 'ing', 'ingly', 'edly', 'eed', 'eedly', 'y', 'ly', 'ational', 'tional',
    'enci', 'anci', 'abli', 'entli', 'izer', 'ization', 'ation', 'ator', 'alism', 'aliti', 'alli', 'fulness', 'ousli', 'ousness',
    'iveness', 'iviti', 'biliti', 'bility', 'bli', 'ogi', 'li', 'alize', 'icate', 'iciti', 'ical', 'ful', 'ness', 'ative', 'ement', 'ment', 'ible', 'able', 'll', 'e');
  const letters = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzy'.split('')), minLength: 1, maxLength: 14 });
  const word = fc.oneof(letters, fc.tuple(letters, suffix, suffix).map(([w, a, b]) => w + a + b));
  fc.assert(fc.property(word, (w) => {
    const [t] = analyzeTerms(w);
    if (t === undefined || ['die', 'lie', 'tie'].includes(t)) return;
    assert.ok(w.startsWith(t.slice(0, Math.max(1, t.length - 1))), `${w} → ${t}`);
  }), { numRuns: 40000 });
  for (const [w, t] of [['dying', 'die'], ['lying', 'lie'], ['tying', 'tie']]) {
    const s = makeSnippet(`${filler(60)} ${w} ${filler(60)}`, new Set([t!]));
    assert.ok(s.includes(` ${w} `), `${w} found through its exceptional stem`);
  }
});

/**
 * The rules of the header, written plainly: every token analyzed and stemmed, the window found over all
 * of them, the text collapsed one code unit at a time. makeSnippet must give the same string.
 */
function referenceSnippet(text: string, queryTerms: ReadonlySet<string>, maxChars: number): string {
  const isSpace = (c: string) => /\s/.test(c);
  const isWord = (s: string, i: number) => i >= 0 && i < s.length && /[\p{L}\p{N}\p{M}\ud800-\udfff]/u.test(s[i]!);
  const cutPoint = (s: string, at: number) => (at > 0 && at < s.length && /[\udc00-\udfff]/.test(s[at]!) && /[\ud800-\udbff]/.test(s[at - 1]!) ? at - 1 : at);
  const render = (start: number): string => {
    while (start < text.length && isSpace(text[start]!)) start++;
    const leading = start > 0 && /\S/.test(text.slice(0, start));
    const budget = maxChars - (leading ? 1 : 0);
    let out = '';
    let pending = false;
    let i = start;
    for (; i < text.length && out.length <= budget; i++) {
      if (isSpace(text[i]!)) { pending = true; continue; }
      if (pending) { out += ' '; pending = false; }
      out += text[i];
    }
    const lead = leading ? '\u2026' : '';
    if (!(out.length > budget || /\S/.test(text.slice(i)))) return lead + out.trimEnd();
    let cut = budget - 1;
    if (cut <= 0) return lead + '\u2026'.slice(0, Math.max(0, budget));
    if (isWord(out, cut - 1) && isWord(out, cut)) {
      let p = cut - 1;
      const stop = cut - budget * 0.25;
      while (p > 0 && p >= stop && !(isWord(out, p) && !isWord(out, p - 1))) p--;
      if (p > 0 && p >= stop) cut = p;
    }
    return lead + out.slice(0, cutPoint(out, cut)).trimEnd() + '\u2026';
  };
  if (maxChars <= 0) return '';
  const budget = maxChars - 2;
  const scanned = text.length > SCAN_LIMIT ? text.slice(0, cutPoint(text, SCAN_LIMIT)) : text;
  const hits = analyze(scanned).filter((t) => queryTerms.has(t.term));
  if (hits.length === 0) return render(0);
  let best = { distinct: 0, occurrences: 0, s: hits[0]!.start, e: Math.min(hits[0]!.end, hits[0]!.start + budget) };
  for (let r = 0; r < hits.length; r++) {
    let l = 0;
    while (l < r && hits[r]!.end - hits[l]!.start > budget) l++;
    const span = hits.slice(l, r + 1);
    const distinct = new Set(span.map((t) => t.term)).size;
    if (distinct > best.distinct || (distinct === best.distinct && span.length > best.occurrences)) {
      best = { distinct, occurrences: span.length, s: hits[l]!.start, e: Math.min(hits[r]!.end, hits[l]!.start + budget) };
    }
  }
  const lead = Math.min(40, Math.max(0, budget - (best.e - best.s)) >> 1);
  let start = Math.max(0, best.s - lead);
  if (start > 0 && !isSpace(text[start - 1] ?? '')) {
    for (let i = start; i < best.s; i++) if (isSpace(text[i]!)) { start = i + 1; break; }
  }
  if (cutPoint(text, start) !== start) start++;
  return render(start);
}

test('property: makeSnippet gives what the plain rules give, for any text, terms and budget', () => {
  // words whose folded forms start alike but stem apart, non-ASCII letters, marks, ligatures, full-width
  // letters and white space of every kind: each path of the tokenizer's prefix filter
  const words = ['cells', 'cellular', 'cel', 'Café', 'cafe', 'caf\u0301e', 'naïve', 'NAIVE', 'ﬁsh', 'fish', 'ｆｉｓｈ',
    'dying', 'die', 'Ωmega', 'ωmega', 'the', 'then', 'theory', 'happy', 'Happily', 'possibility', 'flies', 'sensitivity', 'a', 'an', 'x1', '1x', 'éa', 'straße', 'STRASSE', '😀'];
  const chunk = fc.oneof(fc.constantFrom(...words), fc.constantFrom(' ', '  ', '\n\t', '. ', '\u00a0', '\u3000', '-', ''),
    fc.string({ maxLength: 12 }), fc.string({ unit: 'grapheme', maxLength: 6 }));
  fc.assert(fc.property(fc.array(chunk, { maxLength: 80 }), fc.array(fc.constantFrom(...words), { maxLength: 5 }), fc.integer({ min: 1, max: 120 }),
    (parts, q, max) => {
      const text = parts.join(' ');
      const queryTerms = new Set(q.flatMap((w) => analyzeTerms(w)));
      assert.equal(makeSnippet(text, queryTerms, max), referenceSnippet(text, queryTerms, max));
    }), { numRuns: 2000 });
});

test('a window after hundreds of occurrences is found, and one Snippets cuts a shorter text after it', () => {
  const queryTerms = terms('alpha beta');
  const page = new Snippets(queryTerms, 80);
  const long = `${'alpha '.repeat(700)}${filler(40)} alpha beta ${filler(40)}`;
  const s = page.of(long);
  assert.match(s, /alpha beta/, 'the only window with both terms, past the 700th occurrence');
  assert.equal(s, makeSnippet(long, queryTerms, 80));
  assert.equal(page.of(`${filler(20)} beta ${filler(20)}`), makeSnippet(`${filler(20)} beta ${filler(20)}`, queryTerms, 80));
});

test('one Snippets serves a whole page: each text cut as makeSnippet cuts it alone', () => {
  const queryTerms = terms('cell membranes of the naïve');
  const page = new Snippets(queryTerms, 60);
  for (const text of [`${filler(30)} cell membrane ${filler(30)}`, 'Naive cells.', filler(200), '', 'the the the']) {
    assert.equal(page.of(text), makeSnippet(text, queryTerms, 60));
  }
});
