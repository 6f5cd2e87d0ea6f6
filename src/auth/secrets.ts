/**
 * The two long-lived secrets of authentication, each made once and kept in the data directory with mode
 * 0600: the OPAQUE server setup (its OPRF seed and static key pair: without it no account can log in) and
 * the capability root key (the HMAC key at the start of every macaroon chain: whoever holds it can mint
 * any capability). Both are created atomically (write a temporary file, fsync, hard-link it to its final
 * name), so a server and a CLI starting together agree on one value and a crash never leaves half a file.
 */
import { mkdirSync, readFileSync, chmodSync, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { writeFileDurable } from '../kernel/durable-file.js';
import { InternalError } from '../kernel/errors.js';
import { opaqueLoaded } from './opaque.js';

/** File names inside the data directory. */
export const OPAQUE_SETUP_FILE = 'opaque-server-setup.secret';
export const CAPABILITY_ROOT_KEY_FILE = 'capability-root.key';

/** Returns the content of `dataDir/name`, creating it from `make()` first when it does not exist. */
function readOrCreateSecret(dataDir: string, name: string, make: () => string): string {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, name);
  try {
    return readSecret(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  try {
    // Exclusive: when another process won the race to create it, theirs is kept.
    writeFileDurable(file, make(), { mode: 0o600, exclusive: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return readSecret(file);
}

function readSecret(file: string): string {
  const mode = statSync(file).mode & 0o777;
  // Tighten rather than refuse: an operator's `cp` may have widened it; the secret must not stay readable.
  if ((mode & 0o077) !== 0) chmodSync(file, 0o600);
  const text = readFileSync(file, 'utf8').trim();
  if (text === '') throw new InternalError(`The secret file ${file} is empty.`);
  return text;
}

/** The OPAQUE server setup (library format, base64url); `loadOpaque()` must have resolved. */
export function loadOpaqueServerSetup(dataDir: string): string {
  return readOrCreateSecret(dataDir, OPAQUE_SETUP_FILE, () => opaqueLoaded().server.createSetup());
}

/** The 32-byte capability root key. */
export function loadCapabilityRootKey(dataDir: string): Uint8Array {
  const hex = readOrCreateSecret(dataDir, CAPABILITY_ROOT_KEY_FILE, () => randomBytes(32).toString('hex'));
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new InternalError(`The capability root key in ${dataDir} is malformed.`);
  return new Uint8Array(Buffer.from(hex, 'hex'));
}
