// A small web for crawler tests: real HTTP servers, one per loopback address 127.0.0.2…, each with a
// name (`<label>.crawl.test`) the crawler's resolver maps to its address, each logging every request it
// receives (path, arrival and end times, user agent, bytes sent) so tests judge the crawler by what the
// servers saw. Most hosts serve real HTML: a section of Debian's python3.11-doc pages each.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { createGzip, gzipSync } from 'node:zlib';

export const PYDOC = '/usr/share/doc/python3.11/html';
export const PYDOC_SECTIONS = ['c-api', 'distutils', 'extending', 'faq', 'howto', 'library', 'reference', 'tutorial', 'using', 'whatsnew'];

export interface LoggedRequest { path: string; at: number; end: number; ua: string; bytes: number; status: number }

export interface TestHost {
  label: string;
  name: string;
  address: string;
  port: number;
  origin: string;
  log: LoggedRequest[];
  /** This host's robots.txt text, when it serves one with status 200. */
  robots?: string;
  robotsStatus?: number;
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse, host: TestHost) => void;

async function startHost(label: string, address: string, handler: Handler): Promise<TestHost> {
  const log: LoggedRequest[] = [];
  const host = { label, name: `${label}.crawl.test`, address, port: 0, origin: '', log } as unknown as TestHost;
  const server: Server = createServer((req, res) => {
    const entry: LoggedRequest = { path: req.url ?? '', at: Date.now(), end: 0, ua: String(req.headers['user-agent'] ?? ''), bytes: 0, status: 0 };
    log.push(entry);
    const write = res.write.bind(res);
    res.write = ((chunk: unknown, ...rest: unknown[]) => {
      if (chunk) entry.bytes += typeof chunk === 'string' ? Buffer.byteLength(chunk) : (chunk as Buffer).length;
      return (write as (...a: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof res.write;
    res.on('close', () => { entry.end = Date.now(); entry.status = res.statusCode; });
    try { handler(req, res, host); } catch (err) { res.statusCode = 500; res.end(String(err)); }
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((r) => server.listen(0, address, () => r()));
  host.port = (server.address() as { port: number }).port;
  host.origin = `http://${host.name}:${host.port}`;
  host.close = () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); });
  return host;
}

function html(res: ServerResponse, body: string, headers: Record<string, string> = {}, status = 200): void {
  const b = Buffer.from(body);
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'content-length': String(b.length), ...headers });
  res.end(b);
}

/** Serves a directory of the python docs at `/<section>/…`; robots.txt as given. */
function pydocHandler(section: string, robots?: { status: number; body: string }): Handler {
  const dir = join(PYDOC, section);
  return (req, res) => {
    const path = decodeURIComponent((req.url ?? '/').split('?')[0]!);
    if (path === '/robots.txt') {
      if (!robots) { res.writeHead(404, { 'content-type': 'text/plain' }); res.end('no robots'); return; }
      res.writeHead(robots.status, { 'content-type': 'text/plain' });
      res.end(robots.body);
      return;
    }
    if (path === '/') { html(res, `<title>${section}</title><p>Section <a href="/${section}/index.html">${section}</a></p>`); return; }
    const m = new RegExp(`^/${section}/([\\w.-]+\\.html)$`).exec(path);
    const file = m ? join(dir, m[1]!) : undefined;
    if (!file || !existsSync(file)) { html(res, '<title>Not found</title><p>no such page</p>', {}, 404); return; }
    const body = readFileSync(file);
    if (/gzip/.test(String(req.headers['accept-encoding']))) {
      const gz = gzipSync(body);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-encoding': 'gzip', 'content-length': String(gz.length) });
      res.end(gz);
    } else {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': String(body.length) });
      res.end(body);
    }
  };
}

export interface TestWeb {
  hosts: TestHost[];
  byLabel(label: string): TestHost;
  /** The crawler's resolver hook: test names to their loopback addresses. */
  resolve(name: string): string | undefined;
  seeds: string[];
  close(): Promise<void>;
}

export const CRAWL_DELAY_S = 0.15;
export const BOMB_CLAIMED_BYTES = 10 * 1024 ** 3;

/** Starts the test web: the python-doc sections plus hosts with robots rules, traps, errors and mirrors. */
export async function startTestWeb(options: { firstAddress?: number } = {}): Promise<TestWeb> {
  if (!existsSync(join(PYDOC, 'library'))) throw new Error(`${PYDOC} is missing: apt-get install python3.11-doc (scripts/system-deps.sh does it)`);
  let next = options.firstAddress ?? 2;
  const addr = () => `127.0.0.${next++}`;
  const hosts: TestHost[] = [];
  const add = async (label: string, h: Handler, robots?: { status: number; body: string }) => {
    const host = await startHost(label, addr(), h);
    if (robots) { host.robotsStatus = robots.status; if (robots.status === 200) host.robots = robots.body; }
    hosts.push(host);
    return host;
  };

  // Real pages: one python-doc section per host. `library` has a robots.txt with rules and a delay.
  for (const section of PYDOC_SECTIONS) {
    const robots = section === 'library'
      ? { status: 200, body: `User-agent: *\nDisallow: /library/o\nCrawl-delay: ${CRAWL_DELAY_S}\n\nUser-agent: QuarryBot\nDisallow: /library/os\nDisallow: /library/s\nCrawl-delay: ${CRAWL_DELAY_S}\n` }
      : section === 'howto' ? { status: 200, body: 'User-agent: *\nAllow: /\nDisallow: /howto/sockets.html\n' } : undefined;
    await add(section, pydocHandler(section, robots), robots);
  }
  // Mirrors: the tutorial again under two more names (near-duplicates must not fill the index).
  await add('mirror1', pydocHandler('tutorial'));
  await add('mirror2', pydocHandler('tutorial'));

  // robots.txt answering 500: nothing but robots.txt may be requested.
  await add('robots500', (req, res) => {
    if (req.url === '/robots.txt') { res.writeHead(500); res.end('down'); return; }
    html(res, '<title>Forbidden fruit</title><p>must never be fetched</p>');
  }, { status: 500, body: '' });

  // Sitemaps: robots.txt names a gzipped sitemap index, which names a sitemap of pages no link reaches.
  const sitemapPages = Array.from({ length: 8 }, (_, i) => `/hidden/page${i}.html`);
  await add('sitemaps', (req, res, self) => {
    const path = req.url ?? '/';
    if (path === '/robots.txt') { res.writeHead(200, { 'content-type': 'text/plain' }); res.end(`User-agent: *\nDisallow: /hidden/page7.html\nSitemap: ${self.origin}/sitemap-index.xml.gz\n`); return; }
    if (path === '/sitemap-index.xml.gz') {
      res.writeHead(200, { 'content-type': 'application/gzip' });
      res.end(gzipSync(`<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>${self.origin}/sitemap-pages.xml</loc></sitemap></sitemapindex>`));
      return;
    }
    if (path === '/sitemap-pages.xml') {
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.end(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${sitemapPages.map((p) => `<url><loc>${self.origin}${p}</loc></url>`).join('')}</urlset>`);
      return;
    }
    const m = /^\/hidden\/page(\d)\.html$/.exec(path);
    if (m) { html(res, `<title>Hidden page ${m[1]}</title><p>Only the sitemap knows hidden page number ${m[1]} about zeolite ${m[1]}${m[1]}.</p>`); return; }
    html(res, '<title>Sitemap home</title><p>Nothing links to the hidden pages.</p>');
  });

  // Redirects: a chain within the limit, one beyond it, and a loop.
  await add('redirects', (req, res) => {
    const path = req.url ?? '/';
    const go = (to: string) => { res.writeHead(301, { location: to }); res.end(); };
    if (path === '/') { html(res, '<title>Redirects</title><a href="/short1">s</a><a href="/long1">l</a><a href="/loop-a">loop</a><a href="/moved">m</a>'); return; }
    if (path === '/moved') { go('/landing'); return; }
    if (path === '/landing') { html(res, '<title>Landing</title><p>The moved page landed on basalt.</p>'); return; }
    let m = /^\/short(\d+)$/.exec(path);
    if (m) { const n = Number(m[1]); if (n < 3) go(`/short${n + 1}`); else html(res, '<title>Short chain end</title><p>obsidian</p>'); return; }
    m = /^\/long(\d+)$/.exec(path);
    if (m) { go(`/long${Number(m[1]) + 1}`); return; }
    if (path === '/loop-a') { go('/loop-b'); return; }
    if (path === '/loop-b') { go('/loop-a'); return; }
    html(res, '<title>nf</title>', {}, 404);
  });

  // Errors: 404, 500 every time, 429 with Retry-After the first time a path is asked, 503 likewise.
  const seen429 = new Set<string>();
  await add('errors', (req, res) => {
    const path = req.url ?? '/';
    if (path === '/') { html(res, '<title>Errors</title><a href="/missing">a</a><a href="/broken">b</a><a href="/busy">c</a><a href="/unavailable">d</a>'); return; }
    if (path === '/broken') { html(res, '<title>oops</title>', {}, 500); return; }
    if (path === '/busy' || path === '/unavailable') {
      if (!seen429.has(path)) { seen429.add(path); html(res, '<title>slow down</title>', { 'retry-after': '1' }, path === '/busy' ? 429 : 503); return; }
      html(res, `<title>Busy page served</title><p>after waiting, gneiss ${path}</p>`);
      return;
    }
    html(res, '<title>Not found</title>', {}, 404);
  });

  // Slow and stalling responses.
  await add('slow', (req, res) => {
    const path = req.url ?? '/';
    if (path === '/') { html(res, '<title>Slow</title><a href="/slow">slow</a><a href="/stall">stall</a><a href="/stall-headers">sh</a>'); return; }
    if (path === '/slow') { setTimeout(() => html(res, '<title>Slow page</title><p>patience, schist</p>'), 400); return; }
    if (path === '/stall') { res.writeHead(200, { 'content-type': 'text/html' }); res.write('<title>Stalled</title><p>the rest never comes'); return; }
    if (path === '/stall-headers') return; // never answers at all
    html(res, '<title>nf</title>', {}, 404);
  });

  // A gzip bomb: a page whose gzip body inflates to 10 GB of zeros, generated as it is sent.
  await add('bomb', (req, res) => {
    const path = req.url ?? '/';
    if (path === '/') { html(res, '<title>Bomb</title><a href="/bomb.html">do not</a><p>feldspar</p>'); return; }
    if (path !== '/bomb.html') { html(res, '<title>nf</title>', {}, 404); return; }
    res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip', 'x-uncompressed-length': String(BOMB_CLAIMED_BYTES) });
    let left = BOMB_CLAIMED_BYTES;
    const zeros = Buffer.alloc(1024 * 1024);
    const source = new Readable({ read() { if (left <= 0) { this.push(null); return; } left -= zeros.length; this.push(zeros); } });
    const gz = createGzip({ level: 9 });
    source.pipe(gz).pipe(res);
    res.on('close', () => { source.destroy(); gz.destroy(); });
  });

  // A calendar: every month links to the next and the previous, for ever.
  await add('calendar', (req, res) => {
    const path = req.url ?? '/';
    if (path === '/') { html(res, '<title>Calendar</title><a href="/cal/2024/01/">January</a>'); return; }
    const m = /^\/cal\/(\d{4})\/(\d{2})\/$/.exec(path);
    if (!m) { html(res, '<title>nf</title>', {}, 404); return; }
    const y = Number(m[1]); const mo = Number(m[2]);
    const fmt = (yy: number, mm: number) => `/cal/${yy}/${String(mm).padStart(2, '0')}/`;
    const nextM = mo === 12 ? fmt(y + 1, 1) : fmt(y, mo + 1);
    const prevM = mo === 1 ? fmt(y - 1, 12) : fmt(y, mo - 1);
    html(res, `<title>Events ${y}-${mo}</title><p>No events in month ${mo} of ${y} in the calendar of events.</p><a href="${nextM}">next</a><a href="${prevM}">prev</a>`);
  });

  // A relative-link maze: every page links to `a/` below itself.
  await add('maze', (req, res) => {
    const path = req.url ?? '/';
    html(res, `<title>Maze ${path.length}</title><p>Deeper into the maze at ${path}.</p><a href="a/">deeper</a><a href="b/a/">other</a>`);
  });

  // Robots directives: noindex meta, X-Robots-Tag nofollow, a canonical pointing elsewhere.
  await add('directives', (req, res) => {
    const path = req.url ?? '/';
    if (path === '/') { html(res, '<title>Directives</title><a href="/noindex">n</a><a href="/nofollow">f</a><a href="/copy">c</a><a href="/original">o</a><a href="/other.pdf">pdf</a>'); return; }
    if (path === '/noindex') { html(res, '<html><head><meta name="robots" content="noindex"><title>Secret marble</title></head><body>marble secret</body></html>'); return; }
    if (path === '/nofollow') { html(res, '<title>No follow</title><p>dolomite</p><a href="/unreached">u</a>', { 'x-robots-tag': 'quarrybot: nofollow' }); return; }
    if (path === '/copy') { html(res, '<html><head><link rel="canonical" href="/original"><title>Copy</title></head><body>The original talc page.</body></html>'); return; }
    if (path === '/original') { html(res, '<title>Original</title><p>The original talc page.</p>'); return; }
    if (path === '/other.pdf') { res.writeHead(200, { 'content-type': 'application/pdf' }); res.end(Buffer.alloc(50_000)); return; }
    html(res, '<title>nf</title>', {}, 404);
  });

  const byName = new Map(hosts.map((h) => [h.name, h]));
  return {
    hosts,
    byLabel: (label) => hosts.find((h) => h.label === label)!,
    resolve: (name) => byName.get(name)?.address,
    seeds: hosts.map((h) => `${h.origin}/`),
    close: async () => { await Promise.all(hosts.map((h) => h.close())); },
  };
}

/** Python-doc page names of a section (for checks against the index). */
export function pydocPages(section: string): string[] {
  return readdirSync(join(PYDOC, section)).filter((f) => f.endsWith('.html'));
}
