/**
 * A flush sorts a buffer's tokens by term into doc and position columns of 16 bits when every value fits
 * (at most 65,536 documents; no document past 65,520 tokens, whose last position is 65,535) and of 32
 * otherwise. On both sides of each edge the postings must read back what was added.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Index } from '../../../src/engine/index.js';
import { analyzeTerms } from '../../../src/engine/analysis/analyzer.js';
import { NO_MORE_DOCS, TITLE_TEXT_POSITION_GAP, type SegmentReader } from '../../../src/engine/index/types.js';
import { tempDir } from './fixtures.js';

/** Docs and positions of `word`'s term in `seg`. */
function postingsOf(seg: SegmentReader, word: string): [number, number[]][] {
  const c = seg.postings(analyzeTerms(word)[0]!, { positions: true });
  const out: [number, number[]][] = [];
  if (c === undefined) return out;
  for (let d = c.nextDoc(); d !== NO_MORE_DOCS; d = c.nextDoc()) out.push([d, [...c.positions()]]);
  return out;
}

test('documents and positions on both sides of the 16-bit edges read back as added', async (t) => {
  const dir = tempDir(t);
  const index = await Index.open(dir);
  const writer = await index.openWriter();
  let cid = 0n;
  // one document per segment, of `length` tokens with its title: "edge" first and last in its text
  for (const length of [65_520, 65_521]) {
    const words = new Array<string>(length - 1).fill('filler');
    words[0] = words[length - 2] = 'edge';
    writer.upsert({ cid: ++cid, title: 'doc', text: words.join(' ') });
    await writer.commit();
  }
  // as many documents in one segment as 16 bits number, and one more
  for (const count of [65_536, 65_537]) {
    for (let i = 0; i < count; i++) writer.upsert({ cid: ++cid, title: 'item', text: i === count - 1 ? 'every last' : 'every' });
    await writer.commit();
  }
  await writer.close();

  const segments = [...index.snapshot().segments];
  assert.equal(segments.length, 4);
  const textStart = 1 + TITLE_TEXT_POSITION_GAP;
  for (const seg of segments.filter((s) => s.maxDoc === 1)) {
    const length = seg.length(0);
    assert.deepEqual(postingsOf(seg, 'edge'), [[0, [textStart, textStart + length - 2]]], `a document of ${length} tokens`);
  }
  for (const seg of segments.filter((s) => s.maxDoc > 1)) {
    const every = postingsOf(seg, 'every');
    assert.equal(every.length, seg.maxDoc);
    every.forEach(([doc, positions], i) => {
      assert.equal(doc, i);
      assert.deepEqual(positions, [textStart]);
    });
    assert.deepEqual(postingsOf(seg, 'last'), [[seg.maxDoc - 1, [textStart + 1]]]);
    assert.deepEqual(postingsOf(seg, 'item').at(-1), [seg.maxDoc - 1, [0]]);
  }
  assert.deepEqual(segments.map((s) => s.maxDoc).sort((a, b) => a - b), [1, 1, 65_536, 65_537]);
  await index.close();
});
