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

export class SegmentFile implements ByteSink {
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
    return new Spill(tempName(join(this.dir, this.name)));
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

/** Where bytes are appended as they are encoded: a segment file or a scratch file. */
export interface ByteSink {
  /** Where encoders write; written out by `drain`. */
  readonly out: ByteWriter;
  /** Offset of the next byte written. */
  readonly position: number;
  /** Writes the buffer out if it holds a chunk or more. Call between records. */
  drain(): void;
  bytes(src: Uint8Array): void;
}

/** Appends bytes `[at, at + length)` of the open file `fd` (named `path` in errors) to `to`, a chunk at a time. */
export function copyFileRange(fd: number, path: string, at: number, length: number, to: ByteSink): void {
  const chunk = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(1, length)));
  for (let done = 0; done < length;) {
    const n = readSync(fd, chunk, 0, Math.min(chunk.length, length - done), at + done);
    if (n === 0) throw new Error(`${path}: ended at ${at + done} of ${at + length} bytes.`);
    to.bytes(chunk.subarray(0, n));
    done += n;
  }
}

/**
 * A scratch file: a section written while another is encoded, then copied after it, or a part of a
 * segment a thread writes for the segment's writer to copy. It has a temporary's name (directory.ts
 * `tempName`): a crash leaves garbage that the index's recovery removes.
 */
export class Spill implements ByteSink {
  readonly out = new ByteWriter(CHUNK + (CHUNK >>> 2));
  #fd: number | undefined;
  #bytes = 0;

  /** Creates `path` (a temporary's name), which must not exist. */
  constructor(readonly path: string) {
    this.#fd = openSync(path, 'wx+', 0o600);
  }

  /** Bytes written so far, buffered included. */
  get position(): number {
    return this.#bytes + this.out.length;
  }

  drain(): void {
    if (this.out.length >= CHUNK) this.#flush();
  }

  bytes(src: Uint8Array): void {
    this.out.bytes(src);
    this.drain();
  }

  /** Appends everything written to `to`. */
  copyTo(to: ByteSink): void {
    this.#flush();
    copyFileRange(this.#fd!, this.path, 0, this.#bytes, to);
  }

  /** Writes out what is buffered and closes the file, which stays for a reader of its own. */
  close(): void {
    this.#flush();
    this.#close();
  }

  /** Closes and removes the file. Safe to call more than once. */
  dispose(): void {
    this.#close();
    rmSync(this.path, { force: true });
  }

  #close(): void {
    if (this.#fd !== undefined) {
      closeSync(this.#fd);
      this.#fd = undefined;
    }
  }

  #flush(): void {
    if (this.out.length === 0) return;
    const v = this.out.view();
    for (let off = 0; off < v.length;) off += writeSync(this.#fd!, v, off, v.length - off, this.#bytes + off);
    this.#bytes += v.length;
    this.out.length = 0;
  }
}
