// The event stream at handler level: a real EventBus, the real `GET /api/events` handler, and a recording
// sink in place of the socket. Covers how a stream opens (snapshot, replay, reset), the ids that make
// reconnects lossless, filtering by target, keep-alives, the slow-client bound, shutdown and rights.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventBus } from '../../src/events/bus.js';
import { eventRoutes } from '../../src/rest/events.js';
import { EventsService } from '../../src/events/service.js';
import { runEventStream, type StreamEnd } from '../../src/events/stream.js';
import type { RequestContext, StreamReply } from '../../src/http/route.js';
import type { Principal } from '../../src/kernel/principal.js';
import { QuarryError } from '../../src/kernel/errors.js';
import { ManualTimers, parseStream, principalWith, RecordingSink } from './support.js';

const reader = principalWith(['events.read', 'mgmt.read']);

function context(principal: Principal, init: { headers?: Record<string, string>; query?: string; signal?: AbortSignal } = {}): RequestContext {
  return {
    method: 'GET',
    path: '/api/events',
    query: new URLSearchParams(init.query ?? ''),
    headers: init.headers ?? {},
    params: {},
    remoteAddress: '127.0.0.1',
    principal,
    chargeRate: () => { /* no limit in this unit test */ },
    signal: init.signal ?? new AbortController().signal,
    body: async () => Buffer.alloc(0),
    json: async () => ({}),
    bodyStream: async function* () { /* no body */ },
  };
}

/** Calls the real handler and starts its stream on a recording sink. */
async function open(bus: EventBus, init: Parameters<typeof context>[1] & { principal?: Principal; timers?: ManualTimers; keepaliveMs?: number } = {}) {
  const controller = new AbortController();
  const group = eventRoutes(new EventsService(bus, { timers: init.timers ?? new ManualTimers(), keepaliveMs: init.keepaliveMs, retryMs: 3000 }));
  const route = group.routes[0]!;
  const reply = (await route.handler(context(init.principal ?? reader, { ...init, signal: controller.signal }))) as StreamReply;
  const sink = new RecordingSink();
  const done = reply.stream(sink);
  return { reply, sink, done, abort: () => controller.abort() };
}

function dataOf(e: { data: string }): Record<string, unknown> {
  return JSON.parse(e.data) as Record<string, unknown>;
}

test('a fresh connection opens with retry and a snapshot that carries the current position', async () => {
  const bus = new EventBus({ epoch: '7' });
  bus.registerSnapshotPart('index', () => ({ own: { docs: 3 } }));
  bus.publish('index.progress', { corpus: 'own', done: 1 });
  bus.publish('index.progress', { corpus: 'own', done: 2 });
  const s = await open(bus);
  assert.equal(s.reply.contentType.split(';')[0], 'text/event-stream');
  bus.publish('index.committed', { corpus: 'own', docs: 3 });
  const parsed = parseStream(s.sink.text);
  assert.deepEqual(parsed.retries, [3000]);
  assert.ok(s.sink.chunks[0]!.startsWith('retry: 3000\n'), 'the first frame carries retry');
  assert.deepEqual(parsed.events.map((e) => [e.event, e.id]), [['snapshot', '7-2'], ['index.committed', '7-3']]);
  const snap = dataOf(parsed.events[0]!);
  assert.equal(snap.v, 1);
  assert.equal(snap.seq, 2);
  assert.equal(snap.kind, 'snapshot');
  assert.equal(typeof snap.ts, 'string');
  assert.deepEqual(snap.index, { own: { docs: 3 } });
  assert.deepEqual(dataOf(parsed.events[1]!), { ...bus.replaySince('7-2')![0]!.data });
  s.abort();
  assert.equal(await s.done, undefined);
  assert.equal(bus.subscriberCount, 0, 'the stream unsubscribed');
});

test('before any event the snapshot id is <epoch>-0, and resuming from it replays everything', async () => {
  const bus = new EventBus({ epoch: '9' });
  const s = await open(bus);
  assert.equal(parseStream(s.sink.text).events[0]!.id, '9-0');
  s.abort();
  bus.publish('crawl.progress', { fetched: 1 });
  const r = await open(bus, { headers: { 'last-event-id': '9-0' } });
  assert.deepEqual(parseStream(r.sink.text).events.map((e) => e.id), ['9-1']);
  r.abort();
});

test('Last-Event-ID replays exactly the events after it; the header wins over ?last_event_id=', async () => {
  const bus = new EventBus({ epoch: '5' });
  for (let i = 1; i <= 6; i++) bus.publish('build.log', { line: `l${i}` }, 'sites');
  const byHeader = await open(bus, { headers: { 'last-event-id': '5-3' }, query: 'last_event_id=5-1' });
  const parsed = parseStream(byHeader.sink.text);
  assert.deepEqual(parsed.retries, [3000]);
  assert.deepEqual(parsed.events.map((e) => e.id), ['5-4', '5-5', '5-6']);
  assert.equal(parsed.events.some((e) => e.event === 'snapshot'), false);
  bus.publish('build.succeeded', { version: 'v1' }, 'sites');
  assert.deepEqual(parseStream(byHeader.sink.text).events.map((e) => e.id), ['5-4', '5-5', '5-6', '5-7']);
  byHeader.abort();

  const byQuery = await open(bus, { query: 'last_event_id=5-5' });
  assert.deepEqual(parseStream(byQuery.sink.text).events.map((e) => e.id), ['5-6', '5-7']);
  byQuery.abort();
});

test('an id that cannot be replayed gets reset with a fresh snapshot at the current position', async () => {
  const bus = new EventBus({ epoch: '100', bufferSize: 10_000 });
  bus.registerSnapshotPart('crawl', () => ({ running: false }));
  for (let i = 0; i < 10_002; i++) bus.publish('crawl.progress', { fetched: i });
  const cases: [string, string][] = [
    ['99-5', 'other_epoch'],
    ['100-1', 'expired'],
    ['100-99999', 'future_id'],
    ['nonsense', 'malformed_id'],
  ];
  for (const [id, reason] of cases) {
    const s = await open(bus, { headers: { 'last-event-id': id } });
    const [first, ...rest] = parseStream(s.sink.text).events;
    assert.equal(first!.event, 'reset', id);
    assert.equal(first!.id, '100-10002');
    const data = dataOf(first!);
    assert.equal(data.reason, reason);
    assert.equal(data.seq, 10_002);
    assert.deepEqual(data.crawl, { running: false }, 'the reset carries the snapshot');
    assert.equal(rest.length, 0);
    s.abort();
  }
  // The oldest id still buffered replays (10,000 events), it does not reset.
  const s = await open(bus, { headers: { 'last-event-id': '100-2' } });
  assert.equal(parseStream(s.sink.text).events.length, 10_000);
  s.abort();
});

test('a client that disconnects anywhere and resumes from its last id sees every event once, in order', async () => {
  const bus = new EventBus({ epoch: '3' });
  bus.publish('index.progress', { n: 0 });
  const received: number[] = [];
  let lastId: string | undefined;
  let published = 0;
  for (let round = 0; round < 12; round++) {
    const s = await open(bus, lastId === undefined ? {} : { headers: { 'last-event-id': lastId } });
    // Publish a few events while connected, then cut the connection at a different point each round.
    for (let i = 0; i < round % 4 + 1; i++) bus.publish('index.progress', { n: ++published });
    s.abort();
    await s.done;
    bus.publish('index.progress', { n: ++published }); // published while the client is away
    for (const e of parseStream(s.sink.text).events) {
      lastId = e.id;
      if (e.event === 'index.progress') received.push(dataOf(e).n as number);
    }
  }
  const s = await open(bus, { headers: { 'last-event-id': lastId! } });
  for (const e of parseStream(s.sink.text).events) received.push(dataOf(e).n as number);
  s.abort();
  assert.deepEqual(received, Array.from({ length: published }, (_, i) => i + 1));
});

test('events about targets reach only readers whose capability covers the target; so does the snapshot', async () => {
  const bus = new EventBus({ epoch: '1' });
  bus.registerSnapshotPart('targets', (view) =>
    ['sites', 'email', 'vroom'].filter((t) => view.canSeeTarget(t)).map((target) => ({ target, verdict: 'in_sync' })));
  const narrow = principalWith(['events.read', 'mgmt.read'], { targets: ['sites'] });
  const blind = principalWith(['events.read']);
  const a = await open(bus, { principal: narrow });
  const b = await open(bus, { principal: blind });
  bus.publish('deploy.started', { version: 'v2' }, 'sites');
  bus.publish('deploy.started', { version: 'v9' }, 'email');
  bus.publish('index.committed', { corpus: 'own' });
  const ea = parseStream(a.sink.text).events;
  const eb = parseStream(b.sink.text).events;
  assert.deepEqual(dataOf(ea[0]!).targets, [{ target: 'sites', verdict: 'in_sync' }]);
  assert.deepEqual(dataOf(eb[0]!).targets, []);
  assert.deepEqual(ea.slice(1).map((e) => [e.event, e.id]), [['deploy.started', '1-1'], ['index.committed', '1-3']]);
  assert.equal(dataOf(ea[1]!).target, 'sites');
  assert.deepEqual(eb.slice(1).map((e) => e.id), ['1-3']);
  // A replay is filtered the same way.
  const c = await open(bus, { principal: narrow, headers: { 'last-event-id': '1-0' } });
  assert.deepEqual(parseStream(c.sink.text).events.map((e) => e.id), ['1-1', '1-3']);
  for (const s of [a, b, c]) s.abort();
});

test('keep-alive comments come from the injected timer and stop with the stream', async () => {
  const bus = new EventBus();
  const timers = new ManualTimers();
  const s = await open(bus, { timers });
  assert.equal(timers.active, 1);
  timers.tick();
  timers.tick();
  assert.deepEqual(parseStream(s.sink.text).comments, ['keepalive', 'keepalive']);
  assert.ok(s.sink.text.endsWith(': keepalive\n\n'));
  s.abort();
  await s.done;
  assert.equal(timers.active, 0);
});

test('a client that stops reading is dropped once 1,000 live events wait for it', async () => {
  const bus = new EventBus();
  const s = await open(bus);
  s.sink.accept = () => false; // the socket buffer is full from now on and never drains
  bus.publish('build.log', { line: 'this one fills the transport buffer' });
  for (let i = 0; i < 1_000; i++) bus.publish('build.log', { line: i });
  assert.equal(s.sink.destroyed, false, '1,000 waiting events are still within the bound');
  bus.publish('build.log', { line: 1_000 });
  assert.equal(s.sink.destroyed, true);
  await s.done;
  assert.equal(bus.subscriberCount, 0);
});

test('a client that stops reading is dropped once 1 MiB of live events waits for it', async () => {
  const bus = new EventBus();
  let end: StreamEnd | undefined;
  const sink = new RecordingSink();
  const done = runEventStream({ bus, principal: reader, sink, signal: new AbortController().signal, options: { timers: new ManualTimers() } })
    .then((r) => { end = r; });
  sink.accept = () => false;
  const line = 'x'.repeat(100 * 1024);
  let n = 0;
  while (!sink.destroyed && n < 100) { bus.publish('build.log', { line }); n++; }
  await done;
  assert.equal(end, 'dropped');
  assert.equal(n, 12, 'the first fills the transport buffer; the eleventh queued 100 KiB passes 1 MiB');
});

test('a client that reads slowly but keeps up is never dropped, and a long replay does not count as lag', async () => {
  const bus = new EventBus({ epoch: '2' });
  for (let i = 1; i <= 5_000; i++) bus.publish('build.log', { line: i });
  const s = await open(bus, { headers: { 'last-event-id': '2-0' } });
  // Every write fills the buffer; it drains on the next turn of the event loop.
  s.sink.accept = (_c, sink) => { setImmediate(() => sink.drain()); return false; };
  for (let i = 0; i < 50; i++) {
    for (let j = 0; j < 100; j++) bus.publish('build.log', { line: 5_001 + i * 100 + j });
    await new Promise((r) => setImmediate(r));
  }
  while (s.sink.blocked) await new Promise((r) => setImmediate(r));
  assert.equal(s.sink.destroyed, false);
  const ids = parseStream(s.sink.text).events.map((e) => Number(e.id!.split('-')[1]));
  assert.deepEqual(ids, Array.from({ length: 10_000 }, (_, i) => i + 1));
  s.abort();
});

test('shutdown is delivered, then the stream ends cleanly', async () => {
  const bus = new EventBus();
  const s = await open(bus);
  bus.publish('shutdown', { reason: 'SIGTERM' });
  await s.done;
  assert.equal(s.sink.ended, true);
  assert.equal(s.sink.destroyed, false);
  const events = parseStream(s.sink.text).events;
  assert.equal(events.at(-1)!.event, 'shutdown');
  assert.equal(bus.subscriberCount, 0);
});

test('events.read is required: 401 for anonymous callers, 403 for a capability without it', async () => {
  const bus = new EventBus();
  const route = eventRoutes(new EventsService(bus)).routes[0]!;
  assert.equal(route.right, 'events.read');
  assert.equal(route.longLived, true);
  const anonymous = principalWith(['search'], { kind: 'anonymous' });
  const searchOnly = principalWith(['search', 'mgmt.read']);
  await assert.rejects(route.handler(context(anonymous)), (err: unknown) => QuarryError.is(err) && err.code === 'unauthenticated');
  await assert.rejects(route.handler(context(searchOnly)), (err: unknown) => QuarryError.is(err) && err.code === 'forbidden');
});

test('a client whose transport takes nothing for two keep-alive ticks is dropped as dead', async () => {
  const bus = new EventBus();
  const timers = new ManualTimers();
  const s = await open(bus, { timers });
  s.sink.accept = () => false; // the response is gone: every write is refused, nothing drains
  timers.tick(); // the keep-alive write is refused
  timers.tick(); // first tick without a drain
  assert.equal(s.sink.destroyed, false);
  timers.tick();
  assert.equal(s.sink.destroyed, true);
  await s.done;
  assert.equal(bus.subscriberCount, 0);

  // A client that drains between ticks is never dropped, however often it blocks.
  const t2 = new ManualTimers();
  const k = await open(bus, { timers: t2 });
  k.sink.accept = () => false;
  for (let i = 0; i < 10; i++) { bus.publish('build.log', { i }); t2.tick(); k.sink.drain(); }
  assert.equal(k.sink.destroyed, false);
  k.abort();
});
