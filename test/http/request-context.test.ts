// A request's context has no accessor of its own. V8 makes the accessor pair of a getter defined on an
// object (a getter in an object literal, `Object.defineProperty`) in the old generation; made per request,
// it holds a fresh closure that reaches the whole request, and so every request survived each scavenge
// until the next full collection. The serving thread, promoting hundreds of requests a second, then ran
// a full collection every few seconds that every request in flight waited out (docs/benchmarks.md, the
// open loop's tail). A getter on a class's prototype is made once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RequestContext, RouteGroup } from '../../src/http/route.js';
import { connect } from '../support/client.js';
import { startInProcess } from '../support/in-process.js';

test('request contexts carry no accessor of their own, over HTTP/2 and HTTP/1.1, and read as before', async () => {
  const seen: RequestContext[] = [];
  const group: RouteGroup = {
    name: 'shape',
    routes: [{
      method: 'GET', pattern: '/t/shape', handler: async (ctx) => {
        seen.push(ctx);
        // what handlers read: the signal (made on first use), the query, the deadline
        return { json: { aborted: ctx.signal.aborted, q: ctx.query.get('q'), deadline: ctx.deadline ?? null } };
      },
    }],
  };
  const srv = await startInProcess([group], { ratePerSecond: 0 });
  try {
    const api = connect(srv, { validate: false });
    for (const path of ['/t/shape?q=a', '/t/shape?q=b&q=c', '/t/shape']) {
      assert.equal((await api.get(path)).status, 200);
      assert.equal((await api.get(path, { protocol: 'h1' })).status, 200);
    }
    api.close();
    assert.equal(seen.length, 6);
    for (const ctx of seen) {
      const accessors = Object.entries(Object.getOwnPropertyDescriptors(ctx)).filter(([, d]) => d.get !== undefined || d.set !== undefined).map(([k]) => k);
      assert.deepEqual(accessors, [], 'a context defines accessors of its own');
      assert.equal(ctx.signal.aborted, false);
      assert.equal(ctx.signal, ctx.signal, 'one signal per request');
    }
  } finally {
    await srv.close();
  }
});
