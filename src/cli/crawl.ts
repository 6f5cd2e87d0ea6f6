/**
 * `quarry crawl`: crawls from seed URLs into WARC files (`<data>/crawl/warc`) and the web corpus, politely
 * (docs/crawling.md), until no URL is due. The frontier lives in the data directory's state database, so
 * running the command again resumes where the last run stopped, `kill -9` included. Ctrl-C stops
 * fetching, records what was fetched, commits the index and exits 130.
 */
import { readFileSync } from 'node:fs';
import { Crawler, resolveCrawlConfig } from '../crawl/index.js';
import { openCorpora } from '../corpora/corpora.js';
import { EventBus } from '../events/bus.js';
import { crawlWarcDir, stateDbPath } from '../kernel/data-dir.js';
import { COMMON_OPTIONS, EXIT_INTERRUPTED, EXIT_OK, intOption, parseCommandArgs, printJsonLine, resolveDataDir, runCommand, UsageError } from './command.js';
import { loadCliCorporaConfig } from './corpus-access.js';
import { ProgressBar } from './progress.js';

const USAGE = `usage: quarry crawl [options] [URL...]

Crawls from the seed URLs (and whatever earlier runs left in the data directory's frontier) into WARC
files under DATA/crawl/warc and the web corpus, obeying robots.txt and per-host delays. Ends when no
URL is due; run it again to resume or to revisit. See docs/crawling.md.

  --seeds FILE               seed URLs, one a line (blank lines and # comments ignored)
  --allow PATTERN            crawl only hosts matching a pattern (repeatable): example.com, *.example.com
  --block PATTERN            never crawl hosts matching a pattern (repeatable)
  --max-pages-per-host N     the per-host page budget (default 10000)
  --concurrency N            fetches in flight across hosts (default 16)
  --config FILE              configuration file ("crawl" and "corpora" members), or QUARRY_CONFIG
  --data DIR                 data directory (default ./data, or QUARRY_DATA)
  --json                     JSON lines on stdout: progress (every second), refused seeds, done`;

function readConfigFile(file: string | undefined): Record<string, unknown> {
  if (!file) return {};
  try {
    const v = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? v as Record<string, unknown> : {};
  } catch (err) {
    throw new UsageError(`cannot read the configuration ${file}: ${(err as Error).message}.`);
  }
}

function readSeeds(file: string): string[] {
  let text: string;
  try { text = readFileSync(file, 'utf8'); } catch (err) { throw new UsageError(`cannot read --seeds ${file}: ${(err as Error).message}.`); }
  return text.split(/\r?\n/).map((l) => l.replace(/#.*$/, '').trim()).filter((l) => l !== '');
}

export async function run(args: string[]): Promise<number> {
  let json = false;
  return runCommand('crawl', USAGE, () => json, async () => {
    const { values, positionals } = parseCommandArgs(args, {
      ...COMMON_OPTIONS,
      seeds: { type: 'string' }, allow: { type: 'string', multiple: true }, block: { type: 'string', multiple: true },
      'max-pages-per-host': { type: 'string' }, concurrency: { type: 'string' }, config: { type: 'string' },
    });
    json = values.json === true;
    if (values.help) { console.log(USAGE); return EXIT_OK; }
    const configFile = values.config ?? process.env['QUARRY_CONFIG'];
    const config = resolveCrawlConfig(readConfigFile(configFile)['crawl']);
    if (values.allow?.length) config.allowHosts = values.allow.map((p) => p.toLowerCase());
    if (values.block?.length) config.blockHosts = [...config.blockHosts, ...values.block.map((p) => p.toLowerCase())];
    const budget = intOption('max-pages-per-host', values['max-pages-per-host'], 1);
    if (budget !== undefined) config.maxPagesPerHost = budget;
    const concurrency = intOption('concurrency', values.concurrency, 1);
    if (concurrency !== undefined) config.concurrency = concurrency;
    const seeds = [...(values.seeds ? readSeeds(values.seeds) : []), ...positionals];

    const dataDir = resolveDataDir(values.data);
    const bus = new EventBus();
    const corpora = await openCorpora({ dataDir, bus, resolved: loadCliCorporaConfig(configFile, dataDir) });
    const crawler = new Crawler({ stateDb: stateDbPath(dataDir), warcDir: crawlWarcDir(dataDir), config, corpora, bus });
    const bar = new ProgressBar('crawling', { enabled: !json });
    bus.subscribe((e) => {
      if (e.kind !== 'crawl.progress') return;
      const d = e.data as Record<string, number>;
      if (json) printJsonLine({ event: 'progress', pages: d['pages'], indexed: d['indexed'], queued: d['queued'], errors: d['errors'], inFlight: d['inFlight'] });
      else bar.update(d['pages']!, undefined, `pages · ${d['queued']} queued · ${d['errors']} errors · ${d['duplicates']} duplicates`);
    });
    let interrupted = false;
    const onSignal = () => { interrupted = true; void crawler.stop(); };
    process.on('SIGINT', onSignal);
    try {
      const { added, refused } = crawler.addSeeds(seeds);
      for (const r of refused) {
        if (json) printJsonLine({ event: 'refused', url: r.url, reason: r.reason });
        else process.stderr.write(`refused seed ${r.url}: ${r.reason}\n`);
      }
      if (!json && seeds.length) console.log(`${added} new seed URLs (${seeds.length - added - refused.length} already known)`);
      const report = await crawler.start();
      bar.finish();
      const docs = corpora.index('web').stats().docs;
      if (json) printJsonLine({ event: 'done', ...report, docs, interrupted });
      else {
        console.log(`${interrupted ? 'Interrupted: ' : ''}fetched ${report.pages} pages (${report.requests} requests) in ${report.seconds.toFixed(1)} s: `
          + `${report.indexed} indexed, ${report.duplicates} duplicates, ${report.notModified} unchanged, ${report.errors} errors, `
          + `${report.robotsDisallowed} disallowed by robots.txt; the web corpus has ${docs} documents.`);
      }
      return interrupted ? EXIT_INTERRUPTED : EXIT_OK;
    } finally {
      process.off('SIGINT', onSignal);
      bar.finish();
      await crawler.close();
      await corpora.close();
    }
  });
}
