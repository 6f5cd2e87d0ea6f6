// The fuzz suite's short run (test/fuzz/runner.ts): 20,000 hostile inputs over HTTP/1.1, HTTP/2 and raw
// TLS against a real server. A fixed seed by default, so a failure replays with
// `npm run fuzz -- --seed 20261124 --count 20000 --only <index>`; QUARRY_FUZZ_SEED picks another.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runFuzz } from './runner.js';

test('20,000 hostile inputs: no 5xx, no hang, no crash, contract-shaped errors, nothing logged as internal, RSS bounded', async () => {
  const seed = Number(process.env.QUARRY_FUZZ_SEED ?? 20261124);
  const report = await runFuzz({ seed, count: 20_000 });
  const summary = { ...report, failures: report.failures.slice(0, 10) };
  assert.equal(report.inputs, 20_000, JSON.stringify(summary));
  assert.equal(report.crashed, false, JSON.stringify(summary));
  assert.deepEqual(report.internalLogLines, [], JSON.stringify(summary));
  assert.ok(report.maxRssMiB <= report.rssBoundMiB, JSON.stringify(summary));
  assert.equal(report.failureCount, 0, JSON.stringify(summary, null, 1));
  // Every kind ran, and the server answered something other than errors (the inputs reach the handlers).
  for (const [kind, n] of Object.entries(report.perKind)) assert.ok(n > 0, kind);
  assert.ok((report.statuses['200'] ?? 0) > 1000, JSON.stringify(report.statuses));
});
