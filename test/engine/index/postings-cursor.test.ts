/**
 * The postings cursor contract of types.ts over multi-block lists: `nextDoc`/`advance` land where a
 * plain sorted array says, `shallowAdvance` reports the block's last doc without moving the cursor, and
 * block/term impact summaries bound every doc's freq and length, positions read alone or as the bits a
 * merge copies are the document's, and `nextPostings` copies the rest of the current
 * block below its bound and moves past it. Checked with random operation
 * sequences against the array the segment was built from.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { BLOCK_SIZE, Index, NO_MORE_DOCS, postingsBuffer, type SegmentReader } from '../../../src/engine/index/index.js';
import { ByteWriter } from '../../../src/engine/index/bytes.js';
import { TermPostingsWriter } from '../../../src/engine/index/postings-writer.js';
import type { CodedPositions } from '../../../src/engine/index/postings-format.js';
import { BlockPostingsCursor } from '../../../src/engine/index/postings-reader.js';
import { tempDir } from './fixtures.js';

interface Expect { docs: number[]; freqs: number[]; positions: number[][] }

test('cursor operations agree with a sorted-array reference across blocks', async (t) => {
  const dir = tempDir(t);
  const index = await Index.open(dir);
  const w = await index.openWriter();
  let seed = 7;
  const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296);
  const N = 3000;
  // term "alpha" in ~70% of docs (many blocks), "beta" in ~3%, "kappa" in 5 docs
  const expect: Record<string, Expect> = { alpha: { docs: [], freqs: [], positions: [] }, beta: { docs: [], freqs: [], positions: [] }, kappa: { docs: [], freqs: [], positions: [] } };
  for (let d = 0; d < N; d++) {
    const words: string[] = [];
    const n = 1 + Math.floor(rand() * 30);
    for (let i = 0; i < n; i++) {
      const r = rand();
      words.push(r < 0.1 ? 'alpha' : r < 0.102 ? 'beta' : 'filler');
    }
    if (d === 0 || d === 129 || d === 1500 || d === 2998 || d === 2999) words.push('kappa');
    if (rand() < 0.6) words.push('alpha');
    for (const term of Object.keys(expect)) {
      const pos = words.flatMap((x, i) => (x === term ? [i + 1 + 16] : [])); // title "t" takes position 0, then the gap
      if (pos.length > 0) {
        expect[term]!.docs.push(d);
        expect[term]!.freqs.push(pos.length);
        expect[term]!.positions.push(pos);
      }
    }
    w.upsert({ cid: BigInt(d), title: 't', text: words.join(' ') });
  }
  await w.commit();
  const [seg] = index.snapshot().segments as SegmentReader[];
  assert.ok(seg && seg.maxDoc === N);
  const lengths = Uint32Array.from({ length: N }, (_, d) => seg.length(d));
  assert.ok(expect.alpha!.docs.length > 10 * BLOCK_SIZE);

  const opArb = fc.array(
    fc.oneof(
      fc.constant({ op: 'next' as const, n: 0 }),
      fc.integer({ min: 1, max: 400 }).map((n) => ({ op: 'advance' as const, n })),
      // near targets and far ones (a gallop over many blocks), ahead of or behind the last shallow target
      fc.oneof(fc.integer({ min: 0, max: 600 }), fc.integer({ min: 0, max: 3200 })).map((n) => ({ op: 'shallow' as const, n })),
      fc.constant({ op: 'positions' as const, n: 0 }),
      fc.integer({ min: 0, max: 900 }).map((n) => ({ op: 'bulk' as const, n })),
      fc.constant({ op: 'coded' as const, n: 0 }),
    ),
    { maxLength: 80 },
  );
  await fc.assert(
    fc.property(fc.constantFrom('alpha', 'beta', 'kappa'), opArb, (term, ops) => {
      const e = expect[term]!;
      const c = seg.postings(term, { positions: true })!;
      assert.equal(c.docFreq, e.docs.length);
      assert.equal(c.maxFreq, Math.max(...e.freqs));
      assert.equal(c.doc(), -1);
      let i = -1; // index in e.docs of the current doc
      for (const { op, n } of ops) {
        const cur = c.doc();
        if (op === 'next') {
          i++;
          assert.equal(c.nextDoc(), i < e.docs.length ? e.docs[i] : NO_MORE_DOCS);
        } else if (op === 'advance') {
          if (cur === NO_MORE_DOCS) {
            assert.equal(c.advance(NO_MORE_DOCS), NO_MORE_DOCS);
            continue;
          }
          const target = cur + n;
          while (i < e.docs.length && (i < 0 || e.docs[i]! < target)) i++;
          assert.equal(c.advance(target), i < e.docs.length ? e.docs[i] : NO_MORE_DOCS);
        } else if (op === 'shallow') {
          const target = Math.max(cur, 0) + n;
          const last = c.shallowAdvance(target);
          assert.equal(c.doc(), cur, 'shallowAdvance does not move the cursor');
          const k = e.docs.findIndex((d) => d >= target);
          if (k < 0) {
            assert.equal(last, NO_MORE_DOCS);
          } else {
            const block = Math.floor(k / BLOCK_SIZE);
            const from = block * BLOCK_SIZE;
            const to = Math.min(e.docs.length, from + BLOCK_SIZE);
            assert.equal(last, e.docs[to - 1]);
            assert.equal(c.blockMaxFreq(), Math.max(...e.freqs.slice(from, to)));
            assert.equal(c.blockMinLength(), Math.min(...e.docs.slice(from, to).map((d) => seg.length(d))));
          }
        } else if (op === 'bulk') {
          // the current doc and the rest of its block below cur + n, then the cursor on the next one
          const upTo = cur + n;
          const out = postingsBuffer();
          const got = c.nextPostings(upTo, out);
          const from = Math.max(i, 0);
          let j = from;
          if (cur >= 0 && cur !== NO_MORE_DOCS) {
            const blockEnd = Math.min(e.docs.length, (Math.floor(i / BLOCK_SIZE) + 1) * BLOCK_SIZE);
            while (j < blockEnd && e.docs[j]! < upTo) j++;
          }
          assert.equal(got, j - from, `nextPostings(${upTo}) from ${cur}`);
          assert.deepEqual([...out.docs.subarray(0, got)], e.docs.slice(from, j));
          assert.deepEqual([...out.freqs.subarray(0, got)], e.freqs.slice(from, j));
          if (got > 0) i = j;
          assert.equal(c.doc(), cur === -1 ? -1 : i < e.docs.length ? e.docs[i] : NO_MORE_DOCS);
        } else if (op === 'coded') {
          if (cur === -1 || cur === NO_MORE_DOCS) continue;
          // the bits a merge copies are the coding of the doc's positions; positions() still answers after
          const range: CodedPositions = { data: new Uint8Array(0), from: 0, to: 0 };
          assert.ok((c as BlockPostingsCursor).codedPositions(range));
          const written = (add: (w: TermPostingsWriter) => void) => {
            const pos = new ByteWriter();
            const w = new TermPostingsWriter(lengths, new ByteWriter(), pos);
            w.begin('alpha');
            add(w);
            w.finish();
            return [...pos.view()];
          };
          assert.deepEqual(written((w) => w.addCoded(cur, e.freqs[i]!, range)), written((w) => w.add(cur, e.freqs[i]!, e.positions[i]!, 0)));
          assert.deepEqual([...c.positions()], e.positions[i], 'positions() after codedPositions on one doc');
        } else if (cur !== -1 && cur !== NO_MORE_DOCS) {
          assert.equal(c.freq(), e.freqs[i]);
          assert.deepEqual([...c.positions()], e.positions[i]);
          assert.deepEqual([...c.positions()], e.positions[i], 'positions() twice on one doc');
        }
      }
    }),
    { numRuns: 300 },
  );
  // many cursors open at once (their block buffers span several of the shared slabs): each keeps its own
  const e = expect.alpha!;
  const open = Array.from({ length: 1200 }, (_, j) => {
    const c = seg.postings('alpha')!;
    const at = (j * 37) % e.docs.length;
    assert.equal(c.advance(e.docs[at]!), e.docs[at]);
    return { c, at };
  });
  for (const { c, at } of open) {
    assert.equal(c.doc(), e.docs[at]);
    assert.equal(c.freq(), e.freqs[at]);
    assert.equal(c.nextDoc(), at + 1 < e.docs.length ? e.docs[at + 1] : NO_MORE_DOCS);
  }
  assert.equal(seg.postings('absent'), undefined);
  assert.equal(seg.docFreq('absent'), 0);
  await index.close();
});

test('positions with extreme gaps (Rice escapes) and long documents round-trip', async (t) => {
  const dir = tempDir(t);
  const index = await Index.open(dir);
  const w = await index.openWriter();
  // doc 0: "alpha" 1000 times, 199,000 fillers, "alpha" once more (a gap far beyond its Rice parameter)
  const words: string[] = [];
  for (let i = 0; i < 1000; i++) words.push('alpha');
  for (let i = 0; i < 199_000; i++) words.push('x');
  words.push('alpha');
  w.upsert({ cid: 1n, title: '', text: words.join(' ') });
  // doc 1: a single late occurrence; doc 2: title-only occurrence
  w.upsert({ cid: 2n, title: 'beta', text: 'x '.repeat(70_000) + 'alpha' });
  w.upsert({ cid: 3n, title: 'alpha', text: '' });
  await w.commit();
  const [seg] = index.snapshot().segments;
  const c = seg!.postings('alpha', { positions: true })!;
  assert.equal(c.nextDoc(), 0);
  const p0 = [...c.positions()];
  assert.equal(p0.length, 1001);
  assert.deepEqual(p0.slice(0, 3), [16, 17, 18]);
  assert.equal(p0[999], 1015);
  assert.equal(p0[1000], 16 + 200_000);
  assert.equal(c.nextDoc(), 1);
  assert.deepEqual([...c.positions()], [1 + 16 + 70_000]);
  assert.equal(c.nextDoc(), 2);
  assert.deepEqual([...c.positions()], [0]);
  // skipping: positions of a later doc without reading the earlier ones
  const c2 = seg!.postings('alpha', { positions: true })!;
  assert.equal(c2.advance(2), 2);
  assert.deepEqual([...c2.positions()], [0]);
  await index.close();
});
