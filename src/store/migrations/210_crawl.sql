-- The crawler's records (src/crawl/): the frontier and what each URL's last fetch found, one row per
-- canonical URL; the per-host state (robots.txt cache, politeness). Times are
-- milliseconds since the epoch.
--
-- A URL's state: `queued` (waiting; `due_at` says from when), `fetched` (its response is durable in the
-- WARC at warc_file/warc_offset but its document not yet acknowledged by an index commit: recovery
-- re-indexes it from there), `done` (nothing pending; `due_at` is the next revisit). A fetch in progress
-- is not a state: a crash during one leaves the row `queued`, and the fetch is redone.
CREATE TABLE crawl_urls (
  id            INTEGER PRIMARY KEY,
  url           TEXT    NOT NULL UNIQUE,
  host          TEXT    NOT NULL,
  kind          TEXT    NOT NULL DEFAULT 'page',     -- page | sitemap
  source        TEXT    NOT NULL,                     -- seed | flag | sitemap | link | redirect | canonical
  state         TEXT    NOT NULL DEFAULT 'queued',
  priority      INTEGER NOT NULL,                     -- lower is sooner
  depth         INTEGER NOT NULL DEFAULT 0,           -- links followed from a seed
  hops          INTEGER NOT NULL DEFAULT 0,           -- redirects followed to reach it
  due_at        INTEGER NOT NULL,
  discovered_at INTEGER NOT NULL,
  attempts      INTEGER NOT NULL DEFAULT 0,           -- failed fetches in a row
  fetched_at    INTEGER,                              -- last completed fetch (any outcome)
  ok_at         INTEGER,                              -- last successful fetch (2xx or 304)
  status        INTEGER,                              -- HTTP status of the last fetch; 0 for a network error
  outcome       TEXT,                                 -- see Outcome in src/crawl/records.ts
  indexed       INTEGER NOT NULL DEFAULT 0,           -- its document is in the web corpus
  etag          TEXT,
  last_modified TEXT,
  content_hash  TEXT,
  simhash       INTEGER,
  dup_of        INTEGER,
  title         TEXT,
  lang          TEXT,
  outlinks      INTEGER,
  changes       INTEGER NOT NULL DEFAULT 0,           -- fetches that found a changed page
  revisit_s     INTEGER,                              -- current revisit interval
  warc_file     TEXT,
  warc_offset   INTEGER,
  warc_length   INTEGER,
  error         TEXT
);
CREATE INDEX crawl_urls_next ON crawl_urls (host, state, priority, due_at);
CREATE INDEX crawl_urls_due ON crawl_urls (state, due_at);
CREATE INDEX crawl_urls_simhash ON crawl_urls (simhash) WHERE simhash IS NOT NULL;

CREATE TABLE crawl_hosts (
  host              TEXT    PRIMARY KEY,              -- scheme://host[:port], the origin robots.txt governs
  robots_status     INTEGER,                          -- HTTP status of robots.txt; 0 for a network error
  robots_body       TEXT,
  robots_fetched_at INTEGER,
  robots_expires_at INTEGER,
  delay_ms          INTEGER,                          -- the adaptive delay last used
  backoff_until     INTEGER                           -- a Retry-After in force
);
