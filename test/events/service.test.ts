// The event stream as the whole service wires it: `startService` (real TLS server, real auth with real
// capabilities, the corpora indexing a small own corpus, the control plane), read with the `eventsource`
// client. The events the corpora published during the first start come back in a replay from
// `<epoch>-0`; a snapshot shows the index state and only the targets the capability may read; closing
// the service delivers `shutdown` before the stream ends.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventSource } from 'eventsource';
import { createAuth, stateDbPath, type Right } from '../../src/auth/index.js';
import { startService, type RunningService } from '../../src/service.js';
import { openDb } from '../../src/store/db.js';
import { connect } from '../support/client.js';
import { tlsFetch } from './tls-fetch.js';

let dir: string;
let service: RunningService;
const caps: Record<string, string> = {};

function mint(dataDir: string, rights: Right[], targets?: string[]): string {
  const db = openDb(stateDbPath(dataDir));
  try {
    return createAuth({ db, dataDir }).capabilities.mint({ rights, targets, kind: 'mint' }).cap;
  } finally {
    db.close();
  }
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'quarry-events-service-'));
  const docs = join(dir, 'docs');
  mkdirSync(docs);
  for (const [name, text] of [['a.md', '# Alpha\n\nkeepalive frames'], ['b.md', '# Beta\n\nreplay buffer'], ['c.txt', 'gamma snapshot']]) {
    writeFileSync(join(docs, name), text!);
  }
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir);
  caps.reader = mint(dataDir, ['events.read', 'mgmt.read']);
  caps.sitesReader = mint(dataDir, ['events.read', 'mgmt.read'], ['sites']);
  caps.eventsOnly = mint(dataDir, ['events.read']);
  caps.searcher = mint(dataDir, ['search']);
  service = await startService({
    dataDir, port: 0, limits: { ratePerSecond: 0 }, log: { info() {}, error() {} },
    config: { corpora: { own: { docs, site: null, library: null } } },
  });
  await service.ready;
});

after(async () => {
  await service?.close();
  rmSync(dir, { recursive: true, force: true });
});

function open(cap: string, query = ''): { es: EventSource; close(): void } {
  const client = tlsFetch({ ca: service.tls.cert, protocol: 'h2', headers: { authorization: `Bearer ${cap}` } });
  const es = new EventSource(`${service.url}/api/events${query}`, { fetch: client.fetch });
  return { es, close() { es.close(); client.close(); } };
}

function next(es: EventSource, kind: string): Promise<Record<string, any>> {
  return new Promise((resolve) => es.addEventListener(kind, (e) => resolve(JSON.parse(e.data) as Record<string, any>), { once: true }));
}

test('real capabilities: 401 without one, 403 with one lacking events.read', async () => {
  const api = connect({ url: service.url, ca: service.tls.cert });
  try {
    assert.equal((await api.get('/api/events')).status, 401);
    const r = await api.get('/api/events', { headers: { authorization: `Bearer ${caps.searcher}` } });
    assert.equal(r.status, 403);
    assert.equal(r.json.error.code, 'forbidden');
  } finally {
    api.close();
  }
});

test('the first indexing of the own corpus is replayed from <epoch>-0: progress, then the commit', async () => {
  const s = open(caps.reader!, `?last_event_id=${service.bus.epoch}-0`);
  const progress = next(s.es, 'index.progress');
  const committed = new Promise<Record<string, any>>((resolve) => {
    s.es.addEventListener('index.committed', (e) => {
      const d = JSON.parse(e.data) as Record<string, any>;
      if (d.scope === 'own') resolve(d);
    });
  });
  const p = await progress;
  const c = await committed;
  s.close();
  assert.equal(p.scope, 'own');
  assert.ok(p.seq < c.seq, 'progress comes before the commit');
  assert.equal(c.docs, 3);
  assert.ok(c.generation >= 1);
});

test('a snapshot shows the index and only the targets the capability may read', async () => {
  const results: Record<string, Record<string, any>> = {};
  for (const who of ['reader', 'sitesReader', 'eventsOnly']) {
    const s = open(caps[who]!);
    results[who] = await next(s.es, 'snapshot');
    s.close();
  }
  const own = results.reader!.index.own;
  assert.equal(own.state, 'ready');
  assert.equal(own.docs, 3);
  assert.equal(results.reader!.targets.length, 41, 'an unscoped mgmt.read sees every target');
  assert.deepEqual(results.sitesReader!.targets.map((t: { target: string }) => t.target), ['sites']);
  assert.deepEqual(results.eventsOnly!.targets, []);
  assert.equal(results.eventsOnly!.index.own.docs, 3, 'index status is not about targets: everyone sees it');
});

test('closing the service sends shutdown, then ends the stream', async () => {
  const s = open(caps.reader!);
  await next(s.es, 'snapshot');
  const shutdown = next(s.es, 'shutdown');
  const closing = service.close();
  const data = await shutdown;
  s.close();
  await closing;
  assert.equal(data.kind, 'shutdown');
  assert.equal(typeof data.reason, 'string');
});
