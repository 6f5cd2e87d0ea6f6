/**
 * Golden answers on a tiny hand-made corpus, through the real on-disk Index: each expected winner has a
 * comment saying why it must win (STYLE §15), and each language feature of CONTRACT §2 has its case.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Index, type Searcher } from '../../../src/engine/index.js';

const DOCS = [
  { cid: 1n, title: 'Cats and dogs', text: 'Cats are small carnivorous mammals. Dogs are loyal.', host: 'docs.pets.com', url: 'https://docs.pets.com/1' },
  { cid: 2n, title: 'Dog training', text: 'Training a dog takes patience. A trained dog is a happy dog.', host: 'pets.com' },
  { cid: 3n, title: 'The history of New York', text: 'New York City was founded as New Amsterdam.', host: 'history.org' },
  { cid: 4n, title: 'York minster', text: 'York is a city in England; its minster is new.', host: 'badpets.com' },
  { cid: 5n, title: 'Cat', text: 'cat' },
  { cid: 6n, title: 'Empty', text: '' },
  { cid: 80n, title: 'Zebra', text: 'zebra stripes' },
  { cid: 70n, title: 'Zebra', text: 'zebra stripes' },
];

let dir: string;
let index: Index;
let s: Searcher;
const cids = (q: string, opts = {}) => s.search(q, { pageSize: 50, ...opts }).hits.map((h) => Number(h.cid));

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'quarry-golden-'));
  index = await Index.open(dir);
  const w = await index.openWriter();
  for (const d of DOCS.slice(0, 4)) w.upsert(d);
  await w.commit(); // two segments, so ranking statistics must be global
  for (const d of DOCS.slice(4)) w.upsert(d);
  w.upsert({ cid: 99n, title: 'Deleted dog dog dog', text: 'dog' });
  await w.commit();
  w.delete(99n); // a deleted document neither matches nor counts in df/N/avgdl
  await w.commit();
  await w.close();
  s = index.searcher() as Searcher;
});
after(async () => {
  await index.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('ranking', () => {
  test('more occurrences win: "dog" ranks the training page (4 × dog) above cats-and-dogs (2 × dogs)', () => {
    assert.deepEqual(cids('dog'), [2, 1]);
  });

  test('length normalization: "cat" ranks the two-word doc above the longer one with the same tf', () => {
    // doc 5 "Cat cat" and doc 1 "Cats … Cats" both have tf 2; doc 5 is far shorter than avgdl
    assert.deepEqual(cids('cat'), [5, 1]);
  });

  test('scores are integers and ties go to the smaller cid', () => {
    const r = s.search('zebra');
    assert.deepEqual(r.hits.map((h) => Number(h.cid)), [70, 80]);
    assert.equal(r.hits[0]!.score, r.hits[1]!.score);
    for (const h of s.search('cat dog new york').hits) assert.ok(Number.isInteger(h.score) && h.score > 0);
  });

  test('a matched phrase scores as the sum of its terms', () => {
    const phrase = s.search('"new york"').hits[0]!;
    const terms = s.search('+new +york').hits.find((h) => h.cid === phrase.cid)!;
    assert.equal(phrase.score, terms.score);
  });

  test('the deleted document is gone and total is exact', () => {
    assert.equal(s.docCount, 8);
    assert.equal(s.search('dog').total, 2);
    assert.equal(s.get(99n), undefined);
    assert.equal(s.get(3n)?.title, 'The history of New York');
  });
});

describe('query language', () => {
  test('OR by default, + requires, - excludes', () => {
    assert.equal(s.search('cat dog').total, 3);
    assert.deepEqual(cids('+dog +cat'), [1]);
    assert.deepEqual(cids('dog -cat'), [2]);
  });

  test('a phrase matches consecutive positions only', () => {
    // doc 4 has "york" and "new" but not adjacent
    const r = s.search('"new york"');
    assert.deepEqual(r.hits.map((h) => Number(h.cid)), [3]);
    assert.equal(r.phraseExact, true);
    assert.deepEqual(cids('-"new york" york'), [4]);
  });

  test('a required phrase that matches nothing is relaxed to its terms, all required, with phraseExact false', () => {
    const r = s.search('"york new"');
    assert.equal(r.phraseExact, false);
    assert.deepEqual(r.hits.map((h) => Number(h.cid)).sort(), [3, 4]);
    assert.equal(s.search('new').phraseExact, undefined);
  });

  test('site: matches the host and its subdomains on whole labels, never a longer label', () => {
    // docs.pets.com and pets.com, never badpets.com; doc 1 has both words, doc 2 only dog
    assert.deepEqual(cids('dog cat york site:pets.com'), [1, 2]);
    assert.deepEqual(cids('york site:pets.com'), []); // york is only on history.org and badpets.com
    assert.deepEqual(cids('dog -site:docs.pets.com'), [2]);
    assert.deepEqual(cids('dog site:history.org site:docs.pets.com'), [1]);
    assert.deepEqual(cids('york +site:BadPets.com'), [4]);
  });

  test('only excluded clauses, only site: filters, lone operators and unknown words match nothing without an error', () => {
    // site: filters alone have no term or phrase to match (CONTRACT §2), so they match nothing either
    for (const q of ['-dog', '-dog -site:pets.com', '+', '- +', 'site:', 'qwertyuiop', 'site:pets.com', '+site:pets.com -dog']) {
      const r = s.search(q);
      assert.equal(r.total, 0, q);
      assert.deepEqual(r.hits, [], q);
    }
  });

  test('an unmatched quote runs to the end of q', () => {
    // the phrase "new york" (doc 3) or dog (docs 1, 2); doc 4 has both words but not as the phrase
    assert.deepEqual(cids('dog "new york').sort(), [1, 2, 3]);
    assert.equal(s.search('"new york').phraseExact, true);
    assert.equal(s.search('"new york').total, 1);
  });
});

describe('did you mean, suggest, snippets', () => {
  test('a misspelt word is corrected and everything else kept as written', () => {
    assert.equal(s.search('trainnig').didYouMean, 'training');
    assert.equal(s.search('+trainnig "new york"  -site:x.org').didYouMean, '+training "new york"  -site:x.org');
    assert.equal(s.search('(Trainnig),').didYouMean, '(training),');
  });

  test('no suggestion when the corrected query matches no more documents', () => {
    // "dogz" → "dogs", but every "dogs" document already matches "dog"
    assert.equal(s.search('dog dogz').didYouMean, undefined);
    assert.equal(s.search('dog').didYouMean, undefined);
  });

  test('suggest completes the last token from surface forms, by df then alphabetically', () => {
    assert.deepEqual(s.suggest('happy ca'), ['carnivorous', 'cat', 'cats']);
    assert.deepEqual(s.suggest('zeb', 1), ['zebra']);
    assert.deepEqual(s.suggest('!!'), []);
  });

  test('hits carry title, url, host and a snippet of the text with the query terms', () => {
    const h = s.search('loyal').hits[0]!;
    assert.equal(h.title, 'Cats and dogs');
    assert.equal(h.url, 'https://docs.pets.com/1');
    assert.equal(h.host, 'docs.pets.com');
    assert.ok(h.snippet!.includes('loyal'));
    assert.equal(s.search('loyal', { snippets: false }).hits[0]!.snippet, undefined);
  });
});
