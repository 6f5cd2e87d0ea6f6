// The RPC and REST faces answer the same: 200 random queries over the fixture corpus (terms, +required,
// -excluded, phrases, site:, typos, every scope, pages 0–3), each sent as a binary `Call` to POST /api/rpc
// and as GET /api/search. The RPC answer, decoded and written as proto-JSON, equals the REST body after
// the type mapping of docs/rpc.md: proto field names are the REST keys, `v: 1` added, `scope` SCOPE_X → x, int64/uint64 (`score`, `total`)
// from proto-JSON strings to numbers (cid stays the decimal string both faces write). An error must be
// the same catalogue code with the same status on both faces.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { create, fromBinary, toBinary, toJson } from '@bufbuild/protobuf';
import { CallSchema, ErrorDetailSchema } from '../../src/rpc/gen/quarry/v1/call_pb.js';
import { Scope, SearchRequestSchema, SearchResponseSchema } from '../../src/rpc/gen/quarry/v1/search_pb.js';
import { rawRequest } from '../support/client.js';
import { writeFixtureCorpus } from '../support/fixture-corpus.js';
import { startServer, type TestServer } from '../support/server.js';
import { seededRandom as prng } from '../../bench/measure.js';

let srv: TestServer;
before(async () => { srv = await startServer({ setup: writeFixtureCorpus }); });
after(async () => { await srv?.stop(); });

const WORDS = ['granite', 'elephant', 'basalt', 'quick', 'brown', 'fox', 'dog', 'quarry', 'stones', 'docs', 'example',
  'huge', 'reference', 'columns', 'statue', 'manual', 'darker', 'granit', 'elephnt', 'zzzz', 'the', 'a'];
const SITES = ['example.com', 'docs.example.com', 'badexample.com', 'nowhere.test'];

function randomQuery(r: () => number): { q: string; scope: 'own' | 'web' | 'trusted'; page: number } {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  const clauses: string[] = [];
  const n = 1 + Math.floor(r() * 4);
  for (let i = 0; i < n; i++) {
    const x = r();
    if (x < 0.55) clauses.push(pick(WORDS));
    else if (x < 0.7) clauses.push(`+${pick(WORDS)}`);
    else if (x < 0.8) clauses.push(`-${pick(WORDS)}`);
    else if (x < 0.92) clauses.push(`"${pick(WORDS)} ${pick(WORDS)}"`);
    else clauses.push(`site:${pick(SITES)}`);
  }
  return { q: clauses.join(' '), scope: pick(['own', 'own', 'web', 'trusted'] as const), page: r() < 0.8 ? 0 : Math.floor(r() * 4) };
}

const SCOPE_ENUM = { own: Scope.OWN, web: Scope.WEB, trusted: Scope.TRUSTED } as const;

/** docs/rpc.md's mapping from the proto-JSON of a SearchResponse to the REST body. */
function asRest(json: Record<string, any>): Record<string, unknown> {
  return {
    v: 1, ...json,
    scope: String(json.scope).replace(/^SCOPE_/, '').toLowerCase(),
    total: Number(json.total),
    results: (json.results as Record<string, any>[]).map((h) => ({ ...h, score: Number(h.score) })),
  };
}

test('200 random queries: the RPC answer equals the REST body modulo the documented type mapping', async () => {
  const r = prng(20261124);
  let ok = 0;
  let errors = 0;
  for (let i = 0; i < 200; i++) {
    const { q, scope, page } = randomQuery(r);
    const params = new URLSearchParams({ q, ...(scope === 'own' ? {} : { scope }), ...(page ? { page: String(page) } : {}) });
    const rest = await rawRequest(srv, 'GET', `/api/search?${params}`, undefined);
    const call = create(CallSchema, {
      procedure: 'quarry.v1.SearchService/Search',
      message: toBinary(SearchRequestSchema, create(SearchRequestSchema, { q, scope: scope === 'own' ? Scope.UNSPECIFIED : SCOPE_ENUM[scope], page })),
    });
    const rpc = await rawRequest(srv, 'POST', '/api/rpc', Buffer.from(toBinary(CallSchema, call)), { headers: { 'content-type': 'application/proto' } });
    const what = `query ${i}: ${JSON.stringify({ q, scope, page })}`;
    assert.equal(rpc.status, rest.status, `${what}: ${rpc.text.slice(0, 200)}`);
    if (rest.status === 200) {
      assert.equal(rpc.headers['content-type'], 'application/proto');
      const decoded = toJson(SearchResponseSchema, fromBinary(SearchResponseSchema, rpc.body), { alwaysEmitImplicit: true, useProtoFieldName: true }) as Record<string, any>;
      assert.deepEqual(asRest(decoded), rest.json, what);
      ok++;
    } else {
      const detail = fromBinary(ErrorDetailSchema, Buffer.from(rpc.json.details[0].value, 'base64'));
      assert.equal(detail.code, rest.json.error.code, what);
      assert.equal(rpc.json.message, rest.json.error.message, what);
      errors++;
    }
  }
  assert.ok(ok >= 150, `most random queries are valid searches (${ok} answered, ${errors} errors)`);
});
