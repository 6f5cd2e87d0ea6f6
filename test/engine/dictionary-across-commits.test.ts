// A searcher updates the surface dictionary of the commit before it instead of rebuilding it: after
// commits, deletes and merges, suggestions and did-you-mean equal those of a searcher built from scratch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Index } from '../../src/engine/index.js';
import { createSearcher, dictionaryCarry } from '../../src/engine/query/searcher.js';
import { tempDir } from './index/fixtures.js';

const WORDS = ['search', 'searching', 'seashell', 'season', 'engine', 'engineer', 'engines', 'index', 'indexes',
  'indexing', 'ranking', 'ranked', 'query', 'queries', 'phrase', 'phrases', 'spelling', 'speller', 'segment'];

test('suggest and did-you-mean after commits, deletes and merges match a fresh searcher', async (t) => {
  const index = await Index.open(tempDir(t), { mergeFactor: 3, mergeFloorBytes: 1 });
  const w = await index.openWriter();
  try {
    let seed = 7;
    const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const typos = ['serch', 'enginer', 'indexng', 'quereis', 'spellign', 'segmnet', 'rankng'];
    for (let commit = 0; commit < 12; commit++) {
      // a probe before each commit builds the dictionary (and its correction structures) the next updates
      const before = index.searcher();
      before.suggest('se');
      before.search('serch enginer');
      for (let d = 0; d < 6; d++) {
        const cid = BigInt(1 + rnd(40));
        const text = Array.from({ length: 3 + rnd(8) }, () => WORDS[rnd(WORDS.length)]).join(' ');
        w.upsert({ cid, title: `doc ${cid}`, text: `${text} word${commit}x${d}` });
      }
      if (commit % 4 === 3) w.delete(BigInt(1 + rnd(40)));
      await w.commit();
      const searcher = index.searcher();
      const snap = index.snapshot();
      const fresh = createSearcher([...snap.segments], snap.generation);
      // each document's own word (`word<commit>x<n>`) leaves the dictionary when a merge drops the document
      const own = Array.from({ length: commit + 1 }, (_, k) => `word${k}x`);
      for (const prefix of ['s', 'se', 'sea', 'en', 'in', 'q', 'p', 'word', ...own, 'x']) {
        assert.deepEqual(searcher.suggest(prefix, 8), fresh.suggest(prefix, 8), `commit ${commit}: suggest ${prefix}`);
      }
      for (const typo of typos) {
        assert.equal(searcher.search(typo).didYouMean, fresh.search(typo).didYouMean, `commit ${commit}: ${typo}`);
      }
    }
    assert.ok(index.snapshot().segments.length < 12, 'merges happened along the way');
  } finally {
    await w.close();
    await index.close();
  }
});

test('a reader warmed after adopting a commit has updated its dictionary before the next query; one that never built one builds none', async (t) => {
  const dir = tempDir(t);
  const writerSide = await Index.open(dir);
  const w = await writerSide.openWriter();
  const reader = await Index.open(dir);
  const idle = await Index.open(dir);
  try {
    w.upsert({ cid: 1n, title: 'one', text: 'search engines rank documents' });
    await w.commit();
    await reader.refresh();
    const first = reader.searcher();
    first.suggest('se'); // builds the dictionary that the next commit's searcher updates
    first.search('engimes'); // and a did-you-mean answer it may keep
    const built = dictionaryCarry(first)!.dictionary;
    w.upsert({ cid: 2n, title: 'two', text: 'seashells by the seashore' });
    await w.commit();
    assert.equal(await reader.refresh(), true);
    reader.warm();
    const carry = dictionaryCarry(reader.searcher())!;
    assert.notEqual(carry.dictionary, built, 'the warmed searcher holds a dictionary of its own');
    assert.deepEqual([...carry.sources.keys()].sort(), reader.snapshot().segments.map((s) => s.name).sort());
    assert.equal(carry.dictionary.df('seashells'), 1);
    // the first searcher's answer is kept, with the forms the commit changed to check it against
    assert.equal(carry.corrections?.answers.get('engimes')?.fix, 'engines');
    assert.deepEqual([...carry.corrections!.changes.entries()].map(([f]) => f), ['by', 'seashells', 'seashore', 'the', 'two']);
    const snap = reader.snapshot();
    assert.deepEqual(reader.searcher().suggest('se', 8), createSearcher([...snap.segments], snap.generation).suggest('se', 8));

    await idle.refresh();
    idle.warm();
    assert.equal(dictionaryCarry(idle.searcher()), undefined, 'no dictionary was needed, so none is built');
  } finally {
    await w.close();
    await Promise.all([writerSide.close(), reader.close(), idle.close()]);
  }
});
