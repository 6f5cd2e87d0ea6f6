// GET /api/events end to end: the real TLS server on port 0, the real `eventsource` v4 client (over HTTP/2
// and HTTP/1.1), connections cut in the middle of the stream several times while a numbered sequence is
// published. The client must receive every event exactly once and in order; an id it cannot resume from
// gets `reset`; a client that never reads is dropped; shutdown is delivered before the stream closes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import https from 'node:https';
import { EventSource } from 'eventsource';
import { EventBus } from '../../src/events/bus.js';
import { eventRoutes } from '../../src/rest/events.js';
import { EventsService } from '../../src/events/service.js';
import { startInProcess, type InProcessServer } from '../support/in-process.js';
import { connect } from '../support/client.js';
import type { Policy } from '../../src/kernel/principal.js';
import { UnauthenticatedError } from '../../src/kernel/errors.js';
import { ManualTimers, parseStream, principalWith } from './support.js';
import { tlsFetch } from './tls-fetch.js';

/** Capabilities of this test: `reader` may read events (and target `sites`), `searcher` may only search. */
const policy: Policy = {
  resolve(headers) {
    const auth = headers['authorization'];
    if (auth === undefined) return principalWith(['search'], { kind: 'anonymous' });
    if (auth === 'Bearer reader') return principalWith(['search', 'events.read', 'mgmt.read'], { targets: ['sites'] });
    if (auth === 'Bearer searcher') return principalWith(['search']);
    throw new UnauthenticatedError();
  },
};
const READER = { authorization: 'Bearer reader' };

let ca: Buffer;
let bus: EventBus;
let srv: InProcessServer;
let base: string;
const timers = new ManualTimers();

before(async () => {
  bus = new EventBus({ epoch: '1700000000000' });
  bus.registerSnapshotPart('index', () => ({ own: { state: 'ready', docs: 0 } }));
  // A short `retry:` so the client reconnects at once; keep-alives fired by hand.
  srv = await startInProcess([eventRoutes(new EventsService(bus, { retryMs: 10, timers }))], { ratePerSecond: 0 }, { policy });
  ca = srv.ca;
  base = srv.url;
});

after(async () => {
  await srv.server.drain(1000);
});

const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 1));

for (const protocol of ['h2', 'h1'] as const) {
  test(`over ${protocol}: cut mid-stream five times, the client still gets every event exactly once, in order`, async () => {
    const client = tlsFetch({ ca, protocol, headers: READER });
    const es = new EventSource(`${base}/api/events`, { fetch: client.fetch });
    const received: number[] = [];
    const kinds: string[] = [];
    const TOTAL = 600;
    const CUTS = [70, 150, 260, 380, 470];
    let cuts = 0;
    const allIn = new Promise<void>((resolve) => {
      es.addEventListener('snapshot', () => kinds.push('snapshot'));
      es.addEventListener('reset', () => kinds.push('reset'));
      es.addEventListener('index.progress', (e) => {
        const n = (JSON.parse(e.data) as { n: number }).n;
        received.push(n);
        if (received.length === CUTS[cuts]) { cuts++; client.cut(); }
        if (n === TOTAL) resolve();
      });
    });
    await new Promise<void>((resolve) => es.addEventListener('open', () => resolve(), { once: true }));
    const first = bus.lastSeq;
    // Publish in small bursts with pauses, so cuts land mid-stream and some events arrive while the
    // client is away (they come back in the replay).
    for (let n = 1; n <= TOTAL; n++) {
      bus.publish('index.progress', { corpus: 'own', n, of: TOTAL });
      if (n % 5 === 0) await tick();
    }
    await allIn;
    es.close();
    client.close();
    assert.equal(cuts, CUTS.length, 'every planned cut happened');
    assert.deepEqual(received, Array.from({ length: TOTAL }, (_, i) => i + 1));
    assert.deepEqual(kinds, ['snapshot'], 'reconnects replay; only the first connection gets a snapshot');
    assert.ok(client.requests.length >= CUTS.length + 1);
    assert.equal(client.requests[0], null);
    for (const id of client.requests.slice(1)) {
      assert.match(id!, new RegExp(`^${bus.epoch}-\\d+$`));
      assert.ok(Number(id!.split('-')[1]) >= first);
    }
  });
}

test('an id from another epoch, or older than the buffer, opens with reset and a fresh snapshot', async () => {
  const client = tlsFetch({ ca, protocol: 'h2', headers: READER });
  for (const id of ['1600000000000-12', `${bus.epoch}-0`]) {
    if (id.endsWith('-0')) for (let i = 0; i < 10_001; i++) bus.publish('build.log', { line: i }); // push 0 out
    const es = new EventSource(`${base}/api/events?last_event_id=${id}`, { fetch: client.fetch });
    const reset = await new Promise<MessageEvent>((resolve) => es.addEventListener('reset', resolve, { once: true }));
    es.close();
    const data = JSON.parse(reset.data) as Record<string, unknown>;
    assert.equal(reset.lastEventId, bus.lastId);
    assert.equal(data.kind, 'reset');
    assert.equal(data.seq, bus.lastSeq);
    assert.equal(data.reason, id.endsWith('-0') ? 'expired' : 'other_epoch');
    assert.deepEqual(data.index, { own: { state: 'ready', docs: 0 } });
  }
  client.close();
});

test('events about targets are filtered to what the capability may read; keep-alives arrive', async () => {
  const client = tlsFetch({ ca, protocol: 'h1', headers: READER });
  const es = new EventSource(`${base}/api/events`, { fetch: client.fetch });
  const got: string[] = [];
  const done = new Promise<void>((resolve) => {
    for (const kind of ['deploy.started', 'deploy.succeeded']) {
      es.addEventListener(kind, (e) => {
        got.push(`${kind}:${(JSON.parse(e.data) as { target: string }).target}`);
        if (kind === 'deploy.succeeded') resolve();
      });
    }
  });
  await new Promise<void>((resolve) => es.addEventListener('open', () => resolve(), { once: true }));
  bus.publish('deploy.started', {}, 'email');
  bus.publish('deploy.started', {}, 'sites');
  bus.publish('deploy.succeeded', {}, 'email');
  bus.publish('deploy.succeeded', {}, 'sites');
  await done;
  es.close();
  client.close();
  assert.deepEqual(got, ['deploy.started:sites', 'deploy.succeeded:sites']);

  // Keep-alive comments, read raw (EventSource hides comments).
  const raw = await rawStream(protocol2(), READER);
  timers.tick();
  const text = await raw.readUntil(': keepalive\n\n');
  raw.close();
  assert.ok(parseStream(text).comments.includes('keepalive'));
});

test('401 without a capability, 403 with one that lacks events.read, as the OpenAPI document says', async () => {
  const api = connect(srv); // validates every response against GET /api/openapi.json
  const doc = await api.openapi();
  assert.ok(doc.paths['/api/events'].get.responses['200'].content['text/event-stream']);
  for (const [headers, status, code] of [[{}, 401, 'unauthenticated'], [{ authorization: 'Bearer searcher' }, 403, 'forbidden']] as const) {
    const res = await api.get('/api/events', { headers });
    assert.equal(res.status, status);
    assert.equal(res.json.v, 1);
    assert.equal(res.json.error.code, code);
  }
  api.close();
});

test('a client that never reads is dropped once its queue passes the bound, then catches up from its id', async () => {
  // Streams of earlier tests' clients: released when the server sees them go, or by the dead-peer rule
  // (a stream whose writes are refused across keep-alive ticks), driven here by hand.
  while (bus.subscriberCount > 0) { timers.tick(); await tick(); }
  const session = http2.connect(base, { ca });
  const stream = session.request({ ':path': '/api/events', ...READER });
  await new Promise((resolve) => stream.once('response', resolve));
  stream.pause(); // never read: HTTP/2 flow control stops the server's writes after one window
  assert.equal(bus.subscriberCount, 1);
  const line = 'x'.repeat(2048);
  let published = 0;
  while (bus.subscriberCount === 1 && published < 20_000) {
    for (let i = 0; i < 50; i++, published++) bus.publish('build.log', { line }, 'sites');
    await tick();
  }
  assert.equal(bus.subscriberCount, 0, 'the server let go of the client that does not read');
  // One flow-control window and the transport buffers, then at most 1,000 events or 1 MiB queued.
  assert.ok(published <= 2_000, `dropped after ${published} events`);
  const lastSeq = bus.lastSeq;

  // The client finds its stream ended early; it reads what reached it and resumes from the last id.
  let text = '';
  stream.setEncoding('utf8');
  stream.on('data', (c: string) => { text += c; });
  stream.on('error', () => {});
  stream.resume();
  await new Promise((resolve) => stream.once('close', resolve));
  session.destroy();
  const got = parseStream(text).events;
  const lastId = got.at(-1)!.id!;
  assert.ok(Number(lastId.split('-')[1]) < lastSeq, 'the client did not get everything before it was dropped');
  const raw = await rawStream('h2', { ...READER, 'last-event-id': lastId });
  const replay = parseStream(await raw.readUntil(`id: ${bus.epoch}-${lastSeq}\n`)).events;
  raw.close();
  const seqs = [...got, ...replay].filter((e) => e.event === 'build.log').map((e) => Number(e.id!.split('-')[1]));
  assert.deepEqual(seqs, Array.from({ length: published }, (_, i) => lastSeq - published + 1 + i));
});

test('on shutdown the client gets a shutdown event and the stream then ends cleanly', async () => {
  const raw = await rawStream('h1', READER);
  bus.publish('shutdown', { reason: 'test' });
  const drained = srv.server.drain(2000);
  const text = await raw.ended;
  await drained;
  const events = parseStream(text).events;
  assert.equal(events[0]!.event, 'snapshot');
  assert.equal(events.at(-1)!.event, 'shutdown');
});

// ---- raw HTTP helpers (responses that EventSource hides) ----

function protocol2(): 'h2' { return 'h2'; }

interface RawStream {
  readUntil(marker: string): Promise<string>;
  /** Resolves with everything received once the response ends cleanly (rejects on a reset). */
  ended: Promise<string>;
  close(): void;
}

async function rawStream(protocol: 'h1' | 'h2', headers: Record<string, string>): Promise<RawStream> {
  let text = '';
  let waiters: (() => void)[] = [];
  const onData = (c: Buffer | string): void => {
    text += c.toString();
    const w = waiters;
    waiters = [];
    for (const f of w) f();
  };
  let res: NodeJS.ReadableStream & { destroy(): void };
  let session: http2.ClientHttp2Session | undefined;
  if (protocol === 'h2') {
    session = http2.connect(base, { ca });
    const s = session.request({ ':path': '/api/events', ...headers });
    await new Promise((resolve) => s.once('response', resolve));
    res = s;
  } else {
    res = await new Promise((resolve, reject) => {
      const req = https.request(`${base}/api/events`, { ca, headers, agent: false, ALPNProtocols: ['http/1.1'] } as https.RequestOptions, resolve);
      req.on('error', reject);
      req.end();
    });
  }
  res.on('data', onData);
  const ended = new Promise<string>((resolve, reject) => {
    res.on('end', () => resolve(text));
    res.on('error', reject);
  });
  ended.catch(() => {});
  return {
    async readUntil(marker) {
      while (!text.includes(marker)) await new Promise<void>((r) => waiters.push(r));
      return text;
    },
    ended,
    close() { res.destroy(); session?.destroy(); },
  };
}
