/** The query side of the engine: the Searcher of one commit (parse → plan → score → collect). */
export {
  createSearcher, DEFAULT_PAGE_SIZE, MAX_RESULT_WINDOW, SNIPPET_MAX_CHARS,
  type SearchHit, type SearchOptions, type SearchResult, type Searcher, type SearcherOptions,
} from './searcher.js';
export { SearchableIndex } from './reader.js';
export { MAX_QUERY_BYTES, parseQuery, type Clause, type ParsedQuery } from './parser.js';
