/**
 * Readers reopen on a new commit without stopping queries: a second `Index` on the same directory (as
 * the server is while the CLI imports) sees a commit only after `refresh()`, old snapshots stay intact
 * and readable after the files they came from were merged away, and `onCommit` fires for local and
 * refreshed commits.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Index, type CommitInfo } from '../../../src/engine/index.js';
import { liveDocuments, tempDir } from './fixtures.js';

test('a second Index sees another writer\'s commits on refresh; old snapshots keep answering', async (t) => {
  const dir = tempDir(t);
  const writerSide = await Index.open(dir, { mergeFactor: 2, mergeFloorBytes: 1 });
  const readerSide = await Index.open(dir);
  const localEvents: CommitInfo[] = [];
  const remoteEvents: CommitInfo[] = [];
  writerSide.onCommit((i) => localEvents.push(i));
  const off = readerSide.onCommit((i) => remoteEvents.push(i));
  try {
    assert.equal(readerSide.snapshot().generation, 0);
    assert.equal(await readerSide.refresh(), false);
    const w = await writerSide.openWriter();
    w.upsert({ cid: 1n, title: 'first', text: 'one' });
    await w.commit();
    assert.equal(readerSide.snapshot().docs, 0, 'no refresh, no change');
    assert.equal(await readerSide.refresh(), true);
    const old = readerSide.snapshot();
    assert.equal(old.generation, 1);
    assert.deepEqual([...liveDocuments(readerSide).keys()], [1n]);

    // more commits: merges replace segment 1; deletes remove cid 1
    for (let i = 2; i <= 6; i++) {
      w.upsert({ cid: BigInt(i), title: `doc ${i}`, text: 'more text' });
      await w.commit();
    }
    w.delete(1n);
    const last = await w.commit();
    assert.equal(await readerSide.refresh(), true);
    assert.equal(readerSide.snapshot().generation, last.generation);
    assert.deepEqual([...liveDocuments(readerSide).keys()].sort(), [2n, 3n, 4n, 5n, 6n]);
    // the snapshot taken before still reads its own generation (its segment's files are unlinked by now)
    const [seg] = old.segments;
    assert.ok(seg);
    assert.equal(seg.isLive(0), true);
    assert.equal(seg.stored(0).title, 'first');
    assert.equal(seg.postings('first')!.nextDoc(), 0);

    assert.deepEqual(localEvents.map((e) => e.generation), [1, 2, 3, 4, 5, 6, 7]);
    assert.deepEqual(remoteEvents.map((e) => e.generation), [1, 7]);
    assert.equal(remoteEvents[1]!.docs, 5);
    off();
    w.upsert({ cid: 7n, title: 'x', text: 'y' });
    await w.commit();
    await readerSide.refresh();
    assert.equal(remoteEvents.length, 2, 'unsubscribed');
    await w.close();
  } finally {
    await writerSide.close();
    await readerSide.close();
  }
});

test('searcher() follows the newest commit and is memoized per generation', async (t) => {
  const dir = tempDir(t);
  const index = await Index.open(dir);
  try {
    const w = await index.openWriter();
    w.upsert({ cid: 5n, title: 'hello', text: 'world' });
    await w.commit();
    const s1 = index.searcher();
    assert.equal(index.searcher(), s1);
    assert.equal(s1.generation, 1);
    w.upsert({ cid: 6n, title: 'again', text: 'world' });
    await w.commit();
    const s2 = index.searcher();
    assert.notEqual(s2, s1);
    assert.equal(s2.docCount, 2);
    assert.equal(s1.docCount, 1);
    await w.close();
  } finally {
    await index.close();
  }
});

test('queries keep answering from the previous commit while a commit is in flight', async (t) => {
  const dir = tempDir(t);
  const index = await Index.open(dir);
  try {
    const w = await index.openWriter();
    w.upsert({ cid: 1n, title: 'old', text: 'first commit' });
    await w.commit();
    for (let i = 2; i < 2000; i++) w.upsert({ cid: BigInt(i), title: `doc ${i}`, text: `second commit body ${i} `.repeat(20) });
    const seen: number[] = [];
    const committing = w.commit();
    // the commit yields to the event loop: a query scheduled now runs before it completes
    await new Promise<void>((resolve) => setImmediate(() => {
      seen.push(index.searcher().search('commit').total);
      assert.throws(() => w.upsert({ cid: 5n, title: 'x', text: 'y' }), (e: unknown) => (e as { code?: string }).code === 'conflict', 'no upsert while committing');
      resolve();
    }));
    const info = await committing;
    assert.deepEqual(seen, [1], 'the query saw the previous commit');
    assert.equal(info.docs, 1999);
    assert.equal(index.searcher().search('commit').total, 1999);
    await w.close();
  } finally {
    await index.close();
  }
});
