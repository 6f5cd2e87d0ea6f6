/**
 * Per-domain figures measured from the crawl records, computed at call time (one grouped scan of
 * `crawl_urls`): what the maturity rollup grades. A domain is a host name and its subdomains.
 *
 *   docs           pages whose document is in the web corpus
 *   fetched        pages fetched at least once
 *   lastSuccessAt  the newest successful fetch (2xx or 304)
 *   errorRate      fetched pages whose last fetch failed (no response, 4xx, 5xx) / fetched
 *   duplicateRate  fetched pages found to duplicate another page (exact or near) / fetched
 */
import type { Db } from '../store/db.js';

export interface DomainMeasure {
  host: string;
  docs: number;
  fetched: number;
  lastSuccessAt: string | null;
  errorRate: number;
  duplicateRate: number;
}

/** Figures per host name (ports and schemes merged); only `domain` and its subdomains when given. */
export function measureDomains(db: Db, domain?: string): DomainMeasure[] {
  const rows = db.prepare(`SELECT host,
      SUM(indexed) AS docs,
      SUM(fetched_at IS NOT NULL) AS fetched,
      MAX(ok_at) AS last_ok,
      SUM(fetched_at IS NOT NULL AND (status = 0 OR status >= 400)) AS errors,
      SUM(outcome = 'duplicate') AS dups
    FROM crawl_urls WHERE kind = 'page' GROUP BY host`).all() as { host: string; docs: number; fetched: number; last_ok: number | null; errors: number; dups: number }[];
  const d = domain?.toLowerCase().replace(/\.$/, '');
  const byName = new Map<string, { docs: number; fetched: number; lastOk: number; errors: number; dups: number }>();
  for (const r of rows) {
    const name = new URL(r.host).hostname;
    if (d !== undefined && name !== d && !name.endsWith(`.${d}`)) continue;
    const m = byName.get(name) ?? { docs: 0, fetched: 0, lastOk: 0, errors: 0, dups: 0 };
    m.docs += r.docs; m.fetched += r.fetched; m.errors += r.errors; m.dups += r.dups;
    m.lastOk = Math.max(m.lastOk, r.last_ok ?? 0);
    byName.set(name, m);
  }
  return [...byName].sort(([a], [b]) => a.localeCompare(b)).map(([host, m]) => ({
    host,
    docs: m.docs,
    fetched: m.fetched,
    lastSuccessAt: m.lastOk > 0 ? new Date(m.lastOk).toISOString() : null,
    errorRate: m.fetched ? m.errors / m.fetched : 0,
    duplicateRate: m.fetched ? m.dups / m.fetched : 0,
  }));
}
