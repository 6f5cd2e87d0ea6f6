/** `quarry check <dir>` reports a consistent index with exit 0 and a damaged one with exit 1, naming the file. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Index } from '../../../src/engine/index/index.js';
import { tempDir } from './fixtures.js';

const main = fileURLToPath(new URL('../../../bin/quarry.js', import.meta.url));

test('quarry check: ok, then damaged', async (t) => {
  const dir = tempDir(t);
  const index = await Index.open(dir);
  const w = await index.openWriter();
  w.upsert({ cid: 1n, title: 'a', text: 'b' });
  await w.commit();
  await w.close();
  await index.close();
  let r = spawnSync(process.execPath, [main, 'check', dir], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /ok — generation 1, 1 documents in 1 segments/);
  const sto = readdirSync(dir).find((f) => f.endsWith('.sto'))!;
  const b = readFileSync(join(dir, sto));
  b[0] = b[0]! ^ 1;
  writeFileSync(join(dir, sto), b);
  r = spawnSync(process.execPath, [main, 'check', dir], { encoding: 'utf8' });
  assert.equal(r.status, 1);
  assert.match(r.stdout, new RegExp(`DAMAGED[\\s\\S]*${sto.replace('.', '\\.')}`));
});
