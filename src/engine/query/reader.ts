/**
 * The query side's reader of an index directory: the storage `Index` (index/disk-index.ts) plus the
 * searchers of its commits — one cached per generation — and the surface-dictionary carry-over between
 * them, so that a commit costs suggest and did-you-mean an update of the dictionary, not a rebuild. The
 * engine exports this class as `Index`; the storage layer knows nothing of searchers.
 */
import { Index, type IndexOptions, type ResolvedIndexOptions } from '../index/index.js';
import { createSearcher, dictionaryCarry, type DictionaryCarry, type Searcher } from './searcher.js';

export class SearchableIndex extends Index {
  private searcherCache: { generation: number; searcher: Searcher } | undefined;
  /**
   * The surface dictionary of the last searcher dropped at a commit of this process's writer, for the
   * next searcher to update rather than rebuild.
   */
  private carriedDictionary: DictionaryCarry | undefined;

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
    const searcher = createSearcher([...snap.segments], snap.generation, { bytes: snap.bytes, dictionaryFrom });
    this.searcherCache = { generation: snap.generation, searcher };
    this.carriedDictionary = undefined;
    return searcher;
  }

  /** The commit's searcher is built on first use; the old one is dropped now, its dictionary kept. */
  protected override writerCommitLocked(): void {
    this.carriedDictionary = dictionaryCarry(this.searcherCache?.searcher) ?? this.carriedDictionary;
    this.searcherCache = undefined;
  }
}
