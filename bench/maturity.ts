/**
 * `npm run bench:maturity`: crawls the test web of the crawler's tests (test/crawl/support.ts: 22 real
 * HTTP servers on loopback addresses, python3.11-doc sections among them, hosts with errors, traps and
 * mirrors), then prints the maturity rollup of every host as a Markdown table (docs/maturity.md keeps it)
 * and what the rollup call costs at that size (CPU per call, after the first).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openCorpora, resolveCorporaConfig } from '../src/corpora/index.js';
import { Crawler, resolveCrawlConfig } from '../src/crawl/index.js';
import { EventBus } from '../src/events/bus.js';
import { crawlWarcDir, stateDbPath } from '../src/kernel/data-dir.js';
import { LOCAL_OPERATOR } from '../src/kernel/principal.js';
import { RollupService, crawlFigures } from '../src/rollup/service.js';
import { openDb } from '../src/store/db.js';
import { startTestWeb } from '../test/crawl/support.js';

const web = await startTestWeb();
const dir = mkdtempSync(join(tmpdir(), 'quarry-bench-maturity-'));
try {
  const bus = new EventBus();
  const corpora = await openCorpora({ dataDir: dir, bus, resolved: resolveCorporaConfig({ own: { docs: null, site: null, library: null } }, dir) });
  const db = openDb(stateDbPath(dir));
  const config = resolveCrawlConfig({
    allowPrivateNetworks: true, minDelayMs: 20, maxDelayMs: 2000, concurrency: 8, maxPagesPerHost: 40,
    timeoutMs: 5000, stallTimeoutMs: 800, maxCalendarPagesPerHost: 12, maxRetryAfterMs: 3000, maxBodyBytes: 4 * 1024 * 1024,
  });
  const crawler = new Crawler({ stateDb: stateDbPath(dir), warcDir: crawlWarcDir(dir), config, corpora, bus, resolve: (n) => web.resolve(n) });
  crawler.addSeeds(web.seeds);
  const report = await crawler.start();
  await crawler.close();
  const rollup = new RollupService({ hosts: { hosts: (scope) => corpora.searcher(scope).hosts() }, crawl: crawlFigures(db) });
  const first = rollup.rollup(LOCAL_OPERATOR);
  const runs = 20;
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < runs; i++) rollup.rollup(LOCAL_OPERATOR);
  const cpu = process.cpuUsage(cpu0);
  const perCallMs = (cpu.user + cpu.system) / 1000 / runs;
  const records = (db.prepare('SELECT COUNT(*) AS n FROM crawl_urls').get() as { n: number }).n;
  const pct = (x: number | null) => (x === null ? '—' : `${(x * 100).toFixed(1)}%`);
  console.log(`Crawl: ${report.pages} pages fetched, ${report.indexed} indexed, ${records} URL records; rollup of ${first.total} domains: ${perCallMs.toFixed(1)} ms of CPU per call (mean of ${runs}).\n`);
  console.log('| domain | grade | documents | freshness | fetch errors | duplicates |');
  console.log('|---|:-:|--:|--:|--:|--:|');
  for (const d of [...first.domains].sort((a, b) => a.domain.localeCompare(b.domain))) {
    console.log(`| ${d.domain} | ${d.grade} | ${d.documents.total} | ${d.freshness_s === null ? '—' : `${d.freshness_s} s`} | ${pct(d.fetch_error_rate)} | ${pct(d.duplicate_rate)} |`);
  }
  db.close();
  await corpora.close();
} finally {
  await web.close();
  rmSync(dir, { recursive: true, force: true });
}
