// Hostile input at POST /mcp: 20,000 generated requests (seeded) — wrong JSON-RPC types, huge and odd ids,
// deep nesting, unknown methods, mismatched and missing 2026-07-28 headers, unsupported versions, bad
// capabilities in every place, batches, garbage bytes, wrong content types, oversize bodies, tool calls
// with garbage arguments. Each must get a JSON-RPC error or result (or 202 for a notification), or an
// HTTP 4xx error in the contract's shape — never a 5xx, never a dropped connection — and the server must
// still answer a search afterwards without having logged an internal error.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { seededRandom as rng } from '../../bench/measure.js';
import type { TestServer } from '../support/server.js';
import { rawRequest, type TestResponse } from '../support/client.js';
import { MODERN, META_CAPS, META_PV, startMcpServer } from './support.js';

let srv: TestServer;
before(async () => { srv = await startMcpServer(); });
after(async () => { await srv?.stop(); });

/** `h1`: sent over HTTP/1.1 (an empty or odd `Host` is a header there; HTTP/2 carries `:authority` instead). */
interface Case { body: string | Buffer; headers: Record<string, string>; protocol?: 'h1' }

const METHODS = ['initialize', 'ping', 'server/discover', 'tools/list', 'tools/call', 'resources/list', 'resources/read',
  'resources/templates/list', 'prompts/list', 'prompts/get', 'completion/complete', 'logging/setLevel', 'resources/subscribe',
  'subscriptions/listen', 'notifications/initialized', 'nope', '', 'tools/call/x', '__proto__', 'constructor'];
const TOOLS = ['service_search', 'service_doc', 'service_ecosystem_maturity_rollup', 'service_mgmt', 'missing', '', '__proto__'];
const VALUES: unknown[] = [null, true, false, 0, -1, 1.5, 1e308, -1e308, 2 ** 53, 2 ** 64, '', ' ', 'x'.repeat(300), '9223372036854775808',
  [], [1, 2], {}, { a: 1 }, '\u0000', '\ud800', 'granite', '"unterminated', 'site:', '+', '../../etc/passwd', 'doc://own/1', 'web', 'own'];

function generate(r: () => number): Case {
  const pick = <T>(a: readonly T[]) => a[Math.floor(r() * a.length)]!;
  const value = (): unknown => pick(VALUES);
  const nested = (depth: number): unknown => { let v: unknown = 1; for (let i = 0; i < depth; i++) v = r() < 0.5 ? [v] : { a: v }; return v; };
  // A value HTTP/2 itself refuses (control characters, lone surrogates, edge whitespace) never reaches the
  // server as a header: such names travel in the specification's base64 form instead.
  const headerValue = (v: string) => (/^([\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?)?$/.test(v) ? v : `=?base64?${Buffer.from(v).toString('base64')}?=`);
  const modernHeaders = (method: string, name?: string): Record<string, string> => ({
    'mcp-protocol-version': MODERN, 'mcp-method': headerValue(method), ...(name !== undefined ? { 'mcp-name': headerValue(name) } : {}),
  });
  const meta = () => ({ [META_PV]: MODERN, [META_CAPS]: {} });
  const kind = Math.floor(r() * 14);
  const json = (v: unknown, headers: Record<string, string> = {}): Case => ({ body: JSON.stringify(v), headers: { 'content-type': 'application/json', ...headers } });
  switch (kind) {
    case 0: // wrong types in the envelope
      return json({ jsonrpc: pick(['2.0', '1.0', 2, null, value()]), id: value(), method: r() < 0.5 ? pick(METHODS) : value(), params: r() < 0.5 ? value() : {} });
    case 1: { // huge and odd ids
      const id = pick([Number.MAX_SAFE_INTEGER, 2 ** 60, 1e300, -0, 0.5, 'i'.repeat(Math.floor(r() * 5000)), { id: 1 }, [1], true, null]);
      return json({ jsonrpc: '2.0', id, method: pick(METHODS), params: {} });
    }
    case 2: // deep nesting
      return json({ jsonrpc: '2.0', id: 1, method: pick(METHODS), params: { arguments: nested(Math.floor(r() * 3000)), name: pick(TOOLS) } });
    case 3: // unknown methods, both eras
      return r() < 0.5
        ? json({ jsonrpc: '2.0', id: 3, method: `x/${Math.floor(r() * 1e6)}`, params: { _meta: meta() } }, modernHeaders('x'))
        : json({ jsonrpc: '2.0', id: 3, method: pick(METHODS) + pick(['', '/', 'x']), params: {} });
    case 4: { // mismatched or missing 2026-07-28 headers
      const method = pick(METHODS);
      const headers = modernHeaders(r() < 0.5 ? method : pick(METHODS), r() < 0.5 ? String(value()) : undefined);
      if (r() < 0.3) delete (headers as Record<string, string>)['mcp-method'];
      if (r() < 0.2) headers['mcp-name'] = `=?base64?${Buffer.from(String(value())).toString('base64')}?=`;
      return json({ jsonrpc: '2.0', id: 4, method, params: { name: pick(TOOLS), uri: 'quarry://openapi.json', _meta: r() < 0.8 ? meta() : value() } }, headers);
    }
    case 5: // unsupported or malformed versions
      return json({ jsonrpc: '2.0', id: 5, method: pick(METHODS), params: { protocolVersion: value(), _meta: { [META_PV]: value(), [META_CAPS]: value() } } },
        { 'mcp-protocol-version': String(pick(['2024-11-05', '2099-01-01', 'x', '', MODERN, '2025-11-25'])) });
    case 6: // capabilities in every place, bad or conflicting
      return json({ jsonrpc: '2.0', id: 6, method: 'tools/list', params: { _cap: value(), _meta: { 'dev.quarry/cap': value() } } },
        r() < 0.5 ? { authorization: pick(['Bearer x', 'Basic abc', 'Bearer', 'bearer  y  ']), 'x-service-cap': 'z' } : {});
    case 7: // batches
      return json(Array.from({ length: Math.floor(r() * 5) }, (_, i) => ({ jsonrpc: '2.0', id: i, method: pick(METHODS) })));
    case 8: // garbage bytes
      return { body: Buffer.from(Array.from({ length: Math.floor(r() * 200) }, () => Math.floor(r() * 256))), headers: { 'content-type': 'application/json' } };
    case 9: // wrong content types
      return { body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }), headers: pick<Record<string, string>>([{}, { 'content-type': 'text/plain' }, { 'content-type': 'application/x-www-form-urlencoded' }, { 'content-type': 'application/json; charset=latin1' }]) };
    case 10: // oversize (rare: each is over a MiB)
      if (r() < 0.01) return json({ jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'service_search', arguments: { q: 'g'.repeat(1_100_000) } } });
      return json({ jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'service_search', arguments: { q: 'g'.repeat(Math.floor(r() * 5000)) } } });
    case 11: { // tool calls with garbage arguments, both eras
      const name = pick(TOOLS);
      const args = r() < 0.2 ? value() : { q: value(), scope: value(), page: value(), cid: value(), domain: value(), action: pick(['status', 'deploy', 'build', value()]), target: value(), dry_run: value() };
      const modernCall = r() < 0.5;
      return json({ jsonrpc: '2.0', id: 11, method: 'tools/call', params: { name, arguments: args, ...(modernCall ? { _meta: { ...meta(), progressToken: value() } } : {}) } },
        modernCall ? modernHeaders('tools/call', name) : {});
    }
    case 12: { // resources, prompts and completions with garbage
      const method = pick(['resources/read', 'prompts/get', 'completion/complete', 'resources/list', 'tools/list']);
      return json({ jsonrpc: '2.0', id: 12, method, params: { uri: pick(['doc://own/' + String(value()), 'doc://x/1', 'quarry://maturity/' + String(value()), String(value()), 'doc://web/%ZZ']),
        name: pick(['research', 'deployment', String(value())]), arguments: r() < 0.5 ? value() : { question: value(), target: value() },
        ref: r() < 0.5 ? value() : { type: pick(['ref/prompt', 'ref/resource', value()]), name: pick(['research', 'deployment']), uri: 'doc://{scope}/{cid}' },
        argument: r() < 0.5 ? value() : { name: pick(['scope', 'question', 'target', 'cid']), value: value() }, cursor: value() } });
    }
    default: // Origin and Host checks
      if (r() < 0.5) return json({ jsonrpc: '2.0', id: 13, method: 'tools/list' }, { origin: pick(['http://evil.example.com', 'null', 'https://localhost:1', 'not a url']) });
      return { ...json({ jsonrpc: '2.0', id: 13, method: 'tools/list' }, { host: pick(['evil.example.com', 'localhost:1', 'EVIL.example.com:8443', 'localhost']) }), protocol: 'h1' };
  }
}

function assertAnswered(res: TestResponse, c: Case): void {
  const what = `${res.status} for ${String(c.body).slice(0, 200)} ${JSON.stringify(c.headers)}: ${res.text.slice(0, 300)}`;
  assert.ok(res.status >= 200 && res.status < 500, what);
  if (res.status === 202) return assert.equal(res.text, '', what);
  const body = res.json as Record<string, unknown> | undefined;
  assert.ok(body, `a JSON body: ${what}`);
  if (body.jsonrpc === '2.0') {
    assert.ok('result' in body || ('error' in body && typeof (body.error as { code: unknown }).code === 'number'), what);
    if (res.status >= 400) assert.ok('error' in body, what);
  } else {
    assert.ok(res.status >= 400 && typeof (body.error as { code: unknown } | undefined)?.code === 'string', `a contract error: ${what}`);
  }
}

test('20,000 generated hostile requests get JSON-RPC or HTTP 4xx errors, never a 5xx or a crash', { timeout: 600_000 }, async () => {
  const r = rng(7);
  const session = http2.connect(srv.url, { ca: srv.ca });
  session.setMaxListeners(64);
  const statuses = new Map<number, number>();
  try {
    const total = Number(process.env.QUARRY_HOSTILE_TOTAL ?? 20_000);
    let next = 0;
    const worker = async () => {
      while (next < total) {
        next++;
        const c = generate(r);
        const res = await rawRequest(srv, 'POST', '/mcp', c.body, { headers: c.headers, timeoutMs: 30_000, ...(c.protocol ? { protocol: c.protocol } : { session }) })
          .catch((err: Error) => { throw new Error(`${err.message} for ${String(c.body).slice(0, 200)} ${JSON.stringify(c.headers)}`); });
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        assertAnswered(res, c);
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
  } finally {
    session.close();
  }
  for (const s of [200, 400, 403, 404]) assert.ok((statuses.get(s) ?? 0) > 0, `some ${s}s: ${JSON.stringify([...statuses])}`);
  const after = await rawRequest(srv, 'GET', '/api/search?q=granite', undefined);
  assert.equal(after.status, 200);
  assert.doesNotMatch(srv.stderr(), /internal error/i);
});
