/**
 * The crawler: a polite, resumable crawl of the open web into WARC files and the `web` corpus, and the
 * per-domain figures its records measure. Everything else in this folder is reached through here.
 */
export { Crawler, readRecordAt, retryAfterMs } from './crawler.js';
export type { CrawlCounters, CrawlerOptions, CrawlReport, CrawlState, CrawlStatus, RecordedFetch } from './crawler.js';
export { DEFAULT_CRAWL_CONFIG, hostAllowed, resolveCrawlConfig } from './config.js';
export type { CrawlConfig, CrawlConfigInput } from './config.js';
export { isPrivateAddress, type ResolveHook } from './fetch.js';
export { measureDomains, type DomainMeasure } from './measure.js';
export type { Outcome, UrlSource } from './records.js';
export { CrawlService, CrawlStartRequest, crawlSchemas, type CrawlServiceOptions, type CrawlStatusResource, type CrawlStartResource } from './service.js';
