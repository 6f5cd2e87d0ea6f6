/**
 * A raw ustar writer for tests: it writes exactly the headers it is given, including the hostile ones
 * (`..`, absolute paths, links out of the tree, devices) that a well-behaved tar library refuses to make.
 */
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';

export interface RawEntry {
  path: string;
  /** ustar typeflag: '0' file, '1' hard link, '2' symlink, '3' char device, '5' directory, '6' FIFO. */
  type?: '0' | '1' | '2' | '3' | '4' | '5' | '6';
  linkpath?: string;
  body?: string | Buffer;
  mode?: number;
  /** The size the header declares, when it should differ from the body's (a lying header). */
  size?: number;
}

function octal(n: number, width: number): string { return n.toString(8).padStart(width - 1, '0') + '\0'; }

export function rawTar(entries: RawEntry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    const body = e.body === undefined ? Buffer.alloc(0) : Buffer.from(e.body);
    const h = Buffer.alloc(512);
    h.write(e.path, 0, 100, 'utf8');
    h.write(octal(e.mode ?? 0o644, 8), 100);
    h.write(octal(0, 8), 108);
    h.write(octal(0, 8), 116);
    h.write(octal(e.size ?? ((e.type ?? '0') === '0' ? body.length : 0), 12), 124);
    h.write(octal(0, 12), 136);
    h.write('        ', 148);
    h.write(e.type ?? '0', 156);
    if (e.linkpath) h.write(e.linkpath, 157, 100, 'utf8');
    h.write('ustar\0', 257);
    h.write('00', 263);
    let sum = 0;
    for (const b of h) sum += b;
    h.write(octal(sum, 7) + ' ', 148);
    blocks.push(h);
    if ((e.type ?? '0') === '0' && body.length) {
      blocks.push(body, Buffer.alloc((512 - (body.length % 512)) % 512));
    }
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

/**
 * A gzip bomb: one file entry whose header declares `declared` bytes, followed by `zeros` bytes of zeros,
 * as concatenated gzip members of 1 MiB each (a gunzip reads them as one stream), so a few KiB per MiB.
 */
export function gzipBomb(declared: number, zeros: number): Buffer {
  const header = rawTar([{ path: 'big.bin', size: declared }]).subarray(0, 512);
  const mib = gzipSync(Buffer.alloc(1024 * 1024), { level: 9 });
  const parts = [gzipSync(header)];
  for (let n = 0; n < zeros; n += 1024 * 1024) parts.push(mib);
  return Buffer.concat(parts);
}

export function sha256(buf: Buffer): string { return `sha256:${createHash('sha256').update(buf).digest('hex')}`; }

export async function* chunks(buf: Buffer, size = 4096): AsyncIterable<Buffer> {
  for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, i + size);
}
