/**
 * Damage is detected, never served as data: flipping one byte of any index file makes the consistency
 * check fail naming the file, and opening an index whose term file or manifest is damaged fails with an
 * internal error instead of returning wrong answers. Leftover temporaries of a crashed writer are ignored
 * by readers and collected by the next writer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { QuarryError } from '../../../src/kernel/errors.js';
import { checkIndex, Index } from '../../../src/engine/index/index.js';
import { tempDir } from './fixtures.js';

async function build(dir: string): Promise<void> {
  const index = await Index.open(dir);
  const w = await index.openWriter();
  for (let i = 0; i < 300; i++) w.upsert({ cid: BigInt(i), title: `title ${i}`, text: `some text about item ${i} and ${i % 7}`, host: 'x.example' });
  await w.commit();
  w.delete(5n);
  await w.commit();
  await w.close();
  await index.close();
}

function flip(file: string, at: (size: number) => number): void {
  const b = readFileSync(file);
  const i = at(b.length);
  b[i] = b[i]! ^ 0x20;
  writeFileSync(file, b);
}

test('one flipped byte in any file is reported by the check', async (t) => {
  const pristine = tempDir(t);
  await build(pristine);
  assert.ok(checkIndex(pristine).ok);
  const files = readdirSync(pristine).filter((f) => f !== 'write.lock');
  assert.deepEqual(files.map((f) => f.replace(/\d+/g, 'N')).sort(), ['MANIFEST', 'seg_N.del_N', 'seg_N.idx', 'seg_N.sto']);
  for (const f of files) {
    for (const where of [(n: number) => Math.floor(n / 2), (n: number) => n - 1, () => 0]) {
      const dir = tempDir(t);
      await build(dir);
      flip(join(dir, f), where);
      const report = checkIndex(dir);
      assert.equal(report.ok, false, `${f} damaged at ${where(readFileSync(join(dir, f)).length)}`);
      assert.ok(report.problems.some((p) => p.includes(f.startsWith('seg') ? f.slice(0, 10) : 'MANIFEST')), report.problems.join('; '));
    }
  }
});

test('opening an index with a damaged term file or manifest fails with an internal error', async (t) => {
  for (const target of ['MANIFEST', '.idx']) {
    const dir = tempDir(t);
    await build(dir);
    const f = readdirSync(dir).find((n) => n.endsWith(target))!;
    flip(join(dir, f), (n) => Math.floor(n / 3));
    await assert.rejects(Index.open(dir), (err: unknown) => QuarryError.is(err) && err.code === 'internal');
  }
});

test('leftover temporaries are ignored by readers and collected by the next writer', async (t) => {
  const dir = tempDir(t);
  await build(dir);
  writeFileSync(join(dir, 'seg_000099.idx.4242.tmp'), 'partial');
  writeFileSync(join(dir, 'seg_000099.sto'), 'orphan of a crashed commit');
  writeFileSync(join(dir, 'notes.txt'), 'not ours');
  assert.ok(checkIndex(dir).ok);
  const index = await Index.open(dir);
  assert.equal(index.snapshot().docs, 299);
  const w = await index.openWriter();
  assert.equal(existsSync(join(dir, 'seg_000099.idx.4242.tmp')), false);
  assert.equal(existsSync(join(dir, 'seg_000099.sto')), false);
  assert.equal(existsSync(join(dir, 'notes.txt')), true, 'files that are not the index\'s are left alone');
  await w.close();
  await index.close();
});
