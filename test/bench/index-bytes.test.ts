/**
 * The index-bytes breakdown must account for every byte of the postings and positions it reads, sort
 * terms into the kinds they are (common words, grams, `site:` terms, the rest), count the occurrences the
 * analyzer made, and measure positions' Rice codes as the writer wrote them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { indexBytes, interpolativeBits } from '../../bench/index-bytes.js';
import { Index } from '../../src/engine/index.js';
import { analyzeTerms } from '../../src/engine/analysis/analyzer.js';
import { COMMON_GRAM_WORDS } from '../../src/engine/analysis/common-grams.js';
import { readManifest } from '../../src/engine/index/manifest.js';
import { SegmentCore } from '../../src/engine/index/segment-reader.js';

const WORDS = ['granite', 'quarry', 'basalt', 'river', 'the', 'of', 'and', 'a', 'in', 'mountain', 'valley', 'stone', 'to', 'was'];

test('every postings and positions byte is in one kind of term, and the positions are counted as analyzed', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-index-bytes-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  const docs = Array.from({ length: 400 }, (_, i) => ({
    cid: BigInt(i + 1),
    title: `${WORDS[next() % WORDS.length]} of the ${WORDS[next() % WORDS.length]}`,
    text: Array.from({ length: 20 + (next() % 300) }, () => WORDS[next() % WORDS.length]).join(' '),
    url: `https://docs${i % 3}.example.org/p/${i}`,
    host: `docs${i % 3}.example.org`,
  }));
  const index = await Index.open(dir);
  const w = await index.openWriter();
  for (const d of docs.slice(0, 250)) w.upsert(d);
  await w.commit();
  for (const d of docs.slice(250)) w.upsert(d);
  await w.commit();
  await w.close();
  await index.close();

  const listedWords = ['the', 'and', 'granite', 'absent'];
  const { docs: counted, classes, listed } = indexBytes(dir, { codes: 1, words: listedWords });
  assert.equal(counted, docs.length);
  const byName = new Map(classes.map((c) => [c.name, c]));

  let sectionBytes = 0;
  for (const { name } of readManifest(dir)!.segments) {
    const core = new SegmentCore(dir, name);
    sectionBytes += core.postingsAndPositionsBytes;
    core.close();
  }
  assert.equal(classes.reduce((s, c) => s + c.postingsBytes + c.positionsBytes, 0), sectionBytes);

  const common = docs.reduce((n, d) => n + [...analyzeTerms(d.title), ...analyzeTerms(d.text)].filter((term) => COMMON_GRAM_WORDS.has(term)).length, 0);
  assert.equal(byName.get('common words')!.positions, common);
  const all = docs.reduce((n, d) => n + analyzeTerms(d.title).length + analyzeTerms(d.text).length, 0);
  assert.equal(classes.reduce((s, c) => s + c.positions, 0), all);

  // the listed words' row counts their occurrences across kinds (common or not; a word in no document adds nothing)
  const listedTerms = new Set(listedWords.flatMap((w) => analyzeTerms(w)));
  const occurrences = docs.reduce((n, d) => n + [...analyzeTerms(d.title), ...analyzeTerms(d.text)].filter((term) => listedTerms.has(term)).length, 0);
  assert.equal(listed!.positions, occurrences);
  assert.ok(listed!.postingsBytes > 0 && listed!.positionsBytes > 0);

  for (const synthetic of ['grams', 'site:']) {
    const c = byName.get(synthetic)!;
    assert.ok(c.postings > 0, `${synthetic} terms are indexed`);
    assert.equal(c.positions, 0);
    assert.equal(c.positionsBytes, 0);
  }
  // docs0/1/2.example.org, example.org, org: one `site:` posting per suffix of each document's host
  assert.equal(byName.get('site:')!.postings, docs.length * 3);

  // the Rice codes measured are the ones written: their bits fill the positions bytes but for each
  // block's padding to a byte (fewer than 8 bits a block; 400 documents are at most 4 blocks of a term)
  for (const c of classes) {
    if (c.positions === 0) continue;
    const { riceBits, interpolativeBits: ipBits, positions } = c.sampled!;
    assert.equal(positions, c.positions, `${c.name}: every position sampled`);
    assert.ok(c.positionsBytes * 8 >= riceBits && c.positionsBytes * 8 - riceBits < 8 * 4 * c.terms, `${c.name}: ${riceBits} bits in ${c.positionsBytes} bytes`);
    assert.ok(ipBits > 0);
  }
});

test('interpolative coding takes the fewest bits the range of each value allows', () => {
  // every value of the range: implied, no bits
  assert.equal(interpolativeBits([0, 1, 2], 0, 3, 0, 2), 0);
  // one value among 10: truncated binary, 3 bits for the 6 smallest, 4 for the others
  assert.equal(interpolativeBits([3], 0, 1, 0, 9), 3);
  assert.equal(interpolativeBits([8], 0, 1, 0, 9), 4);
  // [1, 5, 6] in [0, 7]: 5 first (within [1, 6]: 6 values, v − 1 = 4 ≥ 2 → 3 bits), then 1 in [0, 4]
  // (5 values, 1 < 3 → 2 bits), then 6 in [6, 7] (2 values, 1 bit)
  assert.equal(interpolativeBits([1, 5, 6], 0, 3, 0, 7), 6);
});
