/**
 * Named fault points (directory.ts) kill a committing process at each step of the commit protocol:
 * after a temporary file is written, after a segment's files are in place, just before the manifest,
 * just after the manifest rename. The index afterwards is consistent and holds the old commit — or the
 * new one, once the manifest was renamed — exactly, and the next writer takes over and commits.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { checkIndex, Index } from '../../../src/engine/index/index.js';
import { liveDocuments, tempDir } from './fixtures.js';

const child = fileURLToPath(new URL('./fault-child.ts', import.meta.url));

for (const threads of [false, true]) {
  test(`a crash at any step of a commit leaves the old or the new commit, whole${threads ? ' (buffers and batches written in threads)' : ''}`, async (t) => {
    for (const [point, expectNew] of [['file-written', false], ['segment-written', false], ['before-manifest', false], ['manifest-renamed', true]] as const) {
      const dir = tempDir(t);
      const index = await Index.open(dir, { mergeFactor: 2, mergeFloorBytes: 1 << 20 });
      const w = await index.openWriter();
      for (let i = 0; i < 70; i++) w.upsert({ cid: BigInt(i), title: 'old', text: `original ${i}` });
      await w.commit();
      await w.close();

      const r = spawnSync(process.execPath, ['--import', 'tsx', child, dir, ...(threads ? ['threads'] : [])], { env: { ...process.env, QUARRY_INDEX_FAULT: point }, encoding: 'utf8' });
      assert.equal(r.signal, 'SIGKILL', `${point}: ${r.stderr}`);
      const report = checkIndex(dir);
      assert.ok(report.ok, `${point}: ${report.problems.join('; ')}`);
      await index.refresh();
      const live = liveDocuments(index);
      assert.equal(index.snapshot().generation, expectNew ? 2 : 1, point);
      assert.equal(live.size, expectNew ? 69 : 70, point);
      assert.equal(live.get(3n)?.title, expectNew ? 'new' : 'old', point);

      const w2 = await index.openWriter(); // takes over the dead child's lock
      w2.upsert({ cid: 1000n, title: 'after', text: 'recovery' });
      const info = await w2.commit();
      assert.equal(info.docs, live.size + 1);
      assert.ok(checkIndex(dir).ok);
      await w2.close();
      await index.close();
    }
  });
}
