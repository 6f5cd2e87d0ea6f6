// TLS of a real `quarry serve` process, checked with the real `openssl s_client`: TLS 1.2 refused, TLS 1.3
// accepted with the generated certificate verified; ALPN offers h2 and http/1.1; the self-signed key is
// mode 0600; the printed fingerprint is the certificate's; a second start reuses the certificate.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type TestServer } from '../support/server.js';

function sClient(port: number, ...args: string[]): { code: number | null; out: string } {
  const r = spawnSync('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-servername', 'localhost', ...args], {
    input: '', encoding: 'utf8', timeout: 20_000,
  });
  if (r.error) throw new Error(`openssl s_client could not run (is Debian openssl installed?): ${r.error.message}`);
  return { code: r.status, out: `${r.stdout}\n${r.stderr}` };
}

let srv: TestServer;
let dataDir: string;
before(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'quarry-tls-test-'));
  srv = await startServer({ dataDir, waitFor: 'listening' });
});
after(async () => {
  await srv?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('openssl s_client -tls1_2 is refused', () => {
  const r = sClient(srv.port, '-tls1_2');
  assert.notEqual(r.code, 0, r.out);
  assert.match(r.out, /alert protocol version|no protocols available|wrong version number|handshake failure/i);
  assert.doesNotMatch(r.out, /New, TLSv1\.2/); // no session was established
  assert.match(r.out, /Cipher is \(NONE\)/);
});

test('openssl s_client -tls1_3 is accepted and verifies the generated certificate', () => {
  const r = sClient(srv.port, '-tls1_3', '-CAfile', srv.certFile, '-verify_return_error');
  assert.equal(r.code, 0, r.out);
  assert.match(r.out, /New, TLSv1\.3/);
  assert.match(r.out, /Verify return code: 0 \(ok\)/);
});

test('ALPN negotiates h2 and http/1.1', () => {
  assert.match(sClient(srv.port, '-tls1_3', '-alpn', 'h2').out, /ALPN protocol: h2/);
  assert.match(sClient(srv.port, '-tls1_3', '-alpn', 'http/1.1').out, /ALPN protocol: http\/1\.1/);
});

test('the self-signed key is private (0600) and the printed fingerprint is the certificate\'s SHA-256', () => {
  assert.equal(statSync(join(dataDir, 'tls', 'key.pem')).mode & 0o777, 0o600);
  const r = spawnSync('openssl', ['x509', '-in', srv.certFile, '-noout', '-fingerprint', '-sha256'], { encoding: 'utf8' });
  const fp = /Fingerprint=([0-9A-F:]+)/i.exec(r.stdout)?.[1];
  assert.equal(fp, srv.fingerprint256);
  const text = spawnSync('openssl', ['x509', '-in', srv.certFile, '-noout', '-text'], { encoding: 'utf8' }).stdout;
  assert.match(text, /DNS:localhost/);
  assert.match(text, /IP Address:127\.0\.0\.1/);
  assert.match(text, /ecdsa-with-SHA256/);
});

test('a second start over the same data directory reuses the certificate', async () => {
  const second = await startServer({ dataDir, waitFor: 'listening' });
  try {
    assert.equal(second.fingerprint256, srv.fingerprint256);
  } finally {
    await second.stop();
  }
});
