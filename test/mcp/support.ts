/**
 * Shared set-up of the MCP tests: a real `quarry serve` over the fixture corpus, its certificate (in the
 * data directory, as the server would generate it) also naming `evil.example.com` so a client can reach
 * the server while sending that name as `Host` (the DNS-rebinding check must then answer 403, not the TLS
 * layer), capabilities minted with `quarry cap mint`, one-shot POSTs to `/mcp`, and child processes (the
 * conformance suite, the Inspector, the SDK client) that trust the certificate through NODE_EXTRA_CA_CERTS.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import https from 'node:https';
import { Readable } from 'node:stream';
import { startServer, REPO_ROOT, type StartServerOptions, type TestServer } from '../support/server.js';
import { writeFixtureCorpus } from '../support/fixture-corpus.js';
import { rawRequest, type TestResponse } from '../support/client.js';

export const MODERN = '2026-07-28';
export const META_PV = 'io.modelcontextprotocol/protocolVersion';
export const META_CAPS = 'io.modelcontextprotocol/clientCapabilities';

export interface McpServerOptions {
  /** Load the conformance suite's fixture catalog (QUARRY_MCP_TEST_FIXTURES=1). */
  fixtures?: boolean;
  /** The configuration file's content (e.g. `{ auth: { anonymous: false } }`). */
  config?: Record<string, unknown>;
  rateLimit?: StartServerOptions['rateLimit'];
}

/** Writes a certificate for localhost, 127.0.0.1 and evil.example.com where the server looks for its own. */
function writeCertificate(dataDir: string): void {
  const dir = join(dataDir, 'tls');
  mkdirSync(dir, { recursive: true });
  const r = spawnSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1,DNS:evil.example.com', '-days', '2', '-nodes',
    '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
  ], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`openssl could not make the test certificate (install openssl): ${r.stderr ?? r.error}`);
}

export function startMcpServer(o: McpServerOptions = {}): Promise<TestServer> {
  const args: string[] = []; // filled by setup (the config file lives in the data directory), read after it
  return startServer({
    env: o.fixtures ? { QUARRY_MCP_TEST_FIXTURES: '1' } : {},
    ...(o.rateLimit ? { rateLimit: o.rateLimit } : {}),
    args,
    async setup(dataDir) {
      await writeFixtureCorpus(dataDir);
      writeCertificate(dataDir);
      if (o.config) {
        const file = join(dataDir, 'config.json');
        writeFileSync(file, JSON.stringify({ ...o.config, corpora: { own: { docs: join(dataDir, 'fixture-own'), site: null, library: null } } }));
        args.push('--config', file);
      }
    },
  });
}

/** `quarry cap mint` on the server's data directory: a capability string. */
export function mintCap(srv: TestServer, rights: string[], targets?: string[]): string {
  const r = spawnSync(process.execPath, [
    '--import', 'tsx', join(REPO_ROOT, 'src/cli/main.ts'), 'cap', 'mint', '--rights', rights.join(','),
    ...(targets ? ['--targets', targets.join(',')] : []), '--ttl', '1h', '--data', srv.dataDir,
  ], { cwd: REPO_ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`cap mint failed: ${r.stderr}`);
  return r.stdout.trim();
}

/** The `_meta` every 2026-07-28 request carries. */
export function modernMeta(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { [META_PV]: MODERN, [META_CAPS]: {}, ...extra };
}

/** The headers a 2026-07-28 request carries for `method` (and `name` for tools/call, resources/read, prompts/get). */
export function modernHeaders(method: string, name?: string): Record<string, string> {
  return {
    'content-type': 'application/json', accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN, 'mcp-method': method, ...(name !== undefined ? { 'mcp-name': name } : {}),
  };
}

/** One POST to /mcp (HTTP/2 unless told), body as given (objects as JSON). */
export function post(srv: TestServer, body: unknown, headers: Record<string, string> = {}, protocol: 'h1' | 'h2' = 'h2'): Promise<TestResponse> {
  return rawRequest(srv, 'POST', '/mcp', body, {
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, protocol,
  });
}

/** A 2026-07-28 request of `method` with `params` (its `_meta` added), the right headers. */
export function modern(srv: TestServer, id: number | string, method: string, params: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<TestResponse> {
  const name = method === 'tools/call' || method === 'prompts/get' ? params.name as string : method === 'resources/read' ? params.uri as string : undefined;
  const meta = { ...modernMeta(), ...(params._meta as Record<string, unknown> | undefined) };
  return post(srv, { jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } }, { ...modernHeaders(method, name), ...headers });
}

/** A handshake-era request (MCP-Protocol-Version 2025-11-25). */
export function legacy(srv: TestServer, id: number | string, method: string, params: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<TestResponse> {
  return post(srv, { jsonrpc: '2.0', id, method, params }, { 'mcp-protocol-version': '2025-11-25', ...headers });
}

export interface RunResult { code: number | null; stdout: string; stderr: string }

/** Runs `node args…` with the server's certificate trusted; resolves when it exits (never throws). */
export function runNode(srv: TestServer, args: string[], options: { timeoutMs?: number; env?: Record<string, string>; cwd?: string } = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
      cwd: options.cwd ?? REPO_ROOT,
      env: { ...process.env, NODE_EXTRA_CA_CERTS: srv.certFile, NO_COLOR: '1', ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 300_000);
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

/**
 * A WHATWG `fetch` over HTTPS that trusts exactly `ca` (Node 20's global fetch cannot be given a CA),
 * for the SDK's Streamable HTTP transport. Responses stream, so event-stream answers arrive as sent.
 */
export function tlsFetch(ca: Buffer): (url: string | URL, init?: RequestInit) => Promise<Response> {
  return (url, init = {}) => new Promise((resolve, reject) => {
    const u = new URL(String(url));
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((v, k) => { headers[k] = v; });
    const req = https.request({
      hostname: u.hostname, port: u.port, path: u.pathname + u.search, method: init.method ?? 'GET', headers, ca, agent: false,
      ...(init.signal ? { signal: init.signal } : {}),
    }, (res) => {
      const h = new Headers();
      for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(', ') : v);
      const status = res.statusCode ?? 0;
      const body = status === 202 || status === 204 ? null : Readable.toWeb(res) as ReadableStream<Uint8Array>;
      if (body === null) res.resume();
      resolve(new Response(body, { status, headers: h }));
    });
    req.on('error', reject);
    req.end(typeof init.body === 'string' ? init.body : undefined);
  });
}
