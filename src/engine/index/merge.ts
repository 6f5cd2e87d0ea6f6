/**
 * Merging segments without re-analysis: live documents of the sources are renumbered in source order,
 * each term's postings are read through the codec and re-encoded with the new doc ids (deleted docs
 * dropped), surface-form counts are summed, and the live documents' stored texts are re-coded with the
 * merged segment's vocabulary (ranked from the sources' own counts) and recompressed: each segment has
 * its own vocabulary, so no compressed block can be copied as it is. A merge therefore costs a decode
 * and an encode of the postings and a recompression of the stored text, not the analyzer.
 *
 * Surface-form document frequencies are summed over the sources, deleted docs included (a segment's
 * counts include its deleted docs, and which forms a deleted doc held is not recorded), so after a merge
 * that dropped deletions they may over-count: they feed suggestions and spelling, where an
 * approximation is harmless.
 *
 * Common-word pair terms (`gram:`) survive a merge only when every source has them: the merged segment
 * claims `commonGrams` for all its documents or for none (a segment written before grams existed has
 * none, and its documents' pairs are not rebuilt here).
 */
import { GRAM_TERM_PREFIX, NO_MORE_DOCS } from './types.js';
import { isDeleted, type DeletedBits, type SegmentCore } from './segment-reader.js';
import { encodeIdx, encodeSurfaces, type SegmentFiles, type TermsPart } from './segment-writer.js';
import { TermsWriter, type TermPostingsWriter } from './postings-writer.js';
import type { BlockPostingsCursor } from './postings-reader.js';
import type { CodedPositions } from './postings-format.js';
import { IntBuffer } from './bytes.js';
import { HeadsWriter } from './heads.js';
import { stepClock, type Steps } from './steps.js';
import { StoreWriter, type StoredReader, type StoreOptions } from './store.js';
import type { ByteSink, SegmentFile } from './segment-file.js';
import { newTermInfo, type TermDictionary, type TermKeys } from './term-dictionary.js';
import { InternalError } from '../../kernel/errors.js';
import { VocabularyBuilder } from './word-codes.js';

export interface MergeSource {
  core: SegmentCore;
  deleted: DeletedBits | null;
}

/** Strings in ascending code-unit order, read by index. */
interface SortedStrings {
  readonly length: number;
  at(i: number): string;
}

/** A source's strings that a merge writes: the indexes [from, to) of its sorted list (its term dictionary). */
interface TermRange<L extends SortedStrings = TermDictionary> {
  dict: L;
  from: number;
  to: number;
}

/**
 * Streams the union of the ranges' strings (k small): each distinct term once, with its sources as
 * (range, ordinal) pairs. The ranges holding a term move past it only when the consumer asks for the next,
 * so a term dictionary is still on the entry the consumer reads (its walk forward decodes each entry once).
 */
function* unionSorted(ranges: readonly TermRange<SortedStrings>[]): Generator<[string, number[]]> {
  const at = ranges.map((r) => r.from);
  const heads = ranges.map((r) => (r.from < r.to ? r.dict.at(r.from) : undefined));
  const from: number[] = [];
  for (;;) {
    let min: string | undefined;
    for (const v of heads) if (v !== undefined && (min === undefined || v < min)) min = v;
    if (min === undefined) return;
    from.length = 0;
    for (let k = 0; k < ranges.length; k++) if (heads[k] === min) from.push(k, at[k]!);
    yield [min, from];
    for (let i = 0; i < from.length; i += 2) {
      const k = from[i]!;
      const next = ++at[k]!;
      heads[k] = next < ranges[k]!.to ? ranges[k]!.dict.at(next) : undefined;
    }
  }
}

/**
 * The sources' terms from `keys.from` (inclusive) to `keys.to` (exclusive): each dictionary holds at least
 * those (it may hold all of its segment's, when a search had decoded it).
 */
function termRanges(dicts: readonly TermDictionary[], keys: TermKeys): TermRange[] {
  return dicts.map((dict) => ({
    dict,
    from: keys.from === undefined ? dict.first : dict.ceiling(keys.from),
    to: keys.to === undefined ? dict.end : dict.ceiling(keys.to),
  }));
}

/**
 * Where a merge's terms split into two halves of about equal work, which two threads write at once: the
 * term at half the postings and positions bytes of `dict`, the whole dictionary of the merge's largest
 * source (the sources of a merge are drawn from one stream of documents, so their terms spread alike).
 * Undefined when there is nothing to split.
 */
export function splitTerm(dict: TermDictionary): string | undefined {
  if (dict.first !== 0 || dict.end !== dict.length) throw new InternalError('A merge splits its terms by a whole dictionary.');
  if (dict.length < 2) return undefined;
  const info = newTermInfo();
  const half = (dict.postingsBytes + dict.positionsBytes) / 2;
  let lo = 1;
  let hi = dict.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    dict.info(mid, info);
    if (info.postingsStart + info.positionsStart < half) lo = mid + 1;
    else hi = mid;
  }
  return dict.at(lo);
}

/**
 * The sources' term dictionaries for the part of the merge written here: all the terms, or, when
 * `elsewhere` takes the terms from a split point on, those before it (each source holding only those, so
 * that the two threads together hold the dictionaries once), with that point.
 */
function dictionariesBefore(sources: readonly MergeSource[], elsewhere: boolean): { dicts: TermDictionary[]; split?: string } {
  if (!elsewhere || sources.length === 0) return { dicts: sources.map((s) => s.core.termsOnce()) };
  let largest = 0;
  sources.forEach((s, k) => {
    if (s.core.postingsAndPositionsBytes > sources[largest]!.core.postingsAndPositionsBytes) largest = k;
  });
  // the largest source's whole dictionary only to find the split: decoded again up to it, it holds half as much through the merge
  const split = splitTerm(sources[largest]!.core.termsOnce());
  return { dicts: sources.map((s) => s.core.termsOnce(split === undefined ? undefined : { to: split })), split };
}

/**
 * A source's documents' ids in the merged segment: without deletes, its first document's id (the others
 * follow it), so that a merge of millions of documents holds no array per document for them; else the id
 * of each (−1: deleted).
 */
type DocMap = number | Int32Array;

/** Document `d`'s id in the merged segment, or −1. */
function mapped(map: DocMap, d: number): number {
  return typeof map === 'number' ? map + d : map[d]!;
}

/** The merged segment's doc ids of each source's documents, in source order, and how many there are. */
function renumber(sources: readonly MergeSource[]): { docMaps: DocMap[]; live: number } {
  let live = 0;
  const docMaps = sources.map(({ core, deleted }): DocMap => {
    if (deleted === null) {
      live += core.maxDoc;
      return live - core.maxDoc;
    }
    const map = new Int32Array(core.maxDoc).fill(-1);
    for (let d = 0; d < core.maxDoc; d++) if (!isDeleted(deleted, d)) map[d] = live++;
    return map;
  });
  return { docMaps, live };
}

/** The merged segment's document lengths. */
function mergedLengths(sources: readonly MergeSource[], docMaps: readonly DocMap[], live: number): Uint32Array {
  const lengths = new Uint32Array(live);
  sources.forEach(({ core }, k) => {
    const map = docMaps[k]!;
    if (typeof map === 'number') lengths.set(core.lengths, map);
    else for (let d = 0; d < core.maxDoc; d++) if (map[d]! >= 0) lengths[map[d]!] = core.lengths[d]!;
  });
  return lengths;
}

const NO_POSITIONS = new Int32Array(0);

/**
 * The terms of `ranges` (one per source), merged: each begun on `w`, its live documents added with their
 * new ids, then yielded (TermsWriter's producer). Common-word pairs are left out unless every source has them.
 * A document's positions are copied as coded (`CodedPositions`).
 */
function* mergedTerms(sources: readonly MergeSource[], docMaps: readonly DocMap[], ranges: readonly TermRange[], w: TermPostingsWriter): Generator<string> {
  const commonGrams = sources.every((s) => s.core.commonGrams);
  /** The current document's positions (a term without any, `site:` and `gram:` terms, adds none). */
  const coded: CodedPositions = { data: new Uint8Array(0), from: 0, to: 0 };
  /** Each source's cursor, moved from term to term. */
  const cursors: (BlockPostingsCursor | undefined)[] = sources.map(() => undefined);
  for (const [term, from] of unionSorted(ranges)) {
    if (!commonGrams && term.startsWith(GRAM_TERM_PREFIX)) continue;
    w.begin(term);
    for (let i = 0; i < from.length; i += 2) {
      const k = from[i]!;
      const map = docMaps[k]!;
      const c = (cursors[k] = sources[k]!.core.cursor(from[i + 1]!, true, true, ranges[k]!.dict, cursors[k]));
      for (let d = c.nextDoc(); d !== NO_MORE_DOCS; d = c.nextDoc()) {
        const nd = mapped(map, d);
        if (nd < 0) continue;
        if (c.codedPositions(coded)) w.addCoded(nd, c.freq(), coded);
        else w.add(nd, c.freq(), NO_POSITIONS, 0);
      }
    }
    yield term;
  }
  for (const s of sources) s.core.endSequential();
}

/** Writes the merge of `sources` into `files`, stored text first; returns its document count. */
export function* mergeSegments(sources: readonly MergeSource[], store: StoreOptions, files: SegmentFiles): Steps<number> {
  yield* mergeStored(storedSources(sources), store, files.sto);
  return yield* mergeIndex(sources, files.idx);
}

/** The stored texts of merge sources, as `mergeStored` reads them. */
function storedSources(sources: readonly MergeSource[]): StoredSource[] {
  return sources.map(({ core, deleted }) => ({ store: core.store, deleted }));
}

/**
 * Writes the merged `.idx` of `sources` (which shares nothing with the `.sto` but the documents' order, so
 * the two may be written at once); returns its document count. With `elsewhere`, the terms from the
 * split point (`splitTerm`) on are written by another thread: `elsewhere(from)` starts it and returns
 * the wait for its part, which is appended to the terms written here.
 */
export function* mergeIndex(sources: readonly MergeSource[], idx: SegmentFile, elsewhere?: (from: string) => () => Steps<TermsPart>): Steps<number> {
  // the surface forms and the heads first, each into the few bytes the file stores: what they read of
  // the sources (every source's forms at once, the heads' records) is let go of before the terms'
  // structures are made, not made on top of them at the end (a forced merge of a million documents'
  // 56 segments peaked at 928–975 MB so, at 805–829 MB this way)
  const surfaces = yield* encodeSurfaces(mergedSurfaces(sources));
  const headRecords = new HeadsWriter();
  for (const { core, deleted } of sources) {
    const from = core.headsOnce();
    for (let d = 0; d < core.maxDoc; d++) if (!isDeleted(deleted, d)) headRecords.addEncoded(from.record(d));
  }
  const heads = headRecords.finish();

  const { docMaps, live } = renumber(sources);
  const lengths = mergedLengths(sources, docMaps, live);
  const cids = new BigUint64Array(live);
  sources.forEach(({ core }, k) => {
    const map = docMaps[k]!;
    if (typeof map === 'number') cids.set(core.cids, map);
    else for (let d = 0; d < core.maxDoc; d++) if (map[d]! >= 0) cids[map[d]!] = core.cids[d]!;
  });

  const { dicts, split } = dictionariesBefore(sources, elsewhere !== undefined);
  const rest = split === undefined ? undefined : elsewhere!(split);
  // let go of once the terms are written: what comes after (the part, the heads, the surface forms) need not share memory with them
  let ranges: TermRange[] | undefined = termRanges(dicts, { to: split });
  let termCount = 0;
  for (const r of ranges) termCount = Math.max(termCount, r.to - r.from);

  yield* encodeIdx({
    commonGrams: sources.every((s) => s.core.commonGrams),
    heads, lengths, cids, termCount,
    terms: (w) => {
      const r = ranges!;
      ranges = undefined;
      return mergedTerms(sources, docMaps, r, w);
    },
    surfaces,
    rest,
  }, idx);
  return lengths.length;
}

/** The sources' surface forms in ascending order, each once, with its document frequencies summed. */
function* mergedSurfaces(sources: readonly MergeSource[]): Generator<[string, number]> {
  const tables = sources.map((s) => s.core.surfaces.read());
  const forms = tables.map((t) => ({ dict: t.forms, from: 0, to: t.forms.length }));
  for (const [form, from] of unionSorted(forms)) {
    let df = 0;
    for (let i = 0; i < from.length; i += 2) df += tables[from[i]!]!.dfs[from[i + 1]!]!;
    yield [form, df];
  }
}

/**
 * Writes the merged postings of the sources' terms from `from` on, the rest of a merge whose `.idx` another
 * thread writes up to `from` (postings-merge.ts), into `postings` and `positions`; returns the writer,
 * which holds the terms' dictionary entries.
 */
export function* mergeTermsFrom(sources: readonly MergeSource[], from: string, postings: ByteSink, positions: ByteSink): Steps<TermsWriter> {
  const { docMaps, live } = renumber(sources);
  const ranges = termRanges(sources.map((s) => s.core.termsOnce({ from })), { from });
  const terms = new TermsWriter(mergedLengths(sources, docMaps, live), postings, positions, Math.max(0, ...ranges.map((r) => r.to - r.from)));
  yield* terms.write((w) => mergedTerms(sources, docMaps, ranges, w));
  return terms;
}

/** A merge source's stored texts: its `.sto` and the documents the merge drops. */
export interface StoredSource {
  store: StoredReader;
  deleted: DeletedBits | null;
}

/**
 * Writes the merged `.sto`: the live documents' tokens ranked anew for the merged segment. A word-coded
 * source's documents are re-coded from their ranks (no text decoded), its tokens counted by its
 * vocabulary when it has no deletes, else from its live documents; an older source's texts are
 * tokenized. It reads nothing but the sources' `.sto` files, so it runs in a thread of its own beside the
 * `.idx` merge (stored-merge.ts), or before it, when the merged vocabulary, the sources' vocabularies and
 * their rank maps are garbage before the postings are merged (at a million documents they are hundreds of MB).
 */
export function* mergeStored(sources: readonly StoredSource[], store: StoreOptions, sto: SegmentFile): Steps<void> {
  const due = stepClock();
  const counts = new VocabularyBuilder();
  const ranks = new IntBuffer();
  /** Per word-coded source, the merged vocabulary's token id of each of its ranks (−1: not live). */
  const idsOfRanks: (Int32Array | undefined)[] = [];
  // A source's vocabulary is read (not kept by the source, unless a search has read it already) once to
  // count its tokens and again to re-code its texts: held by one source at a time, not by all of a merge's.
  for (const { store: st, deleted } of sources) {
    const model = st.wordModel(false);
    if (model === undefined) {
      for (let d = 0; d < st.docCount; d++) {
        if (!isDeleted(deleted, d)) counts.addText(st.get(d));
        if ((d & 63) === 0 && due()) yield;
      }
      idsOfRanks.push(undefined);
      continue;
    }
    let used = deleted === null ? st.tokenCounts() : undefined;
    if (used === undefined) {
      used = new Float64Array(model.size);
      for (let d = 0; d < st.docCount; d++) {
        if (isDeleted(deleted, d)) continue;
        ranks.length = 0;
        st.ranks(d, model, ranks);
        const a = ranks.a;
        for (let i = 0; i < ranks.length; i++) used[a[i]!]!++;
        if ((d & 63) === 0 && due()) yield;
      }
    }
    const ids = new Int32Array(model.size).fill(-1);
    for (let r = 0; r < model.size; r++) if (used[r]! > 0) ids[r] = counts.addFrom(model, r, used[r]!);
    idsOfRanks.push(ids);
  }
  const vocabulary = counts.rank();
  const sw = new StoreWriter(store, sto, vocabulary);
  for (const [k, { store: st, deleted }] of sources.entries()) {
    // the source's ranks as the merged segment's, mapped in place
    const remap = idsOfRanks[k];
    idsOfRanks[k] = undefined;
    if (remap !== undefined) for (let r = 0; r < remap.length; r++) if (remap[r]! >= 0) remap[r] = vocabulary.rankOfId[remap[r]!]!;
    const model = remap === undefined ? undefined : st.wordModel(false);
    for (let d = 0; d < st.docCount; d++) {
      if (isDeleted(deleted, d)) continue;
      if (model === undefined || remap === undefined) sw.add(st.get(d));
      else {
        ranks.length = 0;
        st.ranks(d, model, ranks);
        sw.addMapped(ranks.a, 0, ranks.length, remap);
      }
      if ((d & 63) === 0 && due()) yield;
    }
  }
  sw.finish();
}
