// Revisits: nothing is fetched again before its revisit interval; when it is due, the page is asked for
// conditionally (If-None-Match / If-Modified-Since), a 304 or an unchanged text doubles the interval and
// a changed text halves it; a changed page is indexed again, an unchanged one is not re-sent, a page
// gone at its revisit leaves the index.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openCorpora, resolveCorporaConfig } from '../../src/corpora/index.js';
import { Crawler, resolveCrawlConfig } from '../../src/crawl/index.js';
import { crawlWarcDir, stateDbPath } from '../../src/kernel/data-dir.js';

test('conditional revisits with an interval that adapts to change', async () => {
  const log: { path: string; headers: IncomingHttpHeaders; status: number }[] = [];
  let version = 0;
  let datedGone = false;
  const server = createServer((req, res) => {
    const entry = { path: req.url ?? '', headers: req.headers, status: 200 };
    log.push(entry);
    const page = (title: string, body: string, headers: Record<string, string> = {}) => {
      res.writeHead(200, { 'content-type': 'text/html', ...headers });
      res.end(`<title>${title}</title><p>${body}</p>`);
    };
    switch (req.url) {
      case '/robots.txt': res.writeHead(404); res.end(); return;
      case '/': page('Home', 'links <a href="/etag">e</a> <a href="/changing">c</a> <a href="/dated">d</a>'); return;
      case '/etag':
        if (req.headers['if-none-match'] === '"v1"') { entry.status = 304; res.writeHead(304, { etag: '"v1"' }); res.end(); return; }
        page('Stable', 'a page about olivine that never changes', { etag: '"v1"' });
        return;
      case '/changing': page('Changing', `revision ${++version} of the garnet news ${'x'.repeat(version)} ${version * 7919}`); return;
      case '/dated': if (datedGone) { res.writeHead(404, { 'content-type': 'text/html' }); res.end('<title>gone</title>'); return; }
        page('Dated', 'pyroxene notes, unchanged', { 'last-modified': 'Wed, 01 May 2024 12:00:00 GMT' }); return;
      default: res.writeHead(404); res.end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.61', () => r()));
  const port = (server.address() as { port: number }).port;
  const origin = `http://revisit.crawl.test:${port}`;
  const dir = mkdtempSync(join(tmpdir(), 'quarry-revisit-'));
  const corpora = await openCorpora({ dataDir: dir, resolved: resolveCorporaConfig({ own: { docs: null, site: null, library: null } }, dir) });
  const crawler = new Crawler({
    stateDb: stateDbPath(dir), warcDir: crawlWarcDir(dir), corpora, resolve: () => '127.0.0.61',
    config: resolveCrawlConfig({ allowPrivateNetworks: true, minDelayMs: 0, revisit: { initialSeconds: 3600, minSeconds: 600, maxSeconds: 86400 } }),
  });
  const db = crawler.records.db;
  const row = (path: string) => db.prepare('SELECT revisit_s, changes, outcome, indexed, status FROM crawl_urls WHERE url = ?').get(`${origin}${path}`) as
    { revisit_s: number; changes: number; outcome: string; indexed: number; status: number };
  try {
    crawler.addSeeds([`${origin}/`]);
    await crawler.start();
    const first = log.length;
    assert.deepEqual(log.map((r) => r.path).sort(), ['/', '/changing', '/dated', '/etag', '/robots.txt']);

    await crawler.start();
    assert.equal(log.length, first, 'nothing is fetched again within its revisit interval');

    // Time passes: every page is due.
    db.prepare('UPDATE crawl_urls SET due_at = 0').run();
    await crawler.start();
    const second = log.slice(first);
    const etag = second.find((r) => r.path === '/etag')!;
    assert.equal(etag.headers['if-none-match'], '"v1"');
    assert.equal(etag.status, 304);
    assert.equal(second.find((r) => r.path === '/dated')!.headers['if-modified-since'], 'Wed, 01 May 2024 12:00:00 GMT');
    assert.equal(second.filter((r) => r.path === '/robots.txt').length, 0, 'robots.txt is still fresh');
    assert.equal(row('/etag').revisit_s, 7200, 'not modified: the interval doubles');
    assert.equal(row('/dated').revisit_s, 7200, 'same text: the interval doubles');
    assert.equal(row('/changing').revisit_s, 1800, 'changed: the interval halves');
    assert.equal(row('/changing').changes, 1);
    for (const p of ['/etag', '/dated', '/changing']) assert.equal(row(p).indexed, 1, p);

    db.prepare('UPDATE crawl_urls SET due_at = 0').run();
    await crawler.start();
    assert.equal(row('/changing').revisit_s, 900);
    assert.equal(row('/changing').changes, 2);
    assert.equal(row('/etag').revisit_s, 14400);
    assert.equal(corpora.index('web').stats().docs, 4, 'one document per page, revisits replace');

    // A page that is gone at its revisit leaves the index.
    datedGone = true;
    db.prepare('UPDATE crawl_urls SET due_at = 0').run();
    await crawler.start();
    assert.equal(row('/dated').status, 404);
    assert.equal(row('/dated').indexed, 0);
    assert.equal(corpora.index('web').stats().docs, 3);
    const cid = (db.prepare('SELECT cid FROM cid_keys WHERE key = ?').safeIntegers(true).get(`${origin}/dated`) as { cid: bigint }).cid;
    assert.equal(corpora.searcher('web').get(cid), undefined);
  } finally {
    await crawler.close();
    await corpora.close();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
