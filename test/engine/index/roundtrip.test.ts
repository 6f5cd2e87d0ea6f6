/**
 * Round trip against a plain model: random batches of upserts and deletes, committed at random points
 * with a tiny merge factor (so merges run), must leave exactly the model's live documents, their stored
 * fields, exact lengths, and postings (docs, freqs, positions) equal to what the analyzer produces for
 * them — read back through the same SegmentReader surface the query side uses.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { analyze } from '../../../src/engine/analysis/analyzer.js';
import { COMMON_GRAM_WORDS } from '../../../src/engine/analysis/common-grams.js';
import {
  checkIndex, gramTerm, GRAM_TERM_PREFIX, Index, NO_MORE_DOCS, siteTerms, TITLE_TEXT_POSITION_GAP, type SegmentView,
} from '../../../src/engine/index/index.js';
import { liveDocuments, tempDir, type LiveDoc } from './fixtures.js';

const WORD = fc.constantFrom('alpha', 'beta', 'gamma', 'running', 'runs', 'ran', 'Café', 'naïve', 'x1', '42', 'debian', 'the', 'ünïcödé', '日本');
const TEXT = fc.array(WORD, { maxLength: 40 }).map((w) => w.join(' '));
const DOC = fc.record({
  cid: fc.bigInt({ min: 0n, max: 30n }),
  title: fc.array(WORD, { maxLength: 4 }).map((w) => w.join(' ')),
  text: TEXT,
  url: fc.option(fc.constant('https://example.org/x'), { nil: undefined }),
  host: fc.option(fc.constantFrom('docs.example.org', 'Example.COM', 'a.b.c.d'), { nil: undefined }),
});
const OP = fc.oneof(
  { weight: 4, arbitrary: DOC.map((doc) => ({ kind: 'upsert' as const, doc })) },
  { weight: 1, arbitrary: fc.bigInt({ min: 0n, max: 30n }).map((cid) => ({ kind: 'delete' as const, cid })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'commit' as const }) },
);

/**
 * Expected postings of the live set: term → cid → positions (site terms: empty positions; a common-word
 * pair term: one −1 per occurrence of the pair, since it has a frequency but no positions).
 */
function expectedPostings(model: Map<bigint, LiveDoc>): Map<string, Map<bigint, number[]>> {
  const out = new Map<string, Map<bigint, number[]>>();
  const add = (term: string, cid: bigint, pos: number | null) => {
    let m = out.get(term);
    if (m === undefined) out.set(term, (m = new Map()));
    let p = m.get(cid);
    if (p === undefined) m.set(cid, (p = []));
    if (pos !== null) p.push(pos);
  };
  for (const [cid, d] of model) {
    const title = analyze(d.title);
    const tokens = [...title, ...analyze(d.text, title.length + TITLE_TEXT_POSITION_GAP)];
    tokens.forEach((t, i) => {
      add(t.term, cid, t.position);
      const prev = tokens[i - 1];
      if (prev && prev.position + 1 === t.position && COMMON_GRAM_WORDS.has(prev.term) && COMMON_GRAM_WORDS.has(t.term)) {
        add(gramTerm(prev.term, t.term), cid, -1);
      }
    });
    if (d.host !== undefined) for (const s of siteTerms(d.host)) add(s, cid, null);
  }
  return out;
}

test('random upserts, deletes, commits and merges round-trip stored fields, lengths and postings', async (t) => {
  let run = 0;
  await fc.assert(
    // a write buffer of 1 byte writes a segment at every upsert: deletes then cross uncommitted segments
    fc.asyncProperty(fc.array(OP, { maxLength: 60 }), fc.constantFrom(1, 3000, 1 << 28), async (ops, maxBufferedBytes) => {
      const dir = tempDir(t, `quarry-roundtrip-${run++}-`);
      const index = await Index.open(dir, { mergeFactor: 2, mergeFloorBytes: 256, storedBlockBytes: 200, maxBufferedBytes });
      const writer = await index.openWriter();
      const model = new Map<bigint, LiveDoc>();
      let committed = new Map<bigint, LiveDoc>();
      try {
        for (const op of ops) {
          if (op.kind === 'upsert') {
            writer.upsert(op.doc);
            const { cid: _cid, ...rest } = op.doc;
            const doc: LiveDoc = { title: rest.title, text: rest.text };
            if (rest.url !== undefined) doc.url = rest.url;
            if (rest.host !== undefined) doc.host = rest.host;
            model.set(op.doc.cid, doc);
          } else if (op.kind === 'delete') {
            writer.delete(op.cid);
            model.delete(op.cid);
          } else {
            await writer.commit();
            committed = new Map(model);
          }
        }
        // uncommitted work is invisible
        assert.deepEqual(liveDocuments(index), committed);
        await writer.commit();
        const live = liveDocuments(index);
        assert.deepEqual(live, model);

        const segments = index.snapshot().segments;
        let lengthSum = 0;
        for (const seg of segments) lengthSum += seg.liveLengthSum;
        const expected = expectedPostings(model);
        let expectedLengthSum = 0;
        for (const [cid, d] of model) {
          const len = analyze(d.title).length + analyze(d.text).length;
          expectedLengthSum += len;
          const seg = segments.find((s) => s.docForCid(cid) !== undefined)!;
          assert.equal(seg.length(seg.docForCid(cid)!), len, `length of ${cid}`);
        }
        assert.equal(lengthSum, expectedLengthSum);

        for (const [term, docs] of expected) {
          const got = new Map<bigint, number[]>();
          for (const seg of segments) {
            const c = seg.postings(term, { positions: true });
            if (c === undefined) continue;
            let n = 0;
            for (let d = c.nextDoc(); d !== NO_MORE_DOCS; d = c.nextDoc()) {
              n++;
              assert.ok(c.freq() <= c.maxFreq && seg.length(d) >= c.minLength, 'term-wide impact bound');
              if (!seg.isLive(d)) continue;
              const pos: number[] = term.startsWith(GRAM_TERM_PREFIX) ? Array<number>(c.freq()).fill(-1) : [...c.positions()];
              assert.equal(c.freq(), term.startsWith('site:') ? 1 : pos.length);
              got.set(seg.cid(d), pos);
            }
            assert.equal(n, c.docFreq);
            assert.equal(seg.docFreq(term), c.docFreq);
          }
          assert.deepEqual(got, docs, `postings of ${term}`);
        }
        // no term beyond the expected ones has a live posting
        for (const seg of segments) {
          for (const term of (seg as SegmentView).terms()) {
            if (expected.has(term)) continue;
            const c = seg.postings(term)!;
            for (let d = c.nextDoc(); d !== NO_MORE_DOCS; d = c.nextDoc()) assert.ok(!seg.isLive(d), `stray live posting of ${term}`);
          }
        }
        const report = checkIndex(dir);
        assert.ok(report.ok, report.problems.join('; '));
        assert.equal(report.docs, model.size);
      } finally {
        await index.close();
      }
    }),
    { numRuns: 40 },
  );
});

test('a reopened index reads exactly what was committed, including surface forms with document frequencies', async (t) => {
  const dir = tempDir(t);
  const index = await Index.open(dir);
  const w = await index.openWriter();
  w.upsert({ cid: 1n, title: 'Running dogs', text: 'A dog runs. Running!', url: 'https://a.example/1', host: 'a.example' });
  w.upsert({ cid: 2n, title: 'Cats', text: 'running cats naïve', host: 'b.example' });
  w.upsert({ cid: 9223372036854775807n, title: '', text: '' });
  await w.commit();
  await index.close();
  const again = await Index.open(dir);
  try {
    const [seg] = again.snapshot().segments;
    assert.ok(seg);
    const forms = new Map(seg.surfaceForms());
    assert.equal(forms.get('running'), 2);
    assert.equal(forms.get('dogs'), 1);
    assert.equal(forms.get('naive'), 1);
    assert.equal(forms.has('run'), false, 'surface forms are unstemmed');
    assert.deepEqual([...forms.keys()], [...forms.keys()].sort());
    assert.deepEqual(seg.stored(seg.docForCid(9223372036854775807n)!), { cid: 9223372036854775807n, title: '', text: '' });
    assert.deepEqual(seg.stored(seg.docForCid(1n)!), { cid: 1n, title: 'Running dogs', text: 'A dog runs. Running!', url: 'https://a.example/1', host: 'a.example' });
    assert.deepEqual(seg.head(seg.docForCid(1n)!), { cid: 1n, title: 'Running dogs', url: 'https://a.example/1', host: 'a.example' });
    assert.equal(seg.text(seg.docForCid(1n)!), 'A dog runs. Running!');
    assert.deepEqual(structuredClone(seg.stored(seg.docForCid(1n)!)), seg.stored(seg.docForCid(1n)!), 'a stored document is plain data: it crosses to another thread whole');
    assert.equal(seg.docFreq('site:example'), 2);
    assert.equal(seg.docFreq('site:a.example'), 1);
    assert.equal(seg.length(seg.docForCid(1n)!), 6);
    assert.equal(again.stats().docs, 3);
  } finally {
    await again.close();
  }
});
