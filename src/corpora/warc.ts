/**
 * WARC import (ISO 28500, WARC 1.0 and 1.1): reads `response` records (an HTTP response as captured by a
 * crawler: wget, Heritrix, StormCrawler, Common Crawl, warcio, Browsertrix, Quarry's own crawler, …),
 * `resource` records (the document itself) and `conversion` records (Common Crawl's WET text), keeps those
 * whose payload is HTML or plain text, and turns each into a document whose URL is the record's
 * `WARC-Target-URI`. Files may be plain, gzipped as a whole, or gzipped per record (the usual
 * `.warc.gz`: node's gunzip reads concatenated members as one stream). `revisit` records carry no payload
 * and are passed over; truncated payloads (`WARC-Truncated`) give the document of what was captured.
 *
 * A small reader of our own rather than a library: it streams (a record over `maxRecordBytes` is skipped
 * without being held in memory), bounds every header, and turns every malformation into a reported skip
 * or, when the framing itself is lost, a reported stop, never a crash or a hang.
 *
 * HTTP payloads: chunked transfer coding is undone, `Content-Encoding` gzip/deflate/br decoded (bounded),
 * the charset taken from the HTTP header, else a `<meta>` in the first KiB, else UTF-8. Only 2xx responses
 * are documents; redirects, errors, requests, metadata and the rest are skipped silently (they are not
 * malformed, just not documents).
 */
import { gunzipSync, inflateSync, inflateRawSync, brotliDecompressSync } from 'node:zlib';
import { canonicalUrl, hostOf } from './cid.js';
import { extractHtml, extractPlain } from './extract.js';
import type { IngestDoc, ReadItem } from './ingest.js';
import { openImportFile, type ImportStream } from './import-file.js';

export interface WarcOptions {
  /** A record whose content is longer than this is skipped (reported). */
  maxRecordBytes: number;
  /** Incremented with the bytes read from the file (compressed bytes when gzipped). */
  progress?: { bytesRead: number };
}

/** A WARC or HTTP header block longer than this means the framing is lost. */
export const MAX_HEADER_BYTES = 64 * 1024;

const CRLFCRLF = Buffer.from('\r\n\r\n');
const LFLF = Buffer.from('\n\n');

/** A pull reader over a stream of chunks: read up to a delimiter, read or skip a byte count. */
class ByteReader {
  #it: AsyncIterator<Buffer>;
  #buf: Buffer = Buffer.alloc(0);
  #done = false;
  /** Bytes consumed so far (position in the decompressed stream). */
  offset = 0;

  constructor(source: AsyncIterable<Buffer>) {
    this.#it = source[Symbol.asyncIterator]();
  }

  async #fill(): Promise<boolean> {
    if (this.#done) return false;
    const r = await this.#it.next();
    if (r.done) { this.#done = true; return false; }
    this.#buf = this.#buf.length === 0 ? r.value : Buffer.concat([this.#buf, r.value]);
    return true;
  }

  #take(n: number): Buffer {
    const out = this.#buf.subarray(0, n);
    this.#buf = this.#buf.subarray(n);
    this.offset += n;
    return out;
  }

  /** Skips CR and LF bytes (the blank lines between records). Returns false at the end of the stream. */
  async skipNewlines(): Promise<boolean> {
    for (;;) {
      let i = 0;
      while (i < this.#buf.length && (this.#buf[i] === 13 || this.#buf[i] === 10)) i++;
      this.#take(i);
      if (this.#buf.length > 0) return true;
      if (!(await this.#fill())) return false;
    }
  }

  /**
   * Reads through the first blank line (CRLF CRLF, or LF LF from sloppy writers) and returns the block
   * before it; undefined when the stream ends first or the block exceeds `max`.
   */
  async readHeaderBlock(max: number): Promise<Buffer | undefined> {
    let from = 0;
    for (;;) {
      const a = this.#buf.indexOf(CRLFCRLF, from);
      const b = this.#buf.indexOf(LFLF, from);
      const end = a < 0 ? b : b < 0 ? a : Math.min(a, b);
      if (end >= 0) {
        const sep = end === a ? 4 : 2;
        const block = Buffer.from(this.#take(end));
        this.#take(sep);
        return block;
      }
      if (this.#buf.length > max) return undefined;
      from = Math.max(0, this.#buf.length - 3);
      if (!(await this.#fill())) return undefined;
    }
  }

  /** Reads exactly `n` bytes; undefined when the stream ends first. Linear in `n` (no re-concatenation). */
  async read(n: number): Promise<Buffer | undefined> {
    if (this.#buf.length >= n) return Buffer.from(this.#take(n));
    const parts: Buffer[] = [this.#take(this.#buf.length)];
    let have = parts[0]!.length;
    while (have < n) {
      const r = await this.#it.next();
      if (r.done) { this.#done = true; return undefined; }
      const need = n - have;
      if (r.value.length <= need) { parts.push(r.value); have += r.value.length; this.offset += r.value.length; }
      else { parts.push(r.value.subarray(0, need)); this.#buf = r.value.subarray(need); have = n; this.offset += need; }
    }
    return Buffer.concat(parts, n);
  }

  /** Skips exactly `n` bytes without keeping them; false when the stream ends first. */
  async skip(n: number): Promise<boolean> {
    let left = n;
    for (;;) {
      const k = Math.min(left, this.#buf.length);
      this.#take(k);
      left -= k;
      if (left === 0) return true;
      if (!(await this.#fill())) return false;
    }
  }
}

/** Header lines → a map with lower-cased names (the first occurrence wins; folded lines joined). */
export function parseHeaderLines(lines: string[]): Map<string, string> {
  const h = new Map<string, string>();
  let last: string | undefined;
  for (const line of lines) {
    if ((line.startsWith(' ') || line.startsWith('\t')) && last !== undefined) {
      h.set(last, `${h.get(last)} ${line.trim()}`);
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (h.has(name)) { last = undefined; continue; }
    h.set(name, line.slice(colon + 1).trim());
    last = name;
  }
  return h;
}

/** Undoes chunked transfer coding; undefined when the framing is broken. */
export function dechunk(body: Buffer): Buffer | undefined {
  const out: Buffer[] = [];
  let i = 0;
  for (;;) {
    const eol = body.indexOf('\r\n', i);
    if (eol < 0) return out.length ? Buffer.concat(out) : undefined; // a truncated capture: keep what came
    const size = parseInt(body.subarray(i, eol).toString('latin1').split(';')[0]!.trim(), 16);
    if (!Number.isFinite(size) || size < 0) return undefined;
    if (size === 0) return Buffer.concat(out);
    const start = eol + 2;
    out.push(body.subarray(start, Math.min(start + size, body.length)));
    i = start + size + 2;
    if (i >= body.length) return Buffer.concat(out);
  }
}

function decodeContent(body: Buffer, encoding: string | undefined, max: number): Buffer | undefined {
  const e = (encoding ?? '').toLowerCase().trim();
  try {
    if (e === '' || e === 'identity') return body;
    if (e === 'gzip' || e === 'x-gzip') return gunzipSync(body, { maxOutputLength: max, finishFlush: 2 /* Z_SYNC_FLUSH: tolerate truncation */ });
    if (e === 'deflate') {
      try { return inflateSync(body, { maxOutputLength: max }); } catch { return inflateRawSync(body, { maxOutputLength: max }); }
    }
    if (e === 'br') return brotliDecompressSync(body, { maxOutputLength: max });
  } catch {
    return undefined;
  }
  return undefined; // an encoding we do not know
}

/** The charset named in a Content-Type value, if any. */
function charsetOf(contentType: string | undefined): string | undefined {
  const m = /charset\s*=\s*["']?([^"';\s]+)/i.exec(contentType ?? '');
  return m?.[1];
}

/** Decodes bytes in `charset` (any WHATWG label), falling back to UTF-8 for unknown labels. */
export function decodeText(bytes: Buffer, charset: string | undefined): string {
  if (charset) {
    try { return new TextDecoder(charset).decode(bytes); } catch { /* unknown label */ }
  }
  return new TextDecoder('utf-8').decode(bytes);
}

type PayloadKind = 'html' | 'text';

function kindOf(contentType: string | undefined, body: Buffer): PayloadKind | undefined {
  const mime = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (mime === 'text/html' || mime === 'application/xhtml+xml') return 'html';
  if (mime === 'text/plain') return 'text';
  if (mime === '') {
    const head = body.subarray(0, 512).toString('latin1').trimStart().toLowerCase();
    if (head.startsWith('<!doctype html') || head.startsWith('<html') || head.startsWith('<head') || head.startsWith('<body')) return 'html';
  }
  return undefined;
}

/** The document of one captured payload, or a skip reason; `null` for a payload that is not a document. */
export function payloadToDoc(
  targetUri: string,
  contentType: string | undefined,
  body: Buffer,
): IngestDoc | string | null {
  const kind = kindOf(contentType, body);
  if (!kind) return null;
  const uri = targetUri.replace(/^<(.*)>$/, '$1').trim();
  // dns:, metadata: (wget's log), urn: and the like are not pages: not documents, and not malformed.
  if (!/^https?:/i.test(uri)) return null;
  let url: string;
  try {
    url = canonicalUrl(uri);
  } catch (err) {
    return (err as Error).message.replace(/\.$/, '');
  }
  let charset = charsetOf(contentType);
  if (!charset && kind === 'html') {
    const head = body.subarray(0, 1024).toString('latin1');
    charset = /<meta[^>]+charset\s*=\s*["']?([^"'\s/>;]+)/i.exec(head)?.[1];
  }
  const source = decodeText(body, charset);
  const fallback = url;
  const { title, text } = kind === 'html' ? extractHtml(source, fallback) : extractPlain(source, fallback);
  if (text.trim() === '' && title === fallback) return 'no text';
  return { title, text, url, host: hostOf(url), key: url };
}

/**
 * Record types that can hold a document: `response` (an HTTP response), `resource` (the document itself)
 * and `conversion` (a derived form: the plain text of Common Crawl's WET files). `revisit` records carry
 * no payload (the original capture holds the document), and requests, metadata, warcinfo are not pages.
 */
const DOCUMENT_RECORD_TYPES = new Set(['response', 'resource', 'conversion']);

/**
 * The document of one WARC record, given its header map (lower-cased names) and its whole content block;
 * a skip for a malformed one; null for a record that is not a document (another type, a non-2xx
 * response, a payload that is not HTML or text). A record marked `WARC-Truncated` (Common Crawl cuts
 * payloads at 1 MiB, crawlers at their size or time limits) gives the document of what was captured.
 */
export function recordToItem(h: Map<string, string>, content: Buffer, where: string, maxRecordBytes: number): ReadItem | null {
  const type = (h.get('warc-type') ?? '').toLowerCase();
  if (!DOCUMENT_RECORD_TYPES.has(type)) return null;
  const target = h.get('warc-target-uri');
  if (!target) return { ok: false, where, reason: 'no WARC-Target-URI' };
  let contentType: string | undefined;
  let body: Buffer;
  if (type !== 'response') {
    contentType = h.get('content-type');
    body = content;
  } else {
    const ct = (h.get('content-type') ?? '').toLowerCase();
    if (ct !== '' && !ct.startsWith('application/http')) return null; // a response that is not HTTP (dns:, …)
    const split = content.indexOf(CRLFCRLF);
    const splitLf = split < 0 ? content.indexOf(LFLF) : -1;
    if (split < 0 && splitLf < 0) return { ok: false, where, reason: 'the HTTP response has no end of headers' };
    const headEnd = split >= 0 ? split : splitLf;
    const httpLines = content.subarray(0, headEnd).toString('latin1').split(/\r?\n/);
    const status = /^HTTP\/\d(?:\.\d)?\s+(\d{3})/.exec(httpLines[0] ?? '');
    if (!status) return { ok: false, where, reason: `not an HTTP response: ${JSON.stringify((httpLines[0] ?? '').slice(0, 40))}` };
    const code = Number(status[1]);
    if (code < 200 || code > 299) return null;
    const hh = parseHeaderLines(httpLines.slice(1));
    contentType = hh.get('content-type');
    let payload: Buffer | undefined = content.subarray(headEnd + (split >= 0 ? 4 : 2));
    if ((hh.get('transfer-encoding') ?? '').toLowerCase().includes('chunked')) payload = dechunk(payload);
    if (payload) payload = decodeContent(payload, hh.get('content-encoding'), maxRecordBytes);
    if (!payload) return { ok: false, where, reason: 'the HTTP payload cannot be decoded' };
    body = payload;
  }
  const d = payloadToDoc(target, contentType, body);
  if (d === null) return null;
  if (typeof d === 'string') return { ok: false, where, reason: d };
  return { ok: true, doc: d };
}

/** Reads every record of `file`; yields documents and reported skips. */
export async function* readWarc(file: string, options: WarcOptions): AsyncGenerator<ReadItem> {
  let opened: ImportStream;
  try {
    opened = await openImportFile(file, { ...options, highWaterMark: 256 * 1024 });
  } catch (err) {
    yield { ok: false, where: file, reason: `the file cannot be read: ${(err as Error).message}` };
    return;
  }
  const { raw, content: stream } = opened;
  const r = new ByteReader(stream as AsyncIterable<Buffer>);
  let recordNo = 0;
  try {
    for (;;) {
      if (!(await r.skipNewlines())) return;
      recordNo++;
      const at = r.offset;
      const where = `${file} record ${recordNo} (offset ${at})`;
      const block = await r.readHeaderBlock(MAX_HEADER_BYTES);
      if (!block) {
        yield { ok: false, where, reason: 'the record header is truncated or too long; the rest of the file is not read' };
        return;
      }
      const lines = block.toString('utf8').split(/\r?\n/);
      const version = lines[0]!.trim();
      if (!/^WARC\/1\.[01]$/.test(version)) {
        yield { ok: false, where, reason: `expected a WARC/1.0 or WARC/1.1 record, found ${JSON.stringify(version.slice(0, 40))}; the rest of the file is not read` };
        return;
      }
      const h = parseHeaderLines(lines.slice(1));
      const lengthText = h.get('content-length') ?? '';
      const length = /^\d{1,15}$/.test(lengthText) ? Number(lengthText) : NaN;
      if (!Number.isSafeInteger(length)) {
        yield { ok: false, where, reason: `Content-Length ${JSON.stringify(lengthText)} is not a byte count; the rest of the file is not read` };
        return;
      }
      const type = (h.get('warc-type') ?? '').toLowerCase();
      const wanted = DOCUMENT_RECORD_TYPES.has(type);
      if (!wanted || length > options.maxRecordBytes) {
        if (!(await r.skip(length))) { yield { ok: false, where, reason: 'the record is truncated' }; return; }
        if (wanted) yield { ok: false, where, reason: `record of ${length} bytes is over the limit of ${options.maxRecordBytes}` };
        continue;
      }
      const content = await r.read(length);
      if (!content) { yield { ok: false, where, reason: 'the record is truncated' }; return; }
      const item = recordToItem(h, content, where, options.maxRecordBytes);
      if (item) yield item;
    }
  } catch (err) {
    yield { ok: false, where: `${file} record ${recordNo + 1}`, reason: `the file cannot be read further: ${(err as Error).message}` };
  } finally {
    raw.destroy();
  }
}
