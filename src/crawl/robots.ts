/**
 * robots.txt per RFC 9309, parsed by `robots-parser`: what a fetch of `/robots.txt` means for a host.
 *   2xx        → its rules (the group of our product token, else `*`), its Crawl-delay and Sitemap lines;
 *   4xx        → "unavailable": everything may be crawled (429 excepted: that is the server asking us to
 *                slow down, so it is treated as unreachable);
 *   5xx, 429, network error → "unreachable": nothing may be crawled until robots.txt is fetched again.
 * Only the first 500 KiB are parsed (the RFC's minimum). The verdict is cached per origin with its
 * expiry (`robotsCacheSeconds`, shorter for an unreachable one so the host is retried).
 */
import robotsParserModule from 'robots-parser';

interface ParsedRobots {
  isAllowed(url: string, ua?: string): boolean | undefined;
  getCrawlDelay(ua?: string): number | undefined;
  getSitemaps(): string[];
}
/** The package is CommonJS (`module.exports = function`); its typings declare a default export that TS cannot call. */
const robotsParser = robotsParserModule as unknown as (url: string, contents: string) => ParsedRobots;

/** The parsed bytes of a robots.txt, at most (RFC 9309 §2.5). */
export const MAX_ROBOTS_BYTES = 500 * 1024;
/** An unreachable robots.txt is asked for again after this long, ms. */
export const UNREACHABLE_RETRY_MS = 10 * 60 * 1000;

export interface RobotsRules {
  /** The fetch status (0: network error). */
  status: number;
  allows(url: string): boolean;
  /** Crawl-delay for our token (or `*`), ms. */
  crawlDelayMs?: number;
  sitemaps: string[];
}

/** The rules of a robots.txt fetched from `origin` with `status` and `body`. */
export function robotsRules(origin: string, status: number, body: string, token: string): RobotsRules {
  if (status >= 200 && status < 300) {
    const robots = robotsParser(`${origin}/robots.txt`, body.slice(0, MAX_ROBOTS_BYTES));
    const delay = robots.getCrawlDelay(token);
    const rules: RobotsRules = {
      status,
      // undefined: the URL is not under this origin; the crawler never asks that.
      allows: (url) => robots.isAllowed(url, token) !== false,
      sitemaps: robots.getSitemaps(),
    };
    if (typeof delay === 'number' && Number.isFinite(delay) && delay > 0) rules.crawlDelayMs = Math.round(delay * 1000);
    return rules;
  }
  if (status >= 400 && status < 500 && status !== 429) return { status, allows: () => true, sitemaps: [] };
  return { status, allows: () => false, sitemaps: [] };
}

/** How long the verdict of a fetch with `status` may be used, ms. */
export function robotsTtlMs(status: number, cacheSeconds: number): number {
  const unreachable = status === 0 || status === 429 || status >= 500;
  return unreachable ? Math.min(UNREACHABLE_RETRY_MS, cacheSeconds * 1000) : cacheSeconds * 1000;
}
