/**
 * The web `npm run bench:crawl` crawls, run in its own process so the crawler's CPU is measured alone:
 * `HOSTS` HTTP servers on 127.0.0.2…, each serving `PAGES` generated HTML pages of ~6 KB of distinct
 * prose (seeded, so no two pages are near-duplicates) with ten links within the host and one to the
 * next host, and a robots.txt that allows everything. Pages are generated once and kept, so the servers
 * cost little beside the crawler. Prints one JSON line `{hosts: [{name, address,
 * port}]}` when listening; exits when stdin closes.
 */
import { createServer } from 'node:http';

const HOSTS = Number(process.argv[2] ?? 50);
const PAGES = Number(process.argv[3] ?? 200);

const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'ze', 'pa', 'qui', 'dor', 'fen', 'gal', 'hus', 'jor', 'bel', 'cas', 'wen', 'yat'];

/** xorshift32, so every run serves the same bytes. */
function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => { x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0; return x / 0x100000000; };
}

function page(host: number, n: number, names: string[]): string {
  const r = rng(host * 100_003 + n * 7919 + 1);
  const word = () => Array.from({ length: 1 + Math.floor(r() * 3) }, () => SYLLABLES[Math.floor(r() * SYLLABLES.length)]).join('');
  const paras: string[] = [];
  for (let p = 0; p < 8; p++) paras.push(`<p>${Array.from({ length: 110 }, word).join(' ')}.</p>`);
  const links = Array.from({ length: 10 }, (_, i) => `<a href="/p/${(n * 7 + i * 13 + 1) % PAGES}.html">next ${i}</a>`);
  links.push(`<a href="http://${names[(host + 1) % names.length]}/p/${n}.html">elsewhere</a>`);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Page ${n} of host ${host}: ${word()} ${word()}</title></head>`
    + `<body><nav>${links.join(' ')}</nav><main><h1>${word()} ${word()}</h1>${paras.join('\n')}</main></body></html>`;
}

const names: string[] = [];
const out: { name: string; address: string; port: number }[] = [];
const servers = [];
const caches: Map<number, Buffer>[] = [];
for (let h = 0; h < HOSTS; h++) {
  const address = `127.0.0.${h + 2}`;
  const cache = new Map<number, Buffer>();
  caches.push(cache);
  const server = createServer((req, res) => {
    const path = req.url ?? '/';
    if (path === '/robots.txt') { res.writeHead(200, { 'content-type': 'text/plain' }); res.end('User-agent: *\nAllow: /\n'); return; }
    const m = /^\/p\/(\d+)\.html$/.exec(path);
    if (!m || Number(m[1]) >= PAGES) { res.writeHead(404, { 'content-type': 'text/html' }); res.end('<title>nf</title>'); return; }
    const n = Number(m[1]);
    let body = cache.get(n);
    if (!body) cache.set(n, (body = Buffer.from(page(h, n, names))));
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': String(body.length) });
    res.end(body);
  });
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((r) => server.listen(0, address, () => r()));
  const port = (server.address() as { port: number }).port;
  names.push(`bench${h}.crawl.test:${port}`);
  out.push({ name: `bench${h}.crawl.test`, address, port });
  servers.push(server);
}
// Generated before the crawl starts: the servers then only answer.
for (let h = 0; h < HOSTS; h++) for (let n = 0; n < PAGES; n++) caches[h]!.set(n, Buffer.from(page(h, n, names)));
process.stdout.write(JSON.stringify({ hosts: out }) + '\n');
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
