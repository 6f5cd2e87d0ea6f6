/**
 * The generator of Quarry's self-signed certificate, run as a short-lived child process by `tls.ts`
 * (`node self-signed-cert.js`): it prints `{"cert": PEM, "key": PEM}` on stdout and exits. EC P-256 key,
 * ECDSA with SHA-256, `CN=localhost`, SANs `localhost`, `127.0.0.1` and `::1`, server authentication only.
 *
 * A process of its own because `@peculiar/x509` needs a global `Reflect.getMetadata` (through tsyringe):
 * that polyfill and the library load here and die with this process, so the server never carries either,
 * and a start over an existing data directory (which has its certificate) pays for neither.
 */
import { webcrypto } from 'node:crypto';
import './reflect-metadata.js'; // before @peculiar/x509: tsyringe needs Reflect.getMetadata
import * as x509 from '@peculiar/x509';

/** Days the generated certificate is valid. */
const VALIDITY_DAYS = 825;

function pem(label: string, der: ArrayBuffer): string {
  const b64 = Buffer.from(der).toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}

async function generate(): Promise<{ cert: string; key: string }> {
  const crypto = webcrypto as unknown as Crypto;
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = await crypto.subtle.generateKey(alg, true, ['sign', 'verify']);
  const notBefore = new Date(Date.now() - 60_000);
  const notAfter = new Date(notBefore.getTime() + VALIDITY_DAYS * 86_400_000);
  const serial = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('hex').replace(/^[89a-f]/, '1');
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial,
    name: 'CN=localhost, O=Quarry self-signed',
    notBefore,
    notAfter,
    signingAlgorithm: alg,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        { type: 'dns', value: 'localhost' },
        { type: 'ip', value: '127.0.0.1' },
        { type: 'ip', value: '::1' },
      ]),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, crypto),
    ],
  }, crypto);
  const pkcs8 = await crypto.subtle.exportKey('pkcs8', keys.privateKey);
  return { cert: cert.toString('pem') + '\n', key: pem('PRIVATE KEY', pkcs8) };
}

process.stdout.write(JSON.stringify(await generate()));
