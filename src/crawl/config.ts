/**
 * The crawler's configuration: the `crawl` member of the service configuration file, validated field by
 * field (a mistake is a BadRequestError whose `param` is the dotted path, as in the corpora
 * configuration). `CrawlConfigInput` is what a person writes, every field optional; `CrawlConfig` has
 * every default applied. docs/crawling.md documents each field; docs/configuration.md lists the member.
 */
import { BadRequestError } from '../kernel/errors.js';

export interface CrawlConfigInput {
  /** Crawl private (RFC 1918, fc00::/7), loopback and link-local addresses. Default false (SSRF guard). */
  allowPrivateNetworks?: boolean;
  /** The product token robots.txt groups are matched against. Default `QuarryBot`. */
  userAgentToken?: string;
  /** The whole User-Agent header. Default `QuarryBot/0.1 (+https://github.com/quarry-search/quarry)`. */
  userAgent?: string;
  /** Fetches in flight at once, across all hosts (≥ 1). Default 16. */
  concurrency?: number;
  /** Least time between the end of one fetch from a host and the start of the next, in ms (≥ 0). Default 1000. */
  minDelayMs?: number;
  /** The adaptive delay never exceeds this (a robots.txt `Crawl-delay` may, and is obeyed). Default 30000. */
  maxDelayMs?: number;
  /** The delay is at least this many times the host's last response time (≥ 0). Default 2. */
  delayFactor?: number;
  /** A `Retry-After` longer than this stops the host for this long only, in ms. Default 600000 (10 min). */
  maxRetryAfterMs?: number;
  /** Pages fetched from one host per crawl, at most (≥ 1). Default 10000. */
  maxPagesPerHost?: number;
  /** URLs queued for one host, at most: bounds the frontier a trap can grow. Default 50000. */
  maxQueuedPerHost?: number;
  /** Pages of one host whose URL looks like a calendar (a date in path or query), at most. Default 50. */
  maxCalendarPagesPerHost?: number;
  /** Links followed from a seed, at most. Default 20. */
  maxDepth?: number;
  /** A response body (as received, and decoded) over this many bytes is cut off. Default 8 MiB. */
  maxBodyBytes?: number;
  /** Decoded bytes per received byte above this (after the first 64 KiB) is a compression bomb: cut off. Default 100. */
  maxDecompressionRatio?: number;
  /** A fetch (connection, headers and body) taking longer than this is abandoned, in ms. Default 30000. */
  timeoutMs?: number;
  /** No byte of the body for this long is a stall: abandoned, in ms. Default 10000. */
  stallTimeoutMs?: number;
  /** URLs longer than this are not crawled. Default 2048. */
  maxUrlLength?: number;
  /** Redirects followed in a chain, at most. Default 5. */
  maxRedirects?: number;
  /** Failed fetches of one URL (network, 5xx, 429) before it waits for its next revisit. Default 3. */
  maxAttempts?: number;
  /** How long a robots.txt is used before it is fetched again, in seconds. Default 86400. */
  robotsCacheSeconds?: number;
  /** Revisit interval bounds in seconds: it halves when a page changed and doubles when it did not. */
  revisit?: { initialSeconds?: number; minSeconds?: number; maxSeconds?: number };
  /** Only hosts matching one of these patterns are crawled (`example.com`, `*.example.com`); empty: all. */
  allowHosts?: string[];
  /** Hosts matching one of these are never crawled. */
  blockHosts?: string[];
  /** Host name → address, consulted before DNS (like curl's --resolve). */
  resolve?: Record<string, string>;
  /** A WARC file is closed and a new one begun past this size. Default 1 GiB. */
  warcMaxBytes?: number;
  /** Completed fetches are made durable (WARC fsync, then one database transaction) this often, in ms. Default 200. */
  flushIntervalMs?: number;
  /** Content types fetched for indexing. Default text/html, application/xhtml+xml, text/plain. */
  contentTypes?: string[];
  /** Two pages whose 64-bit SimHashes differ in at most this many bits are near-duplicates (0–3). Default 3. */
  simhashDistance?: number;
}

export interface CrawlConfig {
  allowPrivateNetworks: boolean;
  userAgentToken: string;
  userAgent: string;
  concurrency: number;
  minDelayMs: number;
  maxDelayMs: number;
  delayFactor: number;
  maxRetryAfterMs: number;
  maxPagesPerHost: number;
  maxQueuedPerHost: number;
  maxCalendarPagesPerHost: number;
  maxDepth: number;
  maxBodyBytes: number;
  maxDecompressionRatio: number;
  timeoutMs: number;
  stallTimeoutMs: number;
  maxUrlLength: number;
  maxRedirects: number;
  maxAttempts: number;
  robotsCacheSeconds: number;
  revisit: { initialSeconds: number; minSeconds: number; maxSeconds: number };
  allowHosts: string[];
  blockHosts: string[];
  resolve: Record<string, string>;
  warcMaxBytes: number;
  flushIntervalMs: number;
  contentTypes: string[];
  simhashDistance: number;
}

export const DEFAULT_CRAWL_CONFIG: CrawlConfig = {
  allowPrivateNetworks: false,
  userAgentToken: 'QuarryBot',
  userAgent: 'QuarryBot/0.1 (+https://github.com/quarry-search/quarry)',
  concurrency: 16,
  minDelayMs: 1000,
  maxDelayMs: 30_000,
  delayFactor: 2,
  maxRetryAfterMs: 600_000,
  maxPagesPerHost: 10_000,
  maxQueuedPerHost: 50_000,
  maxCalendarPagesPerHost: 50,
  maxDepth: 20,
  maxBodyBytes: 8 * 1024 * 1024,
  maxDecompressionRatio: 100,
  timeoutMs: 30_000,
  stallTimeoutMs: 10_000,
  maxUrlLength: 2048,
  maxRedirects: 5,
  maxAttempts: 3,
  robotsCacheSeconds: 86_400,
  revisit: { initialSeconds: 86_400, minSeconds: 3600, maxSeconds: 30 * 86_400 },
  allowHosts: [],
  blockHosts: [],
  resolve: {},
  warcMaxBytes: 1024 * 1024 * 1024,
  flushIntervalMs: 200,
  contentTypes: ['text/html', 'application/xhtml+xml', 'text/plain'],
  simhashDistance: 3,
};

function fail(param: string, message: string): never {
  throw new BadRequestError(`Crawl configuration: ${param} ${message}.`, param);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function num(v: unknown, param: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) fail(param, `must be a number from ${min} to ${max}`);
  return v;
}

function strings(v: unknown, param: string): string[] {
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string' || s === '')) fail(param, 'must be an array of non-empty strings');
  return v as string[];
}

/** Validates a `crawl` configuration value (parsed JSON; undefined gives the defaults). */
export function resolveCrawlConfig(value: unknown): CrawlConfig {
  const input = value ?? {};
  if (!isObject(input)) fail('crawl', 'must be a JSON object');
  const out: CrawlConfig = { ...DEFAULT_CRAWL_CONFIG, revisit: { ...DEFAULT_CRAWL_CONFIG.revisit } };
  for (const [key, v] of Object.entries(input)) {
    const param = `crawl.${key}`;
    switch (key) {
      case 'allowPrivateNetworks':
        if (typeof v !== 'boolean') fail(param, 'must be true or false');
        out.allowPrivateNetworks = v;
        break;
      case 'userAgentToken':
        if (typeof v !== 'string' || !/^[A-Za-z_-]{1,64}$/.test(v)) fail(param, 'must be a product token of letters, "_" and "-" (RFC 9309)');
        out.userAgentToken = v;
        break;
      case 'userAgent':
        if (typeof v !== 'string' || v.length === 0 || v.length > 512 || /[\r\n]/.test(v)) fail(param, 'must be one line of at most 512 characters');
        out.userAgent = v;
        break;
      case 'concurrency': case 'maxPagesPerHost': case 'maxQueuedPerHost': case 'maxUrlLength': case 'timeoutMs':
      case 'stallTimeoutMs': case 'warcMaxBytes': case 'maxBodyBytes': case 'maxAttempts': case 'flushIntervalMs':
        out[key] = Math.floor(num(v, param, 1));
        break;
      case 'minDelayMs': case 'maxDelayMs': case 'maxRetryAfterMs': case 'maxCalendarPagesPerHost': case 'maxDepth':
      case 'maxRedirects': case 'robotsCacheSeconds': case 'delayFactor':
        out[key] = num(v, param, 0);
        break;
      case 'maxDecompressionRatio':
        out.maxDecompressionRatio = num(v, param, 1);
        break;
      case 'simhashDistance':
        out.simhashDistance = Math.floor(num(v, param, 0, 3));
        break;
      case 'revisit': {
        if (!isObject(v)) fail(param, 'must be an object {initialSeconds, minSeconds, maxSeconds}');
        for (const [k, s] of Object.entries(v)) {
          if (k !== 'initialSeconds' && k !== 'minSeconds' && k !== 'maxSeconds') fail(`${param}.${k}`, 'is not a known field');
          out.revisit[k] = num(s, `${param}.${k}`, 1);
        }
        if (out.revisit.minSeconds > out.revisit.maxSeconds) fail(param, 'minSeconds must not exceed maxSeconds');
        break;
      }
      case 'allowHosts': case 'blockHosts':
        out[key] = strings(v, param).map((s) => s.toLowerCase());
        break;
      case 'contentTypes':
        out.contentTypes = strings(v, param).map((s) => s.toLowerCase());
        break;
      case 'resolve': {
        if (!isObject(v)) fail(param, 'must be an object of host name → IP address');
        const map: Record<string, string> = {};
        for (const [host, addr] of Object.entries(v)) {
          if (typeof addr !== 'string' || !isIpLiteral(addr)) fail(`${param}.${host}`, 'must be an IPv4 or IPv6 address');
          map[host.toLowerCase()] = addr;
        }
        out.resolve = map;
        break;
      }
      default:
        fail(param, 'is not a known field (see docs/crawling.md)');
    }
  }
  if (out.minDelayMs > out.maxDelayMs) fail('crawl.minDelayMs', 'must not exceed maxDelayMs');
  return out;
}

function isIpLiteral(s: string): boolean {
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(s) || (s.includes(':') && /^[0-9a-f:.]+$/i.test(s));
}

/** Whether `hostname` matches `pattern`: an exact name, or `*.name` for the name and its subdomains. */
export function hostMatches(hostname: string, pattern: string): boolean {
  if (pattern.startsWith('*.')) {
    const base = pattern.slice(2);
    return hostname === base || hostname.endsWith(`.${base}`);
  }
  return hostname === pattern;
}

/** Whether the configuration lets the crawler fetch from `hostname` at all. */
export function hostAllowed(config: CrawlConfig, hostname: string): boolean {
  if (config.blockHosts.some((p) => hostMatches(hostname, p))) return false;
  return config.allowHosts.length === 0 || config.allowHosts.some((p) => hostMatches(hostname, p));
}
