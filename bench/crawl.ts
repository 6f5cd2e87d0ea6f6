/**
 * `npm run bench:crawl [-- --hosts 50 --pages 120 --delay 100 --factor 0 --concurrency 50]`
 *
 * Crawler throughput on loopback: a web of `--hosts` generated sites (bench/crawl-hosts.ts, in its own
 * process) crawled from one seed per host into a temporary data directory, `--pages` pages per host
 * (the per-host budget), every page fetched, parsed, written to the WARC and indexed into `web` (the
 * run ends after the last index commit). Politeness as configured: at most one request per host at a
 * time and `--delay` ms between them (`--factor`: the delay is at least that many times the host's
 * response time; 0 by default here, so a loaded machine's slow answers do not slow the crawl further),
 * so the politeness ceiling is hosts × 1000 / delay pages/s.
 * Prints pages/s and the crawler process's CPU time per page (user + system; the servers' CPU is not
 * counted), and the cost of `measureDomains` over the resulting records. The aim: ≥ 200
 * pages/s with 50 hosts on the 2-core machine.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { openCorpora, resolveCorporaConfig } from '../src/corpora/index.js';
import { Crawler, measureDomains, resolveCrawlConfig } from '../src/crawl/index.js';
import { EventBus } from '../src/events/bus.js';
import { crawlWarcDir, stateDbPath } from '../src/kernel/data-dir.js';
import { openDb } from '../src/store/db.js';

const { values } = parseArgs({ options: {
  hosts: { type: 'string', default: '50' }, pages: { type: 'string', default: '120' },
  delay: { type: 'string', default: '100' }, factor: { type: 'string', default: '0' }, concurrency: { type: 'string', default: '50' },
} });
const hosts = Number(values.hosts);
const pages = Number(values.pages);

const farm = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('crawl-hosts.ts', import.meta.url)), String(hosts), String(pages + 10)], { stdio: ['pipe', 'pipe', 'inherit'] });
const line = await new Promise<string>((resolve, reject) => {
  createInterface({ input: farm.stdout! }).once('line', resolve);
  farm.once('exit', (code) => reject(new Error(`the host farm exited (${code})`)));
});
const map = new Map((JSON.parse(line) as { hosts: { name: string; address: string; port: number }[] }).hosts.map((h) => [h.name, h]));

const dir = mkdtempSync(join(tmpdir(), 'quarry-bench-crawl-'));
try {
  const corpora = await openCorpora({ dataDir: dir, resolved: resolveCorporaConfig({ own: { docs: null, site: null, library: null } }, dir) });
  const config = resolveCrawlConfig({
    allowPrivateNetworks: true, minDelayMs: Number(values.delay), delayFactor: Number(values.factor), concurrency: Number(values.concurrency),
    maxPagesPerHost: pages,
  });
  const bus = new EventBus();
  if (process.env['QUARRY_BENCH_TRACE']) bus.subscribe((e) => { if (e.kind === 'crawl.progress') process.stderr.write(`${e.data.ts} pages ${e.data['pages']} inFlight ${e.data['inFlight']} queued ${e.data['queued']}\n`); });
  const crawler = new Crawler({ stateDb: stateDbPath(dir), warcDir: crawlWarcDir(dir), config, corpora, bus, resolve: (n) => map.get(n)?.address });
  crawler.addSeeds([...map.values()].map((h) => `http://${h.name}:${h.port}/p/0.html`));
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const report = await crawler.start();
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  lag.disable();
  await crawler.close();
  const docs = corpora.index('web').stats().docs;
  const stateDb = openDb(stateDbPath(dir));
  const m0 = performance.now();
  const measured = measureDomains(stateDb);
  const measureMs = performance.now() - m0;
  const outcomes = Object.fromEntries((stateDb.prepare(`SELECT outcome, COUNT(*) AS n FROM crawl_urls WHERE outcome IS NOT NULL GROUP BY outcome`).all() as { outcome: string; n: number }[]).map((r) => [r.outcome, r.n]));
  stateDb.close();
  await corpora.close();
  const cpuMsPerPage = (cpu.user + cpu.system) / 1000 / report.pages;
  console.log(JSON.stringify({
    hosts, pagesPerHost: pages, delayMs: Number(values.delay), delayFactor: Number(values.factor), concurrency: Number(values.concurrency),
    pages: report.pages, requests: report.requests, indexed: docs, outcomes,
    measureDomains: { hosts: measured.length, ms: +measureMs.toFixed(1) }, seconds: +seconds.toFixed(2),
    pagesPerSecond: +(report.pages / seconds).toFixed(1), cpuMsPerPage: +cpuMsPerPage.toFixed(2),
    eventLoopDelayP99Ms: +(lag.percentile(99) / 1e6).toFixed(1), eventLoopDelayMaxMs: +(lag.max / 1e6).toFixed(1),
    politenessCeiling: hosts * 1000 / Number(values.delay), cores: cpus().length, loadavg: loadavg().map((x) => +x.toFixed(2)),
  }));
} finally {
  farm.stdin!.end();
  rmSync(dir, { recursive: true, force: true });
}
