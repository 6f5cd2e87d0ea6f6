/**
 * Correctness by reference (issue 2 item 8): random small corpora — several segments, updates and
 * deletes — and random queries in the whole language; the engine must return exactly what the brute-force
 * reference evaluator returns: the same documents, integer scores, order, total and phraseExact, for the
 * full result list and for small pages (where pruning bites).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { StoredDocument } from '../../../src/engine/index/types.js';
import { createSearcher } from '../../../src/engine/query/searcher.js';
import { MemorySegment } from '../support/memory-segment.js';
import { referenceSearch } from './reference.js';

// A small vocabulary with stemming collisions (run/runs/running), a multi-token word and noise.
const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'run', 'runs', 'running', 'cat', 'cats', 'e-mail', 'the', 'of', 'zeta', 'x'];
const HOSTS = ['a.com', 'docs.a.com', 'xa.com', 'b.org', 'deep.docs.a.com', undefined];
const SITES = ['a.com', 'docs.a.com', 'com', 'b.org', 'A.COM', 'xa.com', 'nowhere.net', 'http://docs.a.com/path'];

const text = (max: number) => fc.array(fc.constantFrom(...WORDS), { maxLength: max }).map((ws) => ws.join(' '));

const freeDocArb = fc.record({
  title: text(4),
  text: text(25),
  host: fc.constantFrom(...HOSTS),
});
// Repeated documents (under different cids) tie on score: ties must go to the smaller cid, and a pruning
// bound equal to the threshold must not skip them.
const TEMPLATES = [
  { title: 'alpha', text: 'beta beta gamma', host: 'a.com' },
  { title: '', text: 'alpha gamma', host: undefined },
  { title: 'cats running', text: 'the cat runs', host: 'docs.a.com' },
];
const docArb = fc.oneof({ weight: 3, arbitrary: freeDocArb }, { weight: 2, arbitrary: fc.constantFrom(...TEMPLATES) });

/** A corpus history: batches of upserts (each batch a segment), with cids from a small pool so updates happen, plus deletes. */
const historyArb = (maxBatch: number) => fc.array(
  fc.record({
    docs: fc.array(fc.tuple(fc.integer({ min: 0, max: 40 }), docArb), { minLength: 1, maxLength: maxBatch }),
    deletes: fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 3 }),
  }),
  { minLength: 1, maxLength: 4 },
);

const clauseArb = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(fc.constantFrom('', '', '+', '-'), fc.constantFrom(...WORDS)).map(([p, w]) => p + w) },
  { weight: 3, arbitrary: fc.tuple(fc.constantFrom('', '+', '-'), fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 3 })).map(([p, ws]) => `${p}"${ws.join(' ')}"`) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom('', '', '+', '-'), fc.constantFrom(...SITES)).map(([p, s]) => `${p}site:${s}`) },
  { weight: 1, arbitrary: fc.constantFrom('+', '-', 'site:', '!!', '"', '+"', 'Alpha', 'RUNNING', 'unknownword') },
);
const queryArb = fc.array(clauseArb, { minLength: 1, maxLength: 6 }).map((cs) => cs.join(' ')).filter((q) => q.trim() !== '');

/** Cid for a pool slot: spread over the whole 63-bit range so cid order differs from insertion order. */
const cidOf = (slot: number) => (BigInt(slot) * 0x9e3779b97f4a7c15n) % (2n ** 63n - 1n);

function build(history: { docs: [number, { title: string; text: string; host: string | undefined }][]; deletes: number[] }[]) {
  const segments: MemorySegment[] = [];
  const live = new Map<bigint, StoredDocument>();
  history.forEach((batch, b) => {
    const seen = new Map<bigint, StoredDocument>();
    for (const [slot, d] of batch.docs) {
      const doc: StoredDocument = { cid: cidOf(slot), title: d.title, text: d.text };
      if (d.host) doc.host = d.host;
      seen.set(doc.cid, doc); // last write in a batch wins, as in a writer's buffer
    }
    for (const s of segments) for (const cid of seen.keys()) s.deleteCid(cid);
    segments.push(new MemorySegment(`seg_${b}`, [...seen.values()]));
    for (const [cid, doc] of seen) live.set(cid, doc);
    for (const slot of batch.deletes) {
      const cid = cidOf(slot);
      for (const s of segments) s.deleteCid(cid);
      live.delete(cid);
    }
  });
  return { segments, live: [...live.values()] };
}

function check(segments: MemorySegment[], live: StoredDocument[], q: string, pageSize: number, page: number): void {
  const searcher = createSearcher(segments, 1);
  const got = searcher.search(q, { page, pageSize, snippets: false });
  const want = referenceSearch(live, q);
  assert.equal(got.total, want.total, `total of ${q}`);
  assert.equal(got.phraseExact, want.phraseExact, `phraseExact of ${q}`);
  const expected = want.hits.slice(page * pageSize, (page + 1) * pageSize);
  assert.deepEqual(got.hits.map((h) => [h.cid, h.score]), expected.map((h) => [h.cid, h.score]), `hits of ${q} page ${page}/${pageSize}`);
}

test('engine equals the reference evaluator on random corpora and queries (full lists)', () => {
  fc.assert(fc.property(historyArb(12), fc.array(queryArb, { minLength: 1, maxLength: 5 }), (history, queries) => {
    const { segments, live } = build(history);
    for (const q of queries) check(segments, live, q, 1000, 0);
  }), { numRuns: 300 });
});

test('engine equals the reference evaluator on small pages, where top-k pruning skips documents', () => {
  fc.assert(fc.property(historyArb(12), queryArb, fc.integer({ min: 1, max: 4 }), fc.integer({ min: 0, max: 3 }), (history, q, pageSize, page) => {
    const { segments, live } = build(history);
    check(segments, live, q, pageSize, page);
  }), { numRuns: 300 });
});

test('engine equals the reference on corpora with many blocks per postings list (block-max bounds)', () => {
  const big = fc.array(
    fc.record({
      docs: fc.array(fc.tuple(fc.integer({ min: 0, max: 2000 }), docArb), { minLength: 150, maxLength: 400 }),
      deletes: fc.array(fc.integer({ min: 0, max: 2000 }), { maxLength: 30 }),
    }),
    { minLength: 1, maxLength: 2 },
  );
  const terms = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 6 }).map((ws) => ws.join(' '));
  fc.assert(fc.property(big, terms, fc.integer({ min: 1, max: 10 }), (history, q, pageSize) => {
    const { segments, live } = build(history);
    check(segments, live, q, pageSize, 0);
  }), { numRuns: 25 });
});

test('engine equals the reference on corpora of repeated documents (score ties at the pruning threshold)', () => {
  const history = fc.array(
    fc.record({
      docs: fc.array(fc.tuple(fc.integer({ min: 0, max: 300 }), fc.constantFrom(...TEMPLATES)), { minLength: 1, maxLength: 60 }),
      deletes: fc.array(fc.integer({ min: 0, max: 300 }), { maxLength: 5 }),
    }),
    { minLength: 1, maxLength: 3 },
  );
  const q = fc.array(fc.constantFrom('alpha', 'beta', 'gamma', 'cat', 'run', 'the', '+alpha', '-cat', 'site:a.com'), { minLength: 1, maxLength: 4 }).map((ws) => ws.join(' '));
  fc.assert(fc.property(history, q, fc.integer({ min: 1, max: 5 }), fc.integer({ min: 0, max: 2 }), (h, query, pageSize, page) => {
    const { segments, live } = build(h);
    check(segments, live, query, pageSize, page);
  }), { numRuns: 200 });
});
