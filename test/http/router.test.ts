// The route table: overlapping or malformed patterns stop start-up naming both routes; lookup tells 404
// from 405 (with the allowed methods), answers HEAD with the GET route, and decodes path segments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Router, RouteConflictError } from '../../src/http/router.js';
import { MethodNotAllowedError, NotFoundError, BadRequestError } from '../../src/kernel/errors.js';
import type { Route, RouteGroup } from '../../src/http/route.js';

const h: Route['handler'] = async () => ({ json: {} });
const group = (name: string, ...routes: [Route['method'], string][]): RouteGroup =>
  ({ name, routes: routes.map(([method, pattern]) => ({ method, pattern, handler: h })) });

test('a duplicate route stops start-up and names both groups', () => {
  assert.throws(() => new Router([group('a', ['GET', '/api/x']), group('b', ['GET', '/api/x'])]),
    (e: Error) => e instanceof RouteConflictError && /GET \/api\/x.*group b.*duplicates.*GET \/api\/x.*group a/.test(e.message));
});

test('overlapping patterns stop start-up, naming both', () => {
  assert.throws(() => new Router([group('ops', ['GET', '/api/ops/{op_id}']), group('other', ['GET', '/api/ops/recent'])]),
    (e: Error) => e instanceof RouteConflictError && /overlaps/.test(e.message) && /ops\/\{op_id\}/.test(e.message) && /group other/.test(e.message));
  assert.throws(() => new Router([group('a', ['GET', '/api/{a}/x']), group('b', ['GET', '/api/y/{b}'])]), RouteConflictError);
  // A HEAD route would shadow the GET route's implicit HEAD.
  assert.throws(() => new Router([group('a', ['GET', '/p']), group('b', ['HEAD', '/p'])]), RouteConflictError);
});

test('the same path under different methods, or different lengths, do not conflict', () => {
  const r = new Router([group('a', ['GET', '/api/x'], ['POST', '/api/x'], ['GET', '/api/x/{id}'], ['GET', '/api/rpc/{svc}/{m}'])]);
  assert.equal(r.routes.length, 4);
});

test('malformed patterns are refused', () => {
  for (const p of ['api/x', '/api//x', '/api/{x', '/api/a{x}', '/api/{x}/{x}', '/api/{1x}']) {
    assert.throws(() => new Router([group('g', ['GET', p])]), RouteConflictError, p);
  }
});

test('lookup: match with parameters, 404, 405 with Allow, HEAD via GET', () => {
  const r = new Router([group('g', ['GET', '/api/ops/{op_id}'], ['POST', '/api/build'], ['DELETE', '/api/trusted'], ['GET', '/api/trusted'])]);
  const m = r.match('GET', '/api/ops/a%2Fb%20c');
  assert.equal(m.params.op_id, 'a/b c');
  assert.equal(m.route.pattern, '/api/ops/{op_id}');
  assert.equal(r.match('HEAD', '/api/ops/1').route.method, 'GET');
  assert.throws(() => r.match('GET', '/api/nothing'), NotFoundError);
  assert.throws(() => r.match('GET', '/api/ops/'), NotFoundError);
  assert.throws(() => r.match('GET', '/api/build'), (e: unknown) => e instanceof MethodNotAllowedError && e.allow.join() === 'POST');
  assert.throws(() => r.match('PUT', '/api/trusted'), (e: unknown) => e instanceof MethodNotAllowedError && e.allow.join() === 'GET,HEAD,DELETE');
  assert.throws(() => r.match('GET', '/api/ops/%E0%A4%A'), BadRequestError);
});
