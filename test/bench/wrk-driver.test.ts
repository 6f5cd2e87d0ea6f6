// The wrk driver of `npm run bench:http`: the generated Lua script really rotates over every path in a
// real wrk run over TLS, and the report parser reads wrk's numbers, including failed responses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDurationMs, parseWrkOutput, postRotationScript, rotationScript } from '../../bench/wrk.js';
import { testTls } from '../support/in-process.js';

test('durations in wrk units convert to milliseconds', () => {
  assert.equal(parseDurationMs('850.00us'), 0.85);
  assert.equal(parseDurationMs('3.21ms'), 3.21);
  assert.equal(parseDurationMs('1.25s'), 1250);
  assert.throws(() => parseDurationMs('fast'));
});

test('a real wrk run rotates over every path, and its report is parsed with the failures counted', async (t) => {
  if (spawnSync('wrk', ['--version']).error) {
    t.skip('wrk is not installed (scripts/system-deps.sh installs it)');
    return;
  }
  const tls = await testTls();
  const seen = new Map<string, number>();
  const server = https.createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    seen.set(req.url!, (seen.get(req.url!) ?? 0) + 1);
    res.writeHead(req.url!.includes('fail') ? 500 : 200, { 'content-type': 'application/json' });
    res.end('{"v":1}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const dir = mkdtempSync(join(tmpdir(), 'quarry-wrk-'));
  try {
    const paths = ['/api/search?q=a%20b', '/api/search?q=%22phrase%22', '/api/search?q=c', '/fail'];
    const script = join(dir, 'rotation.lua');
    writeFileSync(script, rotationScript(paths));
    // wrk runs as a child while this process serves, so the call must not block the event loop.
    const out = await new Promise<string>((resolve, reject) => {
      execFile('wrk', ['-t2', '-c2', '-d1s', '--latency', '-s', script, `https://127.0.0.1:${port}`],
        (err, stdout) => (err ? reject(err) : resolve(stdout)));
    });
    const r = parseWrkOutput(out);
    assert.equal(r.threads, 2);
    assert.equal(r.connections, 2);
    assert.ok(r.requests > 0);
    assert.ok(r.requestsPerSecond > 0);
    assert.ok(r.latencyMs.p50 > 0 && r.latencyMs.p50 <= r.latencyMs.p99);
    assert.deepEqual([...seen.keys()].sort(), [...paths].sort(), 'every path was requested');
    // wrk stops counting at the deadline, so a request or two the server answered may be missing.
    const failed = seen.get('/fail')!;
    assert.ok(r.non2xx > 0 && r.non2xx <= failed && r.non2xx >= failed - r.connections, `non-2xx ${r.non2xx}, 500s sent ${failed}`);
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the script refuses paths that are not URL-encoded', () => {
  assert.throws(() => rotationScript(['/api/search?q=two words']));
});

test('a real wrk run POSTs every binary body byte for byte, in rotation', async () => {
  const tls = await testTls();
  const bodies = [Buffer.from([0, 1, 2, 34, 92, 10, 13, 255, 128]), Buffer.from('plain'), Buffer.from(Array.from({ length: 256 }, (_, i) => i))];
  const seen = new Set<string>();
  const server = https.createServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/api/rpc' && req.headers['content-type'] === 'application/proto') seen.add(Buffer.concat(chunks).toString('hex'));
      res.writeHead(200, { 'content-type': 'application/proto' });
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const dir = mkdtempSync(join(tmpdir(), 'quarry-wrk-'));
  try {
    const script = join(dir, 'post.lua');
    writeFileSync(script, postRotationScript('/api/rpc', 'application/proto', bodies));
    const out = await new Promise<string>((resolve, reject) => {
      execFile('wrk', ['-t1', '-c1', '-d1s', '--latency', '-s', script, `https://127.0.0.1:${port}`], (err, stdout) => (err ? reject(err) : resolve(stdout)));
    });
    assert.ok(parseWrkOutput(out).requests > 0);
    assert.deepEqual([...seen].sort(), bodies.map((b) => b.toString('hex')).sort(), 'each body arrived intact');
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
