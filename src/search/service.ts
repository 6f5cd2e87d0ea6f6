/**
 * The search application service: search, document fetch and completion over the three corpora
 * (interface §4.1–4.3, CONTRACT §2). Every face (REST, CLI, MCP, RPC, the web UI through REST) calls it
 * with the caller's principal and the parameters as the caller wrote them; it holds every rule — the
 * right `search`, the parameter rules and their errors (`bad_query`, `bad_scope`, `bad_page`, `bad_cid`),
 * the limits — and returns the resources of `resources.ts`. The query language, its limits and ranking
 * belong to the engine, which throws `BadQueryError`/`BadPageError` itself.
 */
import {
  DEFAULT_PAGE_SIZE, MAX_QUERY_BYTES, MAX_RESULT_WINDOW, type SearchOptions, type SearchResult, type StoredDocument,
} from '../engine/index.js';
import { parseCid } from '../kernel/cid.js';
import { BadPageError, BadQueryError, BadScopeError, UnavailableError } from '../kernel/errors.js';
import { requireRight, type Principal } from '../kernel/principal.js';
import type { Scope } from '../kernel/scope.js';
import {
  docNotFoundResource, docResource, resourceSchemas, searchResource, searchResourceJson, suggestResource,
  type DocNotFoundResource, type DocResource, type SearchResource, type SuggestResource,
} from './resources.js';

/**
 * What the service needs of a searcher: the engine's `Searcher` in this thread, or one that answers on
 * the search pool (./pool.ts) and returns promises.
 */
export interface ScopeSearcher {
  /** The commit it answers from (at least). */
  readonly generation?: number;
  search(q: string, options: SearchOptions): SearchResult | Promise<SearchResult>;
  /**
   * `searchResourceJson` of the search, made where the search runs (a pool's worker sends these bytes
   * instead of a result for the serving thread to format). Optional: the engine's searcher has none.
   */
  searchJson?(q: string, options: SearchOptions, page: number): Uint8Array | Promise<Uint8Array>;
  get(cid: bigint): StoredDocument | undefined | Promise<StoredDocument | undefined>;
  suggest(prefix: string, limit: number): string[] | Promise<string[]>;
}

/** Where the current searcher of each scope comes from (the corpora, or one index opened by the CLI). */
export interface SearcherSource {
  /** The scope's current searcher; throws `UnavailableError` (or returns undefined) while it is not open. */
  searcher(scope: Scope): ScopeSearcher | undefined;
}

export interface SearchLimits {
  /** Results per page. Fixed by the interface at 20; an option only so the number has one home. */
  pageSize?: number;
  /** Deep-paging bound: `page * pageSize` must stay below it (CONTRACT §1). Default 10,000. */
  maxResultWindow?: number;
  /** Largest `q` in UTF-8 bytes (CONTRACT §1). Default: the engine's limit. */
  maxQueryBytes?: number;
  /** Largest `text` of a document in UTF-8 bytes, cut on a character boundary (CONTRACT §2). Default 1 MiB. */
  maxDocTextBytes?: number;
  /** Completions per suggest (CONTRACT §2). Default 10. */
  suggestLimit?: number;
  /**
   * Most milliseconds one search may run, waiting for a worker included; past it the engine stops it and
   * the caller gets `unavailable` (503 with Retry-After). A caller's own deadline (the request timeout)
   * can only shorten it. Default 10 s.
   */
  budgetMs?: number;
}

export type ResolvedSearchLimits = Required<SearchLimits>;

const DEFAULT_SEARCH_LIMITS: ResolvedSearchLimits = {
  pageSize: DEFAULT_PAGE_SIZE,
  maxResultWindow: MAX_RESULT_WINDOW,
  maxQueryBytes: MAX_QUERY_BYTES,
  maxDocTextBytes: 1024 * 1024,
  suggestLimit: 10,
  budgetMs: 10_000,
};

/** Parameters as a caller wrote them: strings from a query string, or JSON values from a body. */
export interface SearchInput { q: unknown; scope?: unknown; page?: unknown }
export interface DocInput { cid: unknown; scope?: unknown }
export interface SuggestInput { q: unknown; scope?: unknown }
/** How the call is made, not what is asked: the face's own deadline (epoch ms), e.g. its request timeout. */
export interface CallOptions { deadline?: number }

export class SearchService {
  readonly limits: ResolvedSearchLimits;
  readonly #source: SearcherSource;

  constructor(source: SearcherSource, limits: SearchLimits = {}) {
    this.#source = source;
    this.limits = { ...DEFAULT_SEARCH_LIMITS, ...limits };
  }

  async search(principal: Principal, input: SearchInput, call: CallOptions = {}): Promise<SearchResource> {
    const { q, scope, page, options } = this.#searchCall(principal, input, call);
    return searchResource(q, scope, page, await this.#searcher(scope).search(q, options));
  }

  /** `search`'s resource as the JSON bytes a face sends (`searchResourceJson`), from the searcher when it makes them. */
  async searchJson(principal: Principal, input: SearchInput, call: CallOptions = {}): Promise<Uint8Array> {
    const { q, scope, page, options } = this.#searchCall(principal, input, call);
    const s = this.#searcher(scope);
    if (s.searchJson) return s.searchJson(q, options, page);
    return searchResourceJson(q, scope, page, await s.search(q, options));
  }

  /** A search's checked parameters and the engine's options for it (the budget's deadline included). */
  #searchCall(principal: Principal, input: SearchInput, call: CallOptions): { q: string; scope: Scope; page: number; options: SearchOptions } {
    requireRight(principal, 'search');
    const q = this.#query(input.q);
    const scope = parseScope(input.scope);
    const page = this.#page(input.page);
    const deadline = Math.min(Date.now() + this.limits.budgetMs, call.deadline ?? Infinity);
    return { q, scope, page, options: { page, pageSize: this.limits.pageSize, snippets: true, deadline } };
  }

  async doc(principal: Principal, input: DocInput): Promise<DocResource | DocNotFoundResource> {
    requireRight(principal, 'search');
    const cid = parseCid(input.cid);
    const scope = parseScope(input.scope);
    const d = await this.#searcher(scope).get(cid);
    return d ? docResource(d, this.limits.maxDocTextBytes) : docNotFoundResource(cid, scope);
  }

  async suggest(principal: Principal, input: SuggestInput): Promise<SuggestResource> {
    requireRight(principal, 'search');
    const q = this.#query(input.q);
    const scope = parseScope(input.scope);
    const suggestions = await this.#searcher(scope).suggest(q, this.limits.suggestLimit);
    return suggestResource(q, suggestions.slice(0, this.limits.suggestLimit));
  }

  /** The resources' JSON Schemas, bounded by these limits (for OpenAPI and MCP `outputSchema`). */
  schemas(): ReturnType<typeof resourceSchemas> { return resourceSchemas(this.limits); }

  #searcher(scope: Scope): ScopeSearcher {
    const s = this.#source.searcher(scope);
    if (!s) throw new UnavailableError(`The ${scope} index is not open yet.`, 2);
    return s;
  }

  #query(raw: unknown): string {
    if (raw === undefined || raw === null) throw new BadQueryError('The parameter q is required.');
    if (typeof raw !== 'string') throw new BadQueryError('q must be a string.');
    if (raw.trim() === '') throw new BadQueryError('The parameter q is empty.');
    const bytes = Buffer.byteLength(raw, 'utf8');
    if (bytes > this.limits.maxQueryBytes) throw new BadQueryError(`q is ${bytes} bytes long; the limit is ${this.limits.maxQueryBytes}.`);
    return raw;
  }

  /** Absent → 0; a base-10 string or an integer ≥ 0 with page × pageSize below the deep-paging bound. */
  #page(raw: unknown): number {
    if (raw === undefined || raw === null) return 0;
    let page: number;
    if (typeof raw === 'string' && /^[0-9]+$/.test(raw)) page = Number(raw);
    else if (typeof raw === 'number' && Number.isInteger(raw) && raw >= 0) page = raw;
    else throw new BadPageError(`page must be a base-10 integer ≥ 0; got ${JSON.stringify(raw)}.`);
    const { pageSize, maxResultWindow } = this.limits;
    if (!Number.isSafeInteger(page) || page * pageSize >= maxResultWindow) {
      throw new BadPageError(`page ${String(raw)} is past the deep-paging bound: page × ${pageSize} must be below ${maxResultWindow}.`);
    }
    return page;
  }
}

/** `scope` absent → own; `web`/`trusted` as given; anything else (even `own`, even empty) → bad_scope. */
export function parseScope(raw: unknown): Scope {
  if (raw === undefined || raw === null) return 'own';
  if (raw === 'web' || raw === 'trusted') return raw;
  throw new BadScopeError(`scope must be "web" or "trusted", or absent for the own corpus; got ${JSON.stringify(raw)}.`);
}
