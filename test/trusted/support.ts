/**
 * Shared by the open-web server tests: a real HTTP site on a loopback address that logs every request,
 * a `quarry serve` whose crawler resolves the site's name to it, and an `/api/events` reader.
 */
import { createServer, type Server } from 'node:http';
import https from 'node:https';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, type TestServer } from '../support/server.js';

export interface Site { origin: string; port: number; log: string[]; close(): Promise<void> }

/** An HTML site on `address` (a 127.0.0.0/8 address) whose pages are `pages[path]`; robots.txt is 404. */
export async function startSite(address: string, name: string, pages: Record<string, string>): Promise<Site> {
  const log: string[] = [];
  const server: Server = createServer((req, res) => {
    log.push(req.url ?? '');
    const page = pages[req.url ?? ''];
    if (page === undefined) { res.writeHead(404, { 'content-type': 'text/plain' }); res.end('not here'); return; }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(page);
  });
  await new Promise<void>((r) => server.listen(0, address, () => r()));
  const port = (server.address() as { port: number }).port;
  return { origin: `http://${name}:${port}`, port, log, close: () => new Promise((r) => { server.close(() => r()); }) };
}

/** `quarry serve` with this `crawl` configuration (no own sources). */
export function startOpenWebServer(dataDir: string, crawl: Record<string, unknown>): Promise<TestServer> {
  const configFile = join(dataDir, 'quarry.json');
  return startServer({
    dataDir, args: ['--config', configFile],
    setup: () => {
      writeFileSync(configFile, JSON.stringify({ corpora: { own: { docs: null, site: null, library: null } }, crawl }));
    },
  });
}

/** Reads `/api/events` until `until` accepts an event's data (or `timeoutMs`); every event seen, in order. */
export function readEvents(srv: TestServer, cap: string, until: (kind: string, data: Record<string, unknown>) => boolean, timeoutMs = 60_000): Promise<{ kind: string; data: Record<string, unknown> }[]> {
  return new Promise((resolve, reject) => {
    const seen: { kind: string; data: Record<string, unknown> }[] = [];
    const req = https.get(new URL('/api/events', srv.url), { ca: srv.ca, headers: { authorization: `Bearer ${cap}` } }, (res) => {
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let end: number;
        while ((end = buf.indexOf('\n\n')) >= 0) {
          const frame = buf.slice(0, end);
          buf = buf.slice(end + 2);
          const kind = /^event: (.*)$/m.exec(frame)?.[1];
          const data = /^data: (.*)$/m.exec(frame)?.[1];
          if (!kind || !data) continue;
          const parsed = JSON.parse(data) as Record<string, unknown>;
          seen.push({ kind, data: parsed });
          if (until(kind, parsed)) { clearTimeout(timer); req.destroy(); resolve(seen); return; }
        }
      });
    });
    const timer = setTimeout(() => { req.destroy(); reject(new Error(`no matching event within ${timeoutMs} ms; saw ${seen.map((e) => e.kind).join(', ')}`)); }, timeoutMs);
    req.on('error', (err) => { if (!req.destroyed) reject(err); });
  });
}

/** Polls `probe` until it returns a value (not a timed assertion: a bound on how long to wait at all). */
export async function eventually<T>(probe: () => Promise<T | undefined>, what: string, limitMs = 60_000): Promise<T> {
  const end = Date.now() + limitMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
