// The crawler against a small web of real HTTP servers on loopback addresses (test/crawl/support.ts),
// judged by what the servers logged: robots.txt obeyed, delays kept, traps and the bomb contained; and by
// what it produced: the index, the WARC files (read back by warcio and by `quarry import`'s reader).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, createReadStream } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import robotsParserModule from 'robots-parser';
import { WARCParser } from 'warcio';
import { openCorpora, resolveCorporaConfig, type Corpora } from '../../src/corpora/index.js';
import { readWarc } from '../../src/corpora/warc.js';
import { Crawler, measureDomains, resolveCrawlConfig, type CrawlReport } from '../../src/crawl/index.js';
import { EventBus, type BusEvent } from '../../src/events/bus.js';
import { crawlWarcDir, stateDbPath } from '../../src/kernel/data-dir.js';
import { openDb, type Db } from '../../src/store/db.js';
import { BOMB_CLAIMED_BYTES, CRAWL_DELAY_S, startTestWeb, type TestWeb } from './support.js';

const robotsParser = robotsParserModule as unknown as (url: string, body: string) => { isAllowed(url: string, ua: string): boolean | undefined };

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MIN_DELAY_MS = 20;
const MAX_CALENDAR = 12;
const MAX_PAGES = 40;

let web: TestWeb;
let dir: string;
let db: Db;
let corpora: Corpora;
let report: CrawlReport;
const events: BusEvent[] = [];

before(async () => {
  web = await startTestWeb();
  dir = mkdtempSync(join(tmpdir(), 'quarry-crawl-'));
  const bus = new EventBus();
  bus.subscribe((e) => { if (e.kind.startsWith('crawl.')) events.push(e); });
  corpora = await openCorpora({ dataDir: dir, bus, resolved: resolveCorporaConfig({ own: { docs: null, site: null, library: null } }, dir) });
  db = openDb(stateDbPath(dir));
  const config = resolveCrawlConfig({
    allowPrivateNetworks: true, minDelayMs: MIN_DELAY_MS, maxDelayMs: 2000, concurrency: 8, maxPagesPerHost: MAX_PAGES,
    timeoutMs: 5000, stallTimeoutMs: 800, maxCalendarPagesPerHost: MAX_CALENDAR, maxRetryAfterMs: 3000, maxBodyBytes: 4 * 1024 * 1024,
    revisit: { initialSeconds: 3600, minSeconds: 60, maxSeconds: 86400 },
  });
  const crawler = new Crawler({ stateDb: stateDbPath(dir), warcDir: crawlWarcDir(dir), config, corpora, bus, resolve: (n) => web.resolve(n), progressIntervalMs: 200 });
  // A page only the `*` group of library's robots.txt disallows: ours does not, so it is fetched.
  const seeds = crawler.addSeeds([...web.seeds, `${web.byLabel('library').origin}/library/operator.html`]);
  assert.equal(seeds.refused.length, 0, JSON.stringify(seeds.refused));
  report = await crawler.start();
  if (process.env['QUARRY_CRAWL_TRACE']) for (const h of web.hosts) console.log(h.label, h.log.length, h.log.at(-1)!.at - h.log[0]!.at, 'ms');
  await crawler.close();
}, { timeout: 300_000 });

after(async () => {
  await web?.close();
  db?.close();
  await corpora?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const outcomeOf = (url: string) => (db.prepare('SELECT outcome FROM crawl_urls WHERE url = ?').get(url) as { outcome: string } | undefined)?.outcome;

test('the test web has at least 20 hosts, and the crawl reached all of them', () => {
  assert.ok(web.hosts.length >= 20, `${web.hosts.length} hosts`);
  for (const h of web.hosts) assert.ok(h.log.length > 0, `${h.label} was never asked`);
  assert.ok(report.pages > 100, `${report.pages} pages`);
  assert.ok(report.indexed > 80, `${report.indexed} indexed`);
});

test('robots.txt is the first request to every host and no disallowed path is ever requested', () => {
  for (const h of web.hosts) {
    assert.equal(h.log[0]!.path, '/robots.txt', `${h.label} first asked for ${h.log[0]!.path}`);
    assert.ok(h.log.every((r) => r.ua.startsWith('QuarryBot/')), `${h.label}: user agent`);
    if (h.robots) {
      const robots = robotsParser(`${h.origin}/robots.txt`, h.robots);
      const violations = h.log.filter((r) => r.path !== '/robots.txt' && robots.isAllowed(`${h.origin}${r.path}`, 'QuarryBot') === false);
      assert.deepEqual(violations.map((v) => v.path), [], `${h.label}: disallowed paths fetched`);
    }
  }
  const down = web.byLabel('robots500');
  assert.deepEqual([...new Set(down.log.map((r) => r.path))], ['/robots.txt'], 'a 5xx robots.txt disallows everything');
  // The group for our token wins over `*`: /library/o… is disallowed for others only.
  const lib = web.byLabel('library');
  assert.ok(lib.log.some((r) => r.path === '/library/operator.html'), 'the * group did not apply to us');
  assert.ok(report.robotsDisallowed > 0);
});

test('no host is ever asked sooner than its delay after the previous request', () => {
  for (const h of web.hosts) {
    const delay = h.label === 'library' ? CRAWL_DELAY_S * 1000 : MIN_DELAY_MS;
    for (let i = 1; i < h.log.length; i++) {
      const gap = h.log[i]!.at - h.log[i - 1]!.at;
      assert.ok(gap >= delay, `${h.label}: ${h.log[i - 1]!.path} then ${h.log[i]!.path} ${gap} ms apart (delay ${delay})`);
    }
    // One connection at a time: a request never arrives before the previous one ended.
    for (let i = 1; i < h.log.length; i++) {
      assert.ok(h.log[i]!.at >= h.log[i - 1]!.end || h.log[i - 1]!.end === 0, `${h.label}: overlapping requests`);
    }
  }
});

test('the calendar, the maze and the bomb are contained', () => {
  const cal = web.byLabel('calendar').log.filter((r) => r.path.startsWith('/cal/'));
  assert.ok(cal.length <= MAX_CALENDAR, `${cal.length} calendar pages`);
  assert.ok(cal.length >= 3, 'the calendar was crawled a little');
  const maze = web.byLabel('maze').log;
  assert.ok(maze.every((r) => !/(\/a){3}/.test(r.path) && !/(\/b\/a){2}\/a/.test(r.path)), `maze went deep: ${maze.map((r) => r.path).join(' ')}`);
  assert.ok(maze.length < 20, `${maze.length} maze requests`);
  const bomb = web.byLabel('bomb').log.find((r) => r.path === '/bomb.html');
  assert.ok(bomb, 'the bomb page was requested');
  assert.ok(bomb.bytes < 64 * 1024 * 1024, `the server sent ${bomb.bytes} bytes of a ${BOMB_CLAIMED_BYTES}-byte bomb`);
  assert.equal(outcomeOf(`${web.byLabel('bomb').origin}/bomb.html`), 'truncated');
});

test('sitemaps from robots.txt (a gzipped index, then a urlset) reach pages no link reaches, robots still obeyed', () => {
  const log = web.byLabel('sitemaps').log.map((r) => r.path);
  for (let i = 0; i < 7; i++) assert.ok(log.includes(`/hidden/page${i}.html`), `hidden page ${i}`);
  assert.ok(!log.includes('/hidden/page7.html'), 'a sitemap entry robots.txt disallows');
});

test('redirects: chains within the limit land, longer ones and loops end', () => {
  const h = web.byLabel('redirects');
  const paths = h.log.map((r) => r.path);
  assert.equal(outcomeOf(`${h.origin}/landing`), 'indexed');
  assert.equal(outcomeOf(`${h.origin}/short3`), 'indexed');
  assert.ok(paths.filter((p) => p.startsWith('/long')).length <= 7, `long chain: ${paths.filter((p) => p.startsWith('/long')).join(' ')}`);
  assert.equal(paths.filter((p) => p === '/loop-a').length, 1, 'a loop fetches each URL once');
  assert.equal(paths.filter((p) => p === '/loop-b').length, 1);
});

test('errors: 404 and 500 recorded, 429 and 503 retried after Retry-After', () => {
  const h = web.byLabel('errors');
  assert.equal(outcomeOf(`${h.origin}/missing`), 'http_error');
  assert.equal(outcomeOf(`${h.origin}/busy`), 'indexed');
  assert.equal(outcomeOf(`${h.origin}/unavailable`), 'indexed');
  const busy = h.log.filter((r) => r.path === '/busy');
  assert.equal(busy.length, 2);
  assert.ok(busy[1]!.at - busy[0]!.end >= 1000, 'Retry-After: 1 obeyed');
  assert.ok(h.log.filter((r) => r.path === '/broken').length <= 3, 'a 500 is retried a bounded number of times');
});

test('slow pages are fetched, stalls abandoned', () => {
  const h = web.byLabel('slow');
  assert.equal(outcomeOf(`${h.origin}/slow`), 'indexed');
  assert.notEqual(outcomeOf(`${h.origin}/stall`), 'indexed');
  assert.notEqual(outcomeOf(`${h.origin}/stall-headers`), 'indexed');
});

test('mirrors are duplicates, not documents; noindex, nofollow, canonical and content types are honoured', () => {
  const dupRows = db.prepare(`SELECT COUNT(*) AS n FROM crawl_urls WHERE outcome = 'duplicate'`).get() as { n: number };
  assert.ok(dupRows.n >= 10, `${dupRows.n} duplicates`);
  const hosts = db.prepare(`SELECT host, SUM(indexed) AS n FROM crawl_urls GROUP BY host`).all() as { host: string; n: number }[];
  const indexedOf = (label: string) => hosts.find((r) => r.host === web.byLabel(label).origin)?.n ?? 0;
  // The three copies of the tutorial: each page is indexed once, from whichever host came first.
  const copies = ['tutorial', 'mirror1', 'mirror2'].map((l) => web.byLabel(l).origin);
  const rows = db.prepare(`SELECT url, indexed, outcome FROM crawl_urls WHERE outcome IN ('indexed', 'duplicate')`).all() as { url: string; indexed: number; outcome: string }[];
  const perPath = new Map<string, number>();
  for (const r of rows) {
    const u = new URL(r.url);
    if (!copies.includes(u.origin) || !u.pathname.startsWith('/tutorial/')) continue;
    perPath.set(u.pathname, (perPath.get(u.pathname) ?? 0) + r.indexed);
  }
  assert.ok(perPath.size >= 10, `${perPath.size} tutorial pages`);
  for (const [path, n] of perPath) assert.ok(n <= 1, `${path} indexed ${n} times`);
  assert.ok(indexedOf('tutorial') + indexedOf('mirror1') + indexedOf('mirror2') <= perPath.size + 1);
  const d = web.byLabel('directives');
  assert.equal(outcomeOf(`${d.origin}/noindex`), 'noindex');
  assert.ok(!d.log.some((r) => r.path === '/unreached'), 'nofollow (X-Robots-Tag for our token)');
  assert.equal(outcomeOf(`${d.origin}/copy`), 'non_canonical');
  assert.equal(outcomeOf(`${d.origin}/original`), 'indexed');
  assert.equal(outcomeOf(`${d.origin}/other.pdf`), 'unsupported_type');
});

test('every indexed page is in the web corpus, and the WARC files read back (warcio, and quarry import\'s reader)', async () => {
  const indexed = db.prepare(`SELECT url FROM crawl_urls WHERE indexed = 1`).all() as { url: string }[];
  assert.equal((db.prepare(`SELECT COUNT(*) AS n FROM crawl_urls WHERE state = 'fetched'`).get() as { n: number }).n, 0, 'nothing left unacknowledged');
  assert.equal(corpora.index('web').stats().docs, indexed.length);
  const files = readdirSync(crawlWarcDir(dir)).map((f) => join(crawlWarcDir(dir), f));
  const types = new Map<string, number>();
  for (const f of files) {
    const parser = new WARCParser(createReadStream(f));
    for await (const record of parser) {
      const t = record.warcType ?? '';
      types.set(t, (types.get(t) ?? 0) + 1);
      await record.readFully();
    }
  }
  assert.ok((types.get('warcinfo') ?? 0) >= 1);
  assert.ok((types.get('response') ?? 0) >= indexed.length);
  assert.equal(types.get('request'), types.get('metadata'));
  const urls = new Set<string>();
  for (const f of files) for await (const item of readWarc(f, { maxRecordBytes: 64 << 20 })) if (item.ok) urls.add(item.doc.url!);
  for (const { url } of indexed) assert.ok(urls.has(url), `${url} is not in the WARC`);
  // And `quarry import` itself, into another data directory: every crawled document comes back.
  const other = join(dir, 'imported');
  const imp = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli/main.ts'), 'import', '--data', other, '--json', ...files], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
  assert.equal(imp.status, 0, imp.stderr);
  const done = imp.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)).find((l) => l.event === 'done');
  assert.ok(done.docs >= indexed.length, `quarry import found ${done.docs} documents, the crawl indexed ${indexed.length}`);
});

test('crawl.progress and crawl.done events; per-domain figures for the rollup', () => {
  assert.ok(events.some((e) => e.kind === 'crawl.progress'));
  const done = events.filter((e) => e.kind === 'crawl.done');
  assert.equal(done.length, 1);
  assert.equal(done[0]!.data['pages'], report.pages);
  const all = measureDomains(db);
  const errors = all.find((m) => m.host === 'errors.crawl.test')!;
  assert.ok(errors.errorRate > 0 && errors.errorRate < 1, JSON.stringify(errors));
  const copies = ['tutorial', 'mirror1', 'mirror2'].map((l) => measureDomains(db, `${l}.crawl.test`)[0]!);
  assert.ok(copies.reduce((n, m) => n + m.duplicateRate * m.fetched, 0) >= 10, JSON.stringify(copies));
  // Which copy of the tutorial won each page is a race; together they hold one copy.
  assert.ok(copies.reduce((n, m) => n + m.docs, 0) >= 10, JSON.stringify(copies));
  assert.ok(copies.every((m) => m.lastSuccessAt !== null));
  const all2 = measureDomains(db, 'crawl.test');
  assert.equal(all2.length, web.hosts.length, 'every host is measured under the parent domain');
  assert.deepEqual(all2.find((m) => m.host === 'robots500.crawl.test'), { host: 'robots500.crawl.test', docs: 0, fetched: 0, lastSuccessAt: null, errorRate: 0, duplicateRate: 0 });
});
