/**
 * An in-process HTTPS server for the auth tests: the real `QuarryServer` (TLS 1.3, real sockets, port 0)
 * with the auth route group and policy over a temporary data directory, plus what a test needs to look
 * inside: a settable clock (login-state and capability expiry), small throttling limits, and a record of
 * every request body the server received, taken in the server before any handler ran.
 */
import { authRoutes } from '../../src/rest/auth.js';
import { createLoginPage } from '../../src/auth/login-page.js';
import https from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb, type Db } from '../../src/store/db.js';
import { createAuth, type Auth, type AuthOptions } from '../../src/auth/index.js';
import { QuarryServer } from '../../src/http/server.js';
import { ensureTls } from '../../src/http/tls.js';
import type { RouteGroup } from '../../src/http/route.js';

export interface Received { method: string; path: string; headers: Record<string, unknown>; body: string }

export interface AuthTestServer {
  url: string;
  ca: Buffer;
  fingerprint256: string;
  dataDir: string;
  db: Db;
  auth: Auth;
  /** Every request the server received, body included, in arrival order. */
  received: Received[];
  /** Moves the server's clock. */
  advance(ms: number): void;
  request(method: string, path: string, options?: { json?: unknown; headers?: Record<string, string> }): Promise<TestResponse>;
  close(): Promise<void>;
}

export interface TestResponse { status: number; headers: Record<string, string | string[] | undefined>; json: Record<string, unknown>; text: string }

export async function startAuthServer(options: Partial<AuthOptions> & { extraGroups?: RouteGroup[] } = {}): Promise<AuthTestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'quarry-auth-'));
  const db = openDb(join(dataDir, 'state.sqlite'));
  let offset = 0;
  const now = (): Date => new Date(Date.now() + offset);
  const { extraGroups = [], ...authOptions } = options;
  const auth = createAuth({ ...authOptions, db, dataDir, now });
  const received: Received[] = [];
  const record = (group: RouteGroup): RouteGroup => ({
    ...group,
    routes: group.routes.map((r) => ({
      ...r,
      handler: async (ctx) => {
        const body = ctx.method === 'GET' ? Buffer.alloc(0) : await ctx.body(); // cached: the handler reads it again
        received.push({ method: ctx.method, path: ctx.path, headers: { ...ctx.headers }, body: body.toString('utf8') });
        return r.handler(ctx);
      },
    })),
  });
  const tls = await ensureTls({ dataDir });
  const server = new QuarryServer({
    groups: [authRoutes(auth.service, createLoginPage()), ...extraGroups].map(record), tls, policy: auth.policy,
    limits: { ratePerSecond: 0 }, log: { info() {}, error() {} },
  });
  const addr = await server.listen(0, '127.0.0.1');
  const url = `https://127.0.0.1:${addr.port}`;
  const agent = new https.Agent({ ca: tls.cert, keepAlive: false });
  return {
    url, ca: tls.cert, fingerprint256: tls.fingerprint256, dataDir, db, auth, received,
    advance(ms) { offset += ms; },
    request(method, path, opts = {}) {
      return new Promise((resolve, reject) => {
        const data = opts.json === undefined ? undefined : JSON.stringify(opts.json);
        const headers: Record<string, string> = { ...opts.headers };
        if (data !== undefined) headers['content-type'] ??= 'application/json';
        const req = https.request(new URL(path, url), { method, agent, headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let json: Record<string, unknown> = {};
            try { json = JSON.parse(text) as Record<string, unknown>; } catch { /* not JSON */ }
            resolve({ status: res.statusCode ?? 0, headers: res.headers, json, text });
          });
        });
        req.on('error', reject);
        req.end(data);
      });
    },
    async close() {
      agent.destroy();
      await server.drain(1000);
      auth.close();
      db.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
