/** The query parser: lexing, occurs, spans, what counts as a clause, and the bad_query limits. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { QuarryError } from '../../../src/kernel/errors.js';
import { MAX_QUERY_BYTES, normalizeSiteHost, parseQuery } from '../../../src/engine/query/parser.js';

const shape = (q: string) => parseQuery(q).clauses.map((c) =>
  c.kind === 'site' ? `${c.occur}:site:${c.host}` : `${c.occur}:${c.kind}:${c.terms.join(' ')}`);

describe('parseQuery', () => {
  test('terms are optional by default, + requires, - excludes; terms are analyzed and stemmed', () => {
    assert.deepEqual(shape('Running +Cats -dogs'), ['should:term:run', 'must:term:cat', 'mustNot:term:dog']);
  });

  test('a quoted phrase keeps its terms in order; + and - apply to it', () => {
    assert.deepEqual(shape('+"New York" -"big apples"'), ['must:phrase:new york', 'mustNot:phrase:big appl']);
    assert.equal(parseQuery('"new york"').hasPhrase, true);
    assert.equal(parseQuery('new york').hasPhrase, false);
  });

  test('an unmatched quote opens a phrase that runs to the end of q', () => {
    assert.deepEqual(shape('alpha "beta gamma delta'), ['should:term:alpha', 'should:phrase:beta gamma delta']);
  });

  test('a quote also ends a bare word', () => {
    assert.deepEqual(shape('alpha"beta gamma"delta'), ['should:term:alpha', 'should:phrase:beta gamma', 'should:term:delta']);
  });

  test('site: filters by a normalized host, in any case, with + and -', () => {
    assert.deepEqual(shape('site:Docs.Example.COM -site:bad.org +SITE:http://x.net:8080/path'),
      ['should:site:docs.example.com', 'mustNot:site:bad.org', 'must:site:x.net']);
    assert.equal(normalizeSiteHost('.example.com.'), 'example.com');
    assert.equal(normalizeSiteHost('Bücher.de'), 'xn--bcher-kva.de');
  });

  test('lone +, - and site: are ignored and are not clauses', () => {
    assert.deepEqual(shape('+ - site: alpha -'), ['should:term:alpha']);
    assert.deepEqual(shape('+'), []);
  });

  test('a word that analyzes to several tokens gives several terms with its occur; one that analyzes to nothing is dropped', () => {
    assert.deepEqual(shape('-e-mail +U.S.A !!!'), ['mustNot:term:e mail', 'must:term:u s a']);
  });

  test('each clause records its span, so a rewrite can replace exactly one word', () => {
    const q = '  +reserch "foo bar" site:a.com';
    const [term, phrase, site] = parseQuery(q).clauses;
    assert.equal(q.slice(term!.start, term!.end), 'reserch');
    const [word] = parseQuery('  (Reserch),').clauses;
    assert.deepEqual(word!.kind === 'term' && word.spans, [[3, 10]]);
    assert.equal(q.slice(phrase!.start, phrase!.end), '"foo bar"');
    assert.equal(q.slice(site!.start, site!.end), 'site:a.com');
  });

  test('empty and too long queries are bad_query', () => {
    for (const q of ['', '   \t\n', 'x'.repeat(MAX_QUERY_BYTES + 1), 'é'.repeat(MAX_QUERY_BYTES / 2 + 1), 42]) {
      assert.throws(() => parseQuery(q), (e: unknown) => QuarryError.is(e) && e.code === 'bad_query' && e.param === 'q', String(q).slice(0, 20));
    }
    assert.equal(parseQuery('x'.repeat(MAX_QUERY_BYTES)).clauses.length, 1);
  });

  test('any number of clauses within the byte limit is accepted (long natural-language queries)', () => {
    const many = Array.from({ length: MAX_QUERY_BYTES / 2 }, () => 'a').join(' '); // 2,048 one-letter clauses, 4,095 bytes
    assert.equal(parseQuery(many).clauses.length, MAX_QUERY_BYTES / 2);
    const words = Array.from({ length: 300 }, (_, i) => `w${i % 97}`).join(' ');
    assert.equal(parseQuery(words).clauses.length, 300);
  });
});
