/**
 * The search engine's public surface: every face of Quarry (HTTP, MCP, RPC, CLI, corpora) uses only
 * what this file exports. `Index` is one directory = one index: the storage (./index) with the searchers
 * of its commits (./query/reader.ts); `Searcher` is an immutable snapshot of one commit answering search,
 * doc, suggest and stats (query side, ./query).
 */
export type { IndexWriter } from './index/index.js';
export { SearchableIndex as Index } from './query/reader.js';
export type { CommitInfo, DocInput, IndexOptions, StoredDocument } from './index/types.js';
export { parseCid, MAX_CID, type Cid } from '../kernel/cid.js';
export {
  createSearcher, DEFAULT_PAGE_SIZE, MAX_QUERY_BYTES, MAX_RESULT_WINDOW, SNIPPET_MAX_CHARS,
  type SearchHit, type SearchOptions, type SearchResult, type Searcher, type SearcherOptions,
} from './query/index.js';
