/**
 * The crawl records in the state database (migration 210): the frontier (`crawl_urls` rows `queued`, or
 * `done` with a revisit due), what each URL's last fetch found, and the per-origin robots.txt cache. All
 * SQL of the crawler is here; every multi-row change is one transaction.
 */
import type { Db } from '../store/db.js';

/** What the last fetch of a URL came to. */
export type Outcome =
  | 'indexed' | 'not_modified' | 'duplicate' | 'noindex' | 'non_canonical' | 'unsupported_type' | 'truncated'
  | 'redirect' | 'redirect_limit' | 'http_error' | 'error' | 'refused' | 'robots' | 'sitemap' | 'empty';

export type UrlSource = 'seed' | 'flag' | 'sitemap' | 'link' | 'redirect' | 'canonical';
export type UrlKind = 'page' | 'sitemap';

export interface UrlRow {
  id: number;
  url: string;
  host: string;
  kind: UrlKind;
  source: UrlSource;
  state: 'queued' | 'fetched' | 'done';
  priority: number;
  depth: number;
  hops: number;
  attempts: number;
  fetched_at: number | null;
  outcome: Outcome | null;
  etag: string | null;
  last_modified: string | null;
  content_hash: string | null;
  simhash: bigint | null;
  indexed: number;
  changes: number;
  revisit_s: number | null;
  warc_file: string | null;
  warc_offset: number | null;
  warc_length: number | null;
}

export interface NewUrl { url: string; host: string; kind: UrlKind; source: UrlSource; priority: number; depth: number; hops: number }

/** The changes one fetch makes to its row. */
export interface FetchUpdate {
  id: number;
  state: 'queued' | 'fetched' | 'done';
  due_at: number;
  attempts: number;
  fetched_at: number | null;
  ok_at: number | null;
  status: number | null;
  outcome: Outcome;
  indexed: number;
  etag: string | null;
  last_modified: string | null;
  content_hash: string | null;
  simhash: bigint | null;
  dup_of: number | null;
  title: string | null;
  lang: string | null;
  outlinks: number | null;
  changes: number;
  revisit_s: number | null;
  warc_file: string | null;
  warc_offset: number | null;
  warc_length: number | null;
  error: string | null;
}

export interface HostRow {
  host: string;
  robots_status: number | null;
  robots_body: string | null;
  robots_fetched_at: number | null;
  robots_expires_at: number | null;
  delay_ms: number | null;
  backoff_until: number | null;
}

const ROW_COLUMNS = 'id, url, host, kind, source, state, priority, depth, hops, attempts, fetched_at, outcome, etag, last_modified, content_hash, simhash, indexed, changes, revisit_s, warc_file, warc_offset, warc_length';

export class CrawlRecords {
  readonly db: Db;
  readonly #insert;
  readonly #nextQueued;
  readonly #nextRevisit;
  readonly #update;
  readonly #markIndexed;
  readonly #putHost;
  readonly #getHost;

  constructor(db: Db) {
    this.db = db;
    this.#insert = db.prepare(`INSERT OR IGNORE INTO crawl_urls (url, host, kind, source, priority, depth, hops, due_at, discovered_at)
      VALUES (@url, @host, @kind, @source, @priority, @depth, @hops, @now, @now)`);
    this.#nextQueued = db.prepare(`SELECT ${ROW_COLUMNS} FROM crawl_urls WHERE host = ? AND state = 'queued' AND due_at <= ? ORDER BY priority, due_at, id LIMIT ?`);
    this.#nextRevisit = db.prepare(`SELECT ${ROW_COLUMNS} FROM crawl_urls WHERE host = ? AND state = 'done' AND due_at <= ? ORDER BY due_at, id LIMIT ?`);
    this.#update = db.prepare(`UPDATE crawl_urls SET state = @state, due_at = @due_at, attempts = @attempts, fetched_at = @fetched_at,
      ok_at = COALESCE(@ok_at, ok_at), status = @status, outcome = @outcome, indexed = @indexed, etag = @etag, last_modified = @last_modified,
      content_hash = @content_hash, simhash = @simhash, dup_of = @dup_of, title = COALESCE(@title, title), lang = COALESCE(@lang, lang),
      outlinks = COALESCE(@outlinks, outlinks), changes = @changes, revisit_s = @revisit_s, warc_file = COALESCE(@warc_file, warc_file),
      warc_offset = COALESCE(@warc_offset, warc_offset), warc_length = COALESCE(@warc_length, warc_length), error = @error WHERE id = @id`);
    this.#markIndexed = db.prepare(`UPDATE crawl_urls SET state = 'done', indexed = ? WHERE id = ? AND state = 'fetched'`);
    this.#putHost = db.prepare(`INSERT INTO crawl_hosts (host, robots_status, robots_body, robots_fetched_at, robots_expires_at, delay_ms, backoff_until)
      VALUES (@host, @robots_status, @robots_body, @robots_fetched_at, @robots_expires_at, @delay_ms, @backoff_until)
      ON CONFLICT (host) DO UPDATE SET robots_status = excluded.robots_status, robots_body = excluded.robots_body,
        robots_fetched_at = excluded.robots_fetched_at, robots_expires_at = excluded.robots_expires_at,
        delay_ms = excluded.delay_ms, backoff_until = excluded.backoff_until`);
    this.#getHost = db.prepare('SELECT * FROM crawl_hosts WHERE host = ?');
    for (const s of [this.#nextQueued, this.#nextRevisit]) s.safeIntegers(true);
  }

  /** Adds URLs not seen before (known ones are left as they are); the number added. */
  addUrls(urls: readonly NewUrl[], now: number): number {
    if (urls.length === 0) return 0;
    return this.db.transaction(() => {
      let n = 0;
      for (const u of urls) n += this.#insert.run({ ...u, now }).changes;
      return n;
    }).immediate();
  }

  /** The next URLs of `host` that may be fetched at `now`: new ones first, then revisits. */
  next(host: string, now: number, limit: number): UrlRow[] {
    const rows = this.#nextQueued.all(host, now, limit) as Raw[];
    if (rows.length < limit) rows.push(...(this.#nextRevisit.all(host, now, limit - rows.length) as Raw[]));
    return rows.map(fromRaw);
  }

  /** Rows whose response is in the WARC but whose document (or its deletion) no commit has acknowledged yet. */
  pendingIndex(): UrlRow[] {
    return (this.db.prepare(`SELECT ${ROW_COLUMNS} FROM crawl_urls WHERE state = 'fetched' ORDER BY id`).safeIntegers(true).all() as Raw[]).map(fromRaw);
  }

  /** Applies fetch results and adds discovered URLs, in one transaction. */
  commitFetches(updates: readonly FetchUpdate[], discovered: readonly NewUrl[], hosts: readonly HostRow[], now: number): number {
    return this.db.transaction(() => {
      for (const u of updates) this.#update.run(u);
      for (const h of hosts) this.#putHost.run(h);
      let n = 0;
      for (const d of discovered) n += this.#insert.run({ ...d, now }).changes;
      return n;
    }).immediate();
  }

  /** Rows whose document (or its deletion: `indexed` 0) an index commit has acknowledged. */
  markAcknowledged(entries: readonly { id: number; indexed: 0 | 1 }[]): void {
    if (entries.length === 0) return;
    this.db.transaction(() => { for (const e of entries) this.#markIndexed.run(e.indexed, e.id); }).immediate();
  }

  host(host: string): HostRow | undefined {
    return this.#getHost.get(host) as HostRow | undefined;
  }

  /** Per origin: pages fetched, and every URL (for the calendar and queue budgets). */
  hostCounts(): Map<string, { fetched: number; queued: number }> {
    const out = new Map<string, { fetched: number; queued: number }>();
    for (const r of this.db.prepare(`SELECT host, SUM(fetched_at IS NOT NULL AND kind = 'page') AS fetched, SUM(state = 'queued') AS queued FROM crawl_urls GROUP BY host`).all() as { host: string; fetched: number; queued: number }[]) {
      out.set(r.host, { fetched: r.fetched, queued: r.queued });
    }
    return out;
  }

  allUrls(): Iterable<{ url: string; host: string }> {
    return this.db.prepare('SELECT url, host FROM crawl_urls').iterate() as Iterable<{ url: string; host: string }>;
  }

  /** Content hashes and SimHashes of the pages in the index (or about to be), for duplicate detection. */
  indexedHashes(): Iterable<{ id: number; content_hash: string | null; simhash: bigint | null }> {
    const rows = this.db.prepare(`SELECT id, content_hash, simhash FROM crawl_urls WHERE (indexed = 1 OR state = 'fetched') AND outcome IN ('indexed', 'not_modified')`).safeIntegers(true).all() as { id: bigint; content_hash: string | null; simhash: bigint | null }[];
    return rows.map((r) => ({ ...r, id: Number(r.id) }));
  }

  count(where: string): number {
    return (this.db.prepare(`SELECT COUNT(*) AS n FROM crawl_urls WHERE ${where}`).get() as { n: number }).n;
  }
}

type Raw = Record<keyof UrlRow, unknown>;

/** A row read with 64-bit integers as bigints (the SimHash needs all 64 bits); the rest as numbers. */
function fromRaw(r: Raw): UrlRow {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(r)) out[k] = typeof v === 'bigint' && k !== 'simhash' ? Number(v) : v;
  return out as unknown as UrlRow;
}
