/**
 * The Searcher (the engine's read face): an immutable snapshot of one commit's segments that answers
 * search, document fetch, suggest and stats. `Index.searcher()` (storage) builds one per commit through
 * `createSearcher`; building one is cheap (statistics are summed, nothing is decoded), and everything a
 * query needs lazily — df counts under deletes, live bitsets, the surface dictionary — is cached on it.
 *
 * search(q): parse (parser.ts) → logical query (logical.ts) → execute (executor.ts) → phrase relaxation
 * → did-you-mean → the page's hits with stored fields and snippets. All of it synchronous.
 */
import { BadPageError, BadQueryError, BadRequestError } from '../../kernel/errors.js';
import { analyzeSurfaces } from '../analysis/analyzer.js';
import type { SegmentReader, StoredDocument } from '../index/types.js';
import type { ScoringMode } from '../rank/bm25.js';
import { Snippets } from '../snippet/index.js';
import { Correction } from '../spell/index.js';
import { Completion } from '../suggest/index.js';
import { SurfaceDictionary } from '../surface/index.js';
import { checkDeadline, withDeadline } from './deadline.js';
import { execute, matchesMore, totalBounds, type Execution } from './executor.js';
import { phrasesOnly, relaxPhrases, requiredPhrases, scoringTerms, toLogical, type LogicalQuery } from './logical.js';
import { parseQuery, type ParsedQuery, type TermClause } from './parser.js';
import type { SegmentCaches } from './segment-caches.js';
import { Snapshot, type DisjunctionPlan } from './snapshot.js';

/** Deep-paging bound (CONTRACT §1 `bad_page`): page·pageSize must stay below it. */
export const MAX_RESULT_WINDOW = 10_000;
/** Results per page when the caller does not say (CONTRACT §2: 20). */
export const DEFAULT_PAGE_SIZE = 20;
/** Longest snippet, in UTF-16 code units (CONTRACT §2: 240 characters). */
export const SNIPPET_MAX_CHARS = 240;
/**
 * Most did-you-mean corrections a searcher remembers (word → correction or none). A correction is a
 * bounded walk of the whole surface dictionary (≈ 0.1–1 ms per rare word); queries repeat words, and a
 * snapshot never changes, so the answer for a word is computed once per snapshot. Cleared when full.
 */
export const CORRECTION_CACHE_LIMIT = 50_000;
/**
 * Most forms whose df changed that a searcher's kept corrections of earlier snapshots may have seen
 * change (`KeptCorrections.changes`): each kept answer reused costs a correction walk over them, and a
 * commit changes its documents' distinct forms (a few hundred for an article), so the answers outlive
 * dozens of small commits.
 */
export const KEPT_CHANGES_LIMIT = 8192;
/** Shortest word did-you-mean looks at (CONTRACT §2: a term of ≥ 4 characters). */
export const MIN_CORRECTED_LENGTH = 4;
/** Suggestions returned when the caller does not say (CONTRACT §2: 10). */
export const DEFAULT_SUGGEST_LIMIT = 10;

export interface SearchOptions {
  /** 0-based page; an integer ≥ 0 with page·pageSize < 10,000 (else BadPageError). Default 0. */
  page?: number;
  /** Hits per page, an integer in 1..10,000 (else BadRequestError). Default 20. */
  pageSize?: number;
  /** Compute a snippet per hit. Default true. */
  snippets?: boolean;
  /**
   * Epoch milliseconds (`Date.now()`) by which the search must be done: checked between blocks of work
   * (segments, postings windows, candidates, snippets); past it the search throws `UnavailableError`.
   * Default: none.
   */
  deadline?: number;
}

export interface SearchHit {
  cid: bigint;
  /** Integer BM25 (a float only under the internal `scoring: 'float'` mode). */
  score: number;
  title: string;
  url?: string;
  host?: string;
  snippet?: string;
}

export interface SearchResult {
  /** Exact number of matching documents. */
  total: number;
  hits: SearchHit[];
  /** Present exactly when q holds a phrase: false when required phrases matched nothing and were relaxed. */
  phraseExact?: boolean;
  /** The corrected query, only when one exists and matches more documents (CONTRACT §2). */
  didYouMean?: string;
}

export interface Searcher {
  readonly generation: number;
  readonly docCount: number;
  search(q: string, options?: SearchOptions): SearchResult;
  get(cid: bigint): StoredDocument | undefined;
  suggest(prefix: string, limit?: number): string[];
  stats(): { docs: number; segments: number; generation: number; bytes: number };
  /**
   * Live documents per host (as stored, lower-cased), computed once per searcher from the stored heads
   * (no text is read): what per-domain figures such as the maturity rollup count.
   */
  hosts(): ReadonlyMap<string, number>;
}

export interface SearcherOptions {
  /**
   * INTERNAL, for evaluation only (bench/eval): `'float'` ranks by the same BM25 without rounding each
   * contribution, to measure what integer scores cost in nDCG. Default `'int'` (the contract).
   */
  scoring?: ScoringMode;
  /** INTERNAL (tests, benches): force one disjunction plan instead of choosing by density. Default `'auto'`. */
  plan?: DisjunctionPlan;
  /**
   * INTERNAL (tests, benches): the df/N fraction above which an optional term is common (snapshot.ts
   * COMMON_TERM_RATIO, the default); 1 (or more) turns the common-terms rule off.
   */
  commonTermRatio?: number;
  /**
   * INTERNAL (tests): the postings a term needs in a segment for exact block bounds (snapshot.ts
   * BLOCK_BOUNDS_MIN_POSTINGS, the default); tests lower it so that small corpora take that path.
   */
  blockBoundsMinPostings?: number;
  /** Bytes the snapshot's files take on disk, reported by stats(). Default 0. */
  bytes?: number;
  /**
   * The surface dictionary of an earlier commit (`dictionaryCarry` of its searcher): this searcher's is
   * updated from it, for the segments that came and went, instead of being rebuilt from every segment.
   */
  dictionaryFrom?: DictionaryCarry;
  /**
   * What the searchers of one index share of their segments (segment-caches.ts): the searchers of
   * successive commits reuse what the segments they have in common hold. Default: the searcher's own.
   */
  caches?: SegmentCaches;
}

/** Builds the searcher of one commit over its segments (oldest first; order does not change answers). */
export function createSearcher(segments: SegmentReader[], generation: number, options: SearcherOptions = {}): Searcher {
  return new SnapshotSearcher(segments, generation, options);
}

/**
 * A built surface dictionary with the forms of the segments it was built from, by segment name: what a
 * later snapshot's dictionary is updated from (the forms of a segment merged away are still needed then),
 * and the correction index over it when one was built, which the later one's can carry over. It holds no
 * segment, only forms.
 */
export interface DictionaryCarry {
  readonly dictionary: SurfaceDictionary;
  readonly sources: ReadonlyMap<string, Iterable<readonly [form: string, df: number]>>;
  readonly correction: Correction | undefined;
  /** Did-you-mean answers made over this dictionary or earlier ones. */
  readonly corrections: KeptCorrections | undefined;
}

/**
 * Did-you-mean answers of earlier snapshots, for a later one to reuse where the changes of its dictionary
 * cannot have changed them (`Correction.answersAsBefore`): each word's answer with the document count it
 * was made under, and every form whose df changed since the oldest of them was made (the updates'
 * `changed`, merged), relative to the dictionary they are carried with.
 */
interface KeptCorrections {
  readonly answers: ReadonlyMap<string, { fix: string | null; total: number }>;
  readonly changes: SurfaceDictionary;
}

/**
 * What a later searcher's dictionary can be updated from: `searcher`'s dictionary when built, else the
 * one it would have been updated from; undefined when neither exists.
 */
export function dictionaryCarry(searcher: Searcher | undefined): DictionaryCarry | undefined {
  return searcher instanceof SnapshotSearcher ? searcher.carry() : undefined;
}

/**
 * Updates `searcher`'s surface dictionary (and the correction over it) now, when it has one to update
 * from: what its first suggest or did-you-mean would otherwise pay. A searcher whose predecessor never
 * built a dictionary builds none here.
 */
export function warmDictionary(searcher: Searcher): void {
  if (searcher instanceof SnapshotSearcher) searcher.warmDictionary();
}

class SnapshotSearcher implements Searcher {
  readonly docCount: number;
  private readonly snap: Snapshot;
  private readonly bytes: number;
  private dictionary: Omit<DictionaryCarry, 'correction' | 'corrections'> | undefined;
  /** What `dictionary` is updated from when first needed; dropped then. */
  private dictionaryBase: DictionaryCarry | undefined;
  /** The readers of `dictionary`, each made on first use (the correction may come carried over with it). */
  private correction: Correction | undefined;
  private completion: Completion | undefined;
  private readonly corrections = new Map<string, string | null>();
  /** Answers of earlier snapshots, relative to `dictionary` once it is built, and the correction over their changes. */
  private kept: { corrections: KeptCorrections; check: Correction | undefined } | undefined;
  private hostCounts: Map<string, number> | undefined;

  constructor(private readonly segments: SegmentReader[], readonly generation: number, options: SearcherOptions) {
    this.snap = new Snapshot(segments, options.scoring ?? 'int', options.plan ?? 'auto', options.commonTermRatio, options.blockBoundsMinPostings, options.caches);
    this.docCount = this.snap.docCount;
    this.bytes = options.bytes ?? 0;
    this.dictionaryBase = options.dictionaryFrom;
  }

  /** See `warmDictionary`. */
  warmDictionary(): void {
    if (this.dictionary === undefined && this.dictionaryBase !== undefined) this.surfaceDictionary();
  }

  /** See `dictionaryCarry`. */
  carry(): DictionaryCarry | undefined {
    if (this.dictionary === undefined) return this.dictionaryBase;
    return { ...this.dictionary, correction: this.correction, corrections: this.keptForNext() };
  }

  /** The answers a later snapshot may reuse: the kept ones and this one's, made over this dictionary. */
  private keptForNext(): KeptCorrections | undefined {
    const kept = this.kept?.corrections;
    if (this.corrections.size === 0) return kept;
    const answers = new Map(kept !== undefined && kept.answers.size + this.corrections.size <= CORRECTION_CACHE_LIMIT ? kept.answers : []);
    for (const [word, fix] of this.corrections) answers.set(word, { fix, total: this.docCount });
    return { answers, changes: kept?.changes ?? SurfaceDictionary.empty() };
  }

  /** The kept answer for `word` when this snapshot's `correction` gives the same, else undefined. */
  private keptAnswer(word: string, correction: Correction): string | null | undefined {
    const kept = this.kept;
    const answer = kept?.corrections.answers.get(word);
    if (kept === undefined || answer === undefined) return undefined;
    kept.check ??= new Correction(kept.corrections.changes);
    return correction.answersAsBefore(word, answer.total, this.docCount, kept.check) ? answer.fix : undefined;
  }

  search(q: string, given?: SearchOptions | null): SearchResult {
    const options: SearchOptions = typeof given === 'object' && given !== null ? given : {};
    return withDeadline(options.deadline, () => this.searchWithin(q, options));
  }

  private searchWithin(q: string, options: SearchOptions): SearchResult {
    const parsed = parseQuery(q);
    const pageSize = options.pageSize === undefined ? DEFAULT_PAGE_SIZE : options.pageSize;
    if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_RESULT_WINDOW) {
      throw new BadRequestError(`pageSize must be an integer from 1 to ${MAX_RESULT_WINDOW}, not ${String(pageSize)}.`, 'pageSize');
    }
    const page = options.page === undefined ? 0 : options.page;
    if (typeof page !== 'number' || !Number.isInteger(page) || page < 0) {
      throw new BadPageError(`page must be an integer ≥ 0, not ${String(page)}.`);
    }
    if (page * pageSize >= MAX_RESULT_WINDOW) {
      throw new BadPageError(`page ${page} is past the deepest page (results beyond ${MAX_RESULT_WINDOW} are not served).`);
    }

    const { logical, run, phraseExact } = this.evaluate(parsed, (page + 1) * pageSize);
    const result: SearchResult = { total: run.total, hits: [] };
    if (phraseExact !== undefined) result.phraseExact = phraseExact;
    const dym = this.didYouMean(parsed, logical, run.total);
    if (dym !== undefined) result.didYouMean = dym;

    const slice = run.top.slice(page * pageSize, (page + 1) * pageSize);
    const snippets = options.snippets === false ? undefined : new Snippets(scoringTerms(logical), SNIPPET_MAX_CHARS);
    for (const h of slice) {
      checkDeadline();
      const doc = h.segment.head(h.doc);
      const hit: SearchHit = { cid: h.cid, score: h.score, title: doc.title };
      if (doc.url !== undefined) hit.url = doc.url;
      if (doc.host !== undefined) hit.host = doc.host;
      if (snippets) hit.snippet = snippets.of(h.segment.text(h.doc));
      result.hits.push(hit);
    }
    return result;
  }

  /** Runs a parsed query for its top k, relaxing required phrases that match nothing (CONTRACT §2). */
  private evaluate(parsed: ParsedQuery, k: number): { logical: LogicalQuery; run: Execution; phraseExact?: boolean } {
    const logical = toLogical(parsed);
    const run = execute(this.snap, logical, k);
    if (!parsed.hasPhrase) return { logical, run };
    if (run.total > 0 || requiredPhrases(logical).length === 0) return { logical, run, phraseExact: true };
    if (execute(this.snap, phrasesOnly(logical), 0).total > 0) return { logical, run, phraseExact: true };
    const relaxed = relaxPhrases(logical);
    return { logical: relaxed, run: execute(this.snap, relaxed, k), phraseExact: false };
  }

  /**
   * CONTRACT §2 did_you_mean: each optional or required bare word (one analyzed token, not in a phrase or
   * `site:`) that the dictionary corrects is replaced in `q`, everything else kept as written; the
   * corrected query is offered only when it matches more documents than the original. `logical` and
   * `total` are the query's as it ran (its phrases relaxed when a required one matched nothing).
   */
  private didYouMean(parsed: ParsedQuery, logical: LogicalQuery, total: number): string | undefined {
    // words under 4 characters are never corrected: they need not build the dictionary
    const words = parsed.clauses.filter((c): c is TermClause =>
      c.kind === 'term' && c.occur !== 'mustNot' && c.surfaces.length === 1 && c.surfaces[0]!.length >= MIN_CORRECTED_LENGTH);
    if (words.length === 0 || this.docCount === 0) return undefined;
    // building the dictionary may bring a correction index carried over from the previous snapshot's
    const dictionary = this.surfaceDictionary();
    const correction = this.correction ??= new Correction(dictionary);
    let out = '';
    let last = 0;
    let changed = false;
    for (const w of words) {
      const word = w.surfaces[0]!;
      let fix = this.corrections.get(word);
      if (fix === undefined) {
        const kept = this.keptAnswer(word, correction);
        fix = kept !== undefined ? kept : correction.correct(word, this.docCount) ?? null;
        if (this.corrections.size >= CORRECTION_CACHE_LIMIT) this.corrections.clear();
        this.corrections.set(word, fix);
      }
      if (fix === null) continue;
      const [from, to] = w.spans[0]!;
      out += parsed.source.slice(last, from) + fix;
      last = to;
      changed = true;
    }
    if (!changed) return undefined;
    const corrected = out + parsed.source.slice(last);
    let reparsed: ParsedQuery;
    try {
      reparsed = parseQuery(corrected);
    } catch {
      return undefined; // a correction that does not parse (longer than the byte limit) is no suggestion
    }
    // document frequencies mostly decide it, else the documents of the words that differ; a query with a
    // phrase may be relaxed, so is always run
    if (!reparsed.hasPhrase) {
      const fixed = toLogical(reparsed);
      const { low, high } = totalBounds(this.snap, fixed);
      if (low > total) return corrected;
      if (high <= total) return undefined;
      // `logical` is the query's own: one without a phrase is never relaxed
      const more = matchesMore(this.snap, fixed, logical);
      if (more !== undefined) return more ? corrected : undefined;
    }
    return this.evaluate(reparsed, 0).run.total > total ? corrected : undefined;
  }

  private surfaceDictionary(): SurfaceDictionary {
    if (this.dictionary === undefined) {
      const sources = new Map(this.segments.map((s) => [s.name, s.surfaceForms()]));
      const base = this.dictionaryBase;
      this.dictionaryBase = undefined;
      let dictionary: SurfaceDictionary;
      if (base === undefined) dictionary = SurfaceDictionary.merge([...sources.values()]);
      else {
        const updated = SurfaceDictionary.update(base.dictionary,
          [...base.sources].filter(([name]) => !sources.has(name)).map(([, forms]) => forms),
          [...sources].filter(([name]) => !base.sources.has(name)).map(([, forms]) => forms));
        dictionary = updated.dictionary;
        this.correction = Correction.after(base.correction, updated);
        // the earlier snapshots' answers, with the forms this update changed added to theirs
        // (a union is at least as large as either side: past the limit alone, none is made)
        const kept = base.corrections;
        if (kept !== undefined && updated.changed.size <= KEPT_CHANGES_LIMIT) {
          const changes = updated.changed.size === 0 ? kept.changes : SurfaceDictionary.merge([kept.changes.entries(), updated.changed.entries()]);
          if (changes.size <= KEPT_CHANGES_LIMIT) this.kept = { corrections: { answers: kept.answers, changes }, check: undefined };
        }
      }
      this.dictionary = { dictionary, sources };
    }
    return this.dictionary.dictionary;
  }

  get(cid: bigint): StoredDocument | undefined {
    for (let i = this.segments.length - 1; i >= 0; i--) {
      const seg = this.segments[i]!;
      const doc = seg.docForCid(cid);
      if (doc !== undefined) return seg.stored(doc);
    }
    return undefined;
  }

  suggest(prefix: string, limit = DEFAULT_SUGGEST_LIMIT): string[] {
    if (typeof prefix !== 'string' || prefix.trim() === '') throw new BadQueryError('The prefix to complete is empty.');
    if (!Number.isInteger(limit) || limit < 0) throw new BadRequestError(`limit must be an integer ≥ 0, not ${String(limit)}.`, 'limit');
    const surfaces = analyzeSurfaces(prefix.length > 1024 ? prefix.slice(-1024) : prefix);
    const last = surfaces[surfaces.length - 1];
    if (last === undefined) return [];
    const completion = this.completion ??= new Completion(this.surfaceDictionary());
    return completion.complete(last, limit);
  }

  stats(): { docs: number; segments: number; generation: number; bytes: number } {
    return { docs: this.docCount, segments: this.segments.length, generation: this.generation, bytes: this.bytes };
  }

  hosts(): ReadonlyMap<string, number> {
    if (this.hostCounts) return this.hostCounts;
    const counts = new Map<string, number>();
    for (const seg of this.segments) {
      for (let d = 0; d < seg.maxDoc; d++) {
        if (!seg.isLive(d)) continue;
        const host = seg.head(d).host?.toLowerCase();
        if (host !== undefined && host !== '') counts.set(host, (counts.get(host) ?? 0) + 1);
      }
    }
    this.hostCounts = counts;
    return counts;
  }
}
