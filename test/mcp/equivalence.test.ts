// Equivalence of the agent surface and REST: for 200 random queries over the fixture corpus (terms,
// operators, phrases, site:, typos, pages, scopes; seeded, so a failure reproduces), `service_search`'s
// structuredContent equals `GET /api/search`'s body, in both protocol eras; a query REST refuses with 400
// is a tool result with isError whose text is the same error body. The same for `service_doc` against
// `GET /api/doc`: found (200), not found (404 → isError carrying the same body) and malformed cids (400).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { seededRandom as rng } from '../../bench/measure.js';
import type { TestServer } from '../support/server.js';
import { rawRequest, type TestResponse } from '../support/client.js';
import { legacy, modern, startMcpServer } from './support.js';

let srv: TestServer;
let session: http2.ClientHttp2Session;
before(async () => {
  srv = await startMcpServer();
  session = http2.connect(srv.url, { ca: srv.ca });
});
after(async () => {
  session?.close();
  await srv?.stop();
});

const WORDS = ['granite', 'elephant', 'elephnt', 'quick', 'brown', 'fox', 'dog', 'lazy', 'basalt', 'savanna', 'note', 'quarry',
  'stones', 'cat', 'reference', 'manual', 'columns', 'docs', 'rocks', 'statue', 'walks', 'zebra', 'granit', 'the', 'über', '17'];
const SITES = ['example.com', 'docs.example.com', 'badexample.com', 'trusted.example.net', 'nowhere.org'];

function randomQuery(r: () => number): { q: string; scope?: string; page?: number } {
  const pick = <T>(a: readonly T[]) => a[Math.floor(r() * a.length)]!;
  const clauses: string[] = [];
  const n = 1 + Math.floor(r() * 4);
  for (let i = 0; i < n; i++) {
    const x = r();
    if (x < 0.55) clauses.push(pick(['', '', '+', '-']) + pick(WORDS));
    else if (x < 0.75) clauses.push(`"${pick(WORDS)} ${pick(WORDS)}"`);
    else if (x < 0.9) clauses.push(`${pick(['', '-'])}site:${pick(SITES)}`);
    else clauses.push(pick(['', ' ', '"', '+', '-', 'site:']));
  }
  const out: { q: string; scope?: string; page?: number } = { q: clauses.join(' ') };
  const s = r();
  if (s < 0.35) out.scope = 'web';
  else if (s < 0.5) out.scope = 'trusted';
  else if (s < 0.53) out.scope = 'moon'; // refused by both faces
  const p = r();
  if (p < 0.3) out.page = Math.floor(r() * 3);
  else if (p < 0.33) out.page = 600; // past the deep-paging bound
  return out;
}

function restPath(path: string, params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, String(v));
  return `${path}?${q.toString()}`;
}

function toolResult(res: TestResponse): { structuredContent?: unknown; isError?: boolean; content: { text: string }[] } {
  assert.equal(res.status, 200, res.text);
  const m = res.json as { result?: unknown; error?: unknown };
  assert.ok(m.result, `a result, not ${res.text.slice(0, 300)}`);
  return m.result as { structuredContent?: unknown; isError?: boolean; content: { text: string }[] };
}

/** The tool's answer matches REST's: the same body as structuredContent, or an isError result with it as text. */
function assertSame(result: ReturnType<typeof toolResult>, rest: TestResponse, what: string): void {
  if (rest.status === 200) {
    assert.notEqual(result.isError, true, what);
    assert.deepEqual(result.structuredContent, rest.json, what);
  } else if (rest.status === 404) {
    assert.equal(result.isError, true, what);
    assert.deepEqual(result.structuredContent, rest.json, what);
  } else {
    assert.equal(rest.status, 400, `${what}: ${rest.text}`);
    assert.equal(result.isError, true, what);
    assert.deepEqual(JSON.parse(result.content[0]!.text), rest.json, what);
  }
}

const call = (i: number, name: string, args: Record<string, unknown>) => (i % 2 === 0
  ? modern(srv, i, 'tools/call', { name, arguments: args })
  : legacy(srv, i, 'tools/call', { name, arguments: args }));

test('service_search answers 200 random queries exactly as GET /api/search', { timeout: 300_000 }, async () => {
  const r = rng(20261124);
  const statuses = new Map<number, number>();
  let withResults = 0;
  for (let i = 0; i < 200; i++) {
    const args = randomQuery(r);
    const rest = await rawRequest(srv, 'GET', restPath('/api/search', args), undefined, { session });
    statuses.set(rest.status, (statuses.get(rest.status) ?? 0) + 1);
    if (rest.status === 200 && (rest.json as { total: number }).total > 0) withResults++;
    assertSame(toolResult(await call(i, 'service_search', args)), rest, `query ${i}: ${JSON.stringify(args)}`);
  }
  assert.ok(withResults >= 40, `many queries find something (${withResults})`);
  assert.ok((statuses.get(400) ?? 0) >= 5, `some queries are refused by both faces (${JSON.stringify([...statuses])})`);
});

test('service_doc answers found, missing and malformed cids exactly as GET /api/doc', { timeout: 300_000 }, async () => {
  const cids: { cid: string; scope?: string }[] = [];
  for (const [q, scope] of [['granite', undefined], ['elephant', undefined], ['granite', 'web'], ['basalt', 'web'], ['granite', 'trusted']] as const) {
    const rest = await rawRequest(srv, 'GET', restPath('/api/search', { q, scope }), undefined, { session });
    for (const hit of (rest.json as { results: { cid: string }[] }).results) cids.push({ cid: hit.cid, ...(scope ? { scope } : {}) });
  }
  cids.push({ cid: '0' }, { cid: '9223372036854775807', scope: 'web' }, { cid: '9223372036854775808' }, { cid: '0123' },
    { cid: '-1' }, { cid: '12a' }, { cid: '' }, { cid: '42', scope: 'moon' });
  // A document found in one scope and asked for in another is a 404 in both faces.
  cids.push({ ...cids[0]!, scope: 'web' });
  assert.ok(cids.length >= 30, `${cids.length} cids`);
  for (const [i, args] of cids.entries()) {
    const rest = await rawRequest(srv, 'GET', restPath('/api/doc', args), undefined, { session });
    assertSame(toolResult(await call(i, 'service_doc', args)), rest, `doc ${JSON.stringify(args)}`);
  }
});
