// The self-signed certificate: generated in a child process, so the process that asked for it (the server)
// never gets the global `Reflect` polyfill the X.509 library needs; EC P-256 for localhost, 127.0.0.1 and
// ::1, server authentication only, its key private (0600) and belonging to it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureTls } from '../../src/http/tls.js';

test('ensureTls generates the certificate without installing Reflect.getMetadata in this process', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'quarry-selfsigned-'));
  try {
    assert.equal('getMetadata' in Reflect, false, 'no polyfill before');
    const tls = await ensureTls({ dataDir });
    assert.equal('getMetadata' in Reflect, false, 'no polyfill after');
    assert.equal(tls.selfSigned, true);

    const x = new X509Certificate(readFileSync(tls.certFile));
    assert.equal(x.ca, false);
    assert.equal(x.subjectAltName, 'DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
    assert.equal(x.publicKey.asymmetricKeyType, 'ec');
    assert.equal(x.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
    assert.ok(x.verify(x.publicKey), 'self-signed: verifies with its own key');
    assert.ok(x.checkPrivateKey(createPrivateKey(readFileSync(tls.keyFile))), 'the key belongs to the certificate');
    assert.equal(statSync(tls.keyFile).mode & 0o777, 0o600);
    assert.equal(x.fingerprint256, tls.fingerprint256);

    const again = await ensureTls({ dataDir });
    assert.equal(again.fingerprint256, tls.fingerprint256, 'a second call reuses the files');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
