/**
 * A large merge writes the second half of its terms (from `splitTerm` on) in a thread of its own and
 * appends that part to the first half: the `.idx` is the one a single thread writes, byte for byte, and a
 * thread that fails or is stopped leaves neither its part nor any file of the merged segment.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { Index } from '../../../src/engine/index/index.js';
import { mergeIndex, splitTerm } from '../../../src/engine/index/merge.js';
import { PostingsMerge } from '../../../src/engine/index/postings-merge.js';
import { SegmentFile } from '../../../src/engine/index/segment-file.js';
import { SegmentCore } from '../../../src/engine/index/segment-reader.js';
import { runSync } from '../../../src/engine/index/steps.js';
import { fourCommittedSegments, liveDocuments, tempDir } from './fixtures.js';

async function segmentNames(dir: string): Promise<string[]> {
  const index = await Index.open(dir);
  const names = index.snapshot().segments.map((s) => s.name);
  await index.close();
  return names;
}

test('the terms from the split point on, merged in a thread, append to the first half as one thread writes them', async (t) => {
  const dir = tempDir(t);
  await fourCommittedSegments(dir);
  const names = await segmentNames(dir);
  const cores = names.map((name) => new SegmentCore(dir, name));
  t.after(() => cores.forEach((c) => c.close()));
  const sources = cores.map((core) => ({ core, deleted: null }));

  const one = new SegmentFile(dir, 'one.idx');
  runSync(mergeIndex(sources, one));
  one.commit();

  let split: string | undefined;
  let thread: PostingsMerge | undefined;
  const two = new SegmentFile(dir, 'two.idx');
  runSync(mergeIndex(sources, two, (from) => {
    split = from;
    thread = new PostingsMerge({ dir, part: join(dir, '.two.idx.part.tmp'), sources: names.map((name) => ({ name, deleted: null })), from });
    return () => thread!.part();
  }));
  two.commit();
  await thread!.close();

  // the split falls inside the vocabulary: each thread wrote terms
  const largest = cores.reduce((a, b) => (b.postingsAndPositionsBytes > a.postingsAndPositionsBytes ? b : a));
  assert.equal(split, splitTerm(largest.terms));
  const terms = new Set(cores.flatMap((c) => [...c.terms]));
  const below = [...terms].filter((term) => term < split!).length;
  assert.ok(below > 0 && below < terms.size - 1, `split ${split} after ${below} of ${terms.size} terms`);
  assert.ok(readFileSync(join(dir, 'one.idx')).equals(readFileSync(join(dir, 'two.idx'))), '.idx bytes');
  assert.ok(!readdirSync(dir).some((f) => f.endsWith('.tmp')), 'the part is removed');
});

test('a postings thread that fails fails the merge and leaves the last commit as it was', async (t) => {
  const dir = tempDir(t);
  await fourCommittedSegments(dir);
  const index = await Index.open(dir, { threadBytes: 0 });
  const before = liveDocuments(index);
  const segments = index.snapshot().segments.map((s) => s.name);
  const w = await index.openWriter();
  // the open index reads the segment through its descriptor; the thread, which opens it by name, cannot
  unlinkSync(join(dir, `${segments[3]}.idx`));
  const files = readdirSync(dir).sort();
  await assert.rejects(w.forceMerge(1), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'internal');
    assert.match(err.message, /Merging the postings of the terms from .* failed/);
    return true;
  });
  assert.deepEqual(readdirSync(dir).sort(), files, 'no file of the merged segment, nor the part, is left');
  assert.deepEqual(index.snapshot().segments.map((s) => s.name), segments);
  assert.deepEqual(liveDocuments(index), before);
  await w.close();
  await index.close();
});

test('a postings thread closed before or after it finished leaves no file', async (t) => {
  const dir = tempDir(t);
  await fourCommittedSegments(dir);
  const names = await segmentNames(dir);
  const files = readdirSync(dir).sort();
  const sources = names.map((name) => ({ name, deleted: null }));
  const done = new PostingsMerge({ dir, part: join(dir, '.a.part.tmp'), sources, from: 'm' });
  const part = runSync(done.part());
  assert.ok(part.terms > 0);
  assert.ok(readdirSync(dir).includes('.a.part.tmp'));
  await done.close();
  assert.deepEqual(readdirSync(dir).sort(), files);
  const running = new PostingsMerge({ dir, part: join(dir, '.b.part.tmp'), sources: [...sources, ...sources, ...sources], from: '' });
  await running.close();
  assert.deepEqual(readdirSync(dir).sort(), files);
});
