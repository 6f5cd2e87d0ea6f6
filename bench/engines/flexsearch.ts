/**
 * FlexSearch (in-memory JS): one Index, porter2-stemmed lower-case terms; `suggest: true` so a document
 * matching some of the words counts (OR), as for every other engine; size = its exported chunks.
 */
import { Encoder, Index } from 'flexsearch';
import { stem } from 'porter2';
import type { CorpusDoc } from '../dataset.js';
import { body, TOP_K, type BenchEngine, type SearchAnswer } from './types.js';

export function create(): BenchEngine {
  let index: Index | undefined;
  let n = 0;
  return {
    name: 'flexsearch',
    method: 'FlexSearch 0.8 Index, tokenize strict, encoder: lower-case + porter2 (finalize), search with suggest (OR) and limit = corpus size; its own contextual scoring (not BM25); total = length of that full list; bytes = sum of export() chunk lengths',
    async build(docs: readonly CorpusDoc[]) {
      n = docs.length;
      const encoder = new Encoder({
        normalize: true,
        finalize: (terms: string[]) => terms.map((t) => stem(t.toLowerCase())),
      });
      index = new Index({ tokenize: 'strict', encoder });
      for (let i = 0; i < docs.length; i++) index.add(i, body(docs[i]!));
    },
    search(q: string): SearchAnswer {
      const r = index!.search(q, { limit: Math.max(n, 1), suggest: true }) as number[];
      return { top: r.slice(0, TOP_K), total: r.length };
    },
    async bytes() {
      let total = 0;
      await index!.export((_key: string, data: string) => { total += data === undefined ? 0 : Buffer.byteLength(String(data)); });
      return total;
    },
    async close() { index = undefined; },
  };
}
