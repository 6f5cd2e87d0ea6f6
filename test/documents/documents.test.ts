// The documents API against a real `quarry serve` process: a batch of 10,000 added, searchable and
// deleted; malformed lines reported by number while the rest commit; Idempotency-Key replays; rights;
// and `kill -9` right after a 2xx loses nothing of what the 2xx reported.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type TestClient } from '../support/client.js';
import { startServer, type TestServer } from '../support/server.js';
import { mintCap } from '../control/server-support.js';

const dirs: string[] = [];
after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'quarry-documents-'));
  dirs.push(d);
  return d;
}

const NDJSON = { 'content-type': 'application/x-ndjson' };
const bearer = (cap: string) => ({ authorization: `Bearer ${cap}` });

function ndjson(lines: unknown[]): string {
  return lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n';
}

async function total(api: TestClient, q: string, scope = 'web'): Promise<number> {
  const r = await api.get(`/api/search?q=${encodeURIComponent(q)}&scope=${scope}`);
  assert.equal(r.status, 200, r.text);
  return r.json.total as number;
}

test('a batch of 10,000 is added, searchable and deleted by site; malformed lines are reported by number, the rest committed', async (t) => {
  const srv = await startServer({ dataDir: dataDir() });
  const api = connect(srv);
  try {
    const cap = mintCap(srv.dataDir, 'index.write,search');
    const lines: unknown[] = [];
    for (let i = 0; i < 10_000; i++) lines.push({ url: `https://bulk.example.org/doc/${i}`, title: `Bulk ${i}`, text: `zircon sample number w${i} from the bulk batch` });
    // Malformed records at known lines (1-based): not JSON, no text, a URL that is not http(s), no id at all.
    lines.splice(4, 0, '{"title": "broken');
    lines.splice(99, 0, { title: 'no text', url: 'https://bulk.example.org/none' });
    lines.splice(1999, 0, { text: 'ftp', url: 'ftp://bulk.example.org/x' });
    lines.splice(9999, 0, { text: 'no id or url' });
    let began = Date.now();
    const r = await api.post('/api/documents?corpus=web', ndjson(lines), { headers: { ...NDJSON, ...bearer(cap) } });
    assert.equal(r.status, 200, r.text);
    t.diagnostic(`10,004 NDJSON lines (${ndjson(lines).length} bytes) answered after the commit in ${Date.now() - began} ms`);
    assert.equal(r.json.added, 10_000);
    assert.equal(r.json.skipped, 4);
    assert.deepEqual(r.json.errors.map((e: { line: number }) => e.line), [5, 100, 2000, 10_000]);
    assert.match(r.json.errors[1].reason, /text/);
    assert.equal(typeof r.json.generation, 'number');

    assert.equal(await total(api, 'zircon'), 10_000);
    assert.equal(await total(api, 'w7777'), 1);
    // Replacing a document by its URL: one document, the new text.
    const again = await api.post('/api/documents?corpus=web', [{ url: 'https://bulk.example.org/doc/7777', text: 'replaced with obsidian' }], { headers: bearer(cap) });
    assert.equal(again.status, 200, again.text);
    assert.equal(await total(api, 'w7777'), 0);
    assert.equal(await total(api, 'obsidian'), 1);

    // One document by cid, then the rest by site.
    const hit = (await api.get('/api/search?q=w42&scope=web')).json.results[0];
    const one = await api.request('DELETE', `/api/documents?corpus=web&cid=${hit.cid}`, undefined, { headers: bearer(cap) });
    assert.equal(one.status, 200, one.text);
    assert.equal(one.json.deleted, 1);
    assert.equal(await total(api, 'w42'), 0);
    const gone = await api.request('DELETE', `/api/documents?corpus=web&cid=${hit.cid}`, undefined, { headers: bearer(cap) });
    assert.equal(gone.status, 404);
    began = Date.now();
    const site = await api.request('DELETE', '/api/documents?corpus=web&site=bulk.example.org', undefined, { headers: bearer(cap) });
    assert.equal(site.status, 200, site.text);
    t.diagnostic(`9,999 documents deleted by site in ${Date.now() - began} ms`);
    assert.equal(site.json.deleted, 9_999);
    assert.equal(await total(api, 'zircon'), 0);
    assert.equal(await total(api, 'obsidian'), 0);
  } finally {
    api.close();
    await srv.stop();
  }
});

test('rights: anonymous → 401, a capability without index.write → 403, nothing written', async () => {
  const srv = await startServer({ dataDir: dataDir() });
  const api = connect(srv);
  try {
    const reader = mintCap(srv.dataDir, 'search,trusted.flag');
    const body = [{ url: 'https://rights.example.org/a', text: 'feldspar' }];
    assert.equal((await api.post('/api/documents?corpus=web', body)).status, 401);
    const r = await api.post('/api/documents?corpus=web', body, { headers: bearer(reader) });
    assert.equal(r.status, 403);
    assert.equal(r.json.error.code, 'forbidden');
    assert.equal((await api.request('DELETE', '/api/documents?corpus=web&site=rights.example.org', undefined, { headers: bearer(reader) })).status, 403);
    assert.equal(await total(api, 'feldspar'), 0);
    const writer = mintCap(srv.dataDir, 'index.write');
    // Bad input is a 4xx naming the parameter.
    const bad = await api.post('/api/documents?corpus=everything', body, { headers: bearer(writer) });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.param, 'corpus');
    const notArray = await api.post('/api/documents?corpus=web', { text: 'x' }, { headers: bearer(writer) });
    assert.equal(notArray.status, 400);
    const media = await api.post('/api/documents?corpus=web', 'text', { headers: { 'content-type': 'text/plain', ...bearer(writer) } });
    assert.equal(media.status, 415);
    const both = await api.request('DELETE', '/api/documents?corpus=web', undefined, { headers: bearer(writer) });
    assert.equal(both.status, 400);
  } finally {
    api.close();
    await srv.stop();
  }
});

test('Idempotency-Key replays the first answer instead of writing again', async () => {
  const srv = await startServer({ dataDir: dataDir() });
  const api = connect(srv);
  try {
    const cap = mintCap(srv.dataDir, 'index.write,search');
    const headers = { ...bearer(cap), 'idempotency-key': 'batch-1' };
    const first = await api.post('/api/documents?corpus=trusted', [{ _id: 'a', text: 'garnet one' }], { headers });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.headers['idempotent-replayed'], undefined);
    const second = await api.post('/api/documents?corpus=trusted', [{ _id: 'b', text: 'garnet two' }], { headers });
    assert.equal(second.status, 200);
    assert.equal(second.headers['idempotent-replayed'], 'true');
    assert.deepEqual(second.json, first.json);
    assert.equal(await total(api, 'garnet', 'trusted'), 1, 'the replayed request wrote nothing');
  } finally {
    api.close();
    await srv.stop();
  }
});

test('kill -9 right after a 2xx loses nothing the answer reported', async () => {
  const dir = dataDir();
  let srv: TestServer = await startServer({ dataDir: dir });
  let api = connect(srv);
  const cap = mintCap(dir, 'index.write,search');
  const batches = 3;
  for (let b = 0; b < batches; b++) {
    const docs = Array.from({ length: 400 }, (_, i) => ({ url: `https://kill.example.org/${b}/${i}`, text: `olivine batch${b} item${i}` }));
    const r = await api.post('/api/documents?corpus=web', docs, { headers: bearer(cap) });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.added, 400);
    srv.child.kill('SIGKILL');
    assert.equal((await srv.stop()).signal, 'SIGKILL');
    api.close();
    srv = await startServer({ dataDir: dir });
    api = connect(srv);
    assert.equal(await total(api, 'olivine'), 400 * (b + 1), `after the kill following batch ${b}`);
    assert.equal(await total(api, `batch${b}`), 400);
  }
  api.close();
  await srv.stop();
});
