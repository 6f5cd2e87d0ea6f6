// Bad input never crashes or hangs an import: random bytes and corrupted WARC/JSONL files (truncated,
// bytes flipped, gzipped or not) are read to the end, yielding documents and reported skips only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { readWarc } from '../../src/corpora/warc.js';
import { readJsonl } from '../../src/corpora/jsonl.js';
import type { ReadItem } from '../../src/corpora/ingest.js';

function record(uri: string, html: string): Buffer {
  const http = Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n${html.length.toString(16)}\r\n${html}\r\n0\r\n\r\n`);
  return Buffer.concat([Buffer.from(`WARC/1.1\r\nWARC-Type: response\r\nWARC-Target-URI: ${uri}\r\nContent-Type: application/http; msgtype=response\r\nContent-Length: ${http.length}\r\n\r\n`), http, Buffer.from('\r\n\r\n')]);
}
const VALID_WARC = Buffer.concat([record('https://a.example/1', '<title>One</title><p>first</p>'), record('https://a.example/2', '<p>second</p>')]);
const VALID_JSONL = Buffer.from('{"_id":"1","title":"t","text":"x"}\n{"url":"https://b.example/","title":"u","text":"y"}\n');

async function drain(it: AsyncIterable<ReadItem>): Promise<ReadItem[]> {
  const out: ReadItem[] = [];
  for await (const x of it) {
    assert.ok(x.ok ? typeof x.doc.key === 'string' && typeof x.doc.text === 'string' : typeof x.reason === 'string');
    out.push(x);
  }
  return out;
}

test('corrupted WARC and JSONL files are read to the end without a throw', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-hostile-'));
  try {
    let n = 0;
    const mutation = fc.record({
      base: fc.constantFrom('warc', 'jsonl', 'random'),
      random: fc.uint8Array({ maxLength: 600 }),
      cut: fc.nat(),
      flips: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 6 }),
      gzip: fc.boolean(),
    });
    await fc.assert(fc.asyncProperty(mutation, async (m) => {
      let bytes = Buffer.from(m.base === 'warc' ? VALID_WARC : m.base === 'jsonl' ? VALID_JSONL : m.random);
      for (const [at, v] of m.flips) if (bytes.length) bytes[at % bytes.length] = v;
      if (m.gzip) bytes = gzipSync(bytes);
      if (m.cut % 3 === 0 && bytes.length) bytes = bytes.subarray(0, m.cut % bytes.length);
      const file = join(dir, `f${n++}`);
      writeFileSync(file, bytes);
      await drain(readWarc(file, { maxRecordBytes: 4096 }));
      await drain(readJsonl(file, { maxLineBytes: 4096 }));
    }), { numRuns: 300 });
    // The unmutated inputs give their documents.
    writeFileSync(join(dir, 'ok.warc'), VALID_WARC);
    assert.equal((await drain(readWarc(join(dir, 'ok.warc'), { maxRecordBytes: 4096 }))).filter((x) => x.ok).length, 2);
    // A Content-Length far beyond the file: reported as truncated, not waited for.
    writeFileSync(join(dir, 'long.warc'), 'WARC/1.0\r\nWARC-Type: response\r\nContent-Length: 999999999999\r\n\r\nshort');
    const items = await drain(readWarc(join(dir, 'long.warc'), { maxRecordBytes: 4096 }));
    assert.equal(items.length, 1);
    assert.equal(items[0]!.ok, false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
