/**
 * Segments are written in threads of a pool, which keeps a thread whose job has ended for the next: a
 * bulk load's batches and buffers then run in threads whose code is compiled and whose caches are warm.
 * A kept thread must outlive a job that failed, must not keep the process alive while it waits, and
 * must be gone once the pool is drained.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { FLUSH_THREAD, FlushInThread } from '../../../src/engine/index/segment-flush.js';
import { SegmentCore } from '../../../src/engine/index/segment-reader.js';
import { ThreadPool } from '../../../src/engine/index/thread-job.js';
import { tempDir } from './fixtures.js';

const STORE = { blockBytes: 16 * 1024, quality: 1 };

function docs(from: number, n: number) {
  return Array.from({ length: n }, (_, k) => ({ cid: BigInt(from + k), title: `granite ${from + k}`, text: `quarry of the basalt n${from + k}` }));
}

test('a pool runs one job after another in one thread, also after a job that failed, and drains', async (t) => {
  const dir = tempDir(t);
  const pool = new ThreadPool(FLUSH_THREAD, 1);
  await new FlushInThread(pool, { dir, name: 'seg_000001', segment: docs(0, 50), store: STORE }).wait();
  const failed = new FlushInThread(pool, { dir: join(dir, 'gone'), name: 'seg_000002', segment: docs(50, 50), store: STORE });
  await assert.rejects(failed.wait(), /Writing segment .*seg_000002 failed/);
  const last = new FlushInThread(pool, { dir, name: 'seg_000003', segment: docs(100, 50), store: STORE });
  last.waitSync();
  assert.equal(pool.started, 1, 'one thread ran the three jobs');
  assert.equal(pool.idle, 1);
  for (const [name, first] of [['seg_000001', 0n], ['seg_000003', 100n]] as const) {
    const core = new SegmentCore(dir, name);
    assert.equal(core.maxDoc, 50);
    assert.equal(core.cids[0], first);
    core.close();
  }
  await pool.drain();
  assert.equal(pool.idle, 0);
  await new FlushInThread(pool, { dir, name: 'seg_000004', segment: docs(150, 50), store: STORE }).wait();
  assert.equal(pool.started, 2, 'a drained pool starts a new thread');
  await pool.drain();
});

test('a pool keeps no more threads than it was asked to', async (t) => {
  const dir = tempDir(t);
  const pool = new ThreadPool(FLUSH_THREAD, 1);
  const jobs = [0, 1, 2].map((k) => new FlushInThread(pool, { dir, name: `seg_00000${k + 1}`, segment: docs(100 * k, 50), store: STORE }));
  for (const j of jobs) await j.wait();
  assert.equal(pool.started, 3, 'three jobs at once, three threads');
  assert.equal(pool.idle, 1);
  for (const k of [1, 2, 3]) assert.ok(existsSync(join(dir, `seg_00000${k}.idx`)));
  await pool.drain();
});

test('a thread the pool keeps does not keep the process alive', (t) => {
  const dir = tempDir(t);
  const script = `
    import { FLUSH_THREAD, FlushInThread } from ${JSON.stringify(new URL('../../../src/engine/index/segment-flush.ts', import.meta.url).href)};
    import { ThreadPool } from ${JSON.stringify(new URL('../../../src/engine/index/thread-job.ts', import.meta.url).href)};
    const pool = new ThreadPool(FLUSH_THREAD, 1);
    const segment = [{ cid: 1n, title: 'granite', text: 'quarry of the basalt' }];
    // nobody waits for the job: the thread reports its end and goes back to the pool
    new FlushInThread(pool, { dir: ${JSON.stringify(dir)}, name: 'seg_000001', segment, store: { blockBytes: 16384, quality: 1 } });
    const check = setInterval(() => { if (pool.idle === 1) { clearInterval(check); console.log('kept'); } }, 10);
  `;
  // a file, not `-e`: a thread inherits the process's options, an evaluated script among them
  const file = join(dir, 'keep-a-thread.mjs');
  writeFileSync(file, script);
  const r = spawnSync(process.execPath, ['--import', 'tsx', file], { cwd: fileURLToPath(new URL('../../..', import.meta.url)), encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.signal, null, `the process was killed after 60 s: ${r.stderr}`);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'kept');
  assert.ok(existsSync(join(dir, 'seg_000001.idx')));
});
