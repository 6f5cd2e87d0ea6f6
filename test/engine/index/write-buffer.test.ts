/**
 * The writer's buffer (`maxBufferedBytes`) bounds what it holds before it writes a segment, vocabulary
 * included: documents of words never seen before cost the writer their words' entries (stored-text
 * tokens, forms, terms), far more than their token counts say, and must flush sooner than documents
 * of the same length in a small vocabulary.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { Index } from '../../../src/engine/index/index.js';
import { tempDir } from './fixtures.js';

/** A deterministic stream of pseudo-random words of 8 letters, each distinct in practice. */
function* uniqueWords(): Generator<string> {
  let x = 0x9e3779b9;
  for (;;) {
    let w = '';
    for (let k = 0; k < 8; k++) {
      x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
      w += String.fromCharCode(97 + (x >>> 27) % 26);
    }
    yield w;
  }
}

async function segmentsAfter(t: TestContext, texts: readonly string[]): Promise<number> {
  const index = await Index.open(tempDir(t), { maxBufferedBytes: 4 << 20, mergeFactor: 1000 });
  try {
    const writer = await index.openWriter();
    texts.forEach((text, i) => writer.upsert({ cid: BigInt(i + 1), title: 'doc', text }));
    const info = await writer.commit();
    await writer.close();
    return info.segments;
  } finally {
    await index.close();
  }
}

test('documents of new words fill the write buffer sooner than as many tokens of a small vocabulary', async (t) => {
  const DOCS = 3000;
  const WORDS = 100;
  const small = Array.from({ length: 200 }, (_, i) => `word${i.toString(36)}`);
  const words = uniqueWords();
  const repetitive: string[] = [];
  const fresh: string[] = [];
  for (let d = 0; d < DOCS; d++) {
    const a: string[] = [];
    const b: string[] = [];
    for (let k = 0; k < WORDS; k++) {
      a.push(small[(d * 7 + k * 13) % small.length]!);
      b.push(words.next().value!);
    }
    repetitive.push(a.join(' '));
    fresh.push(b.join(' '));
  }
  const few = await segmentsAfter(t, repetitive);
  const many = await segmentsAfter(t, fresh);
  // 300,000 tokens: about 4 MB of token arrays and ids either way; the new words add ~300,000 entries
  // to each of the writer's vocabularies
  assert.ok(few <= 2, `a small vocabulary: ${few} segments`);
  assert.ok(many >= 5 * few, `new words: ${many} segments against ${few}`);
});
