/**
 * WARC 1.1 output (ISO 28500:2017): every fetch becomes a `request`, a `response` (or a `revisit` for a
 * 304) and a `metadata` record, each its own gzip member, so any record can be read alone from its
 * offset (how the crawler's recovery re-reads a response, and how CDX indexes address them). Files are
 * `<dir>/quarry-<UTC time to the ms>-<pid>-<n>.warc.gz`, each opened with a `warcinfo` record, rotated past a
 * size. `sync()` makes everything appended so far durable; the crawler calls it before it records a
 * fetch as done, so a recorded fetch always has its records on disk.
 */
import { closeSync, fsync, fsyncSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { createHash, randomUUID } from 'node:crypto';
import { basename, join } from 'node:path';
import { gzipSync, constants as zc } from 'node:zlib';

export interface WarcRecordInput {
  type: 'warcinfo' | 'request' | 'response' | 'revisit' | 'metadata';
  targetUri?: string;
  date: Date;
  contentType: string;
  block: Buffer;
  /** Extra WARC headers (WARC-IP-Address, WARC-Concurrent-To, WARC-Truncated, WARC-Profile, …). */
  headers?: Record<string, string>;
  /** The payload (the body after the HTTP head) for WARC-Payload-Digest, when the block has one. */
  payload?: Buffer;
  /** A record id to use (so other records can refer to it before it is written). */
  id?: string;
}

/** Where a record went: enough to read it back alone. */
export interface WarcLocation { file: string; offset: number; length: number }

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** `sha1:<base32>`, the digest form most WARC tools write and check. */
export function sha1Digest(data: Buffer): string {
  const d = createHash('sha1').update(data).digest();
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of d) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) { out += BASE32[(value >>> (bits - 5)) & 31]; bits -= 5; }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return `sha1:${out}`;
}

export function newRecordId(): string {
  return `<urn:uuid:${randomUUID()}>`;
}

/** One record's bytes (uncompressed). */
export function serializeRecord(r: WarcRecordInput): Buffer {
  const lines = [
    'WARC/1.1',
    `WARC-Type: ${r.type}`,
    `WARC-Record-ID: ${r.id ?? newRecordId()}`,
    `WARC-Date: ${r.date.toISOString()}`,
  ];
  if (r.targetUri !== undefined) lines.push(`WARC-Target-URI: ${r.targetUri}`);
  for (const [k, v] of Object.entries(r.headers ?? {})) lines.push(`${k}: ${v.replace(/[\r\n]+/g, ' ')}`);
  lines.push(`WARC-Block-Digest: ${sha1Digest(r.block)}`);
  if (r.payload !== undefined) lines.push(`WARC-Payload-Digest: ${sha1Digest(r.payload)}`);
  lines.push(`Content-Type: ${r.contentType}`, `Content-Length: ${r.block.length}`);
  return Buffer.concat([Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'utf8'), r.block, Buffer.from('\r\n\r\n')]);
}

/** Numbers the files of this process (with the pid and the time, a name no other writer uses). */
let fileCounter = 0;

export class WarcWriter {
  readonly #dir: string;
  readonly #maxBytes: number;
  readonly #software: string;
  #fd: number | undefined;
  #file = '';
  #size = 0;
  #dirty = false;

  constructor(dir: string, options: { maxBytes: number; software: string }) {
    this.#dir = dir;
    this.#maxBytes = options.maxBytes;
    this.#software = options.software;
    mkdirSync(dir, { recursive: true });
  }

  #open(): void {
    const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\.(\d+)Z$/, '$1Z');
    // Never an existing file: another writer of this process (a later run) may have begun one this millisecond.
    for (;;) {
      this.#file = join(this.#dir, `quarry-${stamp}-${process.pid}-${fileCounter++}.warc.gz`);
      try { this.#fd = openSync(this.#file, 'wx', 0o644); break; } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
    this.#size = 0;
    const info = `software: ${this.#software}\r\nformat: WARC File Format 1.1\r\nconformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n`;
    this.#write({ type: 'warcinfo', date: new Date(), contentType: 'application/warc-fields', block: Buffer.from(info), headers: { 'WARC-Filename': basename(this.#file) } });
  }

  #write(r: WarcRecordInput): WarcLocation {
    const member = gzipSync(serializeRecord(r), { level: zc.Z_BEST_SPEED });
    const offset = this.#size;
    writeSync(this.#fd!, member);
    this.#size += member.length;
    this.#dirty = true;
    return { file: this.#file, offset, length: member.length };
  }

  /** Appends records (one gzip member each, all in one file); their locations, in order. */
  append(records: WarcRecordInput[]): WarcLocation[] {
    if (this.#fd === undefined || this.#size >= this.#maxBytes) {
      // Rotation waits for the old file's fsync: a pending syncAsync of it may not have finished.
      if (this.#fd !== undefined) { fsyncSync(this.#fd); closeSync(this.#fd); }
      this.#open();
    }
    return records.map((r) => this.#write(r));
  }

  /** Makes every record appended so far durable. */
  sync(): void {
    if (this.#fd !== undefined && this.#dirty) { fsyncSync(this.#fd); this.#dirty = false; }
  }

  /** `sync` on the thread pool: the event loop keeps serving while the disk catches up. */
  syncAsync(): Promise<void> {
    if (this.#fd === undefined || !this.#dirty) return Promise.resolve();
    const fd = this.#fd;
    this.#dirty = false;
    return new Promise((resolve, reject) => fsync(fd, (err) => {
      if (err) { this.#dirty = true; reject(err); } else resolve();
    }));
  }

  close(): void {
    if (this.#fd === undefined) return;
    this.sync();
    closeSync(this.#fd);
    this.#fd = undefined;
  }
}
