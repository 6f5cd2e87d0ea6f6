// The transport and protocol rules of POST /mcp (CONTRACT §7), request by request over TLS: era chosen per
// request, the 2026-07-28 metadata and header checks, version errors, batches, GET/DELETE, Origin and
// Host, capabilities in the four places (two different ones → 400; invalid → 401 with WWW-Authenticate;
// never echoed), anonymous access off, opaque cursors, cache hints, a long service_mgmt operation as an
// event stream with progress, and the audit of a tool call like its REST call.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestServer } from '../support/server.js';
import { rawRequest } from '../support/client.js';
import { openDb } from '../../src/store/db.js';
import { stateDbPath } from '../../src/kernel/data-dir.js';
import { META_CAPS, META_PV, MODERN, legacy, mintCap, modern, modernHeaders, modernMeta, post, startMcpServer } from './support.js';

let srv: TestServer;
let closed: TestServer;
let admin: string;
let reader: string;
before(async () => {
  [srv, closed] = await Promise.all([startMcpServer(), startMcpServer({ config: { auth: { anonymous: false }, mcp: { allowedHosts: ['quarry.internal'] } } })]);
  admin = mintCap(srv, ['search', 'mgmt.read', 'mgmt.reconcile']);
  reader = mintCap(srv, ['search']);
});
after(async () => { await Promise.all([srv?.stop(), closed?.stop()]); });

type Msg = { jsonrpc: string; id?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string; data?: Record<string, unknown> } };
const msg = (r: { json?: unknown }) => r.json as Msg;

test('era per request: initialize negotiates in the handshake era; 2026-07-28 answers server/discover with cache hints', async () => {
  const init = await post(srv, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
  assert.equal(init.status, 200);
  assert.equal(msg(init).result!.protocolVersion, '2025-06-18');
  const old = await post(srv, { jsonrpc: '2.0', id: 2, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
  assert.equal(msg(old).result!.protocolVersion, '2025-11-25', 'an unknown handshake version gets our newest');
  assert.equal((await post(srv, { jsonrpc: '2.0', method: 'notifications/initialized' })).status, 202);
  assert.deepEqual(msg(await legacy(srv, 3, 'ping')).result, {});

  const discover = await modern(srv, 4, 'server/discover');
  const r = msg(discover).result!;
  assert.deepEqual(r.supportedVersions, [MODERN, '2025-11-25', '2025-06-18', '2025-03-26']);
  assert.equal(r.resultType, 'complete');
  assert.equal(typeof r.ttlMs, 'number');
  assert.equal(r.cacheScope, 'public');
  assert.equal((r._meta as Record<string, { name: string }>)['io.modelcontextprotocol/serverInfo']!.name, 'quarry');
  const tools = msg(await modern(srv, 5, 'tools/list')).result!;
  assert.equal(tools.cacheScope, 'private', 'the tool list depends on the capability');
  for (const removed of ['initialize', 'ping', 'logging/setLevel', 'resources/subscribe']) {
    const res = await modern(srv, 6, removed);
    assert.deepEqual([res.status, msg(res).error?.code, msg(res).id], [404, -32601, 6], removed);
  }
});

test('2026-07-28 checks: _meta required, headers must match the body, unsupported versions named', async () => {
  const noMeta = await post(srv, { jsonrpc: '2.0', id: 10, method: 'tools/list', params: {} }, modernHeaders('tools/list'));
  assert.deepEqual([noMeta.status, msg(noMeta).error?.code, msg(noMeta).id], [400, -32602, 10]);
  const noCaps = await post(srv, { jsonrpc: '2.0', id: 11, method: 'tools/list', params: { _meta: { [META_PV]: MODERN } } }, modernHeaders('tools/list'));
  assert.deepEqual([noCaps.status, msg(noCaps).error?.code], [400, -32602]);
  const wrongMethod = await post(srv, { jsonrpc: '2.0', id: 12, method: 'tools/list', params: { _meta: modernMeta() } }, modernHeaders('prompts/list'));
  assert.deepEqual([wrongMethod.status, msg(wrongMethod).error?.code], [400, -32020]);
  const wrongName = await modern(srv, 13, 'tools/call', { name: 'service_search', arguments: { q: 'x' } }, { 'mcp-name': 'service_doc' });
  assert.deepEqual([wrongName.status, msg(wrongName).error?.code], [400, -32020]);
  const base64Name = await modern(srv, 14, 'tools/call', { name: 'service_search', arguments: { q: 'granite' } }, { 'mcp-name': `=?base64?${Buffer.from('service_search').toString('base64')}?=` });
  assert.equal(base64Name.status, 200);
  const metaMismatch = await post(srv, { jsonrpc: '2.0', id: 15, method: 'tools/list', params: { _meta: { [META_PV]: '2025-11-25', [META_CAPS]: {} } } }, modernHeaders('tools/list'));
  assert.deepEqual([metaMismatch.status, msg(metaMismatch).error?.code], [400, -32020]);
  const unsupported = await post(srv, { jsonrpc: '2.0', id: 16, method: 'tools/list' }, { 'mcp-protocol-version': '2099-01-01' });
  assert.deepEqual([unsupported.status, msg(unsupported).error?.code, msg(unsupported).error?.data], [400, -32022, { supported: [MODERN, '2025-11-25', '2025-06-18', '2025-03-26'], requested: '2099-01-01' }]);
});

test('transport: batches refused, GET and DELETE 405, bad JSON -32700, Origin and Host checked (403)', async () => {
  const batch = await post(srv, [{ jsonrpc: '2.0', id: 1, method: 'ping' }]);
  assert.deepEqual([batch.status, msg(batch).error?.code], [400, -32600]);
  for (const method of ['GET', 'DELETE']) {
    const r = await rawRequest(srv, method, '/mcp', undefined);
    assert.equal(r.status, 405);
    assert.equal(r.headers['allow'], 'POST');
  }
  const garbage = await post(srv, '{"jsonrpc":');
  assert.deepEqual([garbage.status, msg(garbage).error?.code, msg(garbage).id], [400, -32700, null]);
  const evilOrigin = await legacy(srv, 20, 'tools/list', {}, { origin: 'https://evil.example.com' });
  assert.equal(evilOrigin.status, 403);
  assert.equal((await legacy(srv, 21, 'tools/list', {}, { origin: 'https://localhost:5173' })).status, 200);
  const evilHost = await rawRequest(srv, 'POST', '/mcp', { jsonrpc: '2.0', id: 22, method: 'tools/list' }, { headers: { host: 'evil.example.com' }, protocol: 'h1' });
  assert.equal(evilHost.status, 403);
  // A configured host name is allowed (mcp.allowedHosts), the others still refused.
  const configured = await rawRequest(closed, 'POST', '/mcp', { jsonrpc: '2.0', id: 23, method: 'initialize', params: {} }, { headers: { origin: 'https://quarry.internal' } });
  assert.equal(configured.status, 200);
});

test('capabilities: header, X-Service-Cap, params._cap and the _meta key; two different → 400; invalid → 401; never echoed', async () => {
  const names = (r: { json?: unknown }) => ((msg(r).result!.tools as { name: string }[]).map((t) => t.name));
  assert.ok(!names(await legacy(srv, 30, 'tools/list')).includes('service_mgmt'), 'anonymous: no admin tool');
  assert.ok(names(await legacy(srv, 31, 'tools/list', {}, { authorization: `Bearer ${admin}` })).includes('service_mgmt'));
  assert.ok(names(await legacy(srv, 32, 'tools/list', {}, { 'x-service-cap': admin })).includes('service_mgmt'));
  assert.ok(names(await legacy(srv, 33, 'tools/list', { _cap: admin })).includes('service_mgmt'));
  assert.ok(names(await modern(srv, 34, 'tools/list', { _meta: { 'dev.quarry/cap': admin } })).includes('service_mgmt'));
  assert.ok(!names(await legacy(srv, 35, 'tools/list', {}, { authorization: `Bearer ${reader}` })).includes('service_mgmt'), 'search only: hidden');
  assert.ok(names(await legacy(srv, 36, 'tools/list', { _cap: admin }, { authorization: `Bearer ${admin}` })).includes('service_mgmt'), 'the same one twice is fine');

  const two = await legacy(srv, 37, 'tools/list', { _cap: reader }, { authorization: `Bearer ${admin}` });
  assert.deepEqual([two.status, msg(two).error?.code, msg(two).id], [400, -32600, 37]);
  const twoInBody = await modern(srv, 38, 'tools/list', { _cap: reader, _meta: { 'dev.quarry/cap': admin } });
  assert.equal(twoInBody.status, 400);
  const invalid = await legacy(srv, 39, 'tools/list', { _cap: 'bogus-capability' });
  assert.equal(invalid.status, 401);
  assert.match(invalid.headers['www-authenticate'] ?? '', /^Bearer /);
  assert.equal(msg(invalid).id, 39);
  // A hidden tool is still checked on a call: anonymous → 401, a capability without the right → 403.
  const anon = await legacy(srv, 40, 'tools/call', { name: 'service_mgmt', arguments: { action: 'status' } });
  assert.equal(anon.status, 401);
  assert.match(anon.headers['www-authenticate'] ?? '', /^Bearer /);
  const denied = await legacy(srv, 41, 'tools/call', { name: 'service_mgmt', arguments: { action: 'status' }, _cap: reader });
  assert.equal(denied.status, 403);
  for (const r of [two, twoInBody, invalid, anon, denied]) {
    assert.ok(!r.text.includes(admin) && !r.text.includes(reader), 'no capability in any answer');
  }
  assert.ok(!srv.stderr().includes(admin) && !srv.stderr().includes(reader), 'nor in the log');
});

test('anonymous access off: everything but initialize and discovery needs a capability (401)', async () => {
  assert.equal((await post(closed, { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} })).status, 200);
  const list = await legacy(closed, 2, 'tools/list');
  assert.equal(list.status, 401);
  assert.match(list.headers['www-authenticate'] ?? '', /^Bearer /);
  const cap = mintCap(closed, ['search']);
  const ok = await legacy(closed, 3, 'tools/call', { name: 'service_search', arguments: { q: 'granite' } }, { authorization: `Bearer ${cap}` });
  assert.equal((msg(ok).result!.structuredContent as { total: number }).total, 45);
});

test('lists page with opaque cursors; a forged cursor is -32602', async () => {
  const page = await legacy(srv, 50, 'resources/list');
  const resources = msg(page).result!.resources as { uri: string }[];
  assert.ok(resources.some((r) => r.uri === 'quarry://maturity/example.com'));
  const forged = await legacy(srv, 51, 'resources/list', { cursor: Buffer.from(JSON.stringify({ l: 'tools', o: 1 })).toString('base64url') });
  assert.deepEqual([msg(forged).error?.code, msg(forged).id], [-32602, 51]);
  assert.equal(msg(await legacy(srv, 52, 'tools/list', { cursor: '!!!' })).error?.code, -32602);
  const missing = await modern(srv, 53, 'resources/read', { uri: 'doc://own/77' });
  assert.equal(msg(missing).error?.code, -32602, '2026-07-28: a missing resource is -32602');
  assert.equal(msg(await legacy(srv, 54, 'resources/read', { uri: 'doc://own/77' })).error?.code, -32002, 'handshake era: -32002');
});

test('a long service_mgmt operation with a progress token answers as an event stream; audited like REST', async () => {
  const res = await legacy(srv, 60, 'tools/call', { name: 'service_mgmt', arguments: { action: 'reconcile', target: 'sites', reason: 'mcp test' }, _meta: { progressToken: 'tok' } },
    { authorization: `Bearer ${admin}` });
  assert.equal(res.status, 200);
  assert.match(res.headers['content-type'] ?? '', /^text\/event-stream/);
  const events = res.text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as Msg & { method?: string; params?: Record<string, unknown> });
  const progress = events.filter((e) => e.method === 'notifications/progress');
  assert.ok(progress.length >= 1 && progress.every((p) => p.params!.progressToken === 'tok'));
  const last = events.at(-1)!;
  assert.equal(last.id, 60);
  const op = last.result!.structuredContent as { op_id: string; state: string; kind: string };
  assert.deepEqual([op.kind, op.state], ['reconcile', 'succeeded']);
  // Without a progress token: the REST answer (202's body) as JSON.
  const quick = await legacy(srv, 61, 'tools/call', { name: 'service_mgmt', arguments: { action: 'reconcile', target: 'sites' } }, { authorization: `Bearer ${admin}` });
  assert.match(quick.headers['content-type'] ?? '', /^application\/json/);
  assert.ok(['queued', 'running', 'succeeded'].includes((msg(quick).result!.structuredContent as { state: string }).state));
  const db = openDb(stateDbPath(srv.dataDir));
  try {
    const rows = db.prepare(`SELECT action, actor FROM audit_log WHERE target = 'sites' AND action LIKE '%reconcile%'`).all() as { action: string; actor: string }[];
    assert.ok(rows.length >= 1, 'the operation is in the audit log');
    const denied = await legacy(srv, 62, 'tools/call', { name: 'service_mgmt', arguments: { action: 'restart', target: 'sites' } }, { authorization: `Bearer ${reader}` });
    assert.equal(denied.status, 403);
    const refusals = db.prepare(`SELECT count(*) AS n FROM audit_log WHERE result = 'denied' AND action = 'control.restart'`).get() as { n: number };
    assert.ok(refusals.n >= 1, 'a refused call is audited as the REST refusal is');
  } finally {
    db.close();
  }
});

test('a capability in the body is rate-limited as the same capability in a header would be', async () => {
  const limited = await startMcpServer({ rateLimit: { perSecond: 0.01, burst: 3 } });
  try {
    const cap = mintCap(limited, ['search']);
    for (let i = 0; i < 3; i++) {
      assert.equal((await legacy(limited, i, 'tools/list', {}, { authorization: `Bearer ${cap}` })).status, 200, 'the burst, charged to the capability');
    }
    // The address has its whole burst left; the capability has none, whether it comes in a header or the body.
    const header = await legacy(limited, 10, 'tools/list', {}, { authorization: `Bearer ${cap}` });
    assert.equal(header.status, 429);
    const body = await legacy(limited, 11, 'tools/list', { _cap: cap });
    assert.equal(body.status, 429);
    assert.ok(Number(body.headers['retry-after']) >= 1);
    assert.deepEqual([msg(body).id, typeof msg(body).error?.code], [11, 'number']);
    assert.equal((await legacy(limited, 12, 'tools/list')).status, 200, 'an anonymous call from the same address still passes');
  } finally {
    await limited.stop();
  }
});
