/**
 * The checked-in index of format version 1 (fixtures/format-v1, written by compat-fixture.ts) stays
 * readable: it passes the check and reads back its documents, postings, positions, site terms and
 * deletes, and merges into segments of the current kind, written as the current version. A format change
 * that breaks this must bump FORMAT_VERSION and say what happens to old indexes. A file of a version past
 * this build's is refused.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FOOTER_BYTES, FORMAT_VERSION, MAGIC } from '../../../src/engine/index/footer.js';
import { checkIndex, Index, NO_MORE_DOCS } from '../../../src/engine/index/index.js';
import { storeMagic } from '../../../src/engine/index/store.js';
import { FIXTURE_DOCS } from './compat-fixture.js';
import { liveDocuments, tempDir } from './fixtures.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/format-v1', import.meta.url));

test('the format-v1 fixture index passes the check and reads back what was written', async (t) => {
  const dir = join(tempDir(t), 'index');
  cpSync(FIXTURE, dir, { recursive: true }); // a writer would collect files: never touch the fixture
  const report = checkIndex(dir);
  assert.ok(report.ok, report.problems.join('; '));
  assert.equal(report.generation, 2);
  const index = await Index.open(dir);
  try {
    const live = liveDocuments(index);
    const expected = new Map(FIXTURE_DOCS.filter((d) => d.cid !== 50n).map(({ cid, ...rest }) => [cid, rest]));
    expected.set(40n, { title: 'Replaced', text: 'the second version of document forty' });
    for (let i = 0; i < 130; i++) expected.set(1000n + BigInt(i), { title: `filler ${i}`, text: `common ${'word '.repeat(i % 5)}end` });
    assert.deepEqual(live, expected);
    const segs = index.snapshot().segments;
    assert.equal(segs.length, 2);
    let kernel = 0;
    for (const seg of segs) {
      const c = seg.postings('kernel', { positions: true });
      if (c === undefined) continue;
      for (let d = c.nextDoc(); d !== NO_MORE_DOCS; d = c.nextDoc()) {
        assert.equal(seg.cid(d), 1n);
        assert.deepEqual([...c.positions()], [2, 3 + 16 + 4, 3 + 16 + 11]); // title "Installing the kernel"; text tokens 4 and 11
        kernel++;
      }
    }
    assert.equal(kernel, 1);
    assert.equal(segs.reduce((n, s) => n + s.docFreq('site:example.org'), 0), 1);
    assert.equal(segs.reduce((n, s) => n + s.docFreq('cafe'), 0), 1);
    const common = segs[0]!.postings('common', { positions: true })!;
    assert.equal(common.docFreq, 130);
    let seen = 0;
    for (let d = common.nextDoc(); d !== NO_MORE_DOCS; d = common.nextDoc()) {
      const i = Number(segs[0]!.cid(d) - 1000n);
      assert.equal(segs[0]!.length(d), 4 + (i % 5));
      assert.deepEqual([...common.positions()], [2 + 16]);
      assert.equal(common.freq(), 1);
      seen++;
    }
    assert.equal(seen, 130);
    const word = segs[0]!.postings('word')!;
    assert.equal(word.advance(0), 5 + 1, 'first doc with "word" is filler 1 (after the 5 named docs)');
    assert.equal(word.freq(), 1);
    const w = await index.openWriter(); // and it accepts new commits
    w.upsert({ cid: 3n, title: 'new', text: 'after the fixture' });
    assert.equal((await w.commit()).docs, 135);
    // merged with a new segment, its UTF-8 stored text is re-coded with the merged segment's vocabulary
    await w.forceMerge(1);
    await w.close();
    expected.set(3n, { title: 'new', text: 'after the fixture' });
    assert.deepEqual(liveDocuments(index), expected);
    const merged = index.snapshot().segments;
    assert.equal(merged.length, 1);
    assert.equal(storeMagic(readFileSync(join(dir, `${merged[0]!.name}.sto`))), MAGIC.wordStored);
    assert.ok(checkIndex(dir).ok);
    // what is written now carries the current version; the fixture's files carry 1
    for (const file of [`${merged[0]!.name}.idx`, `${merged[0]!.name}.sto`, 'MANIFEST']) assert.equal(footerVersion(readFileSync(join(dir, file))), FORMAT_VERSION, file);
    assert.equal(footerVersion(readFileSync(join(FIXTURE, 'MANIFEST'))), 1);
  } finally {
    await index.close();
  }
});

test('an index of a format version past this build\'s is refused, not misread', async (t) => {
  const dir = join(tempDir(t), 'index');
  cpSync(FIXTURE, dir, { recursive: true });
  const manifest = join(dir, 'MANIFEST');
  const bytes = Buffer.from(readFileSync(manifest));
  const at = bytes.length - FOOTER_BYTES;
  bytes.writeUInt32LE(FORMAT_VERSION + 1, at + 4);
  bytes.writeUInt32LE(crc32(bytes.subarray(0, at + 8)) >>> 0, at + 8); // a sound file, of a newer version
  writeFileSync(manifest, bytes);
  await assert.rejects(Index.open(dir), new RegExp(`format version ${FORMAT_VERSION + 1}; this build reads 1 to ${FORMAT_VERSION}`));
  assert.equal(checkIndex(dir).ok, false);
});

/** The format version in a file's footer. */
function footerVersion(file: Buffer): number {
  return file.readUInt32LE(file.length - FOOTER_BYTES + 4);
}
