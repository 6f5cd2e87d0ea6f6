/**
 * The exact `total` of a disjunction on a segment large enough that a union of rare words is counted by
 * walking it rather than through a bitset of the whole segment (count.ts, SPARSE_RATIO): filters,
 * exclusions and deleted documents must count as they do in the bitset pass and in the reference; and a
 * frequent words' bitsets beside rare words' lists are counted without a union bitset.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Index, createSearcher, type Searcher } from '../../../src/engine/index.js';
import type { StoredDocument } from '../../../src/engine/index/types.js';
import { SPARSE_RATIO } from '../../../src/engine/query/count.js';
import { TERM_BITS_MIN_RATIO } from '../../../src/engine/query/snapshot.js';
import { REFERENCE_COMMON_RATIO, referenceSearch } from './reference.js';

test('a sparse union is counted by walking it, with filters, exclusions and deletes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-count-'));
  const index = await Index.open(dir);
  try {
    const N = 12_000;
    const docs: StoredDocument[] = [];
    for (let i = 0; i < N; i++) {
      const words = ['granite'];
      if (i % 509 === 3) words.push('basalt');
      if (i % 613 === 5 || i % 509 === 3 && i % 2 === 0) words.push('obsidian');
      if (i % 797 === 7) words.push('pumice');
      if (i % 3 === 0) words.push('marble');
      if (i % 5 === 0) words.push('slate');
      if (i % 7 === 0) words.push('shale');
      const doc: StoredDocument = { cid: BigInt(i + 1), title: '', text: words.join(' ') };
      if (i % 4 !== 0) doc.host = i % 4 === 1 ? 'one.example' : 'two.example';
      docs.push(doc);
    }
    const writer = await index.openWriter();
    for (const d of docs) writer.upsert(d);
    await writer.commit();
    const queries = [
      'basalt', 'basalt obsidian', 'basalt obsidian pumice', 'basalt site:one.example', 'obsidian -basalt',
      'basalt obsidian -marble site:two.example', 'pumice site:one.example site:two.example', 'basalt -site:one.example',
    ];
    const words = Math.ceil(N / 32);
    const check = (live: StoredDocument[], label: string) => {
      const s = createSearcher([...index.snapshot().segments], (index.searcher() as Searcher).generation);
      for (const q of queries) {
        const want = referenceSearch(live, q, REFERENCE_COMMON_RATIO);
        const union = q.split(' ').filter((t) => !t.startsWith('-') && !t.startsWith('site:'));
        const postings = union.reduce((n, w) => n + docs.filter((d) => d.text.split(' ').includes(w)).length, 0);
        assert.ok(postings * SPARSE_RATIO < words, `${q}: a union sparse enough to walk`);
        const got = s.search(q, { pageSize: 5, snippets: false });
        assert.equal(got.total, want.total, `${label}: total of ${q}`);
        assert.deepEqual(got.hits.map((h) => [h.cid, h.score]), want.hits.slice(0, 5).map((h) => [h.cid, h.score]), `${label}: hits of ${q}`);
      }
      // words in a fifth and a seventh of the documents have bitsets (snapshot.ts termBits) and are not
      // common: the union counts its bitsets and adds the rarer words' documents outside them
      for (const q of ['slate basalt', 'slate basalt pumice', 'obsidian slate', 'slate shale', 'shale basalt slate pumice']) {
        const want = referenceSearch(live, q, REFERENCE_COMMON_RATIO);
        for (const plan of ['auto', 'maxscore'] as const) {
          const got = createSearcher([...index.snapshot().segments], 1, { plan }).search(q, { pageSize: 5, snippets: false });
          assert.equal(got.total, want.total, `${label}: total of ${q} (${plan})`);
          assert.deepEqual(got.hits.map((h) => [h.cid, h.score]), want.hits.slice(0, 5).map((h) => [h.cid, h.score]), `${label}: hits of ${q} (${plan})`);
        }
      }
    };
    check(docs, 'all live');
    for (let i = 3; i < N; i += 1018) writer.delete(docs[i]!.cid); // half of the basalt documents
    await writer.commit();
    await writer.close();
    check(docs.filter((_, i) => i < 3 || (i - 3) % 1018 !== 0), 'with deletes');
  } finally {
    await index.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a union of lists too dense to walk and too rare for bitsets is counted as their bits are set, with deletes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-count-'));
  const index = await Index.open(dir);
  try {
    const N = 12_000;
    const docs: StoredDocument[] = [];
    for (let i = 0; i < N; i++) {
      const words = ['granite'];
      if (i % 61 === 0) words.push('basalt');
      if (i % 97 === 1 || (i % 61 === 0 && i % 2 === 0)) words.push('obsidian'); // half the basalt documents too
      if (i % 101 === 2 || i % 122 === 0) words.push('pumice');
      const doc: StoredDocument = { cid: BigInt(i + 1), title: '', text: words.join(' ') };
      if (i % 3 === 0) doc.host = 'one.example';
      docs.push(doc);
    }
    const writer = await index.openWriter();
    for (const d of docs) writer.upsert(d);
    await writer.commit();
    const queries = ['basalt obsidian', 'basalt obsidian pumice', 'obsidian pumice', 'basalt obsidian site:one.example', 'basalt pumice -obsidian'];
    const df = (w: string) => docs.filter((d) => d.text.split(' ').includes(w)).length;
    for (const w of ['basalt', 'obsidian', 'pumice']) assert.ok(df(w) <= TERM_BITS_MIN_RATIO * N, `${w}: no bitset of its own`);
    const check = (live: StoredDocument[], label: string) => {
      const s = createSearcher([...index.snapshot().segments], (index.searcher() as Searcher).generation);
      for (const q of queries) {
        const union = q.split(' ').filter((t) => !t.startsWith('-') && !t.startsWith('site:'));
        assert.ok(union.reduce((n, w) => n + df(w), 0) * SPARSE_RATIO >= Math.ceil(N / 32), `${q}: a union too dense to walk`);
        const want = referenceSearch(live, q, REFERENCE_COMMON_RATIO);
        const got = s.search(q, { pageSize: 5, snippets: false });
        assert.equal(got.total, want.total, `${label}: total of ${q}`);
        assert.deepEqual(got.hits.map((h) => [h.cid, h.score]), want.hits.slice(0, 5).map((h) => [h.cid, h.score]), `${label}: hits of ${q}`);
      }
    };
    check(docs, 'all live');
    for (let i = 0; i < N; i += 122) writer.delete(docs[i]!.cid); // basalt, obsidian and pumice documents alike
    await writer.commit();
    await writer.close();
    check(docs.filter((_, i) => i % 122 !== 0), 'with deletes');
  } finally {
    await index.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
