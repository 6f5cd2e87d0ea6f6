/**
 * One writer per index directory: a second writer, in this process or another live one, is refused with
 * ConflictError; a lock left by a dead process is taken over; closing the writer releases the lock.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { QuarryError } from '../../../src/kernel/errors.js';
import { Index } from '../../../src/engine/index/index.js';
import { tempDir } from './fixtures.js';

const isConflict = (err: unknown) => QuarryError.is(err) && err.code === 'conflict';

test('a second writer in the same process gets ConflictError; close releases the lock', async (t) => {
  const dir = tempDir(t);
  const a = await Index.open(dir);
  const b = await Index.open(dir);
  try {
    const w = await a.openWriter();
    await assert.rejects(a.openWriter(), isConflict);
    await assert.rejects(b.openWriter(), isConflict);
    const c = await Index.open(join(dir, '.', '..', basename(dir))); // the same directory spelled otherwise
    await assert.rejects(c.openWriter(), isConflict);
    await c.close();
    assert.equal(readFileSync(join(dir, 'write.lock'), 'utf8').trim(), String(process.pid));
    await w.close();
    await w.close(); // idempotent
    assert.equal(existsSync(join(dir, 'write.lock')), false);
    const w2 = await b.openWriter();
    assert.throws(() => w.upsert({ cid: 1n, title: 't', text: 'x' }), isConflict);
    await w2.close();
  } finally {
    await a.close();
    await b.close();
  }
});

test('a lock held by a live process is respected; a dead process\'s lock is taken over', async (t) => {
  const dir = tempDir(t);
  const index = await Index.open(dir);
  const sleeper = spawn('sleep', ['30']);
  try {
    writeFileSync(join(dir, 'write.lock'), `${sleeper.pid}\n`);
    await assert.rejects(index.openWriter(), (err: unknown) => isConflict(err) && String((err as Error).message).includes(String(sleeper.pid)));
    const dead = spawnSync('true').pid;
    writeFileSync(join(dir, 'write.lock'), `${dead}\n`);
    const w = await index.openWriter();
    assert.equal(readFileSync(join(dir, 'write.lock'), 'utf8').trim(), String(process.pid));
    w.upsert({ cid: 1n, title: 'taken over', text: 'ok' });
    assert.equal((await w.commit()).docs, 1);
    await w.close();
    writeFileSync(join(dir, 'write.lock'), 'garbage');
    const w2 = await index.openWriter();
    await w2.close();
  } finally {
    sleeper.kill('SIGKILL');
    await index.close();
  }
});
