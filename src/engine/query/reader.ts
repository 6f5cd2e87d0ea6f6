/**
 * The query side's reader of an index directory: the storage `Index` (index/disk-index.ts) plus the
 * searchers of its commits — one cached per generation — and what carries over between them: the surface
 * dictionary, so that a commit costs suggest and did-you-mean an update of it, not a rebuild, and the
 * segments' term bitsets and impacts (segment-caches.ts), which a commit leaves as they were. The
 * engine exports this class as `Index`; the storage layer knows nothing of searchers.
 */
import { Index, type IndexOptions, type ResolvedIndexOptions } from '../index/index.js';
import { SegmentCaches } from './segment-caches.js';
import { createSearcher, dictionaryCarry, warmDictionary, type DictionaryCarry, type Searcher } from './searcher.js';

export class SearchableIndex extends Index {
  private searcherCache: { generation: number; searcher: Searcher } | undefined;
  /**
   * The surface dictionary of the last searcher dropped at a commit of this process's writer, for the
   * next searcher to update rather than rebuild.
   */
  private carriedDictionary: DictionaryCarry | undefined;
  /** What its searchers derive from the segments they have in common, kept from one commit's to the next. */
  private readonly caches = new SegmentCaches();

  /** Opens the index in `dir` (see `Index.open`). */
  static override async open(dir: string, options?: IndexOptions): Promise<SearchableIndex> {
    return Index.openAs(dir, options, (d: string, o: ResolvedIndexOptions) => new SearchableIndex(d, o));
  }

  /** A Searcher over `snapshot()`, one per generation. */
  searcher(): Searcher {
    this.assertOpen();
    const snap = this.snapshot();
    if (this.searcherCache?.generation === snap.generation) return this.searcherCache.searcher;
    const dictionaryFrom = dictionaryCarry(this.searcherCache?.searcher) ?? this.carriedDictionary;
    const searcher = createSearcher([...snap.segments], snap.generation, { bytes: snap.bytes, dictionaryFrom, caches: this.caches });
    this.searcherCache = { generation: snap.generation, searcher };
    this.carriedDictionary = undefined;
    return searcher;
  }

  /**
   * Besides the segments' structures (`Index.warm`), the current commit's searcher and, when the previous
   * one had built its surface dictionary, the update of it: a reader that adopts a commit while it waits
   * for queries pays for that then, not in the next suggest or did-you-mean.
   */
  override warm(): void {
    super.warm();
    warmDictionary(this.searcher());
  }

  /** The commit's searcher is built on first use; the old one is dropped now, its dictionary kept. */
  protected override writerCommitLocked(): void {
    this.carriedDictionary = dictionaryCarry(this.searcherCache?.searcher) ?? this.carriedDictionary;
    this.searcherCache = undefined;
  }
}
