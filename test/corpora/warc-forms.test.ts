// WARC as distributed crawlers write it: Common Crawl's WARC (a gzip member per record, request,
// response and metadata records, payloads cut at a size limit and marked WARC-Truncated, revisit records
// without payload) and its WET text (conversion records); Heritrix/StormCrawler's revisit and dns
// records. The reader keeps the documents and passes over the rest without a skip.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { readWarc } from '../../src/corpora/warc.js';
import type { ReadItem } from '../../src/corpora/ingest.js';

function record(type: string, uri: string, block: string | Buffer, extra: Record<string, string> = {}, contentType = 'application/http; msgtype=response'): Buffer {
  const b = typeof block === 'string' ? Buffer.from(block, 'latin1') : block;
  const head = [`WARC/1.0`, `WARC-Type: ${type}`, `WARC-Record-ID: <urn:uuid:${Math.random().toString(16).slice(2)}>`, `WARC-Date: 2024-05-01T12:00:00Z`,
    `WARC-Target-URI: ${uri}`, ...Object.entries(extra).map(([k, v]) => `${k}: ${v}`), `Content-Type: ${contentType}`, `Content-Length: ${b.length}`].join('\r\n');
  return gzipSync(Buffer.concat([Buffer.from(head + '\r\n\r\n', 'latin1'), b, Buffer.from('\r\n\r\n')]));
}

async function readAll(file: string): Promise<ReadItem[]> {
  const out: ReadItem[] = [];
  for await (const item of readWarc(file, { maxRecordBytes: 1 << 20 })) out.push(item);
  return out;
}

test('a Common Crawl / Heritrix style WARC: documents from responses, truncated payloads kept, revisits and the rest passed over', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-warc-forms-'));
  try {
    const words = Array.from({ length: 3000 }, (_, i) => ((i * 2654435761) >>> 0).toString(36));
    const page = `<html><head><title>Granite</title></head><body><p>Granite is an igneous rock. ${words.join(' ')}</p></body></html>`;
    const gz = gzipSync(Buffer.from(page));
    const cut = gz.subarray(0, Math.floor(gz.length / 2)); // the crawler's size limit cut the gzip stream
    const file = join(dir, 'CC-MAIN-20240501-00000.warc.gz');
    writeFileSync(file, Buffer.concat([
      record('warcinfo', '', 'software: Apache Nutch\r\nisPartOf: CC-MAIN-2024-18\r\n', {}, 'application/warc-fields'),
      record('dns', 'dns:example.org', '20240501120000\nexample.org. 300 IN A 93.184.216.34\n', {}, 'text/dns'),
      record('request', 'https://example.org/granite', 'GET /granite HTTP/1.1\r\nHost: example.org\r\n\r\n', {}, 'application/http; msgtype=request'),
      record('response', 'https://example.org/granite', Buffer.concat([Buffer.from('HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=UTF-8\r\nContent-Encoding: gzip\r\n\r\n'), cut]),
        { 'WARC-Truncated': 'length', 'WARC-Identified-Payload-Type': 'text/html' }),
      record('metadata', 'https://example.org/granite', 'fetchTimeMs: 120\r\n', {}, 'application/warc-fields'),
      record('revisit', 'https://example.org/granite-again', 'HTTP/1.1 304 Not Modified\r\n\r\n',
        { 'WARC-Profile': 'http://netpreserve.org/warc/1.0/revisit/server-not-modified', 'WARC-Refers-To-Target-URI': 'https://example.org/granite' }),
      record('revisit', 'https://example.org/basalt-copy', 'HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n',
        { 'WARC-Profile': 'http://netpreserve.org/warc/1.0/revisit/identical-payload-digest', 'WARC-Payload-Digest': 'sha1:AAAA' }),
      record('response', 'https://example.org/basalt', 'HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n2f\r\n<title>Basalt</title><p>Basalt is volcanic.</p>\r\n0\r\n\r\n'),
      record('response', 'https://example.org/gone', 'HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\n\r\n<title>gone</title>'),
    ]));
    const items = await readAll(file);
    assert.deepEqual(items.filter((i) => !i.ok), [], 'nothing reported as malformed');
    const docs = items.flatMap((i) => (i.ok ? [i.doc] : []));
    assert.deepEqual(docs.map((d) => d.url), ['https://example.org/granite', 'https://example.org/basalt']);
    assert.equal(docs[0]!.title, 'Granite');
    assert.match(docs[0]!.text, /igneous rock/);
    assert.equal(docs[1]!.text, 'Basalt is volcanic.');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a Common Crawl WET file: conversion records are plain-text documents', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-wet-'));
  try {
    const file = join(dir, 'CC-MAIN-20240501-00000.warc.wet.gz');
    writeFileSync(file, Buffer.concat([
      record('warcinfo', '', 'Software-Info: ia-web-commons\r\n', {}, 'application/warc-fields'),
      record('conversion', 'https://example.org/quartz', 'Quartz\nQuartz is a hard mineral made of silica.\n', { 'WARC-Refers-To': '<urn:uuid:1>' }, 'text/plain'),
      record('conversion', 'https://example.org/mica', 'Mica\nMica splits into thin sheets.\n', {}, 'text/plain'),
    ]));
    const docs = (await readAll(file)).flatMap((i) => (i.ok ? [i.doc] : []));
    assert.deepEqual(docs.map((d) => [d.url, d.title]), [['https://example.org/quartz', 'Quartz'], ['https://example.org/mica', 'Mica']]);
    assert.match(docs[0]!.text, /silica/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
