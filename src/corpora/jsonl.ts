/**
 * JSONL import (CONTRACT §3): one JSON object per line, `{title, text, url?, _id?}` as in BEIR
 * collections (`corpus.jsonl`), gzipped or not. The cid comes from `url` when present (its canonical
 * form, whose host becomes the document's host), else from `_id` within the file's collection. A
 * malformed line is reported with its line number and skipped; it never stops the rest of the file.
 *
 * Lines are split by hand rather than with `readline` so a line over `maxLineBytes` is skipped without
 * ever being held in memory whole.
 */
import { basename, dirname, resolve } from 'node:path';
import { canonicalUrl, hostOf, idKey } from './cid.js';
import type { IngestDoc, ReadItem } from './ingest.js';
import { MAX_TITLE_CHARS } from './extract.js';
import { openImportFile, type ImportStream } from './import-file.js';

export interface JsonlOptions {
  /** Names the collection for `_id` keys. Default: see `defaultCollection`. */
  collection?: string;
  /** A line longer than this is skipped. */
  maxLineBytes: number;
  /** Incremented with the bytes read from the file (compressed bytes for `.gz`): for progress bars. */
  progress?: { bytesRead: number };
}

/**
 * The collection of a file when none is given: `<parent dir>/<file name without .jsonl/.json/.gz>`, so
 * BEIR's `scifact/corpus.jsonl` and `cranfield/corpus.jsonl` are two collections, and re-importing a
 * file from the same place gives the same cids.
 */
export function defaultCollection(file: string): string {
  const abs = resolve(file);
  const name = basename(abs).replace(/\.gz$/i, '').replace(/\.(jsonl|ndjson|json)$/i, '');
  return `${basename(dirname(abs))}/${name}`;
}

/** Validates one parsed line; a string is the reason it is malformed. */
export function recordToDoc(value: unknown, collection: string): { doc: IngestDoc } | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object';
  const r = value as Record<string, unknown>;
  if (typeof r.text !== 'string') return 'field "text" is missing or not a string';
  if (r.title !== undefined && typeof r.title !== 'string') return 'field "title" is not a string';
  let key: string;
  let url: string | undefined;
  let host: string | undefined;
  if (r.url !== undefined && r.url !== null && r.url !== '') {
    if (typeof r.url !== 'string') return 'field "url" is not a string';
    try {
      url = canonicalUrl(r.url);
    } catch (err) {
      return (err as Error).message.replace(/\.$/, '');
    }
    host = hostOf(url);
    key = url;
  } else if (typeof r._id === 'string' && r._id !== '' || typeof r._id === 'number' && Number.isFinite(r._id)) {
    key = idKey(collection, String(r._id));
  } else {
    return 'neither "url" nor "_id" is given, so the record has no content id';
  }
  const text = r.text;
  let title = typeof r.title === 'string' ? r.title.trim() : '';
  if (title === '') title = text.trim().split('\n')[0]!.slice(0, 80).trim();
  if (title.length > MAX_TITLE_CHARS) title = title.slice(0, MAX_TITLE_CHARS - 1) + '…';
  const doc: IngestDoc = { key, title, text };
  if (url !== undefined) { doc.url = url; doc.host = host!; }
  return { doc };
}

/** Reads `file` line by line; yields documents and skips, each skip naming `file:line`. */
export async function* readJsonl(file: string, options: JsonlOptions): AsyncGenerator<ReadItem> {
  const collection = options.collection ?? defaultCollection(file);
  let opened: ImportStream;
  try {
    opened = await openImportFile(file, options);
  } catch (err) {
    yield { ok: false, where: file, reason: `the file cannot be read: ${(err as Error).message}` };
    return;
  }
  const { raw, content: stream } = opened;
  let lineNo = 0;
  let parts: Buffer[] = [];
  let partsLen = 0;
  let tooLong = false;
  const finishLine = (): ReadItem | undefined => {
    lineNo++;
    const where = `${file}:${lineNo}`;
    if (tooLong) {
      tooLong = false;
      return { ok: false, where, reason: `line is longer than ${options.maxLineBytes} bytes` };
    }
    const buf = parts.length === 1 ? parts[0]! : Buffer.concat(parts, partsLen);
    parts = [];
    partsLen = 0;
    const line = buf.toString('utf8').trim();
    if (line === '') return undefined; // blank lines (a trailing newline) are not records
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      return { ok: false, where, reason: `not valid JSON (${(err as Error).message})` };
    }
    const r = recordToDoc(value, collection);
    return typeof r === 'string' ? { ok: false, where, reason: r } : { ok: true, doc: r.doc };
  };
  try {
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        let start = 0;
        for (;;) {
          const nl = chunk.indexOf(10, start);
          const end = nl < 0 ? chunk.length : nl;
          if (!tooLong) {
            if (partsLen + (end - start) > options.maxLineBytes) { tooLong = true; parts = []; partsLen = 0; }
            else if (end > start) { parts.push(chunk.subarray(start, end)); partsLen += end - start; }
          }
          if (nl < 0) break;
          const item = finishLine();
          if (item) yield item;
          start = nl + 1;
        }
      }
    } catch (err) {
      yield { ok: false, where: `${file}:${lineNo + 1}`, reason: `the file cannot be read further: ${(err as Error).message}` };
      return;
    }
    if (partsLen > 0 || tooLong) {
      const item = finishLine();
      if (item) yield item;
    }
  } finally {
    raw.destroy(); // also when the consumer stops early
  }
}
