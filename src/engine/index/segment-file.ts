/**
 * A segment file written as it is encoded. Encoders write into `out`; between records they call `drain`,
 * which writes the buffer to the file once it holds a chunk, carrying the footer's CRC along. A segment
 * of any size thus costs a chunk of memory (or its largest record), not its size: a merge's output is
 * hundreds of MB, and holding it whole set a build's peak memory.
 *
 * The bytes go to a temporary beside the final name (directory.ts discipline). `commit` makes the file
 * durable under its name; `abort` removes the temporary. A `Spill` is a scratch file for a section that
 * is produced beside another one but stored after it (positions, encoded with the postings).
 */
import { closeSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { DurableWriter, tempName } from '../../kernel/durable-file.js';
import { ByteWriter } from './bytes.js';
import { faultPoint } from './directory.js';
import { footerAfter } from './footer.js';

/** Bytes buffered before they are written out. */
const CHUNK = 1 << 20;

export class SegmentFile {
  /** Where encoders write; written out by `drain` once it holds a chunk. */
  readonly out = new ByteWriter(CHUNK + (CHUNK >>> 2));
  readonly #file: DurableWriter;
  #crc = 0;

  /** Starts `dir/name` (as a temporary until `commit`). */
  constructor(readonly dir: string, readonly name: string) {
    this.#file = new DurableWriter(join(dir, name), { syncDir: false, beforeSync: () => faultPoint('file-written') });
  }

  /** Offset in the file of the next byte written. */
  get position(): number {
    return this.#file.bytes + this.out.length;
  }

  /** Writes the buffer out if it holds a chunk or more. Call between records. */
  drain(): void {
    if (this.out.length >= CHUNK) this.#flush();
  }

  bytes(src: Uint8Array): void {
    if (src.length >= CHUNK) {
      this.#flush();
      this.#write(src);
    } else {
      this.out.bytes(src);
      this.drain();
    }
  }

  /** Pads with zeros to a multiple of `n` of the file offset (sections viewed in place as typed arrays). */
  align(n: number): void {
    while (this.position % n !== 0) this.out.byte(0);
  }

  /** Ends the file with its footer (magic, format version, CRC of everything before). */
  footer(magic: number): void {
    this.#flush();
    this.#file.write(footerAfter(this.#crc, magic));
  }

  /** fsyncs the file and renames it into place (the caller fsyncs the directory). */
  commit(): void {
    this.#flush();
    this.#file.commit();
  }

  abort(): void {
    this.#file.abort();
  }

  /** A scratch file beside this one. */
  spill(): Spill {
    return new Spill(join(this.dir, this.name));
  }

  #flush(): void {
    if (this.out.length === 0) return;
    this.#write(this.out.view());
    this.out.length = 0;
  }

  #write(b: Uint8Array): void {
    this.#crc = crc32(b, this.#crc);
    this.#file.write(b);
  }
}

/**
 * A section written to a scratch file while another is encoded, then copied after it. The file has a
 * temporary's name: a crash leaves garbage that the index's recovery removes.
 */
export class Spill {
  readonly out = new ByteWriter(CHUNK + (CHUNK >>> 2));
  readonly #path: string;
  #fd: number | undefined;
  #bytes = 0;

  constructor(beside: string) {
    this.#path = tempName(beside);
    this.#fd = openSync(this.#path, 'wx+', 0o600);
  }

  /** Bytes written so far, buffered included. */
  get length(): number {
    return this.#bytes + this.out.length;
  }

  drain(): void {
    if (this.out.length >= CHUNK) this.#flush();
  }

  /** Appends everything written to `to`, a chunk at a time. */
  copyTo(to: SegmentFile): void {
    this.#flush();
    const fd = this.#fd!;
    const chunk = Buffer.allocUnsafe(CHUNK);
    for (let at = 0; at < this.#bytes;) {
      const n = readSync(fd, chunk, 0, Math.min(CHUNK, this.#bytes - at), at);
      if (n === 0) throw new Error(`${this.#path}: ended at ${at} of ${this.#bytes} bytes.`);
      to.bytes(chunk.subarray(0, n));
      at += n;
    }
  }

  /** Closes and removes the file. Safe to call more than once. */
  dispose(): void {
    if (this.#fd !== undefined) {
      closeSync(this.#fd);
      this.#fd = undefined;
    }
    rmSync(this.#path, { force: true });
  }

  #flush(): void {
    if (this.out.length === 0) return;
    const v = this.out.view();
    for (let off = 0; off < v.length;) off += writeSync(this.#fd!, v, off, v.length - off, this.#bytes + off);
    this.#bytes += v.length;
    this.out.length = 0;
  }
}
