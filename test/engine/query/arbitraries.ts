/**
 * Random corpora and queries for the reference-equivalence tests: a small vocabulary with stemming
 * collisions so terms meet often, repeated documents so scores tie, a corpus *history* (batches of
 * upserts with updates, plus deletes) so there are several segments and deleted documents.
 */
import fc from 'fast-check';
import type { StoredDocument } from '../../../src/engine/index/types.js';
import { MemorySegment } from '../support/memory-segment.js';

// A small vocabulary with stemming collisions (run/runs/running), a multi-token word and noise.
export const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'run', 'runs', 'running', 'cat', 'cats', 'e-mail', 'the', 'of', 'zeta', 'x'];
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
export const TEMPLATES = [
  { title: 'alpha', text: 'beta beta gamma', host: 'a.com' },
  { title: '', text: 'alpha gamma', host: undefined },
  { title: 'cats running', text: 'the cat runs', host: 'docs.a.com' },
];
export const docArb = fc.oneof({ weight: 3, arbitrary: freeDocArb }, { weight: 2, arbitrary: fc.constantFrom(...TEMPLATES) });

/** A corpus history: batches of upserts (each batch a segment), with cids from a small pool so updates happen, plus deletes. */
export const historyArb = (maxBatch: number) => fc.array(
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
export const queryArb = fc.array(clauseArb, { minLength: 1, maxLength: 6 }).map((cs) => cs.join(' ')).filter((q) => q.trim() !== '');
/** Long queries: unions of more than UNION_HEAP_THRESHOLD clauses. */
export const longQueryArb = fc.array(clauseArb, { minLength: 9, maxLength: 16 }).map((cs) => cs.join(' '));

/** Cid for a pool slot: spread over the whole 63-bit range so cid order differs from insertion order. */
export const cidOf = (slot: number) => (BigInt(slot) * 0x9e3779b97f4a7c15n) % (2n ** 63n - 1n);

export type History = { docs: [number, { title: string; text: string; host: string | undefined }][]; deletes: number[] }[];

export function build(history: History) {
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

