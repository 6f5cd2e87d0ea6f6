// A handler learns when its request times out (`ctx.deadline`), so work it hands on (a search on the
// pool) stops when the server answers 503; a request that cannot time out has no deadline.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RouteGroup } from '../../src/http/route.js';
import { connect } from '../support/client.js';
import { startInProcess } from '../support/in-process.js';

const group: RouteGroup = {
  name: 'deadline',
  routes: [
    { method: 'GET', pattern: '/t/deadline', handler: async (ctx) => ({ json: { deadline: ctx.deadline ?? null, now: Date.now() } }) },
  ],
};

test('the request deadline is the arrival plus the request timeout, and absent without one', async () => {
  const before = Date.now();
  const timed = await startInProcess([group], { ratePerSecond: 0, requestTimeoutMs: 45_000 });
  const untimed = await startInProcess([group], { ratePerSecond: 0, requestTimeoutMs: 0 });
  try {
    const r = await connect(timed, { validate: false }).get('/t/deadline');
    assert.equal(r.status, 200);
    assert.equal(typeof r.json.deadline, 'number');
    assert.ok(r.json.deadline > r.json.now && r.json.deadline <= r.json.now + 45_000, JSON.stringify(r.json));
    assert.ok(r.json.deadline >= before + 45_000);
    const u = await connect(untimed, { validate: false }).get('/t/deadline');
    assert.equal(u.json.deadline, null);
  } finally {
    await timed.close();
    await untimed.close();
  }
});
