/** MiniSearch (in-memory JS): one field, porter2-stemmed lower-case terms, OR; size = its JSON form. */
import MiniSearch from 'minisearch';
import { stem } from 'porter2';
import type { CorpusDoc } from '../dataset.js';
import { body, TOP_K, type BenchEngine, type SearchAnswer } from './types.js';

export function create(): BenchEngine {
  let ms: MiniSearch | undefined;
  return {
    name: 'minisearch',
    method: 'MiniSearch 7, field body = title + text, processTerm = porter2(lower-case), combineWith OR, no prefix/fuzzy; total = length of its full result list; bytes = JSON.stringify(index).length',
    async build(docs: readonly CorpusDoc[]) {
      ms = new MiniSearch({
        fields: ['body'],
        storeFields: [],
        processTerm: (t) => stem(t.toLowerCase()),
        searchOptions: { combineWith: 'OR', prefix: false, fuzzy: false },
      });
      for (let i = 0; i < docs.length; i++) ms.add({ id: i, body: body(docs[i]!) });
    },
    search(q: string): SearchAnswer {
      const r = ms!.search(q);
      return { top: r.slice(0, TOP_K).map((x) => x.id as number), total: r.length };
    },
    async bytes() { return Buffer.byteLength(JSON.stringify(ms)); },
    async close() { ms = undefined; },
  };
}
