/**
 * The filter of a segment's cids that spares a writer the exact lookup of a cid no segment holds: it
 * never says "not here" of a cid the segment holds, whatever the cids' halves look like, says it of most
 * others, and a writer replacing documents across many segments (cids above 2^32, whose high halves
 * differ) deletes every replaced one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CidFilter, halvesOf } from '../../../src/engine/index/cid-filter.js';
import { Index as SearchableIndex } from '../../../src/engine/index.js';
import { liveDocuments, tempDir } from './fixtures.js';

/** A deterministic stream of 64-bit values. */
function* random64(seed: bigint, count: number): Generator<bigint> {
  let x = seed;
  for (let i = 0; i < count; i++) {
    x = (x * 6364136223846793005n + 1442695040888963407n) & 0xffff_ffff_ffff_ffffn;
    yield x;
  }
}

test('a cid filter holds every cid it was made of and few others', () => {
  const kinds: [string, bigint[]][] = [
    ['sequential', Array.from({ length: 20_000 }, (_, i) => BigInt(i + 1))],
    ['above 2^32, low halves alike', Array.from({ length: 20_000 }, (_, i) => (BigInt(i) << 32n) | 7n)],
    ['random 64-bit', [...random64(1n, 20_000)]],
  ];
  for (const [label, cids] of kinds) {
    const filter = CidFilter.of(BigUint64Array.from(cids));
    const held = halvesOf(cids, cids.length);
    for (let i = 0; i < cids.length; i++) assert.ok(filter.mayHold(held.lo[i]!, held.hi[i]!), `${label}: ${cids[i]} held`);
    const others = [...random64(99n, 20_000)].map((c) => c | (1n << 63n)).concat(cids.map((c) => c + 1_000_000_007n));
    const inSet = new Set(cids);
    const strangers = others.filter((c) => !inSet.has(c));
    const h = halvesOf(strangers, strangers.length);
    let passed = 0;
    for (let i = 0; i < strangers.length; i++) if (filter.mayHold(h.lo[i]!, h.hi[i]!)) passed++;
    assert.ok(passed < strangers.length * 0.1, `${label}: ${passed} of ${strangers.length} strangers pass`);
  }
  assert.ok(!CidFilter.of(new BigUint64Array(0)).mayHold(1, 0), 'an empty segment holds nothing');
});

test('a writer replacing documents across many segments deletes every replaced one, cids above 2^32 too', async (t) => {
  const dir = tempDir(t);
  const index = await SearchableIndex.open(dir, { maxBufferedBytes: 4 * 1024, mergeFactor: 1000, buildThreads: 0 });
  const w = await index.openWriter();
  const cidOf = (n: number) => (BigInt(n % 97) << 40n) + BigInt(n);
  const live = new Map<bigint, string>();
  for (let n = 0; n < 600; n++) {
    // every third upsert replaces a document of an earlier buffer
    const cid = n % 3 === 2 && n > 100 ? cidOf(n - 50 - (n % 40)) : cidOf(n);
    const text = `granite ${n} quarry ${'marble '.repeat(n % 7)}`;
    w.upsert({ cid, title: `doc ${n}`, text });
    live.set(cid, text);
    if (n % 41 === 40) {
      w.delete(cidOf(n - 30));
      live.delete(cidOf(n - 30));
    }
  }
  const info = await w.commit();
  assert.ok(info.segments >= 10, `${info.segments} segments`);
  const got = liveDocuments(index);
  assert.deepEqual(new Set(got.keys()), new Set(live.keys()));
  for (const [cid, text] of live) assert.equal(got.get(cid)!.text, text, `${cid}`);
  await w.close();
  await index.close();
});
