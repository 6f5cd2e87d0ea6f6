/**
 * The crawl's per-domain figures as the maturity rollup consumes them (its `CrawlFigures` interface):
 * for a domain — a host name and its subdomains — the newest successful fetch, the fetch error rate and
 * the duplicate rate over every page fetched under it, or undefined when nothing under it was ever
 * fetched. Built on `measureDomains`, computed from the records at each call.
 */
import type { Db } from '../store/db.js';
import { measureDomains } from './measure.js';

export interface DomainFigures {
  lastFetchAt: Date | null;
  /** Fetched pages whose last fetch failed / fetched pages; null when none was fetched. */
  fetchErrorRate: number | null;
  /** Fetched pages that duplicate another page / fetched pages; null when none was fetched. */
  duplicateRate: number | null;
}

export interface CrawlFigureSource {
  domain(domain: string): DomainFigures | undefined;
}

/** Figures of `domain` and its subdomains together, weighted by the pages each host fetched. */
export function crawlFigures(db: Db): CrawlFigureSource {
  return {
    domain(domain: string): DomainFigures | undefined {
      const hosts = measureDomains(db, domain);
      if (hosts.length === 0) return undefined;
      let fetched = 0;
      let errors = 0;
      let dups = 0;
      let last: string | null = null;
      for (const h of hosts) {
        fetched += h.fetched;
        errors += h.errorRate * h.fetched;
        dups += h.duplicateRate * h.fetched;
        if (h.lastSuccessAt !== null && (last === null || h.lastSuccessAt > last)) last = h.lastSuccessAt;
      }
      if (fetched === 0 && last === null) return undefined;
      return {
        lastFetchAt: last === null ? null : new Date(last),
        fetchErrorRate: fetched ? Math.round(errors) / fetched : null,
        duplicateRate: fetched ? Math.round(dups) / fetched : null,
      };
    },
  };
}
