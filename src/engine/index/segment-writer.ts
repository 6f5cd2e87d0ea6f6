/**
 * Building one segment in memory and writing its two files. Documents are inverted as they are added
 * (the analyzer runs once, at `add`), so a commit only encodes: terms sorted, postings and positions
 * through the codec, exact lengths, cids, surface forms with document frequencies, stored fields.
 *
 * `<name>.idx` (read whole at open, CRC-checked), every section 8-byte aligned:
 *
 *   lengths   u32 × maxDoc            exact token count of title + text
 *   cids      u64 × maxDoc
 *   postings  per term, see postings.ts
 *   positions per term, see postings.ts
 *   dict      one Brotli stream of:
 *               termText  UTF-8 of all terms concatenated, ascending by UTF-16 code units
 *               termMeta  per term varints: utf16Length · docFreq · postingsBytes · positionsBytes · maxFreq · minLength
 *               surfText  UTF-8 of all surface forms concatenated, ascending
 *               surfMeta  per form varints: utf16Length · docFreq
 *   meta      JSON {maxDoc, terms, surfaces, sections: {name: [offset, bytes]}, dict: {bytes, sections}}
 *             · u32 metaBytes · footer (QIDX)
 */
import { constants as zc, brotliCompressSync } from 'node:zlib';
import { tokenize } from '../analysis/analyzer.js';
import { ByteWriter, utf8Encoder } from './bytes.js';
import { MAGIC, withFooter } from './footer.js';
import { encodeTermPostings } from './postings.js';
import { encodeStore, type StoreOptions } from './store.js';
import { SITE_TERM_PREFIX, TITLE_TEXT_POSITION_GAP } from './types.js';

/** A validated document as the index stores it. */
export interface IndexedDocument {
  cid: bigint;
  title: string;
  text: string;
  url?: string;
  host?: string;
}

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

interface TermAcc {
  docs: number[];
  freqs: number[];
  positions: number[];
  last: number;
}

interface SurfaceAcc {
  df: number;
  last: number;
  /** The accumulator of the surface's stemmed term (one map lookup per token finds both). */
  term: TermAcc;
}

/** An in-memory segment under construction. Doc ids are assigned in `add` order from 0. */
export class SegmentBuilder {
  private readonly terms = new Map<string, TermAcc>();
  private readonly surfaces = new Map<string, SurfaceAcc>();
  private readonly lengths: number[] = [];
  private readonly cids: bigint[] = [];
  private readonly stored: IndexedDocument[] = [];
  /** Approximate memory held, in bytes (text held for storing plus the inverted postings). */
  bytes = 0;

  get maxDoc(): number {
    return this.cids.length;
  }

  /** Adds a document; returns its doc id in this segment. */
  add(d: IndexedDocument): number {
    const doc = this.cids.length;
    const terms = this.terms;
    const surfaces = this.surfaces;
    let tokens = 0;
    const sink = (term: string, surface: string, position: number) => {
      let s = surfaces.get(surface);
      if (s === undefined) {
        let t = terms.get(term);
        if (t === undefined) {
          t = { docs: [], freqs: [], positions: [], last: -1 };
          terms.set(term, t);
        }
        s = { df: 0, last: -1, term: t };
        surfaces.set(surface, s);
      }
      if (s.last !== doc) {
        s.last = doc;
        s.df++;
      }
      const acc = s.term;
      if (acc.last !== doc) {
        acc.last = doc;
        acc.docs.push(doc);
        acc.freqs.push(1);
      } else {
        acc.freqs[acc.freqs.length - 1]!++;
      }
      acc.positions.push(position);
      tokens++;
    };
    const inTitle = tokenize(d.title, sink, 0);
    tokenize(d.text, sink, inTitle + TITLE_TEXT_POSITION_GAP);
    if (d.host !== undefined) {
      for (const t of siteTerms(d.host)) {
        let acc = terms.get(t);
        if (acc === undefined) {
          acc = { docs: [], freqs: [], positions: [], last: -1 };
          terms.set(t, acc);
        }
        if (acc.last !== doc) {
          acc.last = doc;
          acc.docs.push(doc);
          acc.freqs.push(1);
        }
      }
    }
    this.lengths.push(tokens);
    this.cids.push(d.cid);
    this.stored.push(d);
    this.bytes += 2 * (d.title.length + d.text.length + (d.url?.length ?? 0) + (d.host?.length ?? 0)) + 24 * tokens + 64;
    return doc;
  }

  /** Encodes the segment: the `.idx` and `.sto` file contents. */
  encode(store: StoreOptions): { idx: Buffer; sto: Buffer; maxDoc: number } {
    const termList = [...this.terms.keys()].sort();
    const terms = this.terms;
    const surfaces = this.surfaces;
    const idx = encodeIdx({
      lengths: this.lengths,
      cids: this.cids,
      termCount: termList.length,
      *terms() {
        for (const t of termList) {
          const acc = terms.get(t)!;
          yield { term: t, docs: acc.docs, freqs: acc.freqs, positions: acc.positions };
        }
      },
      surfaces: [...surfaces.keys()].sort().map((sf) => [sf, surfaces.get(sf)!.df] as [string, number]),
    });
    return { idx, sto: encodeStore(this.stored, store), maxDoc: this.cids.length };
  }
}

/** One term's postings as the encoder takes them: docs ascending, positions flat in doc order. */
export interface TermPostings {
  term: string;
  docs: ArrayLike<number>;
  freqs: ArrayLike<number>;
  /** Ignored for `site:` terms, which carry no positions. */
  positions: ArrayLike<number>;
}

export interface IdxInput {
  lengths: ArrayLike<number>;
  cids: readonly bigint[] | BigUint64Array;
  termCount: number;
  /** Terms in ascending code-unit order, each with at least one posting. */
  terms(): Iterable<TermPostings>;
  /** Surface forms in ascending order with document frequencies. */
  surfaces: readonly [string, number][];
}

/** Encodes a complete `.idx` file (layout at the top of this file). */
export function encodeIdx(input: IdxInput): Buffer {
  const maxDoc = input.lengths.length;
  const out = new ByteWriter(1 << 20);
  const sections: Record<string, [number, number]> = {};
  const section = (name: string, write: () => void) => {
    out.align(8);
    const start = out.length;
    write();
    sections[name] = [start, out.length - start];
  };
  section('lengths', () => {
    const a = Uint32Array.from(input.lengths);
    out.bytes(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
  });
  section('cids', () => {
    const a = input.cids instanceof BigUint64Array ? input.cids : new BigUint64Array(input.cids);
    out.bytes(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
  });

  const postings = new ByteWriter(1 << 20);
  const positions = new ByteWriter(1 << 20);
  const scratch = new ByteWriter(1 << 12);
  const meta = new ByteWriter(input.termCount * 8 + 16);
  const termList: string[] = [];
  for (const { term: t, docs, freqs, positions: pos } of input.terms()) {
    const p0 = postings.length;
    const q0 = positions.length;
    const site = t.startsWith(SITE_TERM_PREFIX);
    const { maxFreq, minLength } = encodeTermPostings(docs, freqs, site ? null : pos, input.lengths, postings, positions, scratch);
    termList.push(t);
    meta.varint(t.length);
    meta.varint(docs.length);
    meta.varint(postings.length - p0);
    meta.varint(positions.length - q0);
    meta.varint(maxFreq);
    meta.varint(minLength);
  }
  section('postings', () => out.bytes(postings.view()));
  section('positions', () => out.bytes(positions.view()));

  // The dictionary (term and surface strings with their metadata) is read whole at open and is
  // highly redundant (sorted strings, small counts): one Brotli stream makes it 3–4× smaller.
  const dict = new ByteWriter(1 << 16);
  const dictSections: Record<string, [number, number]> = {};
  const dictSection = (name: string, write: () => void) => {
    const start = dict.length;
    write();
    dictSections[name] = [start, dict.length - start];
  };
  dictSection('termText', () => dict.bytes(utf8Encoder.encode(termList.join(''))));
  dictSection('termMeta', () => dict.bytes(meta.view()));
  dictSection('surfText', () => dict.bytes(utf8Encoder.encode(input.surfaces.map((x) => x[0]).join(''))));
  dictSection('surfMeta', () => {
    for (const [sf, df] of input.surfaces) {
      dict.varint(sf.length);
      dict.varint(df);
    }
  });
  section('dict', () =>
    out.bytes(brotliCompressSync(dict.view(), {
      params: { [zc.BROTLI_PARAM_QUALITY]: 5, [zc.BROTLI_PARAM_LGWIN]: 24, [zc.BROTLI_PARAM_SIZE_HINT]: dict.length },
    })),
  );
  const json = utf8Encoder.encode(JSON.stringify({ maxDoc, terms: termList.length, surfaces: input.surfaces.length, sections, dict: { bytes: dict.length, sections: dictSections } }));
  out.align(8);
  out.bytes(json);
  out.u32(json.length);
  return withFooter(out.view(), MAGIC.terms);
}
