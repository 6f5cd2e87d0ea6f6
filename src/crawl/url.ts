/**
 * URLs as the crawler sees them: a link resolved against its page and put in canonical form (the same
 * `canonicalUrl` that gives documents their cids), the origin politeness and robots.txt are kept per, and
 * the shapes of URL that lead into traps (a path repeating itself, a calendar paging on for ever).
 */
import { canonicalUrl } from '../corpora/cid.js';

/** A link resolved against `base` and canonicalised; undefined for anything that is not http(s) or is malformed. */
export function resolveLink(href: string, base: string): string | undefined {
  const h = href.trim();
  if (h === '' || h.startsWith('#')) return undefined;
  let abs: URL;
  try { abs = new URL(h, base); } catch { return undefined; }
  if (abs.protocol !== 'http:' && abs.protocol !== 'https:') return undefined;
  try { return canonicalUrl(abs.href); } catch { return undefined; }
}

/** `scheme://host[:port]` of a canonical URL: robots.txt and politeness are per origin. */
export function originOf(url: string): string {
  return new URL(url).origin;
}

/** A path segment repeated this many times (`/a/b/a/b/a/b`, `/x/x/x`) marks a relative-link loop. */
export const MAX_SEGMENT_REPEATS = 3;
/** A path deeper than this is a trap or a generated maze, not a page anyone links to on purpose. */
export const MAX_PATH_SEGMENTS = 24;

/** Why the shape of `url` alone keeps it out of the frontier, or undefined when it may be crawled. */
export function trapReason(url: string, maxUrlLength: number): string | undefined {
  if (url.length > maxUrlLength) return `URL longer than ${maxUrlLength} characters`;
  const path = new URL(url).pathname;
  const segments = path.split('/').filter((s) => s !== '');
  if (segments.length > MAX_PATH_SEGMENTS) return `path deeper than ${MAX_PATH_SEGMENTS} segments`;
  const counts = new Map<string, number>();
  for (const s of segments) {
    const n = (counts.get(s) ?? 0) + 1;
    if (n >= MAX_SEGMENT_REPEATS) return `path segment ${JSON.stringify(s.slice(0, 40))} repeats ${n} times`;
    counts.set(s, n);
  }
  return undefined;
}

const DATE_IN_PATH = /\/(1[89]\d\d|2\d\d\d)[/-](0?[1-9]|1[0-2])(?:[/-](0?[1-9]|[12]\d|3[01]))?(?:\/|$|\.)/;
const DATE_IN_QUERY = /[?&][^=&]*(?:date|day|month|year|cal|week)[^=&]*=|[?&][^=&]*=(1[89]\d\d|2\d\d\d)-?(0[1-9]|1[0-2])/i;

/**
 * Whether `url` looks like a page of a calendar (a year and month in the path, or a date-ish query
 * parameter): such pages link to the next and previous period without end, so a host gets a budget of them.
 */
export function isCalendarUrl(url: string): boolean {
  const u = new URL(url);
  return DATE_IN_PATH.test(u.pathname) || DATE_IN_QUERY.test(u.search);
}
