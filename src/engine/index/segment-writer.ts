/**
 * Building one segment in memory and writing its two files as they are encoded (segment-file.ts), the
 * encoder a merge uses too. Documents are inverted as they are added
 * (the analyzer runs once, at `add`), so a commit only encodes: terms sorted, postings and positions
 * through the codec, exact lengths, cids, surface forms with document frequencies, document heads, stored text.
 *
 * `<name>.idx` (CRC-checked at open; postings and positions read per term), every section 8-byte aligned:
 *
 *   lengths   u32 × maxDoc            exact token count of title + text
 *   cids      u64 × maxDoc
 *   postings  per term, see postings-format.ts
 *   positions per term, see postings-format.ts
 *   heads     one Brotli stream of title, url and host per doc (heads.ts)
 *   dict      one Brotli stream of:
 *               termText  UTF-8 of all terms concatenated, ascending by UTF-16 code units
 *               termMeta  per term varints: utf16Length · docFreq · postingsBytes · positionsBytes · maxFreq · minLength
 *               surfText  UTF-8 of all surface forms concatenated, ascending
 *               surfMeta  per form varints: utf16Length · docFreq
 *   meta      JSON {maxDoc, terms, surfaces, sections: {name: [offset, bytes]}, dict: {bytes, sections},
 *             heads: {bytes}, commonGrams?: true}
 *             · u32 metaBytes · footer (QIDX)
 */
import { constants as zc, brotliCompressSync } from 'node:zlib';
import { stemForm, tokenize, type TokenSink } from '../analysis/analyzer.js';
import { ByteWriter, IntBuffer, utf8Encoder } from './bytes.js';
import { MAGIC } from './footer.js';
import { TermsWriter, type TermPostingsWriter } from './postings-writer.js';
import { HeadsWriter, type CompressedHeads } from './heads.js';
import type { DocumentRecord } from '../../kernel/document.js';
import { stepClock, type Steps } from './steps.js';
import { encodeStoredTexts, sealedTextsBuffers, StoredTextsBuilder, type SealedTexts, type StoreOptions } from './store.js';
import { StoredTokenAnalysis } from './stored-token-analysis.js';
import { VocabularyBuilder } from './word-codes.js';
import { SegmentFile, type ByteSink } from './segment-file.js';
import { orderOfStrings } from './string-order.js';
import { IDX_EXT, STO_EXT } from './segment-reader.js';
import { COMMON_GRAM_WORDS } from '../analysis/common-grams.js';
import { SITE_TERM_PREFIX, TITLE_TEXT_POSITION_GAP, gramTerm } from './types.js';

/** The two files of a segment being written. */
export interface SegmentFiles { idx: SegmentFile; sto: SegmentFile }

/**
 * Writes segment `name`'s two files with `encode`: durable under their names when it returns (the
 * directory not yet fsynced); until `encode` has finished they are temporaries, so a failure or a crash
 * leaves no segment behind.
 */
export function* writeSegmentFiles(dir: string, name: string, encode: (files: SegmentFiles) => Steps<unknown>): Steps<void> {
  const opened: SegmentFile[] = [];
  const open = (file: string) => {
    const f = new SegmentFile(dir, file);
    opened.push(f);
    return f;
  };
  try {
    const files = { sto: open(name + STO_EXT), idx: open(name + IDX_EXT) };
    yield* encode(files);
    files.sto.commit();
    files.idx.commit();
  } catch (err) {
    for (const f of opened) f.abort();
    throw err;
  }
}

/** A validated document as the index stores it. */
export type IndexedDocument = DocumentRecord;

/**
 * The synthetic terms of a host: `site:` + every dot-suffix on whole labels, lower-cased, empty labels
 * and a trailing dot ignored (`Docs.Example.com.` → `site:docs.example.com`, `site:example.com`, `site:com`).
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function siteTerms(host: string): string[] {
  const labels = host.replace(LONE_SURROGATE, '\uFFFD').toLowerCase().split('.').filter((l) => l.length > 0);
  const out: string[] = [];
  for (let i = 0; i < labels.length; i++) out.push(SITE_TERM_PREFIX + labels.slice(i).join('.'));
  return out;
}

/**
 * The folded surface forms of a segment being built, numbered in first-seen order, with what the writer
 * tracks per form in typed arrays (every token reads its form's entry; objects per form measured a cache
 * miss per token on the Wikipedia extract's million forms).
 */
class SurfaceForms {
  readonly forms: string[] = [];
  /** Id of the form's stemmed term, from its first token on (stemmed once per segment and form). */
  term = new Int32Array(1 << 12);
  /** Index of the term among the common words whose adjacent pairs are indexed, or −1. */
  common = new Int32Array(1 << 12);
  df = new Int32Array(1 << 12);
  /** The last document holding the form, −1 before its first token. */
  last = new Int32Array(1 << 12);

  /** Bytes the forms take in the typed arrays (their strings are the builder's to estimate). */
  get memoryBytes(): number {
    return 16 * this.forms.length;
  }

  add(form: string): number {
    const n = this.forms.length;
    if (n === this.last.length) {
      const grow = (a: Int32Array) => {
        const b = new Int32Array(a.length * 2);
        b.set(a);
        return b;
      };
      this.term = grow(this.term);
      this.common = grow(this.common);
      this.df = grow(this.df);
      this.last = grow(this.last);
    }
    this.forms.push(form);
    this.df[n] = 0;
    this.last[n] = -1;
    return n;
  }
}

/** Position of each common word in COMMON_GRAM_WORDS. */
const COMMON_WORDS = [...COMMON_GRAM_WORDS];
const COMMON_INDEX = new Map(COMMON_WORDS.map((w, i) => [w, i]));

/**
 * An in-memory segment under construction. Doc ids are assigned in `add` order from 0.
 *
 * Inversion is deferred: `add` appends each token's term id to one flat typed array — one array lookup
 * and one store per token, no per-term arrays to grow — and `encode` groups them by term with a stable
 * counting sort, which keeps each term's tokens in (doc, position) order and counts their positions. A text is scanned once,
 * into its stored-text tokens, and its analyzer tokens are read from those (stored-token-analysis.ts); the
 * text itself is not kept.
 */
export class SegmentBuilder {
  /** The number of each folded surface form in `forms`. */
  private readonly surfaces = new Map<string, number>();
  private readonly forms = new SurfaceForms();
  private readonly termIds = new Map<string, number>();
  private readonly termNames: string[] = [];
  /** Term id of each common-word pair (`a · n + b`), −1 until it first occurs. */
  private readonly gramIds = new Int32Array(COMMON_INDEX.size * COMMON_INDEX.size).fill(-1);
  /**
   * Each token's term id, with NO_POSITION set for a term that has none (`site:` and `gram:` terms). A
   * token's position is not kept: a field's tokens have consecutive positions, so `sortTokens` counts
   * them from each document's title length, and a token takes half the bytes of a buffer it took with an
   * int32 of position beside it.
   */
  private tokTerm = new IntBuffer();
  /** Tokens of each doc's title: its text's positions start after them and TITLE_TEXT_POSITION_GAP. */
  private readonly titleLengths: number[] = [];
  /** Index in the token arrays where each doc's tokens start. */
  private readonly docStart: number[] = [];
  private readonly lengths: number[] = [];
  private readonly cids: bigint[] = [];
  private readonly heads = new HeadsWriter();
  private readonly texts = new StoredTextsBuilder();
  private readonly analysis = new StoredTokenAnalysis(this.texts.tokens, (surface) => this.surfaceNumber(surface));
  /** The titles' tokens, scanned and analyzed as the texts' are but not stored (heads hold the titles). */
  private readonly titleTokens = new VocabularyBuilder();
  private readonly titleAnalysis = new StoredTokenAnalysis(this.titleTokens, (surface) => this.surfaceNumber(surface));
  private readonly surfacesOfText = new IntBuffer();
  /** The document being added, and its last common word's index and position (for pairs). */
  private doc = 0;
  private prevCommon = -1;
  private prevPos = -2;
  private readonly sink: TokenSink = (_unstemmed, surface, position) => this.token(this.surfaceNumber(surface), position);
  /** Bytes held per document: heads and token array (6 a token: an int32, and half as much again of growth on average). */
  private docBytes = 0;
  /** UTF-16 units of the forms' and terms' strings. */
  private stringUnits = 0;

  get maxDoc(): number {
    return this.cids.length;
  }

  /**
   * Approximate memory held, in bytes: what each document adds, the texts' token ids, and the
   * vocabularies (stored-text tokens, forms, terms), which grow with the corpus's distinct words rather
   * than its length (a string in a Map is estimated at 64 bytes and 2 a code unit). What is in use is
   * counted, not what arrays hold ahead of it, so that a small buffer still holds several documents.
   */
  get bytes(): number {
    const strings = this.forms.forms.length + this.termNames.length;
    const titles = this.titleTokens.memoryBytes + this.titleAnalysis.memoryBytes;
    return this.docBytes + this.texts.bytes + this.analysis.memoryBytes + titles + this.forms.memoryBytes + 64 * strings + 2 * this.stringUnits;
  }

  private termId(term: string): number {
    let id = this.termIds.get(term);
    if (id === undefined) {
      id = this.termNames.length;
      this.termIds.set(term, id);
      this.termNames.push(term);
      this.stringUnits += term.length;
    }
    return id;
  }

  /**
   * The number of a folded surface form in `forms`, added if new. A form is numbered before its first
   * token (the stored-token analysis numbers a word's forms when it first sees the word, and a text whose
   * separators it cannot split at is tokenized whole, so that word's forms may never be used); it gets its
   * term at its first token.
   */
  private surfaceNumber(surface: string): number {
    let n = this.surfaces.get(surface);
    if (n === undefined) {
      n = this.forms.add(surface);
      this.surfaces.set(surface, n);
      this.stringUnits += surface.length;
    }
    return n;
  }

  /** Records a token of the document being added: surface number `n` at `position`. */
  private token(n: number, position: number): void {
    const f = this.forms;
    const last = f.last[n]!;
    if (last !== this.doc) {
      if (last < 0) {
        const stem = stemForm(f.forms[n]!);
        f.term[n] = this.termId(stem);
        f.common[n] = COMMON_INDEX.get(stem) ?? -1;
      }
      f.last[n] = this.doc;
      f.df[n]!++;
    }
    this.tokTerm.push(f.term[n]!);
    const common = f.common[n]!;
    if (common >= 0) {
      if (position === this.prevPos + 1) {
        const pair = this.prevCommon * COMMON_INDEX.size + common;
        let id = this.gramIds[pair]!;
        if (id < 0) id = this.gramIds[pair] = this.termId(gramTerm(COMMON_WORDS[this.prevCommon]!, COMMON_WORDS[common]!));
        this.tokTerm.push(id | NO_POSITION);
      }
      this.prevCommon = common;
      this.prevPos = position;
    }
  }

  /**
   * Records the analyzer's tokens of `text`, which was scanned into `ids`, from `first` on: read from
   * the scanned tokens' analyses, or by the analyzer over the whole text when one of its separators is
   * one the analyzer does not split at. Returns their number.
   */
  private tokens(text: string, ids: Readonly<IntBuffer>, analysis: StoredTokenAnalysis, first: number): number {
    const surfaces = this.surfacesOfText;
    if (!analysis.surfacesOf(ids.a, ids.length, surfaces)) return tokenize(text, this.sink, first, false);
    const a = surfaces.a;
    const n = surfaces.length;
    for (let k = 0; k < n; k++) this.token(a[k]!, first + k);
    return n;
  }

  /** Adds a document; returns its doc id in this segment. */
  add(d: IndexedDocument): number {
    const doc = this.cids.length;
    const tokTerm = this.tokTerm;
    const start = tokTerm.length;
    this.docStart.push(start);
    this.doc = doc;
    this.prevCommon = -1;
    this.prevPos = -2;
    const inTitle = this.tokens(d.title, this.titleTokens.addText(d.title), this.titleAnalysis, 0);
    const inText = this.tokens(d.text, this.texts.add(d.text), this.analysis, inTitle + TITLE_TEXT_POSITION_GAP);
    if (d.host !== undefined) {
      for (const t of new Set(siteTerms(d.host))) {
        tokTerm.push(this.termId(t) | NO_POSITION);
      }
    }
    this.titleLengths.push(inTitle);
    this.lengths.push(inTitle + inText);
    this.cids.push(d.cid);
    this.heads.add(d);
    this.docBytes += 2 * (d.title.length + (d.url?.length ?? 0) + (d.host?.length ?? 0)) + 6 * (tokTerm.length - start) + 128;
    return doc;
  }

  /** The segment as plain data, for `encodeSegment` here or in another thread; the builder is not used after. */
  seal(): SealedSegment {
    const { forms, df } = this.forms;
    const used: string[] = [];
    const usedDf: number[] = [];
    for (let i = 0; i < forms.length; i++) {
      if (df[i]! === 0) continue;
      used.push(forms[i]!);
      usedDf.push(df[i]!);
    }
    return {
      termNames: this.termNames,
      tokTerm: this.tokTerm.view(),
      titleLengths: Int32Array.from(this.titleLengths),
      docStart: Int32Array.from(this.docStart),
      lengths: Uint32Array.from(this.lengths),
      cids: BigUint64Array.from(this.cids),
      heads: this.heads.seal(),
      texts: this.texts.seal(),
      forms: used,
      formDf: Int32Array.from(usedDf),
    };
  }
}

/**
 * Builds the segment of `docs`, added in their order (doc ids 0…), yielding now and then; returns it
 * sealed. Consumes `docs`: each is let go once it is added, so that the texts and the builder do not
 * both peak at once.
 */
export function* buildSegment(docs: (IndexedDocument | undefined)[]): Steps<SealedSegment> {
  const due = stepClock();
  const builder = new SegmentBuilder();
  for (let i = 0; i < docs.length; i++) {
    const d = docs[i]!;
    docs[i] = undefined;
    builder.add(d);
    if ((i & 15) === 15 && due()) yield;
  }
  return builder.seal();
}

/**
 * A built segment as plain data (`SegmentBuilder.seal`): what its encoding reads, which a thread can be
 * handed (segment-flush-thread.ts). Encoding consumes it: `encodeSegment` lets go of the token arrays once sorted.
 */
export interface SealedSegment {
  /** Term of each term id, in first-seen order. */
  termNames: string[];
  /** Each token's term id, NO_POSITION set for a term without positions, doc by doc in add order. */
  tokTerm: Int32Array<ArrayBuffer>;
  /** Tokens of each doc's title (SegmentBuilder.titleLengths). */
  titleLengths: Int32Array<ArrayBuffer>;
  /** Where each doc's tokens start in `tokTerm`. */
  docStart: Int32Array<ArrayBuffer>;
  lengths: Uint32Array<ArrayBuffer>;
  cids: BigUint64Array<ArrayBuffer>;
  /** The heads' records (heads.ts). */
  heads: Uint8Array<ArrayBuffer>;
  texts: SealedTexts;
  /** The surface forms some token used, in first-seen order, and their document frequencies. */
  forms: string[];
  formDf: Int32Array<ArrayBuffer>;
}

/** The buffers of `s`, to transfer rather than copy to another thread. */
export function sealedSegmentBuffers(s: SealedSegment): ArrayBuffer[] {
  return [s.tokTerm.buffer, s.titleLengths.buffer, s.docStart.buffer, s.lengths.buffer, s.cids.buffer, s.heads.buffer, s.formDf.buffer, ...sealedTextsBuffers(s.texts)];
}

const NO_TOKENS = new Int32Array(0);

/** Set in a token's term id (`SegmentBuilder.tokTerm`) when its term has no positions; TERM_MASK takes it off. */
const NO_POSITION = 1 << 31;
const TERM_MASK = 0x7fffffff;

/**
 * Where a sorted token's doc number and position are held: 16 bits each when every value of the buffer
 * fits, else 32. A buffer holds more than 65,536 documents only when they are very short, and a position
 * needs more than 16 bits only in a document of more than 65,520 tokens; with 16-bit columns the sort
 * holds 8 bytes a token instead of 12 (the 4 of the tokens it sorts from included), in a thread, while
 * the next buffer fills beside it.
 */
type SortedColumn = Int32Array | Uint16Array;

/**
 * The tokens grouped by term with a stable counting sort: term t's are `[start[t], start[t + 1])` of
 * `sDoc` and `sPos`, in (doc, position) order, the positions counted as the tokens are met (none written
 * for a term without any: its postings read no positions). The token array in add order is let go: a
 * flush holds one copy of the tokens while it writes, not two.
 */
function sortTokens(s: SealedSegment): { start: Int32Array; sDoc: SortedColumn; sPos: SortedColumn } {
  const nTerms = s.termNames.length;
  const nTok = s.tokTerm.length;
  const tokTerm = s.tokTerm;
  const start = new Int32Array(nTerms + 1);
  for (let i = 0; i < nTok; i++) start[(tokTerm[i]! & TERM_MASK) + 1]!++;
  for (let t = 0; t < nTerms; t++) start[t + 1]! += start[t]!;
  const fill = start.slice(0, nTerms);
  const docStart = s.docStart;
  const titleLengths = s.titleLengths;
  const maxDoc = docStart.length;
  // a position is below its doc's length (the tokens that have one) plus the title's gap
  let longest = 0;
  for (const length of s.lengths) if (length > longest) longest = length;
  const sDoc = maxDoc <= 0x10000 ? new Uint16Array(nTok) : new Int32Array(nTok);
  const sPos = longest + TITLE_TEXT_POSITION_GAP <= 0x10000 ? new Uint16Array(nTok) : new Int32Array(nTok);
  for (let doc = 0; doc < maxDoc; doc++) {
    const end = doc + 1 < maxDoc ? docStart[doc + 1]! : nTok;
    const inTitle = titleLengths[doc]!;
    let field = 0; // the doc's tokens with a position so far
    for (let i = docStart[doc]!; i < end; i++) {
      const v = tokTerm[i]!;
      const at = fill[v & TERM_MASK]!++;
      sDoc[at] = doc;
      if (v >= 0) {
        sPos[at] = field < inTitle ? field : field + TITLE_TEXT_POSITION_GAP;
        field++;
      }
    }
  }
  s.tokTerm = NO_TOKENS;
  return { start, sDoc, sPos };
}

/** Encodes a sealed segment into its `.idx` and `.sto` files (run with runSync or runCooperatively). */
export function* encodeSegment(s: SealedSegment, store: StoreOptions, files: SegmentFiles): Steps<void> {
  const nTerms = s.termNames.length;
  const { start, sDoc, sPos } = sortTokens(s);
  const names = s.termNames;
  const order = orderOfStrings(names);
  const { forms, formDf } = s;
  const used = orderOfStrings(forms);
  yield* encodeStoredTexts(s.texts, store, files.sto);
  const surfaces = yield* encodeSurfaces((function* (): Generator<[string, number]> {
    for (const i of used) yield [forms[i]!, formDf[i]!];
  })());
  yield* encodeIdx({
    commonGrams: true,
    heads: new HeadsWriter(s.heads).finish(),
    surfaces,
    lengths: s.lengths,
    cids: s.cids,
    termCount: nTerms,
    *terms(w) {
      for (const t of order) {
        const from = start[t]!;
        const to = start[t + 1]!;
        w.begin(names[t]!);
        // a doc's tokens are consecutive: its freq is their run, its positions sPos[i, i + freq)
        for (let i = from; i < to; ) {
          const d = sDoc[i]!;
          let j = i + 1;
          while (j < to && sDoc[j] === d) j++;
          w.add(d, j - i, sPos, i);
          i = j;
        }
        yield names[t]!;
      }
    },
  }, files.idx);
}

export interface IdxInput {
  /** The terms include the common-word pairs of every document (types.ts `gramTerm`). */
  commonGrams: boolean;
  /** Title, url and host of every doc, in doc order. */
  heads: CompressedHeads;
  /** The surface forms. */
  surfaces: EncodedSurfaces;
  lengths: ArrayLike<number>;
  cids: readonly bigint[] | BigUint64Array;
  termCount: number;
  /**
   * Terms in ascending code-unit order. For each, the producer begins it on `w`, adds its documents in
   * order, then yields it; a term none of whose documents was added is left out.
   */
  terms(w: TermPostingsWriter): Iterable<string>;
  /** Terms after those of `terms`, written by another thread: called once those are written. */
  rest?: () => Steps<TermsPart>;
}

/**
 * A segment's surface forms as its dictionary holds them: their UTF-8, and per form its length in UTF-16
 * code units and its document frequency (varints). A merge encodes them before its terms, so that the
 * sources' forms it reads for them are let go of before the terms' structures are made, not on top of them.
 */
export interface EncodedSurfaces {
  text: ByteWriter;
  meta: ByteWriter;
  count: number;
}

/** Encodes surface forms, given in ascending order with their document frequencies, yielding now and then. */
export function* encodeSurfaces(forms: Iterable<[form: string, docFreq: number]>): Steps<EncodedSurfaces> {
  const due = stepClock();
  const text = new ByteWriter(1 << 16);
  const meta = new ByteWriter(1 << 16);
  let count = 0;
  for (const [form, df] of forms) {
    text.utf8(form);
    meta.varint(form.length);
    meta.varint(df);
    if ((++count & 1023) === 0 && due()) yield;
  }
  return { text, meta, count };
}

/** Terms written elsewhere (postings-merge.ts) for `encodeIdx` to append to its own. */
export interface TermsPart {
  terms: number;
  termText: Uint8Array;
  termMeta: Uint8Array;
  copyPostings(to: ByteSink): void;
  copyPositions(to: ByteSink): void;
}

/**
 * Encodes a complete `.idx` file (layout at the top of this file) into `file`, yielding at checkpoints.
 * The sections are written as they are encoded; positions, produced term by term beside the postings
 * and stored after them, go through a scratch file. Memory is a chunk per output plus the dictionary
 * and the heads, whatever the segment's size.
 */
export function* encodeIdx(input: IdxInput, file: SegmentFile): Steps<void> {
  const maxDoc = input.lengths.length;
  const sections: Record<string, [number, number]> = {};
  const begin = () => {
    file.align(8);
    return file.position;
  };
  const end = (name: string, start: number) => { sections[name] = [start, file.position - start]; };
  const section = (name: string, bytes: Uint8Array) => {
    const start = begin();
    file.bytes(bytes);
    end(name, start);
  };
  const lengths = Uint32Array.from(input.lengths);
  section('lengths', new Uint8Array(lengths.buffer, lengths.byteOffset, lengths.byteLength));
  const cids = input.cids instanceof BigUint64Array ? input.cids : new BigUint64Array(input.cids);
  section('cids', new Uint8Array(cids.buffer, cids.byteOffset, cids.byteLength));

  const spill = file.spill();
  try {
    // The dictionary's term sections, written as the terms stream by (none of them is kept).
    const terms = new TermsWriter(input.lengths, file, spill, input.termCount);
    const postingsStart = begin();
    yield* terms.write((w) => input.terms(w));
    const rest = input.rest === undefined ? undefined : yield* input.rest();
    if (rest !== undefined) {
      rest.copyPostings(file);
      terms.text.bytes(rest.termText);
      terms.meta.bytes(rest.termMeta);
    }
    end('postings', postingsStart);
    const positionsStart = begin();
    spill.copyTo(file);
    rest?.copyPositions(file);
    end('positions', positionsStart);

    section('heads', input.heads.bytes);

    const surfaces = input.surfaces;
    const surfText = surfaces.text;
    const surfMeta = surfaces.meta;
    // The dictionary (term and surface strings with their metadata) is read whole at open and is
    // highly redundant (sorted strings, small counts): one Brotli stream makes it 2–3× smaller. Quality
    // 2 with a large window: on the Wikipedia extract's merged dictionary (23 MB) it is 1.9 % larger than
    // quality 5 and takes 0.5 s instead of 3.3 (qualities 3 and 4 are both larger and slower than 2 there).
    const parts = { termText: terms.text, termMeta: terms.meta, surfText, surfMeta };
    const dict = new ByteWriter(Object.values(parts).reduce((n, w) => n + w.length, 0));
    const dictSections: Record<string, [number, number]> = {};
    for (const [name, w] of Object.entries(parts)) {
      dictSections[name] = [dict.length, w.length];
      dict.bytes(w.view());
    }
    section('dict', brotliCompressSync(dict.view(), {
      params: { [zc.BROTLI_PARAM_QUALITY]: 2, [zc.BROTLI_PARAM_LGWIN]: 24, [zc.BROTLI_PARAM_SIZE_HINT]: dict.length },
    }));

    const json = utf8Encoder.encode(JSON.stringify({
      maxDoc, terms: terms.count + (rest?.terms ?? 0), surfaces: surfaces.count, sections, dict: { bytes: dict.length, sections: dictSections },
      heads: { bytes: input.heads.rawBytes }, ...(input.commonGrams ? { commonGrams: true } : {}),
    }));
    file.align(8);
    file.bytes(json);
    file.out.u32(json.length);
    file.footer(MAGIC.terms);
  } finally {
    spill.dispose();
  }
}
