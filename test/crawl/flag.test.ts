// The entry point the trusted corpus uses: a flagged URL jumps the queue, is fetched politely like any
// other, and its recorded fetch (with the document) is reported to the service that flagged it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openCorpora, resolveCorporaConfig } from '../../src/corpora/index.js';
import { Crawler, resolveCrawlConfig, type RecordedFetch } from '../../src/crawl/index.js';
import { crawlWarcDir, stateDbPath } from '../../src/kernel/data-dir.js';

test('a flagged URL is fetched before queued ones and reported once recorded', async () => {
  const log: string[] = [];
  const server = createServer((req, res) => {
    log.push(req.url ?? '');
    if (req.url === '/robots.txt') { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<title>Page ${req.url}</title><p>About ${req.url === '/flagged' ? 'trusted cinnabar' : 'ordinary pumice'} ${req.url}.</p>`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.62', () => r()));
  const port = (server.address() as { port: number }).port;
  const origin = `http://flag.crawl.test:${port}`;
  const dir = mkdtempSync(join(tmpdir(), 'quarry-flag-'));
  const corpora = await openCorpora({ dataDir: dir, resolved: resolveCorporaConfig({ own: { docs: null, site: null, library: null } }, dir) });
  const recorded: RecordedFetch[] = [];
  const crawler = new Crawler({
    stateDb: stateDbPath(dir), warcDir: crawlWarcDir(dir), corpora, resolve: () => '127.0.0.62', onRecorded: (r) => recorded.push(r),
    config: resolveCrawlConfig({ allowPrivateNetworks: true, minDelayMs: 0 }),
  });
  try {
    crawler.addSeeds([`${origin}/a`, `${origin}/b`, `${origin}/c`]);
    const flagged = await crawler.flag(`${origin}/flagged?utm_source=mail#top`);
    assert.equal(flagged.url, `${origin}/flagged`);
    await crawler.start();
    assert.deepEqual(log.slice(0, 2), ['/robots.txt', '/flagged']);
    const r = recorded.find((x) => x.url === flagged.url)!;
    assert.equal(r.source, 'flag');
    assert.equal(r.outcome, 'indexed');
    assert.equal(r.id, flagged.id);
    assert.match(r.doc!.text, /trusted cinnabar/);
    assert.equal(recorded.length, 4);
  } finally {
    await crawler.close();
    await corpora.close();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
