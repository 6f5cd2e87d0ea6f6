/**
 * The seam between the on-disk index (this folder: segments, postings codec, term dictionary, stored
 * fields, deletes, manifest, merges) and the query side (`../query`, `../rank`). The query side reads
 * segments only through these interfaces; the index side knows nothing of BM25 or the query language.
 *
 * One searchable field: a document's title followed by its text (analyzed by `../analysis`), with a
 * position gap of `TITLE_TEXT_POSITION_GAP` between them so a phrase never spans the two. Host names are
 * indexed as synthetic terms `site:<suffix>` for every dot-suffix of the host on whole labels
 * (`docs.example.com` → `site:docs.example.com`, `site:example.com`, `site:com`); they carry no positions,
 * do not count in the document length, and are never scored.
 */
import type { DocumentRecord } from '../../kernel/document.js';

/** Segment-local document number: 0 ≤ doc < maxDoc, in insertion order within the segment. */
export type DocId = number;

/** The sentinel a cursor reports once exhausted. Larger than every DocId; advancing past it is legal. */
export const NO_MORE_DOCS = 0x7fffffff;

/** Postings are encoded in blocks of this many documents; each block carries its own impact summary. */
export const BLOCK_SIZE = 128;

export const TITLE_TEXT_POSITION_GAP = 16;

/** Prefix of the synthetic host-suffix terms. Analyzed terms never contain ':'. */
export const SITE_TERM_PREFIX = 'site:';

/**
 * Prefix of the common-word pair terms (analysis/common-grams.ts): `gram:of the` is in every document
 * where "of" is directly followed by "the". Segments that have them say so (`SegmentReader.commonGrams`).
 */
export const GRAM_TERM_PREFIX = 'gram:';

/** The gram term of two adjacent terms. */
export const gramTerm = (a: string, b: string): string => `${GRAM_TERM_PREFIX}${a} ${b}`;

/** Synthetic terms (`site:`, `gram:`) carry no positions and never count in a document's length. */
export const hasPositions = (term: string): boolean => !term.startsWith(SITE_TERM_PREFIX) && !term.startsWith(GRAM_TERM_PREFIX);

/** Room for one block of postings (`PostingsCursor.nextPostings`): BLOCK_SIZE docs and their freqs. */
export interface PostingsBuffer {
  readonly docs: Int32Array;
  readonly freqs: Int32Array;
}

/** A short length that stands for this many tokens or more: the exact length is read instead. */
export const CLIPPED_LENGTH = 0xffff;

/** `lengths` in 16 bits each, a length of CLIPPED_LENGTH or more held as CLIPPED_LENGTH. */
export function shortLengths(lengths: ArrayLike<number>): Uint16Array {
  const out = new Uint16Array(lengths.length);
  for (let d = 0; d < lengths.length; d++) out[d] = Math.min(lengths[d]!, CLIPPED_LENGTH);
  return out;
}

/** An empty PostingsBuffer. */
export const postingsBuffer = (): PostingsBuffer => ({ docs: new Int32Array(BLOCK_SIZE), freqs: new Int32Array(BLOCK_SIZE) });

/**
 * A cursor over one term's postings in one segment, in increasing DocId order, deleted documents included
 * (callers check `SegmentReader.isLive`).
 *
 * Contract: before the first `nextDoc`/`advance`, `doc()` is -1. `advance(target)` requires
 * `target > doc()` and lands on the first doc ≥ target (or NO_MORE_DOCS). Calls after exhaustion return
 * NO_MORE_DOCS. `freq()` and `positions()` are valid only while positioned on a doc.
 */
export interface PostingsCursor {
  doc(): number;
  nextDoc(): number;
  advance(target: number): number;
  /** Term frequency in the current document (≥ 1). */
  freq(): number;
  /** Positions of the term in the current document, ascending. Only for cursors opened with positions. */
  positions(): Int32Array;
  /**
   * Copies the current doc and the docs after it that are below `upTo`, with their freqs, to `out` from
   * index 0, at most BLOCK_SIZE of them (a scorer calls again for more), and moves to the first doc not
   * copied (NO_MORE_DOCS past the last); returns how many. Nothing is copied, and the cursor stays, when
   * it is not on a doc below `upTo`. A scoring loop reads a block's postings in one pass instead of a call
   * per document (Lucene's `nextPostings`).
   */
  nextPostings(upTo: number, out: PostingsBuffer): number;
  /** Number of documents in the postings list (deleted ones included). */
  readonly docFreq: number;

  /**
   * Block-max support. `shallowAdvance(target)` moves the *block* pointer (not the doc) to the block that
   * could contain `target` and returns that block's last doc (NO_MORE_DOCS when no block remains); it
   * decodes no documents. `blockMaxFreq()` / `blockMinLength()` then describe that block: the largest
   * term frequency and the smallest document length among its documents (deleted included), which bound
   * any BM25 score in the block from above.
   */
  shallowAdvance(target: number): number;
  /** The index of the block `shallowAdvance` moved to (blocks hold BLOCK_SIZE postings each, the last one the rest). */
  shallowBlock(): number;
  /** The last doc of block `b` (NO_MORE_DOCS past the last block): a block starts after its predecessor's. */
  blockLastDoc(b: number): number;
  blockMaxFreq(): number;
  blockMinLength(): number;
  /** Largest term frequency / smallest document length over the whole list: a term-wide upper bound. */
  readonly maxFreq: number;
  readonly minLength: number;
}

/** A document as the index returns it. */
export type StoredDocument = DocumentRecord;
/** A stored document without its text: what a result shows of every hit. */
export type StoredHead = Omit<DocumentRecord, 'text'>;

export interface SegmentReader {
  /** Stable name of the segment (file prefix), e.g. `seg_000012`. */
  readonly name: string;
  /** Number of doc slots, deleted ones included. */
  readonly maxDoc: number;
  /** Number of live (not deleted) documents. */
  readonly liveDocs: number;
  isLive(doc: DocId): boolean;

  /** Documents containing `term` (deleted included); 0 when absent. Cheap: no postings decoded. */
  docFreq(term: string): number;
  /**
   * True when the segment indexes the common-word pair terms (`gramTerm`) of every document: a pair of
   * COMMON_GRAM_WORDS adjacent in a document then has its gram in the segment. False for segments
   * written before grams existed (and for test segments), where phrases check positions alone.
   */
  readonly commonGrams: boolean;
  /** A fresh cursor over `term`'s postings, or undefined when the term is absent from the segment. */
  postings(term: string, options?: { positions?: boolean }): PostingsCursor | undefined;

  /** Exact length (number of analyzed tokens of title + text) of a document. */
  length(doc: DocId): number;
  /**
   * Every document's length in 16 bits (`shortLengths`), what the scoring loops read per posting
   * (query/norms.ts); built once per segment and shared by every snapshot that holds it.
   */
  shortLengths(): Uint16Array;
  /** Sum of `length` over live documents (for avgdl). */
  readonly liveLengthSum: number;

  cid(doc: DocId): bigint;
  /** Segment-local doc for a cid, if present and live in this segment. */
  docForCid(cid: bigint): DocId | undefined;
  /** The whole stored document. */
  stored(doc: DocId): StoredDocument;
  /** Its cid, title, url and host, without reading its text (a result page needs these of every hit). */
  head(doc: DocId): StoredHead;
  /** Its text alone. */
  text(doc: DocId): string;

  /**
   * Surface forms (analyzed, lower-cased, diacritics folded, NOT stemmed) with the number of documents in
   * this segment that contain each, deleted included, in ascending code-unit order. The iterable can be
   * iterated again, and holds the forms only, not the segment (a searcher keeps it to update its surface
   * dictionary after the segment is merged away).
   */
  surfaceForms(): Iterable<[form: string, docFreq: number]>;
}

/** A document as callers hand it to `IndexWriter.upsert` (validated there). */
export type DocInput = DocumentRecord;

/** What a commit produced (also what `Index.onCommit` listeners receive, for local and refreshed commits). */
export interface CommitInfo {
  generation: number;
  /** Live documents. */
  docs: number;
  segments: number;
}

/**
 * Tuning of one index directory; every field optional, defaults in `resolveIndexOptions`.
 */
export interface IndexOptions {
  /** Bytes of buffered documents (2 per character of text plus 16 per token, an estimate of the memory
   *  they hold) after which the writer writes a segment before the commit. Default 256 MiB (about 60 MB
   *  of English text): bounds the writer's memory; larger makes fewer segments to merge. */
  maxBufferedBytes?: number;
  /** Tiered merge policy: segments per tier before they merge. Default 8; must be ≥ 2. */
  mergeFactor?: number;
  /** Tiered merge policy: segments smaller than this all count as the smallest tier. Default 2 MiB. */
  mergeFloorBytes?: number;
  /** Most live bytes of the segment one merge produces (larger segments are not merged further); 0 = no
   *  limit. Default 512 MiB. */
  maxMergedBytes?: number;
  /** Most segments a forced merge (`forceMerge`) reads at once; more are merged in rounds, smallest first.
   *  A merge holds each source's term dictionary, so this bounds its memory whatever the corpus's size.
   *  Default 32; must be ≥ 2. The merge policy's merges take `mergeFactor` segments. */
  maxMergeAtOnce?: number;
  /** A forced merge's last merge reads every segment left at once, up to four times `maxMergeAtOnce`, when
   *  their term and surface dictionaries together take at most this many bytes (decompressed): the segments
   *  a bulk load flushes are then written once, not merged in a round first. Default 384 MiB (a million
   *  Wikipedia articles flush 55 segments whose dictionaries take 322 MiB); 0 = rounds of `maxMergeAtOnce`
   *  only. */
  maxMergeDictionaryBytes?: number;
  /** Work from which a thread of its own takes part of a segment's writing: a flush of at least this many
   *  buffered bytes from `upsert` is encoded in a thread while documents go on being added to a new buffer
   *  (two buffers' memory), a commit whose buffer has held this many bytes is a bulk load that build threads
   *  share (`buildThreads`), and a merge whose sources hold this many bytes of stored text writes it in a
   *  thread beside the postings. Default 16 MiB: below it a thread's start (~0.1 s) outweighs what it
   *  saves; 0 sends all such work to threads. */
  threadBytes?: number;
  /** Threads that build segments of their own from batches of documents while `upsert` goes on filling
   *  the writer's buffer, once a commit's buffer has held `threadBytes` (a bulk load). A batch is what a
   *  builder would hold as half a buffer; each thread holds one and its builder, the writer the batch it
   *  collects. Default 1 on a machine with more than one core, else 0; 0 builds every segment from the
   *  writer's own buffer. */
  buildThreads?: number;
  /** Bytes of word codes (about three times as many bytes of text) per compressed stored-text block.
   *  Default 16 KiB: a hit's text costs one block's decompression (docs/index-format.md, `seg_N.sto`). */
  storedBlockBytes?: number;
  /** Brotli quality (0–11) of stored-text blocks. Default 1: on Wikipedia text's word codes smaller than 3 and
   *  4, and compressed 1.4–1.7 times as fast as 3 (docs/index-format.md, `seg_N.sto`). */
  storedQuality?: number;
  /** Bytes of decompressed stored-text blocks kept in memory, shared by the index's segments (an LRU).
   *  A result page with snippets reads one block per hit; a cached block costs no decompression.
   *  Default 32 MiB; 0 keeps only the block last read. */
  storedCacheBytes?: number;
  /** Bytes of postings and positions of recently read terms kept in memory, shared by the index's
   *  segments (an LRU): a term queried again is not read from the file again. 0 = none. Default: an
   *  eighth of the open segments' postings and positions bytes, 16 MiB at least. */
  postingsCacheBytes?: number;
}
