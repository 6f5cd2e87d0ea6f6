// GET /api/openapi.json (CONTRACT §9): OpenAPI 3.1, info.version 1.0.0, valid for a third-party validator
// (@seriousme/openapi-schema-validator), describing every REST endpoint of the running service with its
// parameters, responses and error bodies; and the merge of route-group fragments refuses clashes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startService } from '../../src/service.js';
import { buildOpenApi, errorResponses } from '../../src/rest/openapi.js';
import type { RouteGroup } from '../../src/http/route.js';
import { connect, OpenApiResponseValidator, type TestClient } from '../support/client.js';
import { startServer, type TestServer } from '../support/server.js';

let srv: TestServer;
let api: TestClient;
let doc: Record<string, any>;
before(async () => {
  srv = await startServer();
  api = connect(srv);
  const r = await api.get('/api/openapi.json');
  assert.equal(r.status, 200);
  assert.match(r.headers['content-type']!, /^application\/json/);
  doc = r.json;
});
after(async () => {
  api?.close();
  await srv?.stop();
});

test('the document is OpenAPI 3.1 with info.version 1.0.0 and passes a third-party validator', async () => {
  assert.match(doc.openapi, /^3\.1\.\d+$/);
  assert.equal(doc.info.version, '1.0.0');
  const result = await new Validator().validate(doc);
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 1));
});

test('every REST endpoint of the interface is described, with parameters and error responses', () => {
  const expected: [string, string][] = [
    ['get', '/api/search'], ['get', '/api/doc'], ['get', '/api/suggest'], ['get', '/api/openapi.json'],
    ['get', '/api/events'], ['get', '/api/inventory'], ['post', '/api/build'], ['post', '/api/upload'],
    ['post', '/api/deploy'], ['get', '/api/deploy_status'], ['post', '/api/rollback'],
  ];
  for (const [method, path] of expected) assert.ok(doc.paths[path]?.[method], `${method.toUpperCase()} ${path} is not described`);
  const search = doc.paths['/api/search'].get;
  assert.deepEqual(search.parameters.map((p: { name: string }) => p.name).sort(), ['page', 'q', 'scope']);
  assert.deepEqual(search.parameters.find((p: { name: string }) => p.name === 'scope').schema.enum, ['web', 'trusted']);
  for (const status of ['200', '400', '401', '429', '500', '503']) assert.ok(search.responses[status], `search ${status}`);
  assert.ok(doc.paths['/api/doc'].get.responses['404']);
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
    for (const [method, op] of Object.entries(ops)) {
      for (const status of ['429', '500', '503']) assert.ok(op.responses[status], `${method} ${path} lacks ${status}`);
    }
  }
  assert.deepEqual(doc.components.schemas.Error.required, ['v', 'error']);
});

test('every /api route the service mounts carries its OpenAPI operation (nothing mounted goes undescribed)', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'quarry-openapi-'));
  writeFileSync(join(dataDir, 'corpora.json'), JSON.stringify({ own: { docs: null, site: null, library: null } }));
  const service = await startService({ dataDir, port: 0, log: { info() {}, error() {} } });
  try {
    const missing = service.server.router.routes
      .filter(({ route }) => route.pattern.startsWith('/api/') && !route.operation)
      .map(({ route, group }) => `${route.method} ${route.pattern} (${group})`);
    assert.deepEqual(missing, []);
    for (const { route } of service.server.router.routes) {
      if (!route.operation) continue;
      assert.ok(doc.paths[route.pattern]?.[route.method.toLowerCase()], `${route.method} ${route.pattern} mounted but not served`);
    }
  } finally {
    await service.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('merging refuses two groups that define the same component or operationId', () => {
  const h: RouteGroup['routes'][number]['handler'] = async () => ({ json: {} });
  const a: RouteGroup = { name: 'a', routes: [{ method: 'GET', pattern: '/a', handler: h, operation: { operationId: 'same', responses: {} } }], openapi: { components: { schemas: { Thing: {} } } } };
  const b: RouteGroup = { name: 'b', routes: [{ method: 'GET', pattern: '/b', handler: h, operation: { operationId: 'other', responses: {} } }], openapi: { components: { schemas: { Thing: {} } } } };
  assert.throws(() => buildOpenApi([a, b]), /components?.*schemas\/Thing.*a and b/);
  const c: RouteGroup = { name: 'c', routes: [{ method: 'GET', pattern: '/c', handler: h, operation: { operationId: 'same', responses: {} } }] };
  assert.throws(() => buildOpenApi([a, c]), /operationId same.*a and c/);
  const e: RouteGroup = { name: 'e', routes: [], openapi: { components: { schemas: { Error: {} } } } };
  assert.throws(() => buildOpenApi([e]), /schemas\/Error.*http and e/);
});

test('errorResponses groups codes by status and references the shared Error schema', () => {
  const r = errorResponses('bad_query', 'bad_scope', 'not_found', 'rate_limited');
  assert.deepEqual(Object.keys(r).sort(), ['400', '404', '429']);
  assert.match(String(r['400']!.description), /bad_query.*bad_scope/);
  assert.deepEqual((r['404']!.content as any)['application/json'].schema, { $ref: '#/components/schemas/Error' });
  assert.ok((r['429']!.headers as any)['Retry-After']);
});

test('HEAD on the document answers without a body', async () => {
  const r = await api.request('HEAD', '/api/openapi.json');
  assert.equal(r.status, 200);
  assert.equal(r.body.length, 0);
});

test('every operation has an operationId and summary, and every response and parameter schema compiles (no dangling $ref)', () => {
  const validator = new OpenApiResponseValidator(doc);
  const esc = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
  let compiled = 0;
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
    for (const [method, op] of Object.entries(ops)) {
      assert.equal(typeof op.operationId, 'string', `${method} ${path} operationId`);
      assert.equal(typeof op.summary, 'string', `${method} ${path} summary`);
      for (const [i, p] of (op.parameters ?? []).entries()) {
        assert.ok(p.schema, `${method} ${path} parameter ${p.name} has a schema`);
        validator.compile(`/paths/${esc(path)}/${method}/parameters/${i}/schema`);
        compiled++;
      }
      for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
        for (const media of Object.keys(response.content ?? {})) {
          if (!response.content[media].schema) continue;
          validator.compile(`/paths/${esc(path)}/${method}/responses/${status}/content/${esc(media)}/schema`);
          compiled++;
        }
      }
    }
  }
  assert.ok(compiled > 50, `${compiled} schemas compiled`);
});
