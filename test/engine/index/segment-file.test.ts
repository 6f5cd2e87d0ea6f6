/**
 * Segment files are written as they are encoded, a chunk at a time: the bytes and the footer's CRC must
 * be exactly those of the file written whole, a spilled section must come back byte for byte, nothing
 * may appear under the final name before the commit, and an aborted file leaves nothing behind. An index
 * whose segments span many chunks (flushed and merged, with deletions) must stay whole.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAGIC, verifiedPayload, withFooter } from '../../../src/engine/index/footer.js';
import { checkIndex, Index } from '../../../src/engine/index/index.js';
import { SegmentFile } from '../../../src/engine/index/segment-file.js';
import { liveDocuments, tempDir } from './fixtures.js';

const MiB = 1 << 20;

test('a file written in pieces equals the file written whole, footer included', (t) => {
  const dir = tempDir(t);
  // Pieces below, at and above the chunk size, and writes straight into the buffer.
  const pieces = [randomBytes(10), randomBytes(MiB - 3), randomBytes(3 * MiB + 5), randomBytes(MiB), randomBytes(777)];
  const f = new SegmentFile(dir, 'x.idx');
  for (const p of pieces) {
    f.bytes(p);
    f.out.varint(300);
    f.drain();
  }
  f.align(8);
  const payloadBytes = f.position;
  f.footer(MAGIC.terms);
  assert.equal(existsSync(join(dir, 'x.idx')), false, 'nothing under the final name before the commit');
  f.commit();
  const varint300 = Buffer.from([0xac, 0x02]);
  const written = Buffer.concat(pieces.flatMap((p) => [p, varint300]));
  const expected = Buffer.concat([written, Buffer.alloc((8 - (written.length % 8)) % 8)]);
  const file = readFileSync(join(dir, 'x.idx'));
  assert.equal(file.length, payloadBytes + 12);
  assert.ok(file.equals(withFooter(expected, MAGIC.terms)));
  assert.equal(verifiedPayload(file, MAGIC.terms, 'x.idx').length, payloadBytes);
  assert.deepEqual(readdirSync(dir), ['x.idx'], 'no temporary left');
});

test('a spilled section is copied back byte for byte and its scratch file removed', (t) => {
  const dir = tempDir(t);
  const f = new SegmentFile(dir, 'y.idx');
  const spill = f.spill();
  const spilled = [randomBytes(2 * MiB + 1), randomBytes(5), randomBytes(MiB)];
  for (const p of spilled) {
    spill.out.bytes(p);
    spill.drain();
  }
  assert.equal(spill.position, 3 * MiB + 6);
  f.bytes(Buffer.from('head'));
  spill.copyTo(f);
  spill.dispose();
  f.footer(MAGIC.stored);
  f.commit();
  assert.deepEqual(verifiedPayload(readFileSync(join(dir, 'y.idx')), MAGIC.stored, 'y.idx'), Buffer.concat([Buffer.from('head'), ...spilled]));
  assert.deepEqual(readdirSync(dir), ['y.idx']);
});

test('an aborted file leaves nothing, and an earlier file under its name stays as it was', (t) => {
  const dir = tempDir(t);
  const first = new SegmentFile(dir, 'z.sto');
  first.bytes(Buffer.from('first'));
  first.footer(MAGIC.stored);
  first.commit();
  const before = readFileSync(join(dir, 'z.sto'));
  const second = new SegmentFile(dir, 'z.sto');
  second.bytes(randomBytes(2 * MiB));
  const spill = second.spill();
  spill.out.bytes(randomBytes(100));
  spill.dispose();
  second.abort();
  assert.deepEqual(readdirSync(dir), ['z.sto']);
  assert.deepEqual(readFileSync(join(dir, 'z.sto')), before);
});

test('segments of many chunks, flushed and merged with deletions, keep every live document', async (t) => {
  const dir = tempDir(t);
  const index = await Index.open(dir, { mergeFactor: 2, mergeFloorBytes: MiB, storedBlockBytes: 4096 });
  const w = await index.openWriter();
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const words = [...Array.from({ length: 5000 }, (_, i) => `w${i.toString(36)}`), 'the', 'of', 'and', 'in'];
  const text = (n: number) => Array.from({ length: n }, () => words[Math.floor(words.length * rnd() ** 3)]).join(' ');
  const expected = new Map<bigint, string>();
  for (let batch = 0; batch < 3; batch++) {
    for (let i = 0; i < 4000; i++) {
      const cid = BigInt(batch * 10000 + i);
      const body = text(200);
      w.upsert({ cid, title: text(5), text: body, url: `https://h${i % 7}.example/${i}`, host: `h${i % 7}.example` });
      expected.set(cid, body);
    }
    for (let i = 0; i < 50; i++) {
      w.delete(BigInt(batch * 10000 + i * 3));
      expected.delete(BigInt(batch * 10000 + i * 3));
    }
    await w.commit();
  }
  const segments = index.snapshot().segments;
  assert.ok(segments.some((s) => s.maxDoc > 4000), 'a merged segment');
  const idxBytes = readdirSync(dir).filter((f) => f.endsWith('.idx')).map((f) => readFileSync(join(dir, f)).length);
  assert.ok(Math.max(...idxBytes) > 2 * MiB, `the largest .idx spans chunks (${Math.max(...idxBytes)} bytes)`);
  assert.ok(checkIndex(dir).ok);
  const live = liveDocuments(index);
  assert.equal(live.size, expected.size);
  for (const [cid, body] of expected) assert.equal(live.get(cid)?.text, body, `cid ${cid}`);
  assert.deepEqual(readdirSync(dir).filter((f) => f.endsWith('.tmp')), [], 'no scratch or temporary file left');
  await w.close();
  await index.close();
});
