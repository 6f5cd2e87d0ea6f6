/**
 * norm(dl) = A + Bn·dl of one segment's documents in one snapshot (rank/bm25.ts), computed per scored
 * posting from the document lengths held in 16 bits: the same float64 operations as `Bm25.norm`, so the
 * same bits as a table of norms, read from a quarter of its bytes. The scoring loops read a norm for
 * every posting they score, at scattered documents; the table of 8 bytes a document was their most
 * frequent cache miss (on the 292k-article Wikipedia extract, 800 1–3-word queries took 11% less time
 * with this, per query in one process alternating the two). The 16-bit lengths are the segment's
 * (`SegmentReader.shortLengths`), built once and shared by every snapshot; only A and Bn are a snapshot's.
 */
import type { Bm25 } from '../rank/bm25.js';
import { CLIPPED_LENGTH, type DocId, type SegmentReader } from '../index/types.js';

export class Norms {
  private readonly a: number;
  private readonly bn: number;
  private readonly lengths: Uint16Array;

  /** The norms of `seg`'s documents under `bm25`'s statistics. */
  constructor(private readonly seg: SegmentReader, bm25: Bm25) {
    this.a = bm25.a;
    this.bn = bm25.bn;
    this.lengths = seg.shortLengths();
  }

  /** norm(length(doc)). */
  at(doc: DocId): number {
    const l = this.lengths[doc]!;
    return this.a + this.bn * (l === CLIPPED_LENGTH ? this.seg.length(doc) : l);
  }

  /** norm(length): `at` of a document of that length, the same operations. */
  ofLength(length: number): number {
    return this.a + this.bn * length;
  }
}
