/**
 * In a bulk load, threads build segments of their own from batches of documents while `upsert` goes on
 * filling the writer's buffer. Segments built side by side are installed in the order they are done, not
 * in their documents' order; replacements and deletes must land on the newest document of each cid
 * wherever it went (a batch, a thread, the buffer, a buffer in a thread, an installed segment). A thread
 * that fails fails the commit and leaves the last commit whole; closing the writer abandons builds in flight.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, renameSync } from 'node:fs';
import { checkIndex, Index } from '../../../src/engine/index/index.js';
import { Index as SearchableIndex } from '../../../src/engine/index.js';
import type { IndexWriter } from '../../../src/engine/index/index-writer.js';
import { SegmentBuilder } from '../../../src/engine/index/segment-writer.js';
import { assertAnswersAsReference, assertFirstCommitWhole, liveDocuments, segmentFiles, tempDir } from './fixtures.js';

const WORDS = ['granite', 'basalt', 'quarry', 'chisel', 'marble', 'of', 'the', 'slate', 'gneiss', 'schist', 'flint'];
/** A buffer of 64 KiB: a batch is 16 Ki UTF-16 units of text. */
const BUFFER = 64 * 1024;

function doc(n: number, cid = BigInt(n), length = 60) {
  const text = Array.from({ length }, (_, k) => WORDS[(n * 3 + k * k) % WORDS.length]).join(' ') + ` n${n}`;
  return { cid, title: `${WORDS[n % WORDS.length]} ${n}`, text };
}

/** Waits until `dir` holds a written segment, for at most `ms`. */
async function segmentWritten(dir: string, ms = 20_000): Promise<boolean> {
  for (const until = Date.now() + ms; Date.now() < until; await new Promise((r) => setTimeout(r, 20))) {
    if (segmentFiles(dir).length > 0) return true;
  }
  return false;
}

/**
 * Upserts the first document (to the buffer, which from then on counts as a bulk load) and then enough
 * to fill one batch, which the last of them hands to a thread: a batch is full once a builder would hold
 * half a buffer of it, at the bytes per UTF-16 unit of the buffer (here, of the first document). Returns
 * the next document number.
 */
function fillBatch(w: IndexWriter): number {
  const units = (d: { title: string; text: string }) => d.title.length + d.text.length;
  const first = doc(0);
  const builder = new SegmentBuilder();
  builder.add(first);
  const bytesPerUnit = builder.bytes / units(first);
  w.upsert(first);
  let n = 1;
  for (let batch = 0; 2 * batch * bytesPerUnit < BUFFER;) {
    const d = doc(n++);
    batch += units(d);
    w.upsert(d);
  }
  return n;
}

test('a thread builds a segment of a batch before the commit, and replacements of its documents land', async (t) => {
  const dir = tempDir(t);
  const index = await SearchableIndex.open(dir, { maxBufferedBytes: BUFFER, threadBytes: 0, buildThreads: 1, mergeFactor: 1000 });
  const w = await index.openWriter();
  const n = fillBatch(w);
  // the buffer holds one document, far from full: only the batch's thread writes a segment
  assert.ok(await segmentWritten(dir), 'the batch became a segment before any commit');
  // documents of the batch (built, not yet installed) and of the buffer replaced and deleted
  w.upsert(doc(1000, 3n, 5));
  w.upsert(doc(1001, 0n, 5));
  w.delete(5n);
  const info = await w.commit();
  const expected = new Map<bigint, string>();
  for (let k = 0; k < n; k++) expected.set(BigInt(k), doc(k).title);
  expected.set(3n, doc(1000).title);
  expected.set(0n, doc(1001).title);
  expected.delete(5n);
  const live = liveDocuments(index);
  assert.deepEqual(new Map([...live].map(([cid, d]) => [cid, d.title])), expected);
  assert.ok(info.segments >= 2, `${info.segments} segments: the batch's and the buffer's`);
  await w.close();
  await index.close();
  assert.ok(checkIndex(dir).ok);
});

for (const buildThreads of [1, 2]) {
  test(`with ${buildThreads} build thread(s), every replacement and delete across batches, buffers and commits lands as the reference says`, async (t) => {
    const dir = tempDir(t);
    const index = await SearchableIndex.open(dir, { maxBufferedBytes: BUFFER, threadBytes: 0, buildThreads, mergeFactor: 4 });
    const w = await index.openWriter();
    const expected = new Set<bigint>();
    for (let round = 0; round < 3; round++) {
      for (let n = 0; n < 900; n++) {
        // every third document replaces one from a little or a long way back (this round's batches and
        // buffers, or an earlier commit's segments)
        const m = round * 900 + n;
        const cid = BigInt(n % 3 === 2 && m > 40 ? (Math.imul(m, 2654435761) >>> 0) % m : m);
        w.upsert(doc(m, cid, 10 + (m % 50)));
        expected.add(cid);
        if (n % 97 === 96) {
          const gone = BigInt((Math.imul(m, 40503) >>> 0) % m);
          w.delete(gone);
          expected.delete(gone);
        }
      }
      const info = await w.commit();
      assert.deepEqual(new Set(liveDocuments(index).keys()), expected, `round ${round}`);
      assert.equal(info.docs, expected.size);
    }
        assertAnswersAsReference(index, ['quarry', 'granite marble', '"of the"', '+chisel -slate', 'n1797', 'basalt flint gneiss']);
    await w.close();
    await index.close();
    assert.ok(checkIndex(dir).ok);
  });
}

test('a build thread that fails fails the next upsert and the writer, and leaves the last commit whole', async (t) => {
  const dir = tempDir(t);
  const index = await Index.open(dir, { maxBufferedBytes: BUFFER, threadBytes: 0, buildThreads: 1 });
  const w = await index.openWriter();
  w.upsert({ cid: 100_000n, title: 'committed', text: 'before the failure' });
  await w.commit();
  fillBatch(w);
  // the thread that has just been handed the batch writes into a directory that is gone
  renameSync(dir, `${dir}.away`);
  let failure: (Error & { code?: string }) | undefined;
  try {
    // the buffer takes these small documents (the one thread is busy) and never fills
    for (let n = 0; n < 1000 && failure === undefined; n++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      try {
        w.upsert({ cid: BigInt(200_000 + n), title: 'after', text: `small ${n}` });
      } catch (err) {
        failure = err as Error & { code?: string };
      }
    }
  } finally {
    renameSync(`${dir}.away`, dir);
  }
  assert.equal(failure?.code, 'internal');
  assert.match(failure!.message, /Writing segment .*seg_\d+ failed/);
  await assert.rejects(w.commit(), /must be reopened/);
  await assertFirstCommitWhole(w, index, dir, [100_000n]);
});

test('closing the writer abandons a build in flight and leaves none of its files', async (t) => {
  const dir = tempDir(t);
  const index = await Index.open(dir, { maxBufferedBytes: BUFFER, threadBytes: 0, buildThreads: 1 });
  const w = await index.openWriter();
  fillBatch(w);
  await w.close();
  // a thread left running would write its files within this time
  await new Promise((resolve) => setTimeout(resolve, 1000));
  assert.deepEqual(readdirSync(dir).filter((f) => f !== 'MANIFEST'), [], 'neither the segment nor a temporary is left');
  await index.close();
});
