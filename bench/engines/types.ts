/**
 * What the benchmark asks of every engine, Quarry and its peers alike: build an index over the same
 * documents, answer the same plain-OR query with the top 20 and the exact number of matching documents,
 * and say how many bytes its index takes. Documents are named by their position in the corpus, so
 * every engine's answer can be compared and evaluated the same way.
 */
import type { CorpusDoc } from '../dataset.js';

export interface SearchAnswer {
  /** Positions (0-based) of the top documents in the corpus, best first, at most 20. */
  top: number[];
  /** Exact number of matching documents. */
  total: number;
}

export interface BenchEngine {
  readonly name: string;
  /** One sentence: how the engine is configured and how `bytes` and `total` are measured. */
  readonly method: string;
  build(docs: readonly CorpusDoc[]): Promise<void>;
  /** Synchronous where the engine is; a Promise only when the engine offers nothing else. */
  search(q: string): SearchAnswer | Promise<SearchAnswer>;
  bytes(): Promise<number>;
  close(): Promise<void>;
}

/** The one field every engine indexes: title then text, as Quarry's single searchable field. */
export function body(d: CorpusDoc): string {
  return d.title === '' ? d.text : `${d.title}\n${d.text}`;
}

export const TOP_K = 20;
