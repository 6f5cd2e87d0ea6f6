/**
 * The ecosystem maturity rollup (CONTRACT §7): a grade `A`–`F` per domain (a host in any corpus, with
 * its subdomains, as `site:` matches), computed at call time from the live indexes and, once the crawler
 * reports them, its fetch records. Every face (the MCP tool and resources) calls `rollup`.
 *
 * Figures and where they come from:
 *   - `documents.{own,web,trusted,total}`: live documents of the domain per corpus, counted in the current
 *     searcher of each corpus (`Searcher.hosts()`);
 *   - `trusted_flags`: documents of the domain in the trusted corpus (each one a client's flag);
 *   - `last_fetch_at`, `freshness_s`, `fetch_error_rate`, `duplicate_rate`: from the crawler's records
 *     (`crawlFigures`, over `measureDomains`), the rates weighted by pages fetched per host; `null` when the
 *     crawler never fetched a page of the domain (documents imported from WARC files only, say).
 *
 * Rubric (`quarry-maturity/1`): points from the figures that are known —
 *   documents (all corpora): ≥ 1,000 → 3, ≥ 100 → 2, ≥ 10 → 1, else 0; at least one trusted flag → +1;
 *   freshness ≤ 7 days → +1, > 90 days → −1; fetch error rate ≤ 5 % → +1, > 25 % → −1;
 *   duplicate rate > 50 % → −1.
 * Grade: ≥ 5 → A, 4 → B, 3 → C, 2 → D, 1 → E, ≤ 0 → F. A figure that is `null` adds nothing.
 */
import { BadRequestError, QuarryError } from '../kernel/errors.js';
import { requireRight, type Principal } from '../kernel/principal.js';
import type { Scope } from '../kernel/scope.js';
import { measureDomains } from '../crawl/index.js';
import type { Db } from '../store/db.js';

export const RUBRIC = 'quarry-maturity/1';

/** What the rollup reads of a corpus: live documents per exact host. */
export interface HostCountSource {
  /** The scope's current live documents per host; throws `UnavailableError` while it is not open. */
  hosts(scope: Scope): ReadonlyMap<string, number>;
}

/** What the crawler's fetch records say of one host. */
export interface HostFetches {
  /** Pages fetched at least once. */
  fetched: number;
  lastSuccessAt: Date | null;
  /** Of the fetched pages: the share whose last fetch failed, and the share found to duplicate another. */
  errorRate: number;
  duplicateRate: number;
}

/** The crawler's figures per host, read once per rollup (one scan of its records). */
export interface CrawlFigures {
  hosts(): ReadonlyMap<string, HostFetches>;
}

/** The crawler's records in the state database as the rollup's crawl figures. */
export function crawlFigures(db: Db): CrawlFigures {
  return {
    hosts() {
      const out = new Map<string, HostFetches>();
      for (const m of measureDomains(db)) {
        out.set(m.host, { fetched: m.fetched, lastSuccessAt: m.lastSuccessAt ? new Date(m.lastSuccessAt) : null, errorRate: m.errorRate, duplicateRate: m.duplicateRate });
      }
      return out;
    },
  };
}

export type Grade = 'A' | 'B' | 'C' | 'D' | 'E' | 'F';

export interface DomainRollup {
  domain: string;
  grade: Grade;
  documents: { own: number; web: number; trusted: number; total: number };
  trusted_flags: number;
  last_fetch_at: string | null;
  freshness_s: number | null;
  fetch_error_rate: number | null;
  duplicate_rate: number | null;
}

export interface RollupResource {
  v: 1;
  rubric: string;
  measured_at: string;
  /** Number of domains known (the list holds at most `limit`, most documents first). */
  total: number;
  domains: DomainRollup[];
}

export interface RollupInput { domain?: unknown }

const DOMAIN = /^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;
const SCOPES_COUNTED: readonly Scope[] = ['own', 'web', 'trusted'];

export class RollupService {
  readonly #hosts: HostCountSource;
  readonly #crawl: CrawlFigures | undefined;
  readonly #now: () => Date;
  /** Most domains one answer lists when no domain is named. */
  readonly limit: number;

  constructor(o: { hosts: HostCountSource; crawl?: CrawlFigures; now?: () => Date; limit?: number }) {
    this.#hosts = o.hosts;
    this.#crawl = o.crawl;
    this.#now = o.now ?? (() => new Date());
    this.limit = o.limit ?? 100;
  }

  /** One domain's figures, or every known domain's (most documents first, at most `limit`). */
  rollup(principal: Principal, input: RollupInput = {}): RollupResource {
    requireRight(principal, 'search');
    const now = this.#now();
    const counts = this.#counts();
    const fetches = this.#crawl?.hosts() ?? new Map<string, HostFetches>();
    let names: string[];
    let total: number;
    if (input.domain !== undefined && input.domain !== null) {
      names = [parseDomain(input.domain)];
      total = 1;
    } else {
      const all = [...domainsOf(counts)];
      total = all.length;
      names = all
        .map((d) => ({ d, n: documentsOf(counts, d).total }))
        .sort((a, b) => b.n - a.n || (a.d < b.d ? -1 : 1))
        .slice(0, this.limit)
        .map((x) => x.d);
    }
    return { v: 1, rubric: RUBRIC, measured_at: now.toISOString(), total, domains: names.map((d) => domainRollup(counts, fetches, d, now)) };
  }

  /** Every domain a document's host gives (the hosts themselves, no parents), sorted. */
  domains(principal: Principal): string[] {
    requireRight(principal, 'search');
    return [...domainsOf(this.#counts())].sort();
  }

  #counts(): Map<Scope, ReadonlyMap<string, number>> {
    const out = new Map<Scope, ReadonlyMap<string, number>>();
    for (const scope of SCOPES_COUNTED) {
      try {
        out.set(scope, this.#hosts.hosts(scope));
      } catch (err) {
        // A corpus that is not open yet counts nothing; the others still answer.
        if (!QuarryError.is(err) || err.code !== 'unavailable') throw err;
        out.set(scope, new Map());
      }
    }
    return out;
  }
}

function domainRollup(counts: Map<Scope, ReadonlyMap<string, number>>, fetches: ReadonlyMap<string, HostFetches>, domain: string, now: Date): DomainRollup {
  const documents = documentsOf(counts, domain);
  let fetched = 0;
  let errors = 0;
  let duplicates = 0;
  let last: Date | null = null;
  for (const [host, f] of fetches) {
    if (!inDomain(host, domain)) continue;
    fetched += f.fetched;
    errors += f.errorRate * f.fetched;
    duplicates += f.duplicateRate * f.fetched;
    if (f.lastSuccessAt && (!last || f.lastSuccessAt > last)) last = f.lastSuccessAt;
  }
  const rate = (n: number) => (fetched > 0 ? Math.round((n / fetched) * 10_000) / 10_000 : null);
  const out: DomainRollup = {
    domain,
    grade: 'F',
    documents,
    trusted_flags: documents.trusted,
    last_fetch_at: last ? last.toISOString() : null,
    freshness_s: last ? Math.max(0, Math.round((now.getTime() - last.getTime()) / 1000)) : null,
    fetch_error_rate: rate(errors),
    duplicate_rate: rate(duplicates),
  };
  out.grade = grade(out);
  return out;
}

/** The rubric of the file comment. */
export function grade(r: Omit<DomainRollup, 'grade'>): Grade {
  let points = r.documents.total >= 1000 ? 3 : r.documents.total >= 100 ? 2 : r.documents.total >= 10 ? 1 : 0;
  if (r.trusted_flags > 0) points++;
  if (r.freshness_s !== null) points += r.freshness_s <= 7 * 86_400 ? 1 : r.freshness_s > 90 * 86_400 ? -1 : 0;
  if (r.fetch_error_rate !== null) points += r.fetch_error_rate <= 0.05 ? 1 : r.fetch_error_rate > 0.25 ? -1 : 0;
  if (r.duplicate_rate !== null && r.duplicate_rate > 0.5) points--;
  return points >= 5 ? 'A' : points === 4 ? 'B' : points === 3 ? 'C' : points === 2 ? 'D' : points === 1 ? 'E' : 'F';
}

export function parseDomain(raw: unknown): string {
  if (typeof raw !== 'string') throw new BadRequestError('domain must be a string.', 'domain');
  const d = raw.trim().toLowerCase().replace(/\.$/, '');
  if (!DOMAIN.test(d)) throw new BadRequestError(`domain must be a host name such as example.com; got ${JSON.stringify(raw.slice(0, 100))}.`, 'domain');
  return d;
}

/** Whether `host` is `domain` or one of its subdomains (dot-suffix on whole labels, as `site:`). */
function inDomain(host: string, domain: string): boolean {
  return host === domain || host.endsWith(`.${domain}`);
}

function domainsOf(counts: Map<Scope, ReadonlyMap<string, number>>): Set<string> {
  const out = new Set<string>();
  for (const m of counts.values()) for (const host of m.keys()) if (DOMAIN.test(host)) out.add(host);
  return out;
}

/** Documents of `domain` and its subdomains per corpus (dot-suffix on whole labels, as `site:`). */
function documentsOf(counts: Map<Scope, ReadonlyMap<string, number>>, domain: string): DomainRollup['documents'] {
  const per = (scope: Scope) => {
    let n = 0;
    for (const [host, c] of counts.get(scope) ?? []) if (inDomain(host, domain)) n += c;
    return n;
  };
  const own = per('own');
  const web = per('web');
  const trusted = per('trusted');
  return { own, web, trusted, total: own + web + trusted };
}

/** The JSON Schema of `RollupResource` (the MCP tool's `outputSchema`). */
export function rollupSchema(): Record<string, unknown> {
  const rate = { type: ['number', 'null'], minimum: 0, maximum: 1 };
  const count = { type: 'integer', minimum: 0 };
  return {
    type: 'object', additionalProperties: false,
    required: ['v', 'rubric', 'measured_at', 'total', 'domains'],
    properties: {
      v: { type: 'integer', const: 1 },
      rubric: { type: 'string', description: 'The grading rubric (docs/mcp.md).' },
      measured_at: { type: 'string', format: 'date-time' },
      total: { ...count, description: 'Number of domains known; `domains` lists at most 100, most documents first.' },
      domains: {
        type: 'array',
        items: {
          type: 'object', additionalProperties: false,
          required: ['domain', 'grade', 'documents', 'trusted_flags', 'last_fetch_at', 'freshness_s', 'fetch_error_rate', 'duplicate_rate'],
          properties: {
            domain: { type: 'string' },
            grade: { type: 'string', enum: ['A', 'B', 'C', 'D', 'E', 'F'] },
            documents: {
              type: 'object', additionalProperties: false, required: ['own', 'web', 'trusted', 'total'],
              properties: { own: count, web: count, trusted: count, total: count },
            },
            trusted_flags: count,
            last_fetch_at: { type: ['string', 'null'], description: 'Last successful fetch (null until the crawler reports it).' },
            freshness_s: { type: ['integer', 'null'], minimum: 0, description: 'Seconds since the last successful fetch.' },
            fetch_error_rate: rate,
            duplicate_rate: rate,
          },
        },
      },
    },
  };
}
