/**
 * A full write buffer is encoded in a thread of its own while `upsert` goes on filling the next one:
 * the segments are the bytes a flush in the writer's thread makes, replacements and deletes across
 * buffers land as they would there, a thread that fails fails the writer's next step and leaves the
 * last commit whole, and closing the writer abandons a flush in flight without leaving its files.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { checkIndex, Index } from '../../../src/engine/index/index.js';
import { Index as SearchableIndex } from '../../../src/engine/index.js';
import type { IndexWriter } from '../../../src/engine/index/index-writer.js';
import { assertAnswersAsReference, assertFirstCommitWhole, liveDocuments, segmentFiles, tempDir } from './fixtures.js';

const WORDS = ['granite', 'basalt', 'quarry', 'chisel', 'marble', 'of', 'the', 'slate', 'gneiss', 'schist', 'flint'];
const BUFFER = 6 * 1024;

/** Upserts 400 documents (every fifth replacing an earlier one, often from an earlier buffer) and deletes some; returns the live cids. */
function write(w: IndexWriter): Set<bigint> {
  const live = new Set<bigint>();
  for (let n = 0; n < 400; n++) {
    const cid = BigInt(n % 5 === 4 && n > 100 ? n - 37 - (n % 60) : n);
    const text = Array.from({ length: 8 + (n % 23) }, (_, k) => WORDS[(n * 3 + k * k) % WORDS.length]).join(' ') + ` n${n}`;
    w.upsert({ cid, title: `${WORDS[n % WORDS.length]} ${n}`, text });
    live.add(cid);
    if (n % 50 === 49) {
      w.delete(BigInt(n - 45));
      live.delete(BigInt(n - 45));
    }
  }
  return live;
}

test('buffers encoded in a thread make the segments a flush in the writer makes, with every replacement and delete', async (t) => {
  const dirs = { here: tempDir(t), thread: tempDir(t) };
  const expected: Record<string, Set<bigint>> = {};
  for (const [how, dir] of Object.entries(dirs)) {
    const index = await SearchableIndex.open(dir, { maxBufferedBytes: BUFFER, mergeFactor: 1000, threadBytes: how === 'thread' ? 0 : Number.MAX_SAFE_INTEGER, buildThreads: 0 });
    const w = await index.openWriter();
    expected[how] = write(w);
    const info = await w.commit();
    assert.ok(info.segments >= 5, `${how}: ${info.segments} segments, several flushed from upsert`);
    assert.deepEqual(new Set(liveDocuments(index).keys()), expected[how], how);
    assertAnswersAsReference(index, ['quarry', 'granite marble', '"of the"', '+chisel -slate', 'n397'], `${how}: `);
    await w.close();
    await index.close();
    assert.ok(checkIndex(dir).ok, how);
  }
  const files = segmentFiles(dirs.here);
  assert.deepEqual(segmentFiles(dirs.thread), files);
  for (const f of files) assert.ok(readFileSync(join(dirs.here, f)).equals(readFileSync(join(dirs.thread, f))), f);
});

test('a flush thread that fails fails the commit and leaves the last commit whole', async (t) => {
  const dir = tempDir(t);
  const index = await Index.open(dir, { maxBufferedBytes: BUFFER, threadBytes: 0, buildThreads: 0 });
  const w = await index.openWriter();
  w.upsert({ cid: 1n, title: 'committed', text: 'before the failure' });
  await w.commit();
  const files = segmentFiles(dir);
  let n = 0;
  // until a buffer's segment is on disk: the upsert that overflowed the next buffer waited for it, and
  // handed that next buffer to a thread that has only just started
  while (segmentFiles(dir).length === files.length && n < 10_000) w.upsert({ cid: BigInt(100 + n), title: `t ${n}`, text: `granite marble ${n++}` });
  // whatever that thread has yet to write goes to a directory that is gone
  renameSync(dir, `${dir}.away`);
  try {
    await assert.rejects(w.commit(), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'internal');
      assert.match(err.message, /Writing segment .*seg_\d+ failed/);
      return true;
    });
  } finally {
    renameSync(`${dir}.away`, dir);
  }
  assert.throws(() => w.upsert({ cid: 2n, title: 'x', text: 'y' }), /must be reopened/);
  await assertFirstCommitWhole(w, index, dir, [1n]);
});

test('closing the writer abandons a flush in flight and leaves none of its files', async (t) => {
  const doc = (n: number) => ({ cid: BigInt(n), title: `t ${n}`, text: `granite marble basalt ${n}` });
  // the upsert that fills the first buffer, found where a flush writes at once
  const here = tempDir(t);
  const first = await Index.open(here, { maxBufferedBytes: BUFFER, threadBytes: Number.MAX_SAFE_INTEGER });
  const w1 = await first.openWriter();
  let k = 0;
  while (segmentFiles(here).length === 0) w1.upsert(doc(k++));
  await w1.close();
  await first.close();

  const dir = tempDir(t);
  const index = await Index.open(dir, { maxBufferedBytes: BUFFER, threadBytes: 0, buildThreads: 0 });
  const w = await index.openWriter();
  for (let n = 0; n < k; n++) w.upsert(doc(n)); // the last one hands its buffer to a thread
  await w.close();
  // a thread left running would write its files within this time
  await new Promise((resolve) => setTimeout(resolve, 1000));
  assert.deepEqual(readdirSync(dir).filter((f) => f !== 'MANIFEST'), [], 'neither the segment nor a temporary is left');
  await index.close();
});
