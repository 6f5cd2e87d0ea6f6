/**
 * A tiny in-memory `SegmentReader` (src/engine/index/types.ts) for query-side tests: it indexes documents
 * exactly as the seam describes (title then text with a position gap, `site:` suffix terms without
 * positions or length), with real blocks of BLOCK_SIZE carrying block-max statistics, and deletes by cid.
 * The query side is tested against it and against the real on-disk index (STYLE §6: one suite, every
 * implementation of the interface).
 */
import { analyze } from '../../../src/engine/analysis/analyzer.js';
import {
  BLOCK_SIZE, NO_MORE_DOCS, SITE_TERM_PREFIX, TITLE_TEXT_POSITION_GAP, shortLengths,
  type PostingsBuffer, type PostingsCursor, type SegmentReader, type StoredDocument, type StoredHead,
} from '../../../src/engine/index/types.js';

interface Posting { doc: number; freq: number; positions: number[] }

/** Every dot-suffix of a host on whole labels: a.b.c → a.b.c, b.c, c. */
export function hostSuffixes(host: string): string[] {
  const labels = host.toLowerCase().replace(/^\.+|\.+$/g, '').split('.').filter((l) => l !== '');
  const out: string[] = [];
  for (let i = 0; i < labels.length; i++) out.push(labels.slice(i).join('.'));
  return out;
}

class MemoryCursor implements PostingsCursor {
  private i = -1;
  private block = -1;
  constructor(private readonly list: Posting[], private readonly lengths: number[], private readonly withPositions: boolean) {}
  get docFreq(): number { return this.list.length; }
  get maxFreq(): number { return Math.max(...this.list.map((p) => p.freq)); }
  get minLength(): number { return Math.min(...this.list.map((p) => this.lengths[p.doc]!)); }
  doc(): number { return this.i < 0 ? -1 : this.i >= this.list.length ? NO_MORE_DOCS : this.list[this.i]!.doc; }
  nextDoc(): number { if (this.i < this.list.length) this.i++; return this.doc(); }
  advance(target: number): number {
    if (this.i < 0) this.i = 0;
    while (this.i < this.list.length && this.list[this.i]!.doc < target) this.i++;
    return this.doc();
  }
  freq(): number { return this.list[this.i]!.freq; }
  nextPostings(upTo: number, out: PostingsBuffer): number {
    let n = 0;
    // the rest of the current block of BLOCK_SIZE postings, as the segment's cursor copies
    const blockEnd = (Math.floor(Math.max(this.i, 0) / BLOCK_SIZE) + 1) * BLOCK_SIZE;
    while (this.i >= 0 && this.i < Math.min(blockEnd, this.list.length) && this.list[this.i]!.doc < upTo) {
      out.docs[n] = this.list[this.i]!.doc;
      out.freqs[n++] = this.list[this.i++]!.freq;
    }
    return n;
  }
  positions(): Int32Array {
    if (!this.withPositions) throw new Error('cursor opened without positions');
    return Int32Array.from(this.list[this.i]!.positions);
  }
  shallowAdvance(target: number): number {
    const nBlocks = Math.ceil(this.list.length / BLOCK_SIZE);
    let b = Math.max(this.block, 0);
    while (b < nBlocks && this.blockLastDoc(b) < target) b++;
    this.block = b;
    return this.blockLastDoc(b);
  }
  shallowBlock(): number { return this.block; }
  blockLastDoc(b: number): number {
    return b * BLOCK_SIZE < this.list.length ? this.list[Math.min((b + 1) * BLOCK_SIZE, this.list.length) - 1]!.doc : NO_MORE_DOCS;
  }
  private blockSlice(): Posting[] { return this.list.slice(this.block * BLOCK_SIZE, (this.block + 1) * BLOCK_SIZE); }
  blockMaxFreq(): number { return Math.max(...this.blockSlice().map((p) => p.freq)); }
  blockMinLength(): number { return Math.min(...this.blockSlice().map((p) => this.lengths[p.doc]!)); }
}

export class MemorySegment implements SegmentReader {
  readonly name: string;
  /** No common-word pair terms: phrases over memory segments take the positions-only path (disk segments have them). */
  readonly commonGrams = false;
  private readonly docs: StoredDocument[] = [];
  private readonly lengths: number[] = [];
  private readonly live: boolean[] = [];
  private readonly postingsByTerm = new Map<string, Posting[]>();
  private readonly surfaces = new Map<string, Set<number>>();

  constructor(name: string, docs: StoredDocument[]) {
    this.name = name;
    for (const d of docs) this.add(d);
  }

  private add(d: StoredDocument): void {
    const doc = this.docs.length;
    this.docs.push(d);
    this.live.push(true);
    const title = analyze(d.title);
    const text = analyze(d.text, title.length + TITLE_TEXT_POSITION_GAP);
    const all = [...title, ...text];
    this.lengths.push(all.length);
    const perTerm = new Map<string, number[]>();
    for (const t of all) {
      let ps = perTerm.get(t.term);
      if (!ps) perTerm.set(t.term, (ps = []));
      ps.push(t.position);
      let s = this.surfaces.get(t.surface);
      if (!s) this.surfaces.set(t.surface, (s = new Set()));
      s.add(doc);
    }
    for (const [term, ps] of perTerm) this.list(term).push({ doc, freq: ps.length, positions: ps });
    if (d.host) for (const suffix of hostSuffixes(d.host)) this.list(SITE_TERM_PREFIX + suffix).push({ doc, freq: 1, positions: [] });
  }

  private list(term: string): Posting[] {
    let l = this.postingsByTerm.get(term);
    if (!l) this.postingsByTerm.set(term, (l = []));
    return l;
  }

  /** Marks the live document with this cid deleted; true when there was one. */
  deleteCid(cid: bigint): boolean {
    const doc = this.docForCid(cid);
    if (doc === undefined) return false;
    this.live[doc] = false;
    return true;
  }

  get maxDoc(): number { return this.docs.length; }
  get liveDocs(): number { return this.live.filter(Boolean).length; }
  isLive(doc: number): boolean { return this.live[doc] === true; }
  docFreq(term: string): number { return this.postingsByTerm.get(term)?.length ?? 0; }
  postings(term: string, options?: { positions?: boolean }): PostingsCursor | undefined {
    const l = this.postingsByTerm.get(term);
    return l ? new MemoryCursor(l, this.lengths, options?.positions === true) : undefined;
  }
  length(doc: number): number { return this.lengths[doc]!; }
  shortLengths(): Uint16Array { return shortLengths(this.lengths); }
  get liveLengthSum(): number { return this.lengths.reduce((s, l, d) => s + (this.live[d] ? l : 0), 0); }
  cid(doc: number): bigint { return this.docs[doc]!.cid; }
  docForCid(cid: bigint): number | undefined {
    for (let d = 0; d < this.docs.length; d++) if (this.live[d] && this.docs[d]!.cid === cid) return d;
    return undefined;
  }
  stored(doc: number): StoredDocument { return this.docs[doc]!; }
  head(doc: number): StoredHead {
    const { text: _text, ...head } = this.docs[doc]!;
    return head;
  }
  text(doc: number): string { return this.docs[doc]!.text; }
  surfaceForms(): Iterable<[string, number]> {
    const forms = [...this.surfaces.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return forms.map((f): [string, number] => [f, this.surfaces.get(f)!.size]);
  }
}
