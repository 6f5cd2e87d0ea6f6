/**
 * A `QuarryServer` in the test process over real TLS sockets on port 0, for tests of the HTTP layer
 * itself (router, limits, error model) with small route groups of their own. Whole-service tests use
 * `server.ts` (a real `quarry serve` process) instead.
 *
 *   const srv = await startInProcess([group], { ratePerSecond: 0 });
 *   const api = connect(srv);  // from client.ts: srv has { url, ca }
 *   ...; await srv.close();
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import type { Policy } from '../../src/kernel/principal.js';
import { anonymousOnlyPolicy } from './anonymous-policy.js';
import type { ServerLimits } from '../../src/http/limits.js';
import { buildOpenApi, openApiRoutes } from '../../src/rest/openapi.js';
import type { RouteGroup } from '../../src/http/route.js';
import { QuarryServer, type Logger } from '../../src/http/server.js';
import { ensureTls, type TlsMaterial } from '../../src/http/tls.js';

export interface InProcessServer {
  url: string;
  port: number;
  ca: Buffer;
  tls: TlsMaterial;
  server: QuarryServer;
  /** Lines the server logged (errors included), for assertions that stacks were logged. */
  logged: string[];
  close(): Promise<void>;
}

let tlsOnce: Promise<{ dir: string; tls: TlsMaterial }> | undefined;

/** One self-signed certificate per test process (generation costs a few ms, but there is no need for more). */
export function testTls(): Promise<TlsMaterial> {
  tlsOnce ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'quarry-tls-'));
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
    return { dir, tls: await ensureTls({ dataDir: dir }) };
  })();
  return tlsOnce.then((t) => t.tls);
}

export async function startInProcess(
  groups: RouteGroup[], limits: ServerLimits = {}, options: { policy?: Policy; openapi?: boolean } = {},
): Promise<InProcessServer> {
  const tls = await testTls();
  const logged: string[] = [];
  const log: Logger = {
    info: (m) => { logged.push(m); },
    error: (m, err) => { logged.push(`${m} ${err instanceof Error ? err.stack : String(err)}`); },
  };
  const all = [...groups];
  if (options.openapi !== false) {
    let doc: Record<string, unknown> = {};
    all.push(openApiRoutes(() => doc));
    doc = buildOpenApi(all);
  }
  const server = new QuarryServer({ groups: all, tls, policy: options.policy ?? anonymousOnlyPolicy(), limits, log });
  const addr = await server.listen(0, '127.0.0.1');
  return {
    url: `https://127.0.0.1:${addr.port}`, port: addr.port, ca: tls.cert, tls, server, logged,
    close: () => server.drain(0),
  };
}

/**
 * A raw HTTP/1.1 connection to `srv` over TLS (ALPN `http/1.1`, SNI `localhost`), for requests node's own
 * client would not send. Socket errors are swallowed: the server closing on the client is what such tests
 * inspect. `h1Socket` resolves once the handshake is done; `h1Connection` also collects what arrives.
 */
export function h1Connect(srv: InProcessServer): TLSSocket {
  const socket = tlsConnect({ host: '127.0.0.1', port: srv.port, ca: srv.ca, servername: 'localhost', ALPNProtocols: ['http/1.1'] });
  socket.on('error', () => { /* the server closing on us is an outcome the tests inspect */ });
  return socket;
}

export function h1Socket(srv: InProcessServer): Promise<TLSSocket> {
  const socket = h1Connect(srv);
  return new Promise((resolve) => socket.once('secureConnect', () => resolve(socket)));
}

export async function h1Connection(srv: InProcessServer): Promise<{ socket: TLSSocket; received: () => string }> {
  const socket = await h1Socket(srv);
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (c: string) => { text += c; });
  return { socket, received: () => text };
}
