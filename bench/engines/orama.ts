/** Orama (in-memory JS): one string field, its English stemmer, OR (threshold 1); size = its saved form. */
import { create as createDb, insert, search, save, type AnyOrama } from '@orama/orama';
import type { CorpusDoc } from '../dataset.js';
import { body, TOP_K, type BenchEngine, type SearchAnswer } from './types.js';

export function create(): BenchEngine {
  let db: AnyOrama | undefined;
  return {
    name: 'orama',
    method: 'Orama 3, schema {body: string}, tokenizer English with stemming, threshold 1 (documents matching any word), BM25 defaults; total = its `count`; bytes = JSON.stringify(save(db)).length',
    async build(docs: readonly CorpusDoc[]) {
      db = createDb({ schema: { body: 'string' } as const, components: { tokenizer: { language: 'english', stemming: true } } });
      for (let i = 0; i < docs.length; i++) {
        const r = insert(db, { id: String(i), body: body(docs[i]!) });
        if (r instanceof Promise) await r;
      }
    },
    search(q: string): SearchAnswer | Promise<SearchAnswer> {
      const shape = (r: { count: number; hits: { id: string }[] }): SearchAnswer =>
        ({ top: r.hits.slice(0, TOP_K).map((h) => Number(h.id)), total: r.count });
      const r = search(db!, { term: q, limit: TOP_K, threshold: 1 }) as unknown;
      return r instanceof Promise ? r.then(shape) : shape(r as { count: number; hits: { id: string }[] });
    },
    async bytes() { return Buffer.byteLength(JSON.stringify(save(db!))); },
    async close() { db = undefined; },
  };
}
