// 20,000 generated hostile requests to the binary RPC — truncated varints, wrong wire types, unknown
// procedures, huge length prefixes, nested garbage in `Call.message`, random bytes to every method,
// malformed JSON and proto-JSON, wrong content types, malformed Connect GET queries — each answered by a
// Connect error (a 4xx with a JSON `{code, message, details}` body) or, when the bytes happen to decode
// to a valid request, a 200; never a 5xx, never a crash. Then the 1 MiB body limit: a declared and an
// undeclared oversized body are `resource_exhausted` (413). The server still answers afterwards and
// logged no internal error.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { create, toBinary } from '@bufbuild/protobuf';
import { CallSchema } from '../../src/rpc/gen/quarry/v1/call_pb.js';
import { SearchRequestSchema } from '../../src/rpc/gen/quarry/v1/search_pb.js';
import { writeFixtureCorpus } from '../support/fixture-corpus.js';
import { startServer, type TestServer } from '../support/server.js';
import { seededRandom as prng } from '../../bench/measure.js';

let srv: TestServer;
let session: http2.ClientHttp2Session;
before(async () => {
  srv = await startServer({ setup: writeFixtureCorpus });
  session = http2.connect(srv.url, { ca: srv.ca });
});
after(async () => {
  session?.close();
  await srv?.stop();
});

interface Reply { status: number; contentType: string; body: Buffer }

function send(method: string, path: string, headers: Record<string, string>, body?: Buffer): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': method, ':path': path, ...headers }, { endStream: body === undefined, signal: AbortSignal.timeout(30_000) } as http2.ClientSessionRequestOptions);
    let status = 0;
    let contentType = '';
    const chunks: Buffer[] = [];
    stream.on('response', (h) => { status = Number(h[':status']); contentType = String(h['content-type'] ?? ''); });
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('error', reject);
    stream.on('end', () => resolve({ status, contentType, body: Buffer.concat(chunks) }));
    if (body !== undefined) stream.end(body);
  });
}

// TrustedService is left out: a well-formed URL in a generated Flag would send the crawler to resolve a
// public name, and a test's traffic stays on this machine.
const PROCEDURES = [
  'quarry.v1.SearchService/Search', 'quarry.v1.SearchService/GetDoc', 'quarry.v1.SearchService/Suggest',
  'quarry.v1.ControlService/GetInventory', 'quarry.v1.ControlService/GetDeployStatus', 'quarry.v1.ControlService/GetOperation',
  'quarry.v1.ControlService/Build', 'quarry.v1.ControlService/Stage', 'quarry.v1.ControlService/Deploy',
  'quarry.v1.ControlService/Rollback', 'quarry.v1.ControlService/Reconcile', 'quarry.v1.ControlService/Restart',
  'quarry.v1.AuthService/Attenuate',
];

function varint(n: bigint): number[] {
  const out: number[] = [];
  while (n > 0x7fn) { out.push(Number(n & 0x7fn) | 0x80); n >>= 7n; }
  out.push(Number(n));
  return out;
}

interface Case { method: string; path: string; headers: Record<string, string>; body?: Buffer; kind: string }

function generate(r: () => number): Case {
  const int = (n: number) => Math.floor(r() * n);
  const pick = <T>(xs: readonly T[]) => xs[int(xs.length)]!;
  const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => int(256)));
  const proto = { 'content-type': 'application/proto' };
  const call = (procedure: string, message: Uint8Array) => Buffer.from(toBinary(CallSchema, create(CallSchema, { procedure, message })));
  const validSearch = () => toBinary(SearchRequestSchema, create(SearchRequestSchema, { q: pick(['granite', 'elephant', '"a b"', 'x'.repeat(int(2000))]), page: int(3) }));
  switch (int(11)) {
    case 0: { // a valid Call cut anywhere, or ending in a varint that never ends
      const full = call(pick(PROCEDURES), validSearch());
      const cut = full.subarray(0, int(full.length));
      return { kind: 'truncated', method: 'POST', path: '/api/rpc', headers: proto, body: Buffer.concat([cut, Buffer.from(Array.from({ length: int(12) }, () => 0x80 | int(128)))]) };
    }
    case 1: { // Call fields with the wrong wire type (procedure as varint/fixed32/fixed64/group, message as varint)
      const tag = pick([0x08, 0x0d, 0x09, 0x0b, 0x10, 0x15, 0x13, 0x0c]);
      return { kind: 'wire type', method: 'POST', path: '/api/rpc', headers: proto, body: Buffer.concat([Buffer.from([tag]), bytes(int(16))]) };
    }
    case 2: { // unknown procedures, in both codecs and on Connect paths
      const name = pick(['quarry.v1.SearchService/Nope', 'quarry.v2.SearchService/Search', 'Search', '', '/', 'quarry.v1.SearchService/search',
        bytes(int(40)).toString('latin1'), 'x'.repeat(int(5000))]);
      const json = r() < 0.5;
      if (r() < 0.3) return { kind: 'unknown path', method: pick(['POST', 'GET']), path: `/api/rpc/${pick(['quarry.v1.Nope', 'quarry.v1.SearchService', 'a'])}/${pick(['Search', 'Nope', 'x%00y'])}?encoding=proto&message=`, headers: proto, body: Buffer.alloc(0) };
      return json
        ? { kind: 'unknown procedure', method: 'POST', path: '/api/rpc', headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify({ procedure: name, message: {} })) }
        : { kind: 'unknown procedure', method: 'POST', path: '/api/rpc', headers: proto, body: call(name, new Uint8Array()) };
    }
    case 3: { // length prefixes far past the end of the body
      const len = pick([2n ** 31n, 2n ** 32n - 1n, 2n ** 63n, 2n ** 64n - 1n, BigInt(int(1 << 20))]);
      const inner = r() < 0.5;
      const prefix = Buffer.from([0x12, ...varint(len)]);
      const body = inner ? call(pick(PROCEDURES), Buffer.concat([Buffer.from([0x0a, ...varint(len)]), bytes(int(8))])) : Buffer.concat([prefix, bytes(int(32))]);
      return { kind: 'huge length', method: 'POST', path: '/api/rpc', headers: proto, body };
    }
    case 4: { // nested garbage in Call.message: random bytes, or random nesting of length-delimited fields and groups
      let m = bytes(int(64));
      for (let depth = int(200); depth > 0; depth--) m = Buffer.concat([Buffer.from([pick([0x0a, 0x12, 0x1a, 0x32]), ...varint(BigInt(m.length))]), m]);
      if (r() < 0.3) m = Buffer.concat([Buffer.alloc(int(100_000), 0x0b), m]); // start-group tags nested deep
      return { kind: 'nested garbage', method: 'POST', path: '/api/rpc', headers: proto, body: call(pick(PROCEDURES), m) };
    }
    case 5: // random bytes straight to a Connect path
      return { kind: 'connect bytes', method: 'POST', path: `/api/rpc/${pick(PROCEDURES)}`, headers: proto, body: bytes(int(300)) };
    case 6: { // wrong or odd content types
      const ct = pick(['', 'text/plain', 'application/protobuf', 'application/grpc', 'application/grpc+proto', 'application/proto; charset=utf-8',
        'application/json; charset=latin1', 'multipart/form-data', 'application/x-www-form-urlencoded', '\u00ff', 'application/connect+proto']);
      return { kind: 'content type', method: 'POST', path: pick(['/api/rpc', `/api/rpc/${pick(PROCEDURES)}`]), headers: ct === '' ? {} : { 'content-type': ct }, body: call(pick(PROCEDURES), validSearch()) };
    }
    case 7: { // malformed JSON and proto-JSON
      const body = pick([
        '{', '[]', 'null', '"x"', '{"procedure": 5}', '{"procedure": "quarry.v1.SearchService/Search", "message": 7}',
        '{"procedure": "quarry.v1.SearchService/Search", "message": "!!!not base64"}',
        '{"procedure": "quarry.v1.SearchService/Search", "message": {"q": 5, "page": -1}}',
        '{"procedure": "quarry.v1.SearchService/GetDoc", "message": {"cid": "-1"}}',
        '{"procedure": "quarry.v1.SearchService/GetDoc", "message": {"cid": "99999999999999999999999"}}',
        '{"procedure": "quarry.v1.SearchService/Search", "message": {"scope": "SCOPE_NOPE"}}',
        '['.repeat(int(100_000)), `{"procedure": "quarry.v1.SearchService/Search", "message": ${'{"a":'.repeat(int(5000))}1${'}'.repeat(int(5000))}}`,
        bytes(int(200)).toString('latin1'),
      ]);
      return { kind: 'json', method: 'POST', path: pick(['/api/rpc', `/api/rpc/${pick(PROCEDURES)}`]), headers: { 'content-type': 'application/json' }, body: Buffer.from(body) };
    }
    case 8: { // Connect GET with malformed queries
      const q = pick(['', 'encoding=xml&message=x', 'encoding=proto&base64=1&message=%%%', 'encoding=proto&base64=1&message=' + bytes(int(100)).toString('base64url'),
        'encoding=json&message=' + encodeURIComponent(bytes(int(60)).toString('latin1')), 'encoding=json&message={"q":""}', 'connect=v2&encoding=json&message={}',
        'encoding=proto&compression=gzip&message=', 'encoding=proto&base64=2&message=']);
      return { kind: 'connect get', method: 'GET', path: `/api/rpc/${pick(PROCEDURES)}?${q}`, headers: {} };
    }
    case 9: // bad Connect headers
      return { kind: 'headers', method: 'POST', path: `/api/rpc/${pick(PROCEDURES)}`, headers: { ...proto, ...pick<Record<string, string>>([{ 'connect-protocol-version': pick(['2', '0', 'v1', '']) }, { 'connect-timeout-ms': pick(['-1', 'abc', '12345678901', '', '1.5', '1e3']) }]) }, body: Buffer.from(validSearch()) };
    default: // wrong methods on the RPC paths
      return { kind: 'method', method: pick(['PUT', 'DELETE', 'PATCH', 'GET']), path: pick(['/api/rpc', `/api/rpc/${pick(PROCEDURES)}`]), headers: proto, body: Buffer.alloc(0) };
  }
}

test('20,000 hostile requests: Connect errors or valid answers, never a 5xx, never a crash', async () => {
  const r = prng(14);
  const N = 20_000;
  const seen = new Map<string, number>();
  let next = 0;
  async function worker(): Promise<void> {
    while (next < N) {
      const i = next++;
      const c = generate(r);
      const res = await send(c.method, c.path, c.headers, c.body).catch((err: Error) => assert.fail(`#${i} ${c.kind} ${c.method} ${c.path.slice(0, 80)}: ${err.message}`));
      const what = `#${i} ${c.kind} ${c.method} ${c.path.slice(0, 80)}: ${res.status} ${res.body.toString('utf8').slice(0, 200)}`;
      assert.ok(res.status === 200 || (res.status >= 400 && res.status < 500), what);
      if (res.status !== 200) {
        assert.equal(res.contentType, 'application/json', what);
        const e = JSON.parse(res.body.toString('utf8')) as { code: string; message: string; details: { type: string }[] };
        assert.match(e.code, /^[a-z_]+$/, what);
        assert.ok(e.message.length > 0, what);
        assert.equal(e.details[0]?.type, 'quarry.v1.ErrorDetail', what);
        seen.set(`${c.kind} ${e.code}`, (seen.get(`${c.kind} ${e.code}`) ?? 0) + 1);
      }
    }
  }
  await Promise.all(Array.from({ length: 16 }, worker));
  for (const kind of ['truncated', 'wire type', 'unknown procedure', 'huge length', 'nested garbage', 'content type', 'json', 'connect get']) {
    assert.ok([...seen.keys()].some((k) => k.startsWith(`${kind} `)), `${kind} produced errors`);
  }
  assert.ok(seen.get('content type invalid_argument') ?? 0, 'wrong content types are refused');
  assert.doesNotMatch(srv.stderr(), /internal error/);
  const alive = await send('POST', '/api/rpc/quarry.v1.SearchService/Search', { 'content-type': 'application/json' }, Buffer.from('{"q":"granite"}'));
  assert.equal(alive.status, 200);
});

test('the 1 MiB body limit holds: declared or not, a larger body is resource_exhausted (413)', async () => {
  const big = Buffer.alloc(1024 * 1024 + 1, 0x0a);
  const variants: Record<string, string>[] = [{ 'content-type': 'application/proto', 'content-length': String(big.length) }, { 'content-type': 'application/proto' }];
  for (const headers of variants) {
    for (const path of ['/api/rpc', '/api/rpc/quarry.v1.SearchService/Search']) {
      const res = await send('POST', path, headers, big);
      assert.equal(res.status, 413, path);
      assert.equal(JSON.parse(res.body.toString('utf8')).code, 'resource_exhausted');
    }
  }
  const alive = await send('POST', '/api/rpc/quarry.v1.SearchService/Search', { 'content-type': 'application/json' }, Buffer.from('{"q":"granite"}'));
  assert.equal(alive.status, 200);
});
