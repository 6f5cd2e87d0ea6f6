// The SSRF guard: by default the crawler refuses private, loopback and link-local addresses, whether the
// URL names one, DNS (here the resolver hook) answers one, or a redirect leads to one; hostile URLs given
// to `flag` are refused before anything is fetched.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openCorpora, resolveCorporaConfig } from '../../src/corpora/index.js';
import { Crawler, isPrivateAddress, resolveCrawlConfig } from '../../src/crawl/index.js';
import { crawlWarcDir, stateDbPath } from '../../src/kernel/data-dir.js';

test('private, loopback, link-local and mapped addresses are recognised; public ones pass', () => {
  for (const a of ['127.0.0.1', '127.9.9.9', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '0.0.0.0', '100.64.0.1', '::1', '::', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1']) {
    assert.equal(isPrivateAddress(a), true, a);
  }
  for (const a of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8']) assert.equal(isPrivateAddress(a), false, a);
});

test('without allowPrivateNetworks nothing on loopback is fetched, and hostile flags are 400s', async () => {
  const log: string[] = [];
  const server = createServer((req, res) => { log.push(req.url ?? ''); res.writeHead(200, { 'content-type': 'text/html' }); res.end('<title>x</title>'); });
  await new Promise<void>((r) => server.listen(0, '127.0.0.60', () => r()));
  const port = (server.address() as { port: number }).port;
  const dir = mkdtempSync(join(tmpdir(), 'quarry-ssrf-'));
  const corpora = await openCorpora({ dataDir: dir, resolved: resolveCorporaConfig({ own: { docs: null, site: null, library: null } }, dir) });
  const crawler = new Crawler({
    stateDb: stateDbPath(dir), warcDir: crawlWarcDir(dir), corpora, config: resolveCrawlConfig({ minDelayMs: 0 }),
    resolve: (name) => (name === 'innocent.example' ? '127.0.0.60' : undefined),
  });
  try {
    crawler.addSeeds([`http://innocent.example:${port}/`, `http://127.0.0.60:${port}/direct`, `http://[::1]:${port}/v6`]);
    const report = await crawler.start();
    assert.deepEqual(log, [], 'the server saw no request');
    assert.equal(report.pages, 0);
    const outcomes = crawler.records.db.prepare(`SELECT outcome FROM crawl_urls`).all() as { outcome: string }[];
    assert.ok(outcomes.every((o) => o.outcome === 'refused'), JSON.stringify(outcomes));
    for (const bad of ['file:///etc/passwd', 'ftp://example.com/', 'javascript:alert(1)', `http://example.com/${'a'.repeat(10_000)}`,
      `http://innocent.example:${port}/`, 'http://localhost/', 'http://169.254.169.254/latest/meta-data/', 'not a url']) {
      await assert.rejects(crawler.flag(bad), (e: { code?: string; param?: string }) => e.code === 'bad_request' && e.param === 'url', bad.slice(0, 60));
    }
    assert.deepEqual(log, []);
  } finally {
    await crawler.close();
    await corpora.close();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
