/**
 * Shared by the index tests: temporary index directories, a plain in-memory reading of an index, and the
 * checks several writer tests end with.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Index as SearchableIndex } from '../../../src/engine/index.js';
import { checkIndex, Index } from '../../../src/engine/index/index.js';
import type { IndexWriter } from '../../../src/engine/index/index-writer.js';
import { referenceSearch } from '../query/reference.js';

export function tempDir(t: { after(fn: () => void): void }, prefix = 'quarry-index-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface LiveDoc {
  title: string;
  text: string;
  url?: string;
  host?: string;
}

/** Every live document of the index's current snapshot, by cid (asserting each cid is live once). */
export function liveDocuments(index: Index): Map<bigint, LiveDoc> {
  const out = new Map<bigint, LiveDoc>();
  for (const seg of index.snapshot().segments) {
    for (let d = 0; d < seg.maxDoc; d++) {
      if (!seg.isLive(d)) continue;
      const s = seg.stored(d);
      if (out.has(s.cid)) throw new Error(`cid ${s.cid} is live twice`);
      if (seg.docForCid(s.cid) !== d) throw new Error(`docForCid(${s.cid}) does not find slot ${d} of ${seg.name}`);
      const doc: LiveDoc = { title: s.title, text: s.text };
      if (s.url !== undefined) doc.url = s.url;
      if (s.host !== undefined) doc.host = s.host;
      out.set(s.cid, doc);
    }
  }
  return out;
}

/** The segment files in `dir`, sorted. */
export function segmentFiles(dir: string): string[] {
  return readdirSync(dir).filter((f) => /^seg_\d+\.(idx|sto)$/.test(f)).sort();
}

/** Asserts that `index` answers each of `queries` as the reference does over its live documents: total, and the first 100 hits with their scores. */
export function assertAnswersAsReference(index: SearchableIndex, queries: readonly string[], label = ''): void {
  const live = [...liveDocuments(index)].map(([cid, d]) => ({ cid, ...d }));
  for (const q of queries) {
    const want = referenceSearch(live, q);
    const got = index.searcher().search(q, { pageSize: 100, snippets: false });
    assert.equal(got.total, want.total, `${label}total of ${q}`);
    assert.deepEqual(got.hits.map((h) => [h.cid, h.score]), want.hits.slice(0, 100).map((h) => [h.cid, h.score]), `${label}hits of ${q}`);
  }
}

/**
 * For a writer that failed after the index's first commit: closes it and the index, asserting that the
 * index still holds that commit, exactly the documents `cids`, and checks whole.
 */
export async function assertFirstCommitWhole(w: IndexWriter, index: Index, dir: string, cids: bigint[]): Promise<void> {
  await w.close();
  await index.refresh();
  assert.equal(index.snapshot().generation, 1);
  assert.deepEqual([...liveDocuments(index).keys()], cids);
  await index.close();
  assert.ok(checkIndex(dir).ok);
}

const WORDS = ['granite', 'basalt', 'quarry', 'chisel', 'marble', 'of', 'the', 'slate', 'gneiss', 'schist'];

/** Four committed segments of varied texts (600 documents), the second and third with deleted documents. */
export async function fourCommittedSegments(dir: string): Promise<void> {
  const index = await Index.open(dir, { mergeFactor: 100, maxMergedBytes: 1 });
  const w = await index.openWriter();
  for (let batch = 0; batch < 4; batch++) {
    for (let i = 0; i < 150; i++) {
      const n = batch * 150 + i;
      const text = Array.from({ length: 20 + (n % 37) }, (_, k) => WORDS[(n * 7 + k * k) % WORDS.length] + (k % 5 === 0 ? ` ${n * k}` : '')).join(' ');
      w.upsert({ cid: BigInt(n + 1), title: `${WORDS[n % WORDS.length]} ${n}`, text });
    }
    if (batch === 1 || batch === 2) for (let i = 0; i < 150; i += 7) w.delete(BigInt(batch * 150 + i - 140));
    await w.commit();
  }
  await w.close();
  await index.close();
}
