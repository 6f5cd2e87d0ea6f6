// GET /api/rpc.contract serves the contract as a FileDescriptorSet with its imports (binary), as the
// .proto sources (?format=proto) and as proto-JSON (?format=json), each with a strong ETag from the
// set's sha256 honoured by If-None-Match; the same hash is the Rpc-Contract header of every RPC
// response, errors included. The server's own refusals on RPC paths (405, 429) are Connect errors.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fromBinary } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { rawRequest } from '../support/client.js';
import { REPO_ROOT, startServer, type TestServer } from '../support/server.js';

let srv: TestServer;
before(async () => { srv = await startServer(); });
after(async () => { await srv?.stop(); });

test('the binary descriptor set: imports included, comments kept, ETag = sha256, 304 on If-None-Match', async () => {
  const r = await rawRequest(srv, 'GET', '/api/rpc.contract', undefined);
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], 'application/x-protobuf');
  const hash = `sha256:${createHash('sha256').update(r.body).digest('hex')}`;
  assert.equal(r.headers.etag, `"${hash}"`);
  assert.equal(r.headers['rpc-contract'], hash);
  assert.ok(r.body.equals(readFileSync(join(REPO_ROOT, 'contract/quarry.v1.binpb'))));
  const set = fromBinary(FileDescriptorSetSchema, r.body);
  const names = set.file.map((f) => f.name);
  for (const f of ['google/protobuf/timestamp.proto', 'google/protobuf/struct.proto', 'quarry/v1/call.proto', 'quarry/v1/search.proto',
    'quarry/v1/control.proto', 'quarry/v1/trusted.proto', 'quarry/v1/auth.proto']) assert.ok(names.includes(f), f);
  const search = set.file.find((f) => f.name === 'quarry/v1/search.proto')!;
  assert.ok(search.sourceCodeInfo?.location.some((l) => /Full-text search of one corpus/.test(l.leadingComments ?? '')), 'comments are in the set');

  for (const inm of [`"${hash}"`, `W/"${hash}"`, `"other", "${hash}"`, '*']) {
    const again = await rawRequest(srv, 'GET', '/api/rpc.contract', undefined, { headers: { 'if-none-match': inm } });
    assert.equal(again.status, 304, inm);
    assert.equal(again.body.length, 0);
    assert.equal(again.headers.etag, `"${hash}"`);
  }
  assert.equal((await rawRequest(srv, 'GET', '/api/rpc.contract', undefined, { headers: { 'if-none-match': '"sha256:0"' } })).status, 200);
});

test('?format=proto is the .proto sources and ?format=json the set as proto-JSON, each with its own ETag', async () => {
  const bin = await rawRequest(srv, 'GET', '/api/rpc.contract', undefined);
  const hash = bin.headers['rpc-contract']!;
  const proto = await rawRequest(srv, 'GET', '/api/rpc.contract?format=proto', undefined);
  assert.equal(proto.status, 200);
  assert.match(proto.headers['content-type']!, /^text\/plain/);
  assert.equal(proto.headers.etag, `"${hash}+proto"`);
  assert.match(proto.text, /package quarry\.v1;/);
  assert.match(proto.text, /rpc Search\(SearchRequest\) returns \(SearchResponse\)/);
  assert.match(proto.text, /option idempotency_level = NO_SIDE_EFFECTS;/);
  assert.equal((await rawRequest(srv, 'GET', '/api/rpc.contract?format=proto', undefined, { headers: { 'if-none-match': `"${hash}+proto"` } })).status, 304);
  const json = await rawRequest(srv, 'GET', '/api/rpc.contract?format=json', undefined);
  assert.equal(json.status, 200);
  assert.equal(json.headers.etag, `"${hash}+json"`);
  assert.ok(json.json.file.some((f: { name: string }) => f.name === 'quarry/v1/control.proto'));
  const bad = await rawRequest(srv, 'GET', '/api/rpc.contract?format=yaml', undefined);
  assert.equal(bad.status, 400);
  assert.equal(bad.json.error.param, 'format');
});

test('every RPC response carries Rpc-Contract, errors and the server\'s own refusals included, as Connect errors', async () => {
  const hash = (await rawRequest(srv, 'GET', '/api/rpc.contract', undefined)).headers['rpc-contract'];
  const cases: [string, string, string | undefined, Record<string, string>, number, string][] = [
    ['POST', '/api/rpc/quarry.v1.SearchService/Suggest', '{"q":"qu"}', { 'content-type': 'application/json' }, 200, ''],
    ['POST', '/api/rpc/quarry.v1.SearchService/Search', '{"q":""}', { 'content-type': 'application/json' }, 400, 'invalid_argument'],
    ['POST', '/api/rpc', '{"procedure":"quarry.v1.Nope/Nope"}', { 'content-type': 'application/json' }, 404, 'not_found'],
    // A JSON Call whose message is canonical proto-JSON bytes: base64 of the binary request (q: "qu").
    ['POST', '/api/rpc', `{"procedure":"quarry.v1.SearchService/Suggest","message":"${Buffer.from([0x0a, 2, 0x71, 0x75]).toString('base64')}"}`, { 'content-type': 'application/json' }, 200, ''],
    ['POST', '/api/rpc', 'x', { 'content-type': 'text/plain' }, 415, 'invalid_argument'],
    ['GET', '/api/rpc', undefined, {}, 405, 'unimplemented'],
    ['GET', '/api/rpc/quarry.v1.ControlService/Build?encoding=json&message={}', undefined, {}, 405, 'unimplemented'],
  ];
  for (const [method, path, body, headers, status, code] of cases) {
    const r = await rawRequest(srv, method, path, body, { headers });
    assert.equal(r.status, status, `${method} ${path}: ${r.text}`);
    assert.equal(r.headers['rpc-contract'], hash, path);
    if (status === 200) assert.equal(r.json.prefix, 'qu', path);
    if (code) {
      assert.equal(r.json.code, code, path);
      assert.equal(r.json.details[0].type, 'quarry.v1.ErrorDetail');
    }
  }
});

test('rate limits apply to the RPC as to REST, answered as a Connect resource_exhausted with Retry-After', async () => {
  const limited = await startServer({ rateLimit: { perSecond: 0.001, burst: 1 } });
  try {
    const call = () => rawRequest(limited, 'POST', '/api/rpc/quarry.v1.SearchService/Suggest', '{"q":"qu"}', { headers: { 'content-type': 'application/json' } });
    assert.equal((await call()).status, 200);
    const r = await call();
    assert.equal(r.status, 429);
    assert.equal(r.json.code, 'resource_exhausted');
    assert.ok(Number(r.headers['retry-after']) >= 1);
  } finally {
    await limited.stop();
  }
});
