/**
 * A merge large enough writes its stored text in a thread of its own beside the postings (and the second
 * half of its terms' postings in another, postings-merge.test.ts): the files are the bytes a merge
 * written in one thread makes, and a failure on either side leaves no part of the merged segment behind
 * and the last commit whole.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, cpSync, openSync, readdirSync, readFileSync, statSync, truncateSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { checkIndex, Index } from '../../../src/engine/index/index.js';
import { StoredMerge } from '../../../src/engine/index/stored-merge.js';
import type { IndexOptions } from '../../../src/engine/index/types.js';
import { fourCommittedSegments, liveDocuments, tempDir } from './fixtures.js';

async function forceMergeCopy(from: string, to: string, options: IndexOptions): Promise<string[]> {
  cpSync(from, to, { recursive: true });
  const index = await Index.open(to, options);
  const w = await index.openWriter();
  const info = await w.forceMerge(1);
  assert.equal(info.segments, 1);
  const names = index.snapshot().segments.map((s) => s.name);
  await w.close();
  await index.close();
  return names;
}

test('a merge with its stored text and half its postings written in threads writes the bytes a merge in one thread writes', async (t) => {
  const base = tempDir(t);
  const src = join(base, 'src');
  await fourCommittedSegments(src);
  const [here] = await forceMergeCopy(src, join(base, 'here'), { threadBytes: Number.MAX_SAFE_INTEGER });
  const [beside] = await forceMergeCopy(src, join(base, 'beside'), { threadBytes: 0 });
  assert.equal(here, beside);
  for (const ext of ['.idx', '.sto']) {
    assert.ok(readFileSync(join(base, 'here', here + ext)).equals(readFileSync(join(base, 'beside', beside + ext))), `${ext} bytes`);
  }
  const index = await Index.open(join(base, 'beside'));
  const docs = liveDocuments(index);
  assert.equal(docs.size, 600 - 2 * 22);
  const doc = docs.get(151n)!;
  assert.equal(doc.title, 'granite 150');
  assert.match(doc.text, /^\w+ \d+ /);
  await index.close();
  assert.ok(checkIndex(join(base, 'beside')).ok);
});

test('a stored-text thread that fails fails the merge and leaves the last commit as it was', async (t) => {
  const dir = tempDir(t);
  await fourCommittedSegments(dir);
  const index = await Index.open(dir, { threadBytes: 0 });
  const before = new Map(liveDocuments(index));
  const segments = index.snapshot().segments.map((s) => s.name);
  // the first compressed block of the third segment's stored text, overwritten: its texts no longer decode
  const sto = join(dir, `${segments[2]}.sto`);
  const fd = openSync(sto, 'r+');
  writeSync(fd, Buffer.alloc(64, 0xa5), 0, 64, 0);
  closeSync(fd);
  const w = await index.openWriter();
  const files = readdirSync(dir).sort();
  await assert.rejects(w.forceMerge(1), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'internal');
    assert.match(err.message, /Merging stored text into .*\.sto failed/);
    return true;
  });
  assert.deepEqual(readdirSync(dir).sort(), files, 'no file of the merged segment is left');
  assert.deepEqual(index.snapshot().segments.map((s) => s.name), segments);
  await w.close();
  assert.equal(index.snapshot().docs, before.size);
  await index.close();
});

test('a postings merge that fails stops the stored-text thread and removes what it wrote', async (t) => {
  const dir = tempDir(t);
  await fourCommittedSegments(dir);
  const index = await Index.open(dir, { threadBytes: 0 });
  const segments = index.snapshot().segments.map((s) => s.name);
  // the last segment's .idx, cut short under the open index: its dictionary is read by the merge and ends early
  const idx = join(dir, `${segments[3]}.idx`);
  truncateSync(idx, Math.floor(statSync(idx).size / 2));
  const w = await index.openWriter();
  const files = readdirSync(dir).sort();
  await assert.rejects(w.forceMerge(1));
  assert.deepEqual(index.snapshot().segments.map((s) => s.name), segments);
  await w.close();
  await index.close();
  // a thread left running would write its file within this time
  await new Promise((resolve) => setTimeout(resolve, 1000));
  assert.deepEqual(readdirSync(dir).sort(), files.filter((f) => f !== 'write.lock'), 'neither the merged .idx nor the thread\'s .sto (or its temporary) is left');
});

test('a cancelled stored-text merge leaves no file, whether the thread had finished or not', async (t) => {
  const dir = tempDir(t);
  await fourCommittedSegments(dir);
  const files = readdirSync(dir).sort();
  const sources = files.filter((f) => f.endsWith('.sto')).map((file) => ({ file, deleted: null }));
  const store = { blockBytes: 1024, quality: 3 };
  const done = new StoredMerge({ dir, file: 'seg_000100.sto', sources, store });
  await done.finished();
  assert.ok(readdirSync(dir).includes('seg_000100.sto'), 'the thread made its file durable under its name');
  await done.cancel();
  assert.deepEqual(readdirSync(dir).sort(), files);
  const running = new StoredMerge({ dir, file: 'seg_000101.sto', sources: [...sources, ...sources, ...sources], store });
  await running.cancel();
  assert.deepEqual(readdirSync(dir).sort(), files);
  await assert.rejects(running.finished(), /cancelled/);
});
