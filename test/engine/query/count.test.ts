/**
 * The exact `total` of a disjunction on a segment large enough that a union of rare words is counted by
 * walking it rather than through a bitset of the whole segment (count.ts, SPARSE_RATIO): filters,
 * exclusions and deleted documents must count as they do in the bitset pass and in the reference; a
 * frequent words' bitsets (one to five) beside rarer words' lists are counted without a union bitset,
 * the lists merged or, when long, each walked on its own; and lists too dense to walk, with no bitset of
 * their own, are counted as their bits are first set.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Index, createSearcher, type IndexWriter, type Searcher, type SearcherOptions } from '../../../src/engine/index.js';
import type { StoredDocument } from '../../../src/engine/index/types.js';
import { SPARSE_RATIO } from '../../../src/engine/query/count.js';
import { TERM_BITS_MIN_RATIO } from '../../../src/engine/query/segment-caches.js';
import { REFERENCE_COMMON_RATIO, referenceSearch } from './reference.js';

const N = 12_000;

/** `N` documents of "granite" and the words `wordsOf(i)` adds, on the host `hostOf(i)` gives. */
function rocks(wordsOf: (i: number) => string[], hostOf: (i: number) => string | undefined): StoredDocument[] {
  const docs: StoredDocument[] = [];
  for (let i = 0; i < N; i++) {
    const doc: StoredDocument = { cid: BigInt(i + 1), title: '', text: ['granite', ...wordsOf(i)].join(' ') };
    const host = hostOf(i);
    if (host !== undefined) doc.host = host;
    docs.push(doc);
  }
  return docs;
}

/** Indexes `docs` in one commit into a new index and runs `fn` with it and its open writer; removes it after. */
async function withIndexOf(docs: StoredDocument[], fn: (index: Index, writer: IndexWriter) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-count-'));
  const index = await Index.open(dir);
  try {
    const writer = await index.openWriter();
    try {
      for (const d of docs) writer.upsert(d);
      await writer.commit();
      await fn(index, writer);
    } finally {
      await writer.close();
    }
  } finally {
    await index.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `s` answers `q` as the reference does over `live`: the same total and the same first five hits and scores. */
function assertAsReference(s: Searcher, live: StoredDocument[], q: string, label: string): void {
  const want = referenceSearch(live, q, REFERENCE_COMMON_RATIO);
  const got = s.search(q, { pageSize: 5, snippets: false });
  assert.equal(got.total, want.total, `${label}: total of ${q}`);
  assert.deepEqual(got.hits.map((h) => [h.cid, h.score]), want.hits.slice(0, 5).map((h) => [h.cid, h.score]), `${label}: hits of ${q}`);
}

const dfIn = (docs: StoredDocument[]) => (w: string) => docs.filter((d) => d.text.split(' ').includes(w)).length;
const unionOf = (q: string) => q.split(' ').filter((t) => !t.startsWith('-') && !t.startsWith('site:'));
const searcherOf = (index: Index, options: SearcherOptions = {}) =>
  createSearcher([...index.snapshot().segments], (index.searcher() as Searcher).generation, options);

test('a sparse union is counted by walking it, with filters, exclusions and deletes', async () => {
  const docs = rocks((i) => {
    const words: string[] = [];
    if (i % 509 === 3) words.push('basalt');
    if (i % 613 === 5 || i % 509 === 3 && i % 2 === 0) words.push('obsidian');
    if (i % 797 === 7) words.push('pumice');
    if (i % 3 === 0) words.push('marble');
    if (i % 5 === 0) words.push('slate');
    if (i % 7 === 0) words.push('shale');
    if (i % 11 === 0) words.push('gneiss');
    if (i % 13 === 0) words.push('schist');
    if (i % 17 === 0) words.push('quartz');
    if (i % 61 === 2) words.push('feldspar');
    if (i % 73 === 4 || i % 61 === 2 && i % 3 === 0) words.push('mica');
    return words;
  }, (i) => (i % 4 === 0 ? undefined : i % 4 === 1 ? 'one.example' : 'two.example'));
  const df = dfIn(docs);
  await withIndexOf(docs, async (index, writer) => {
    const queries = [
      'basalt', 'basalt obsidian', 'basalt obsidian pumice', 'basalt site:one.example', 'obsidian -basalt',
      'basalt obsidian -marble site:two.example', 'pumice site:one.example site:two.example', 'basalt -site:one.example',
    ];
    const check = (live: StoredDocument[], label: string) => {
      const s = searcherOf(index);
      for (const q of queries) {
        assert.ok(unionOf(q).reduce((n, w) => n + df(w), 0) * SPARSE_RATIO < Math.ceil(N / 32), `${q}: a union sparse enough to walk`);
        assertAsReference(s, live, q, label);
      }
      // words in a fifth to a seventeenth of the documents have bitsets (snapshot.ts termBits) and are not
      // common: the union counts its bitsets (one to five of them) and adds the rarer words' documents outside them
      const unions = [
        'slate basalt', 'slate basalt pumice', 'obsidian slate', 'slate shale', 'shale basalt slate pumice',
        'slate shale gneiss', 'gneiss schist quartz basalt', 'slate shale gneiss schist', 'quartz schist gneiss shale slate pumice',
      ];
      // and beside them rarer words too frequent to walk together (each walked on its own, told apart by their bits)
      assert.ok(df('feldspar') + df('mica') >= Math.ceil(N / 32) / SPARSE_RATIO && Math.max(df('feldspar'), df('mica')) <= TERM_BITS_MIN_RATIO * N);
      unions.push('slate feldspar mica', 'feldspar slate mica shale basalt', 'gneiss mica feldspar pumice');
      for (const q of unions) {
        for (const plan of ['auto', 'maxscore'] as const) assertAsReference(searcherOf(index, { plan }), live, q, `${label} (${plan})`);
      }
    };
    check(docs, 'all live');
    for (let i = 3; i < N; i += 1018) writer.delete(docs[i]!.cid); // half of the basalt documents
    await writer.commit();
    check(docs.filter((_, i) => i < 3 || (i - 3) % 1018 !== 0), 'with deletes');
  });
});

test('a union of lists too dense to walk and too rare for bitsets is counted as their bits are set, with deletes', async () => {
  const docs = rocks((i) => {
    const words: string[] = [];
    if (i % 61 === 0) words.push('basalt');
    if (i % 97 === 1 || (i % 61 === 0 && i % 2 === 0)) words.push('obsidian'); // half the basalt documents too
    if (i % 101 === 2 || i % 122 === 0) words.push('pumice');
    return words;
  }, (i) => (i % 3 === 0 ? 'one.example' : undefined));
  const df = dfIn(docs);
  for (const w of ['basalt', 'obsidian', 'pumice']) assert.ok(df(w) <= TERM_BITS_MIN_RATIO * N, `${w}: no bitset of its own`);
  await withIndexOf(docs, async (index, writer) => {
    const queries = ['basalt obsidian', 'basalt obsidian pumice', 'obsidian pumice', 'basalt obsidian site:one.example', 'basalt pumice -obsidian'];
    const check = (live: StoredDocument[], label: string) => {
      const s = searcherOf(index);
      for (const q of queries) {
        assert.ok(unionOf(q).reduce((n, w) => n + df(w), 0) * SPARSE_RATIO >= Math.ceil(N / 32), `${q}: a union too dense to walk`);
        assertAsReference(s, live, q, label);
      }
    };
    check(docs, 'all live');
    for (let i = 0; i < N; i += 122) writer.delete(docs[i]!.cid); // basalt, obsidian and pumice documents alike
    await writer.commit();
    check(docs.filter((_, i) => i % 122 !== 0), 'with deletes');
  });
});
