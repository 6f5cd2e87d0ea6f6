/**
 * Document heads: title, url and host of every document of a segment, kept in memory. Every hit of a
 * result page shows them, so they must not cost a block decompression each (the text in `.sto` does,
 * and only snippets and `doc` need it). Stored in the `.idx` as one Brotli stream of records
 * `varint titleBytes · title · varint (urlBytes+1 | 0) · url · varint (hostBytes+1 | 0) · host`,
 * decompressed at open with an offset per document.
 */
import { constants as zc, brotliCompressSync, brotliDecompressSync } from 'node:zlib';
import { InternalError } from '../../kernel/errors.js';
import { ByteReader, ByteWriter, utf8Decoder } from './bytes.js';
import { writeOptional, writeString } from './store.js';

export interface DocumentHead {
  title: string;
  url?: string;
  host?: string;
}

export class HeadsWriter {
  private readonly raw = new ByteWriter(1 << 16);

  /** Empty, or holding the records another writer sealed (`seal`). */
  constructor(sealed?: Uint8Array<ArrayBuffer>) {
    if (sealed !== undefined) {
      this.raw.buf = sealed;
      this.raw.length = sealed.length;
    }
  }

  /** The records written, for another thread's writer; this one is not used after. */
  seal(): Uint8Array<ArrayBuffer> {
    return this.raw.view();
  }

  add(h: DocumentHead): void {
    writeString(this.raw, h.title);
    writeOptional(this.raw, h.url);
    writeOptional(this.raw, h.host);
  }
  /** Appends a record already encoded by another segment's heads (merges). */
  addEncoded(record: Uint8Array): void {
    this.raw.bytes(record);
  }
  /** The records as the `.idx` stores them; the writer is not used after. */
  finish(): CompressedHeads {
    const bytes = brotliCompressSync(this.raw.view(), {
      params: { [zc.BROTLI_PARAM_QUALITY]: 5, [zc.BROTLI_PARAM_LGWIN]: 24, [zc.BROTLI_PARAM_MODE]: zc.BROTLI_MODE_TEXT, [zc.BROTLI_PARAM_SIZE_HINT]: this.raw.length },
    });
    return { bytes, rawBytes: this.raw.length };
  }
}

/** A segment's heads as stored: one Brotli stream of the records, and its decompressed size. */
export interface CompressedHeads {
  bytes: Uint8Array;
  rawBytes: number;
}

export class HeadsReader {
  private readonly raw: Uint8Array;
  private readonly starts: Int32Array;

  constructor(compressed: Uint8Array, rawBytes: number, maxDoc: number, segment: string) {
    const raw = brotliDecompressSync(compressed);
    if (raw.length !== rawBytes) throw new InternalError(`Segment ${segment}: document heads decompress to ${raw.length} bytes, expected ${rawBytes}.`);
    this.raw = raw;
    const starts = new Int32Array(maxDoc + 1);
    const r = new ByteReader(raw);
    for (let d = 0; d < maxDoc; d++) {
      starts[d] = r.pos;
      const t = r.varint(); // (never `r.pos += r.varint()`: the left side is read before the call moves pos)
      r.pos += t;
      for (let f = 0; f < 2; f++) {
        const n = r.varint();
        if (n > 0) r.pos += n - 1;
      }
      if (r.pos > raw.length) throw new InternalError(`Segment ${segment}: document head ${d} runs past the end.`);
    }
    starts[maxDoc] = r.pos;
    if (r.pos !== raw.length) throw new InternalError(`Segment ${segment}: document heads hold more than ${maxDoc} records.`);
    this.starts = starts;
  }

  get(doc: number): DocumentHead {
    const r = new ByteReader(this.raw, this.starts[doc]!);
    const out: DocumentHead = { title: utf8Decoder.decode(r.bytes(r.varint())) };
    const u = r.varint();
    if (u > 0) out.url = utf8Decoder.decode(r.bytes(u - 1));
    const h = r.varint();
    if (h > 0) out.host = utf8Decoder.decode(r.bytes(h - 1));
    return out;
  }

  /** The encoded record of `doc`, for copying into a merged segment. */
  record(doc: number): Uint8Array {
    return this.raw.subarray(this.starts[doc]!, this.starts[doc + 1]!);
  }
}
