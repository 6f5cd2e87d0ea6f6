// The analyzer (CONTRACT §2): NFKC, lower case, diacritics folded, split on anything that is not a letter
// or digit, Porter2 stems; tokens carry consecutive positions and the offsets of the original text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { analyze, analyzeSurfaces, analyzeTerms, FILTER_PREFIX_UNITS, PrefixScanner, tokenize } from '../../src/engine/analysis/analyzer.js';

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

test('property: a prefix filter is shown each token\'s true first units and passes exactly the tokens it wants', () => {
  // the packing PrefixFilter documents: the first unit, then seven bits a unit
  const unpack = (prefix: number, units: number) => {
    let out = '';
    for (let k = units - 1; k >= 1; k--) out = String.fromCharCode((prefix >> (7 * (units - 1 - k))) & 0x7f) + out;
    return String.fromCharCode(prefix >> (7 * (units - 1))) + out;
  };
  fc.assert(fc.property(fc.array(alphabet, { maxLength: 24 }).map((parts) => parts.join('')), fc.array(fc.constantFrom(...'abcefinqrstxzß0129ıω가𝐀'), { maxLength: 6 }), (text, picks) => {
    const wanted = new Set(picks.map((c) => c.charCodeAt(0)));
    // wants a token by its first unit, or by its second when it is shown one
    const wants = (shown: string) => wanted.has(shown.charCodeAt(0)) || (shown.length > 1 && wanted.has(shown.charCodeAt(1)));
    const all: { surface: string }[] = [];
    const count = tokenize(text, (term, surface, position, start, end) => { all.push({ term, surface, position, start, end } as { surface: string }); }, 5, false);
    const shown: string[] = [];
    const kept: unknown[] = [];
    const keptCount = tokenize(text, (term, surface, position, start, end) => { kept.push({ term, surface, position, start, end }); }, 5, false, (prefix, units) => {
      assert.ok(Number.isSafeInteger(prefix) && prefix >= 0 && prefix < 2 ** 30 && units >= 1 && units <= FILTER_PREFIX_UNITS);
      shown.push(unpack(prefix, units));
      return wants(shown.at(-1)!);
    });
    assert.equal(keptCount, count, 'a refused token still takes its position');
    assert.equal(shown.length, all.length, 'the filter is asked once per token');
    all.forEach((t, k) => assert.ok(t.surface.startsWith(shown[k]!), `${JSON.stringify(shown[k])} is how ${JSON.stringify(t.surface)} starts`));
    assert.deepEqual(kept, all.filter((_t, k) => wants(shown[k]!)));
  }), { numRuns: 2000 });
});

test('property: a prefix scan finds exactly the tokens, in order and with their offsets, whose folded form starts with a prefix', () => {
  // ASCII stretches long and short (the scan takes stretches of plain ASCII apart from those near other
  // characters, and joins the latter when they are close), words next to non-ASCII letters, marks,
  // ligatures and separators of both kinds
  const piece = fc.oneof(alphabet, fc.constantFrom('cells cellular', 'Theory of the CELL', 'x1_y2', 'pro-active', 'ab'.repeat(40), ' word'.repeat(14)),
    fc.string({ unit: fc.constantFrom(...'aAbB0 -_é'), maxLength: 80 }));
  const prefix = fc.oneof(fc.constantFrom('a', 'ab', 'b', 'the', 'cel', 'ce', '0', 'x1', 'y', 'word', 'w', 'é', 'e', 'fi', 'ß', 'ss', 'ı', 'ω', '가', '𝐀', 'running'),
    fc.string({ unit: fc.constantFrom(...'abcéiß0'), minLength: 1, maxLength: 4 }));
  fc.assert(fc.property(fc.array(piece, { maxLength: 30 }).map((parts) => parts.join('')), fc.array(prefix, { maxLength: 6 }), (text, prefixes) => {
    const expected: [string, number, number][] = [];
    tokenize(text, (_term, surface, _position, start, end) => {
      if (prefixes.some((p) => surface.startsWith(p))) expected.push([surface, start, end]);
    }, 0, false);
    const found: [string, number, number][] = [];
    const scanner = new PrefixScanner(prefixes);
    scanner.scan(text, (surface, start, end) => { found.push([surface, start, end]); });
    assert.deepEqual(found, expected);
    const again: [string, number, number][] = [];
    scanner.scan(text, (surface, start, end) => { again.push([surface, start, end]); });
    assert.deepEqual(again, expected, 'a scanner scans any number of texts');
  }), { numRuns: 3000 });
  assert.throws(() => new PrefixScanner(['a', '']), RangeError);
});

test('tokens of long texts, of texts given while a sink tokenizes, and of every string representation agree', () => {
  const base = 'Naïve café cells, ﬁsh & 𝐀lpha — the RNA-seq data; ';
  const long = base.repeat(2000); // past the reused buffer
  const flat = (s: string) => analyze(s).map((t) => `${t.term}@${t.position}:${t.start}-${t.end}`);
  const expected = flat(base).length;
  assert.equal(flat(long).length, expected * 2000);
  assert.deepEqual(flat(long.slice(base.length, 2 * base.length)), flat(base), 'a sliced string');
  assert.deepEqual(flat(`${base.slice(0, 20)}${base.slice(20)}`), flat(base), 'a concatenation');
  const nested: string[] = [];
  // the inner text is longer than the outer one: were they to share a buffer, it would overwrite the rest
  tokenize(base, (_term, surface) => { nested.push(analyzeTerms(`${surface} ${'zz '.repeat(base.length)}`)[0]!); }, 0, false);
  assert.deepEqual(nested, analyze(base).map((t) => t.term), 'a sink that tokenizes does not disturb the walk it is called from');
});

test('a stemmed word does not keep the text it was read from alive', async () => {
  // The stem cache outlives every text it sees; were it to keep the words' slices, each long word would
  // hold its whole document. A fresh process, so that its heap holds only this test's texts.
  const script = `
    import { analyzeTerms } from ${JSON.stringify(new URL('../../src/engine/analysis/analyzer.ts', import.meta.url).pathname)};
    const filler = Buffer.alloc(256 * 1024, 'ab ').toString();
    const heap = () => { globalThis.gc(); return process.memoryUsage().heapUsed; };
    const before = heap();
    for (let i = 0; i < 100; i++) analyzeTerms('immunohistochemistry' + i.toString(36) + ' ' + filler);
    console.log(JSON.stringify({ grownMiB: (heap() - before) / 2 ** 20 }));
  `;
  const { execFileSync } = await import('node:child_process');
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8' });
  const { grownMiB } = JSON.parse(out.trim().split('\n').pop()!) as { grownMiB: number };
  // 100 texts of 256 KiB: 25 MiB if their words kept them
  assert.ok(grownMiB < 5, `the heap grew by ${grownMiB.toFixed(1)} MiB`);
});
