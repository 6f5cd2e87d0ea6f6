// The crawler's pure parts, table by table: configuration, URL traps, robots.txt verdicts, robots
// directives, sitemaps, Retry-After, and the SimHash index against a brute-force search.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { resolveCrawlConfig, hostAllowed, retryAfterMs } from '../../src/crawl/index.js';
import { isCalendarUrl, resolveLink, trapReason } from '../../src/crawl/url.js';
import { robotsRules } from '../../src/crawl/robots.js';
import { applyXRobotsTag, guessLanguage, readPage } from '../../src/crawl/page.js';
import { readSitemap } from '../../src/crawl/sitemap.js';
import { hammingDistance, simhash, SimhashIndex } from '../../src/crawl/simhash.js';

test('configuration: defaults, overrides, and mistakes named by their path', () => {
  const c = resolveCrawlConfig(undefined);
  assert.equal(c.allowPrivateNetworks, false);
  assert.equal(resolveCrawlConfig({ allowPrivateNetworks: true, minDelayMs: 5 }).minDelayMs, 5);
  for (const [bad, param] of [
    [{ allowPrivateNetworks: 'yes' }, 'crawl.allowPrivateNetworks'], [{ concurrency: 0 }, 'crawl.concurrency'],
    [{ nope: 1 }, 'crawl.nope'], [{ revisit: { minSeconds: 10, maxSeconds: 5 } }, 'crawl.revisit'],
    [{ resolve: { a: 'not-an-ip' } }, 'crawl.resolve.a'], [{ userAgent: 'a\r\nb' }, 'crawl.userAgent'], [[], 'crawl'],
  ] as const) {
    assert.throws(() => resolveCrawlConfig(bad), (e: { code?: string; param?: string }) => e.code === 'bad_request' && e.param === param, JSON.stringify(bad));
  }
  const hosts = resolveCrawlConfig({ allowHosts: ['*.example.com', 'other.org'], blockHosts: ['bad.example.com'] });
  assert.equal(hostAllowed(hosts, 'example.com'), true);
  assert.equal(hostAllowed(hosts, 'a.b.example.com'), true);
  assert.equal(hostAllowed(hosts, 'bad.example.com'), false);
  assert.equal(hostAllowed(hosts, 'notexample.com'), false);
  assert.equal(hostAllowed(hosts, 'sub.other.org'), false);
});

test('links resolve and canonicalise; traps are recognised by their shape', () => {
  assert.equal(resolveLink('../b/./c?utm_source=x#f', 'http://Example.com:80/a/x/y.html'), 'http://example.com/a/b/c');
  assert.equal(resolveLink('mailto:a@b', 'http://e.com/'), undefined);
  assert.equal(resolveLink('#top', 'http://e.com/'), undefined);
  assert.equal(trapReason('http://e.com/a/b/c', 2048), undefined);
  assert.match(trapReason('http://e.com/a/b/a/b/a/b', 2048)!, /repeats 3 times/);
  assert.match(trapReason(`http://e.com/${'x/'.repeat(30)}`, 2048)!, /repeats|deeper/);
  assert.match(trapReason(`http://e.com/${'a'.repeat(100)}`, 50)!, /longer/);
  for (const u of ['http://e.com/cal/2024/05/', 'http://e.com/events/2024-05-01', 'http://e.com/x?date=2024-05-01', 'http://e.com/x?month=5']) assert.equal(isCalendarUrl(u), true, u);
  for (const u of ['http://e.com/library/os.html', 'http://e.com/2024-report.pdf', 'http://e.com/x?id=2024']) assert.equal(isCalendarUrl(u), false, u);
});

test('robots.txt verdicts per RFC 9309: our group, 4xx allows, 5xx/429/no answer disallows', () => {
  const body = 'User-agent: *\nDisallow: /private\n\nUser-agent: quarrybot\nDisallow: /mine\nCrawl-delay: 2.5\nSitemap: http://e.com/sm.xml\n';
  const r = robotsRules('http://e.com', 200, body, 'QuarryBot');
  assert.equal(r.allows('http://e.com/private/x'), true, 'the * group does not apply when ours exists');
  assert.equal(r.allows('http://e.com/mine/x'), false);
  assert.equal(r.crawlDelayMs, 2500);
  assert.deepEqual(r.sitemaps, ['http://e.com/sm.xml']);
  for (const s of [401, 403, 404, 410]) assert.equal(robotsRules('http://e.com', s, '', 'QuarryBot').allows('http://e.com/x'), true, String(s));
  for (const s of [0, 429, 500, 503]) assert.equal(robotsRules('http://e.com', s, '', 'QuarryBot').allows('http://e.com/x'), false, String(s));
});

test('robots directives from meta and X-Robots-Tag; canonical, base, nofollow links, language', () => {
  const f = readPage(`<html lang="de-AT"><head><base href="/docs/"><meta name="ROBOTS" content="noindex">
    <link rel="canonical" href="page.html?utm_medium=x"></head><body><a href="a.html">a</a><a rel="nofollow" href="b.html">b</a>
    <a href="a.html#x">again</a><a href="javascript:void(0)">j</a></body></html>`, 'http://e.com/x/y.html', 'QuarryBot');
  assert.equal(f.noindex, true);
  assert.equal(f.nofollow, false);
  assert.equal(f.canonical, 'http://e.com/docs/page.html');
  assert.deepEqual(f.links, ['http://e.com/docs/a.html']);
  assert.equal(f.lang, 'de');
  assert.equal(readPage('<meta name="quarrybot" content="none">', 'http://e.com/', 'QuarryBot').nofollow, true);
  const x = { noindex: false, nofollow: false };
  applyXRobotsTag('otherbot: noindex, quarrybot: nofollow', 'QuarryBot', x);
  assert.deepEqual(x, { noindex: false, nofollow: true });
  const y = { noindex: false, nofollow: false };
  applyXRobotsTag('noindex, unavailable_after: 25 Jun 2010 15:00:00 PST', 'QuarryBot', y);
  assert.equal(y.noindex, true);
  assert.equal(guessLanguage('Der Hund und die Katze sind nicht mit dem Ball auf der Wiese, das ist ein Spiel.'), 'de');
  assert.equal(guessLanguage('The dog and the cat are in the garden with the ball, and it is a game.'), 'en');
  assert.equal(guessLanguage('xyzzy plugh'), undefined);
});

test('sitemaps: urlsets, indexes, gzip and plain text', () => {
  const set = '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://e.com/a?utm_campaign=z</loc></url><url><loc> /b </loc></url></urlset>';
  assert.deepEqual(readSitemap(Buffer.from(set), 'http://e.com/sm.xml', 1 << 20), { pages: ['http://e.com/a', 'http://e.com/b'], sitemaps: [] });
  const index = '<sitemapindex><sitemap><loc>http://e.com/s1.xml.gz</loc></sitemap></sitemapindex>';
  assert.deepEqual(readSitemap(gzipSync(index), 'http://e.com/i.xml', 1 << 20), { pages: [], sitemaps: ['http://e.com/s1.xml.gz'] });
  assert.deepEqual(readSitemap(Buffer.from('http://e.com/x\nnot a url\n'), 'http://e.com/s.txt', 1 << 20).pages, ['http://e.com/x', 'http://e.com/not%20a%20url']);
  assert.deepEqual(readSitemap(gzipSync(Buffer.alloc(1 << 20)), 'http://e.com/bomb.xml', 1024), { pages: [], sitemaps: [] }, 'a gzip over the limit gives nothing');
});

test('Retry-After: seconds, an HTTP date, or nothing', () => {
  const now = Date.parse('2024-05-01T12:00:00Z');
  assert.equal(retryAfterMs('120', now), 120_000);
  assert.equal(retryAfterMs('Wed, 01 May 2024 12:00:30 GMT', now), 30_000);
  assert.equal(retryAfterMs('soon', now), undefined);
  assert.equal(retryAfterMs(undefined, now), undefined);
});

test('SimHash: near texts are close, unrelated ones far; the banded index finds exactly what a brute-force scan finds', () => {
  const base = 'Quartz is a hard, crystalline mineral composed of silica. It is the second most abundant mineral in the crust of the Earth, after feldspar.';
  assert.ok(hammingDistance(simhash(base), simhash(base.replace('second', 'second-'))) <= 3, 'a small edit');
  assert.ok(hammingDistance(simhash(base), simhash('Basalt is a fine-grained volcanic rock formed from the rapid cooling of lava rich in magnesium and iron.')) > 10);
  fc.assert(fc.property(fc.array(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), { minLength: 1, maxLength: 60 }), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.array(fc.nat(63), { maxLength: 4 }),
    (hashes, _unused, flips) => {
      const index = new SimhashIndex(3);
      hashes.forEach((h, i) => index.add(i, h));
      let probe = hashes[0]!;
      for (const b of flips) probe = BigInt.asIntN(64, probe ^ (1n << BigInt(b)));
      const found = index.find(probe);
      const brute = hashes.findIndex((h) => hammingDistance(h, probe) <= 3);
      assert.equal(found !== undefined, brute >= 0);
      if (found !== undefined) assert.ok(hammingDistance(hashes[found]!, probe) <= 3);
    }));
});
