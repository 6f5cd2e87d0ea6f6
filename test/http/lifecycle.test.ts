// The life of a `quarry serve` process: SIGHUP reloads the operator's certificate without dropping open
// connections; SIGTERM lets the request in flight finish, publishes nothing new, and exits 0; the
// machine-readable start-up lines carry what a client needs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateSelfSigned, loadTls } from '../../src/http/tls.js';
import { rawRequest } from '../support/client.js';
import { startServer } from '../support/server.js';

test('start-up prints the URL, port and fingerprint; the port is the one listening', async () => {
  const srv = await startServer();
  try {
    const listening = srv.events.find((e) => e.event === 'listening')!;
    assert.equal(listening.url, `https://127.0.0.1:${srv.port}`);
    assert.match(String(listening.fingerprint256), /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    const r = await rawRequest(srv, 'GET', '/api/openapi.json', undefined);
    assert.equal(r.status, 200);
  } finally {
    assert.equal((await srv.stop()).code, 0);
  }
});

test('SIGHUP reloads --cert/--key: an open HTTP/2 session keeps working, new connections get the new certificate', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-hup-'));
  const a = { certFile: join(dir, 'a.crt'), keyFile: join(dir, 'a.key') };
  const b = { certFile: join(dir, 'b.crt'), keyFile: join(dir, 'b.key') };
  await generateSelfSigned(a);
  await generateSelfSigned(b);
  const live = { certFile: join(dir, 'live.crt'), keyFile: join(dir, 'live.key') };
  copyFileSync(a.certFile, live.certFile);
  copyFileSync(a.keyFile, live.keyFile);
  const srv = await startServer({ args: ['--cert', live.certFile, '--key', live.keyFile] });
  try {
    const certA = loadTls(a);
    const certB = loadTls(b);
    assert.equal(srv.fingerprint256, certA.fingerprint256);
    const session = http2.connect(srv.url, { ca: certA.cert });
    session.on('error', () => {});
    assert.equal((await rawRequest(srv, 'GET', '/api/suggest?q=a', undefined, { session })).status, 200);

    copyFileSync(b.certFile, live.certFile);
    copyFileSync(b.keyFile, live.keyFile);
    const reloaded = srv.waitForEvent('tls-reloaded');
    srv.child.kill('SIGHUP');
    assert.equal((await reloaded).fingerprint256, certB.fingerprint256);

    // The session opened before the reload still answers.
    assert.equal((await rawRequest(srv, 'GET', '/api/suggest?q=b', undefined, { session })).status, 200);
    assert.equal(session.closed, false);
    // A new connection sees the new certificate: trusting only the old one fails, the new one succeeds.
    await assert.rejects(rawRequest({ url: srv.url, ca: certA.cert }, 'GET', '/api/suggest?q=c', undefined));
    assert.equal((await rawRequest({ url: srv.url, ca: certB.cert }, 'GET', '/api/suggest?q=c', undefined)).status, 200);
    session.close();

    // A broken file is refused and the old certificate keeps serving.
    copyFileSync(a.keyFile, live.keyFile); // key of A with certificate of B
    srv.child.kill('SIGHUP');
    await new Promise<void>((resolve) => {
      const check = () => (srv.stderr().includes('keeping the old certificate') ? resolve() : setTimeout(check, 20));
      check();
    });
    assert.equal((await rawRequest({ url: srv.url, ca: certB.cert }, 'GET', '/api/suggest?q=d', undefined)).status, 200);
  } finally {
    assert.equal((await srv.stop()).code, 0);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('SIGTERM drains: the request in flight gets its answer, new connections are refused, exit code 0', async () => {
  const srv = await startServer();
  const session = http2.connect(srv.url, { ca: srv.ca });
  session.on('error', () => {});
  await new Promise((resolve) => session.once('connect', resolve));
  // A request whose body is still arriving is in flight on the server.
  const stream = session.request({ ':method': 'POST', ':path': '/api/auth/login/start', 'content-type': 'application/json' });
  stream.write('{"username":');
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    let status = 0; let body = '';
    stream.on('response', (h) => { status = Number(h[':status']); });
    stream.setEncoding('utf8');
    stream.on('data', (c: string) => { body += c; });
    stream.on('end', () => resolve({ status, body }));
    stream.on('error', reject);
  });
  // A PING answered means the server has processed the HEADERS frame sent before it.
  await new Promise<void>((resolve, reject) => session.ping((err) => (err ? reject(err) : resolve())));
  const exit = srv.stop('SIGTERM');
  await new Promise<void>((resolve) => {
    const check = () => (srv.stderr().includes('draining') ? resolve() : setTimeout(check, 20));
    check();
  });
  await assert.rejects(rawRequest(srv, 'GET', '/api/suggest?q=a', undefined, { protocol: 'h1' }), 'the listener is closed');
  stream.end('"nobody"}');
  const r = await response;
  assert.notEqual(r.status, 503, r.body);
  assert.ok(r.status >= 200 && r.status < 500, `${r.status} ${r.body}`);
  assert.equal(JSON.parse(r.body).v, 1);
  assert.deepEqual(await exit, { code: 0, signal: null });
  session.destroy();
});
