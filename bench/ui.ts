/**
 * `npm run bench:ui [-- --runs N]`
 *
 * What the web UI costs a browser: the size of every file of dist/web/ (raw and gzip level 9, as a
 * compressing proxy would send it; the search page loads app.css and search.js only, and must stay under
 * 50 KB gzip), then first paint and first contentful paint of each page (Chromium's `paint` performance
 * entries) in Debian's chromium against a real `quarry serve` with the fixture corpus, over loopback
 * TLS: the median and minimum of `--runs` fresh page loads each (default 7; a new browser context per
 * load, so nothing is cached).
 */
import { readdirSync, readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { writeFixtureCorpus } from '../test/support/fixture-corpus.js';
import { REPO_ROOT, startServer } from '../test/support/server.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '7' } } });
const runs = Math.max(1, Number(values.runs));
const WEB = join(REPO_ROOT, 'dist', 'web');
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;

console.log('bundle                 raw        gzip');
const sizes = new Map<string, number>();
for (const f of readdirSync(WEB).sort()) {
  const raw = readFileSync(join(WEB, f));
  const gz = gzipSync(raw, { level: 9 }).length;
  sizes.set(f, gz);
  console.log(`${f.padEnd(18)} ${kb(raw.length).padStart(10)} ${kb(gz).padStart(10)}`);
}
const searchPage = (sizes.get('search.js') ?? 0) + (sizes.get('app.css') ?? 0);
console.log(`search page (search.js + app.css): ${kb(searchPage)} gzip (budget 50 KB)`);

const dir = mkdtempSync(join(tmpdir(), 'quarry-bench-ui-'));
const srv = await startServer({ dataDir: dir, setup: writeFixtureCorpus });
const browser = await chromium.launch({ executablePath: process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  console.log(`\npage                       first paint (median / min)   first contentful paint (median / min)   runs ${runs}, load ${loadavg()[0]!.toFixed(1)}`);
  for (const path of ['/', '/search?q=granite', '/login', '/console']) {
    const fp: number[] = [];
    const fcp: number[] = [];
    for (let i = 0; i < runs; i++) {
      const context = await browser.newContext({ ignoreHTTPSErrors: true });
      const page = await context.newPage();
      await page.goto(`${srv.url}${path}`, { waitUntil: 'load' });
      // A string, not a function: tsx would wrap named inner functions in a helper the page does not have.
      const paints = await page.evaluate(`new Promise((resolve) => {
        const read = () => Object.fromEntries(performance.getEntriesByType('paint').map((e) => [e.name, e.startTime]));
        if (read()['first-contentful-paint'] !== undefined) return resolve(read());
        new PerformanceObserver(() => resolve(read())).observe({ type: 'paint', buffered: true });
      })`) as Record<string, number>;
      fp.push(paints['first-paint'] ?? NaN);
      fcp.push(paints['first-contentful-paint'] ?? NaN);
      await context.close();
    }
    const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
    const ms = (a: number[]) => `${med(a).toFixed(0)} / ${Math.min(...a).toFixed(0)} ms`;
    console.log(`${path.padEnd(26)} ${ms(fp).padEnd(28)} ${ms(fcp)}`);
  }
} finally {
  await browser.close();
  await srv.stop();
  rmSync(dir, { recursive: true, force: true });
}
