/** Lunr (in-memory JS): one field, its own Porter stemmer and stop words, OR; size = its JSON form. */
import lunr from 'lunr';
import type { CorpusDoc } from '../dataset.js';
import { body, TOP_K, type BenchEngine, type SearchAnswer } from './types.js';

export function create(): BenchEngine {
  let idx: lunr.Index | undefined;
  return {
    name: 'lunr',
    method: 'Lunr 2, field body = title + text, default pipeline (trimmer, English stop words, Porter stemmer), BM25 k1 1.2 b 0.75, OR of terms; total = length of its full result list; bytes = JSON.stringify(index).length',
    async build(docs: readonly CorpusDoc[]) {
      idx = lunr(function () {
        this.ref('id');
        this.field('body');
        for (let i = 0; i < docs.length; i++) this.add({ id: String(i), body: body(docs[i]!) });
      });
    },
    search(q: string): SearchAnswer {
      const r = idx!.search(q);
      return { top: r.slice(0, TOP_K).map((x) => Number(x.ref)), total: r.length };
    },
    async bytes() { return Buffer.byteLength(JSON.stringify(idx)); },
    async close() { idx = undefined; },
  };
}
