// Two different capabilities in one request are refused with 400 (CONTRACT §4), however they arrive:
// a repeated `Authorization` or `X-Service-Cap` header over HTTP/1.1 (node keeps the first Authorization
// and joins repeated unknown headers with ", ") and over HTTP/2 (sent by curl, whose nghttp2 sends each
// field as given; node's own client refuses to). The same capability twice stays fine.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { startAuthServer, type AuthTestServer } from './support.js';

let srv: AuthTestServer;
let a: string;
let b: string;
let caFile: string;

before(async () => {
  srv = await startAuthServer();
  a = srv.auth.capabilities.mint({ rights: ['auth.admin'], ttlSeconds: 3600, kind: 'mint' }).cap;
  b = srv.auth.capabilities.mint({ rights: ['auth.admin', 'search'], ttlSeconds: 3600, kind: 'mint' }).cap;
  caFile = join(srv.dataDir, 'test-ca.pem');
  writeFileSync(caFile, srv.ca);
});
after(async () => { await srv?.close(); });

interface Answer { status: number; body: string }

/** One HTTP/1.1 request with exactly these header lines, written on a raw TLS socket. */
function h1(headerLines: string[]): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const port = new URL(srv.url).port;
    const socket = tlsConnect({ host: '127.0.0.1', port: Number(port), ca: srv.ca, servername: 'localhost', ALPNProtocols: ['http/1.1'] });
    let data = '';
    socket.on('secureConnect', () => {
      socket.write(['GET /api/caps HTTP/1.1', 'Host: localhost', ...headerLines, 'Connection: close', '', ''].join('\r\n'));
    });
    socket.on('data', (c: Buffer) => { data += c.toString('utf8'); });
    socket.on('error', reject);
    socket.on('close', () => {
      const m = /^HTTP\/1\.1 (\d{3})/.exec(data);
      resolve({ status: m ? Number(m[1]) : 0, body: data.slice(data.indexOf('\r\n\r\n') + 4) });
    });
  });
}

/** One HTTP/2 request through curl with these header lines, each sent as its own field. */
function h2(headerLines: string[]): Promise<Answer> {
  const args = ['-s', '--http2', '--cacert', caFile, '-o', '-', '-w', '\n%{http_code}'];
  for (const h of headerLines) args.push('-H', h);
  args.push(`${srv.url}/api/caps`);
  return new Promise((resolve, reject) => {
    execFile('curl', args, (err, stdout) => {
      if (err) return reject(err);
      const cut = stdout.lastIndexOf('\n');
      resolve({ status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut) });
    });
  });
}

for (const [protocol, send] of [['HTTP/1.1', h1], ['HTTP/2', h2]] as const) {
  test(`${protocol}: two different capabilities in repeated headers are refused with 400`, async () => {
    for (const lines of [
      [`Authorization: Bearer ${a}`, `Authorization: Bearer ${b}`],
      [`X-Service-Cap: ${a}`, `X-Service-Cap: ${b}`],
      [`Authorization: Bearer ${a}`, `X-Service-Cap: ${a}`, `X-Service-Cap: ${b}`],
    ]) {
      const r = await send(lines);
      assert.equal(r.status, 400, `${lines.map((l) => l.split(':')[0]).join(', ')}: ${r.body}`);
      const body = JSON.parse(r.body) as { v: number; error: { code: string } };
      assert.equal(body.v, 1);
      assert.equal(body.error.code, 'bad_request');
      assert.ok(!r.body.includes(a) && !r.body.includes(b), 'a capability is never echoed');
    }
  });

  test(`${protocol}: the same capability repeated is one capability`, async () => {
    for (const lines of [
      [`Authorization: Bearer ${a}`, `Authorization: Bearer ${a}`],
      [`X-Service-Cap: ${a}`, `X-Service-Cap: ${a}`],
    ]) {
      const r = await send(lines);
      assert.equal(r.status, 200, r.body);
    }
  });
}
