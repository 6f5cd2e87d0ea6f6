// The import readers: BEIR/JSONL (malformed lines reported by number and skipped) and WARC 1.0/1.1
// (plain, whole-file gzip, gzip per record; response and resource records; HTML and text only).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { readJsonl, defaultCollection } from '../../src/corpora/jsonl.js';
import { readWarc } from '../../src/corpora/warc.js';
import type { ReadItem } from '../../src/corpora/ingest.js';

async function collect(it: AsyncIterable<ReadItem>): Promise<ReadItem[]> {
  const out: ReadItem[] = [];
  for await (const x of it) out.push(x);
  return out;
}

function withDir(fn: (dir: string) => Promise<void>) {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quarry-readers-'));
    try { await fn(dir); } finally { rmSync(dir, { recursive: true, force: true }); }
  };
}

test('JSONL: BEIR records, url records, malformed lines reported with their numbers', withDir(async (dir) => {
  const lines = [
    JSON.stringify({ _id: 'd1', title: 'Alpha', text: 'alpha text', metadata: {} }),
    '{not json',
    JSON.stringify({ title: 'No id', text: 'x' }),
    JSON.stringify({ _id: 'd2', title: 5, text: 'x' }),
    '',
    JSON.stringify({ url: 'HTTPS://Docs.Example.com:443/a#x', title: 'Web', text: 'web text' }),
    JSON.stringify({ url: 'ftp://example.com/', title: 'Bad', text: 'x' }),
    JSON.stringify({ _id: 7, text: 'First line is the title\nsecond' }),
    'x'.repeat(5000),
    JSON.stringify([1, 2]),
    JSON.stringify({ _id: 'last', title: 'Last', text: 'no trailing newline' }),
  ];
  const sub = join(dir, 'scifact');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(sub);
  const file = join(sub, 'corpus.jsonl');
  writeFileSync(file, lines.join('\n'));
  assert.equal(defaultCollection(file), 'scifact/corpus');
  const items = await collect(readJsonl(file, { maxLineBytes: 4096 }));
  const docs = items.filter((i) => i.ok).map((i) => (i as any).doc);
  const skips = items.filter((i) => !i.ok) as { where: string; reason: string }[];
  assert.deepEqual(docs.map((d) => d.key), [
    'id:scifact/corpus/d1', 'https://docs.example.com/a', 'id:scifact/corpus/7', 'id:scifact/corpus/last',
  ]);
  assert.equal(docs[1].host, 'docs.example.com');
  assert.equal(docs[1].url, 'https://docs.example.com/a');
  assert.equal(docs[2].title, 'First line is the title');
  assert.deepEqual(skips.map((s) => Number(s.where.split(':').pop())), [2, 3, 4, 7, 9, 10]);
  assert.match(skips[0]!.reason, /not valid JSON/);
  assert.match(skips[1]!.reason, /neither "url" nor "_id"/);
  assert.match(skips[2]!.reason, /title/);
  assert.match(skips[4]!.reason, /longer than 4096/);

  // Gzipped, with an explicit collection: same documents, other keys.
  const gz = join(dir, 'c.jsonl.gz');
  writeFileSync(gz, gzipSync(lines.join('\n') + '\n'));
  const gzDocs = (await collect(readJsonl(gz, { maxLineBytes: 4096, collection: 'mine' }))).filter((i) => i.ok);
  assert.equal(gzDocs.length, 4);
  assert.equal((gzDocs[0] as any).doc.key, 'id:mine/d1');
}));

/** One WARC record, as crawlers write it. */
export function warcRecord(type: string, headers: Record<string, string>, content: Buffer | string, version = '1.1'): Buffer {
  const body = Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8');
  const head = [`WARC/${version}`, `WARC-Type: ${type}`, 'WARC-Date: 2026-01-01T00:00:00Z',
    `WARC-Record-ID: <urn:uuid:${Math.random().toString(16).slice(2)}>`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), `Content-Length: ${body.length}`, '', ''].join('\r\n');
  return Buffer.concat([Buffer.from(head, 'latin1'), body, Buffer.from('\r\n\r\n')]);
}

export function httpResponse(status: string, headers: Record<string, string>, body: Buffer | string): Buffer {
  const b = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  const head = [`HTTP/1.1 ${status}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), '', ''].join('\r\n');
  return Buffer.concat([Buffer.from(head, 'latin1'), b]);
}

function sampleRecords(): Buffer[] {
  const http = { 'Content-Type': 'application/http; msgtype=response' };
  const chunked = '5\r\nHello\r\n7\r\n, world\r\n0\r\n\r\n';
  return [
    warcRecord('warcinfo', { 'Content-Type': 'application/warc-fields' }, 'software: test\r\n'),
    warcRecord('request', { 'WARC-Target-URI': 'https://example.com/', ...http }, 'GET / HTTP/1.1\r\n\r\n'),
    warcRecord('response', { 'WARC-Target-URI': 'https://Example.com:443/index.html#top', ...http },
      httpResponse('200 OK', { 'Content-Type': 'text/html; charset=utf-8' }, '<html><head><title>Home page</title></head><body><p>Welcome to example</p></body></html>'), '1.0'),
    warcRecord('response', { 'WARC-Target-URI': '<http://example.org/latin>', ...http },
      httpResponse('200 OK', { 'Content-Type': 'text/html; charset=iso-8859-1' }, Buffer.from('<title>Caf\xe9</title><p>cr\xe8me br\xfbl\xe9e</p>', 'latin1'))),
    warcRecord('response', { 'WARC-Target-URI': 'http://example.org/chunked', ...http },
      httpResponse('200 OK', { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' }, chunked)),
    warcRecord('response', { 'WARC-Target-URI': 'http://example.org/gz', ...http },
      httpResponse('200 OK', { 'Content-Type': 'text/html', 'Content-Encoding': 'gzip' }, gzipSync('<title>Zipped</title><p>compressed body</p>'))),
    warcRecord('response', { 'WARC-Target-URI': 'http://example.org/logo.png', ...http },
      httpResponse('200 OK', { 'Content-Type': 'image/png' }, Buffer.from([0x89, 0x50, 0x4e, 0x47]))),
    warcRecord('response', { 'WARC-Target-URI': 'http://example.org/missing', ...http },
      httpResponse('404 Not Found', { 'Content-Type': 'text/html' }, '<p>not here</p>')),
    warcRecord('resource', { 'WARC-Target-URI': 'https://example.net/page', 'Content-Type': 'text/html' }, '<title>Resource</title><p>stored as is</p>'),
    warcRecord('response', { 'WARC-Target-URI': 'http://bad host/', ...http }, httpResponse('200 OK', { 'Content-Type': 'text/html' }, '<p>x</p>')),
    warcRecord('resource', { 'WARC-Target-URI': 'metadata://gnu.org/software/wget/warc/wget.log', 'Content-Type': 'text/plain' }, 'a crawl log'),
    warcRecord('metadata', { 'WARC-Target-URI': 'https://example.com/', 'Content-Type': 'application/warc-fields' }, 'outlinks: x\r\n'),
  ];
}

function expectSample(items: ReadItem[]) {
  const docs = items.filter((i) => i.ok).map((i) => (i as any).doc);
  const skips = items.filter((i) => !i.ok) as { where: string; reason: string }[];
  assert.deepEqual(docs.map((d) => d.url), [
    'https://example.com/index.html', 'http://example.org/latin', 'http://example.org/chunked', 'http://example.org/gz', 'https://example.net/page',
  ]);
  assert.equal(docs[0].title, 'Home page');
  assert.equal(docs[0].host, 'example.com');
  assert.equal(docs[0].key, docs[0].url);
  assert.equal(docs[1].title, 'Café');
  assert.match(docs[1].text, /crème brûlée/);
  assert.equal(docs[2].text, 'Hello, world');
  assert.match(docs[3].text, /compressed body/);
  assert.equal(docs[4].title, 'Resource');
  assert.equal(skips.length, 1, 'only the bad URI is reported; 404s, images and other record types are not documents');
  assert.match(skips[0]!.where, /record 10/);
}

test('WARC: plain, whole-file gzip, and gzip per record read the same documents', withDir(async (dir) => {
  const records = sampleRecords();
  const plain = join(dir, 'a.warc');
  writeFileSync(plain, Buffer.concat(records));
  expectSample(await collect(readWarc(plain, { maxRecordBytes: 1 << 20 })));
  const whole = join(dir, 'b.warc.gz');
  writeFileSync(whole, gzipSync(Buffer.concat(records)));
  expectSample(await collect(readWarc(whole, { maxRecordBytes: 1 << 20 })));
  const perRecord = join(dir, 'c.warc.gz');
  const progress = { bytesRead: 0 };
  writeFileSync(perRecord, Buffer.concat(records.map((r) => gzipSync(r))));
  expectSample(await collect(readWarc(perRecord, { maxRecordBytes: 1 << 20, progress })));
  assert.ok(progress.bytesRead > 0);
}));

test('WARC: oversized records are skipped, broken framing and truncation stop with a report', withDir(async (dir) => {
  const http = { 'Content-Type': 'application/http; msgtype=response' };
  const big = warcRecord('response', { 'WARC-Target-URI': 'http://example.org/big', ...http },
    httpResponse('200 OK', { 'Content-Type': 'text/html' }, `<p>${'x'.repeat(5000)}</p>`));
  const ok = warcRecord('response', { 'WARC-Target-URI': 'http://example.org/ok', ...http },
    httpResponse('200 OK', { 'Content-Type': 'text/html' }, '<p>fine</p>'));
  const f1 = join(dir, 'big.warc');
  writeFileSync(f1, Buffer.concat([big, ok]));
  let items = await collect(readWarc(f1, { maxRecordBytes: 2048 }));
  assert.equal(items.length, 2);
  assert.match((items[0] as any).reason, /over the limit/);
  assert.equal((items[1] as any).doc.url, 'http://example.org/ok');

  const f2 = join(dir, 'garbage.warc');
  writeFileSync(f2, Buffer.concat([ok, Buffer.from('GARBAGE LINE\r\n\r\nmore'), ok]));
  items = await collect(readWarc(f2, { maxRecordBytes: 1 << 20 }));
  assert.equal(items.length, 2);
  assert.match((items[1] as any).reason, /expected a WARC\/1\.0 or WARC\/1\.1 record/);

  const f3 = join(dir, 'truncated.warc.gz');
  const gz = gzipSync(Buffer.concat([ok, ok]));
  writeFileSync(f3, gz.subarray(0, gz.length - 30));
  items = await collect(readWarc(f3, { maxRecordBytes: 1 << 20 }));
  assert.ok(items.length >= 1 && items.length <= 3);
  assert.equal(items.at(-1)!.ok, false, 'the truncation is reported');

  const f4 = join(dir, 'empty.warc');
  writeFileSync(f4, '');
  assert.deepEqual(await collect(readWarc(f4, { maxRecordBytes: 1024 })), []);
  const f5 = join(dir, 'nolength.warc');
  writeFileSync(f5, 'WARC/1.1\r\nWARC-Type: response\r\nContent-Length: lots\r\n\r\n');
  items = await collect(readWarc(f5, { maxRecordBytes: 1024 }));
  assert.match((items[0] as any).reason, /Content-Length/);
}));
