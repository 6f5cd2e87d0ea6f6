/**
 * An import file (JSONL or WARC) opened for streaming: gunzipped when it starts with the gzip magic
 * number (a `.gz` name is not trusted either way), with its raw bytes counted for progress bars.
 */
import { createReadStream, type ReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';

export interface ImportFileOptions {
  /** Incremented with the bytes read from the file (compressed bytes for gzip): for progress bars. */
  progress?: { bytesRead: number };
  highWaterMark?: number;
}

export interface ImportStream {
  /** The file's own stream: destroy it to stop reading (also when the consumer stops early). */
  raw: ReadStream;
  /** The content: `raw` itself, or its gunzipped form. */
  content: Readable;
}

/** Opens `file`; rejects when it cannot be read. */
export async function openImportFile(file: string, options: ImportFileOptions): Promise<ImportStream> {
  // Sniffed before the stream exists: a flowing stream would lose the chunks read meanwhile.
  const gz = await startsWithGzipMagic(file);
  const raw = createReadStream(file, options.highWaterMark === undefined ? {} : { highWaterMark: options.highWaterMark });
  const progress = options.progress;
  if (progress) raw.on('data', (c) => { progress.bytesRead += c.length; });
  if (!gz) return { raw, content: raw };
  const content = raw.pipe(createGunzip());
  raw.on('error', (e) => content.destroy(e));
  return { raw, content };
}

async function startsWithGzipMagic(file: string): Promise<boolean> {
  const fh = await open(file, 'r');
  try {
    const b = Buffer.alloc(2);
    const { bytesRead } = await fh.read(b, 0, 2, 0);
    return bytesRead === 2 && b[0] === 0x1f && b[1] === 0x8b;
  } finally {
    await fh.close();
  }
}
