// The open-loop driver of `npm run bench:http` and `npm run soak`: a real h2load run over HTTP/2 and TLS
// rotates over every URL at the asked rate, and every request's status and latency are read back from
// its log, failures counted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterWarmup, burstsOf, openLoop, parseH2loadLog, summarize } from '../../bench/h2load.js';
import { testTls } from '../support/in-process.js';

test('log lines are read as status and latency; percentiles and failures are summarized', () => {
  const entries = parseH2loadLog('1795480952116934\t200\t40357\n1795480952116927\t503\t1000\n1795480952116913\t-1\t0\n\n');
  assert.deepEqual(entries, [
    { startUs: 1795480952116934, status: 200, latencyMs: 40.357 }, { startUs: 1795480952116927, status: 503, latencyMs: 1 }, { startUs: 1795480952116913, status: -1, latencyMs: 0 },
  ]);
  const s = summarize(entries, 3, 1);
  assert.equal(s.requests, 3);
  assert.equal(s.non2xx, 1);
  assert.equal(s.failed, 1);
  assert.equal(s.latencyMs.p99, 40.357);
  assert.equal(s.latencyMs.p50, 1);
  assert.deepEqual(s.bursts, { meanSize: 3, intervalMs: 0 }, 'sent within 21 µs: one burst');
});

test('bursts: requests sent close together count as one, and the time between bursts is their mean start interval', () => {
  const at = (startUs: number) => ({ startUs, status: 200, latencyMs: 1 });
  // three bursts 10 ms apart (4, 2 and 3 requests), out of order as h2load logs them
  const entries = [0, 30, 10_000, 60, 20_050, 20, 10_100, 20_000, 20_120].map(at);
  assert.deepEqual(burstsOf(entries), { meanSize: 3, intervalMs: 10 });
  assert.deepEqual(burstsOf([0, 1_000, 2_000].map(at)), { meanSize: 1, intervalMs: 1 }, 'evenly spaced arrivals are bursts of one');
});

test('the warm-up: requests sent in the first seconds of the run are left out, whatever order the log has', () => {
  const at = (startUs: number) => ({ startUs, status: 200, latencyMs: startUs / 1e6 });
  const entries = [2_500_000, 1_000_000, 1_999_999, 3_000_000, 1_200_000].map(at);
  assert.deepEqual(afterWarmup(entries, 1).map((e) => e.startUs), [2_500_000, 3_000_000]);
  assert.equal(afterWarmup(entries, 0).length, 5);
  assert.deepEqual(afterWarmup([], 2), []);
});

test('a real h2load run sends every URL at a constant rate and reports each answer', async () => {
  const tls = await testTls();
  const seen = new Map<string, number>();
  const server = http2.createSecureServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    seen.set(req.url, (seen.get(req.url) ?? 0) + 1);
    res.writeHead(req.url.includes('fail') ? 503 : 200, { 'content-type': 'application/json' });
    res.end('{"v":1}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const dir = mkdtempSync(join(tmpdir(), 'quarry-h2load-'));
  try {
    const paths = ['/api/search?q=a', '/api/search?q=b', '/fail'];
    const r = await openLoop({ urls: paths.map((p) => `https://127.0.0.1:${port}${p}`), rate: 40, seconds: 2, warmupS: 0, clients: 2, workDir: dir });
    assert.equal(r.rate, 40);
    assert.ok(r.requests > 0);
    assert.deepEqual([...seen.keys()].sort(), [...paths].sort(), 'every URL was requested');
    // h2load stops logging at its deadline, so the requests then in flight (≤ clients × streams) may be missing.
    const fails = seen.get('/fail')!;
    assert.ok(r.non2xx > 0 && r.non2xx <= fails && r.non2xx >= fails - 2 * 8, `non-2xx ${r.non2xx}, 503s sent ${fails}`);
    assert.equal(r.failed, 0);
    assert.ok(r.latencyMs.p50 > 0 && r.latencyMs.p50 <= r.latencyMs.p99);
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
