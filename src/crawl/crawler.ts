/**
 * The crawler service: a polite, resumable crawl of the frontier in the state database into WARC files
 * and the `web` corpus. The faces drive it: `quarry crawl` runs one to the end; the server will hold one
 * and start, pause and stop it, and feed it the URLs clients flag (`flag`).
 *
 * Lifecycle: `idle` → `start()` → `running` ⇄ `paused` → `stopping` (after `stop()`, or by itself when
 * no URL is due) → `idle`. `start` resolves with the run's report when the run ends; `stop` waits for
 * the fetches in flight, makes them durable and returns the same report. `close` stops and lets go.
 *
 * The loop: per origin at most one fetch at a time and never sooner than its delay after the previous one
 * ended (the delay adapts: at least `minDelayMs`, `delayFactor` × the last response time, the robots.txt
 * Crawl-delay, doubled on 429/503 and `Retry-After` obeyed); across origins at most `concurrency` fetches.
 * An origin's robots.txt is fetched first (it is that origin's first request), then kept until it expires.
 *
 * Durability, in this order, so a `kill -9` at any instant loses nothing recorded and refetches nothing
 * recorded: a completed fetch is appended to the WARC at once; every `flushIntervalMs` the WARC is
 * fsynced and then one transaction records the fetches (their rows `fetched` when their document is to
 * be indexed, else `done`) and the URLs they discovered; only then are the documents handed to the
 * ingest, and a row becomes `done` once an index commit acknowledges its document. A fetch not yet
 * recorded when the process dies is redone on resume (its row is still `queued`); a row `fetched` is
 * re-indexed from its WARC record, never refetched.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { canonicalUrl } from '../corpora/cid.js';
import type { Corpora } from '../corpora/corpora.js';
import type { AckedCommit, IngestDoc, IngestReport, ReadItem } from '../corpora/ingest.js';
import { decodeText, parseHeaderLines, payloadToDoc, recordToItem } from '../corpora/warc.js';
import type { EventBus } from '../events/bus.js';
import { BadRequestError, ConflictError } from '../kernel/errors.js';
import { openDb } from '../store/db.js';
import { hostAllowed, type CrawlConfig } from './config.js';
import { Fetcher, mediaType, type FetchResult, type ResolveHook } from './fetch.js';
import { applyXRobotsTag, guessLanguage, readPage } from './page.js';
import { CrawlRecords, type FetchUpdate, type HostRow, type NewUrl, type Outcome, type UrlKind, type UrlRow, type UrlSource } from './records.js';
import { robotsRules, robotsTtlMs, type RobotsRules } from './robots.js';
import { contentHash, simhash, SimhashIndex } from './simhash.js';
import { readSitemap } from './sitemap.js';
import { isCalendarUrl, originOf, resolveLink, trapReason } from './url.js';
import { newRecordId, WarcWriter, type WarcLocation, type WarcRecordInput } from './warc-writer.js';

export type CrawlState = 'idle' | 'running' | 'paused' | 'stopping';

/**
 * How often the loop asks the records which origins have work due. Between scans it keeps track itself
 * (new URLs, retries); a scan catches revisits coming due and work queued by another process (`flag`).
 */
const SCAN_INTERVAL_MS = 1000;

/** Priorities: lower is sooner. Links add their depth. */
const PRIORITY: Record<UrlSource, number> = { flag: -10, seed: 0, sitemap: 1, redirect: 0, canonical: 0, link: 1 };

export interface CrawlCounters {
  /** Requests sent (robots.txt and sitemaps included; not those the SSRF guard refused). */
  requests: number;
  /** Pages fetched with a response. */
  pages: number;
  /** Documents handed to the index. */
  indexed: number;
  notModified: number;
  duplicates: number;
  /** Fetches that failed: no response, 4xx/5xx. */
  errors: number;
  /** URLs not fetched because robots.txt disallows them. */
  robotsDisallowed: number;
  /** Bodies cut off (size, decompression ratio, time). */
  truncated: number;
  /** Discovered URLs kept out by a trap rule, a budget or the host patterns. */
  rejected: number;
}

export interface CrawlStatus extends CrawlCounters {
  state: CrawlState;
  startedAt?: string;
  inFlight: number;
  queued: number;
  hosts: number;
  pagesPerSecond: number;
}

export interface CrawlReport extends CrawlCounters {
  seconds: number;
  pagesPerSecond: number;
  /** The index commit that ended the run, when one was made. */
  generation?: number;
}

export interface CrawlerOptions {
  /**
   * The state database file. The crawler opens its own connection with `synchronous = NORMAL`: in WAL
   * mode a commit then survives a process crash (kill -9) without an fsync each, and since the WARC is
   * fsynced before the records that point into it are committed, a power loss can only lose records
   * (their pages are fetched again), never leave a record pointing at a missing WARC record.
   */
  stateDb: string;
  /** Where the WARC files go (`<data>/crawl/warc` by the faces). */
  warcDir: string;
  config: CrawlConfig;
  /** The corpora: documents go into `web` through the same ingest as imports. */
  corpora: Pick<Corpora, 'ingest'>;
  bus?: EventBus;
  /** Name → address before DNS (tests map their host names to loopback addresses). */
  resolve?: ResolveHook;
  /** Least time between two `crawl.progress` events, ms. Default 1000. */
  progressIntervalMs?: number;
  /**
   * Called for every URL fetch once it is recorded (durable), with its document when it is indexed: how
   * a service learns that a URL it flagged was fetched (the trusted corpus indexes that document too).
   */
  onRecorded?: (fetch: RecordedFetch) => void;
}

/** A URL fetch as recorded: `doc` when its document was handed to the web corpus. */
export interface RecordedFetch { id: number; url: string; source: UrlSource; outcome: Outcome; status: number | null; doc?: IngestDoc }

interface HostState {
  origin: string;
  hostname: string;
  busy: boolean;
  /** The next fetch may not start before this (end of the last one + delay). */
  nextAt: number;
  delayMs: number;
  /** Multiplies the delay after 429/503; decays back to 1. */
  penalty: number;
  robots?: RobotsRules;
  robotsExpiresAt: number;
  /** The SSRF guard refused the origin's address. */
  refused?: string;
  /** Earliest due time of its work, undefined when it has none known. */
  due?: number;
  /** Pages fetched (for `maxPagesPerHost`), URLs queued and calendar-looking URLs known. */
  fetched: number;
  queued: number;
  calendar: number;
  /** Row ids in flight or awaiting the flush. */
  claimed: Set<number>;
}

interface Completed {
  update?: FetchUpdate;
  /** The row fetched (absent for robots.txt). */
  row?: UrlRow;
  discovered: NewUrl[];
  host?: HostRow;
  doc?: IngestDoc;
  /** The URL's document is to leave the index (it was indexed; the page is gone or no longer indexable). */
  remove?: string;
  origin: string;
}

/** A document acknowledged by the commit that covers it: indexed (1) or deleted (0). */
interface PendingAck { id: number; indexed: 0 | 1 }

/** Outcomes after which an indexed page's document leaves the index (a failure that may pass does not). */
const REMOVING: ReadonlySet<Outcome> = new Set(['noindex', 'duplicate', 'non_canonical', 'redirect', 'redirect_limit', 'unsupported_type', 'empty', 'robots']);

/** An async queue the ingest reads while the crawler writes. */
class Channel<T> implements AsyncIterable<T> {
  #items: T[] = [];
  #wake: (() => void) | undefined;
  #closed = false;
  push(item: T): void { this.#items.push(item); this.#wake?.(); }
  close(): void { this.#closed = true; this.#wake?.(); }
  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      if (this.#items.length > 0) { yield this.#items.shift()!; continue; }
      if (this.#closed) return;
      await new Promise<void>((r) => { this.#wake = r; });
      this.#wake = undefined;
    }
  }
}

/** A `Retry-After` value (seconds or an HTTP date) in ms from `now`; undefined when absent or malformed. */
export function retryAfterMs(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : Math.max(0, t - now);
}

export class Crawler {
  readonly config: CrawlConfig;
  readonly records: CrawlRecords;
  readonly #fetcher: Fetcher;
  readonly #warcDir: string;
  readonly #corpora: Pick<Corpora, 'ingest'>;
  readonly #bus: EventBus | undefined;
  readonly #progressIntervalMs: number;
  readonly #onRecorded: ((fetch: RecordedFetch) => void) | undefined;
  readonly #hosts = new Map<string, HostState>();
  readonly #known = new Set<string>();
  readonly #hashes = new Map<string, number>();
  readonly #simhashes: SimhashIndex;
  #warc: WarcWriter | undefined;
  #state: CrawlState = 'idle';
  #run: Promise<CrawlReport> | undefined;
  #counters: CrawlCounters = Crawler.#zero();
  #startedAt = 0;
  #inFlight = 0;
  #completed: Completed[] = [];
  #lastFlush = 0;
  #lastProgress = 0;
  #wake: (() => void) | undefined;
  /** The flush under way (one at a time: records are committed in the order of their fsyncs). */
  #flushing: Promise<void> | undefined;
  #hydrated = false;

  constructor(options: CrawlerOptions) {
    this.config = options.config;
    const db = openDb(options.stateDb);
    db.pragma('synchronous = NORMAL');
    this.records = new CrawlRecords(db);
    this.#fetcher = new Fetcher(options.config, options.resolve);
    this.#warcDir = options.warcDir;
    this.#corpora = options.corpora;
    this.#bus = options.bus;
    this.#progressIntervalMs = options.progressIntervalMs ?? 1000;
    this.#onRecorded = options.onRecorded;
    this.#simhashes = new SimhashIndex(options.config.simhashDistance);
    this.#bus?.registerSnapshotPart('crawl', () => this.status());
  }

  static #zero(): CrawlCounters {
    return { requests: 0, pages: 0, indexed: 0, notModified: 0, duplicates: 0, errors: 0, robotsDisallowed: 0, truncated: 0, rejected: 0 };
  }

  get state(): CrawlState { return this.#state; }

  // ------------------------------------------------------------------------------------------------
  // Entry points

  /**
   * Adds seed URLs to the frontier (known URLs are left as they are). Each URL that is not an absolute
   * http(s) URL, too long, a trap, or on a host the patterns exclude is refused with the reason.
   */
  addSeeds(urls: readonly string[]): { added: number; refused: { url: string; reason: string }[] } {
    this.#hydrate();
    const refused: { url: string; reason: string }[] = [];
    const rows: NewUrl[] = [];
    for (const raw of urls) {
      const checked = this.#check(raw);
      if (typeof checked === 'object') { refused.push({ url: raw, reason: checked.reason }); continue; }
      rows.push(this.#newUrl(checked, 'page', 'seed', 0, 0));
    }
    const added = this.records.addUrls(rows, Date.now());
    for (const r of rows) this.#noteQueued(r);
    this.#wake?.();
    return { added, refused };
  }

  /**
   * Queues `url` ahead of everything else (the trusted corpus's "a flagged URL is fetched politely").
   * Hostile input is a BadRequestError (param `url`) and nothing is fetched: not http(s), too long, a
   * blocked host, or an address the SSRF guard refuses (resolved now, and again when it is fetched).
   */
  async flag(raw: string): Promise<{ url: string; id: number }> {
    this.#hydrate();
    if (typeof raw !== 'string' || raw.length > this.config.maxUrlLength) throw new BadRequestError(`The URL is longer than ${this.config.maxUrlLength} characters.`, 'url');
    const checked = this.#check(raw);
    if (typeof checked === 'object') throw new BadRequestError(`${JSON.stringify(raw.slice(0, 200))} cannot be crawled: ${checked.reason}.`, 'url');
    try {
      await this.#fetcher.address(new URL(checked).hostname);
    } catch (err) {
      throw new BadRequestError(`${JSON.stringify(checked)} cannot be crawled: ${(err as Error).message}.`, 'url');
    }
    const now = Date.now();
    const row = this.#newUrl(checked, 'page', 'flag', 0, 0);
    this.records.addUrls([row], now);
    // Queued: ahead of everything. Fetched before without a document (an error, a duplicate): due again
    // now, since a flag asks for its document; one in the index already is the caller's to copy.
    this.records.db.prepare(`UPDATE crawl_urls SET priority = MIN(priority, ?), due_at = MIN(due_at, ?)
      WHERE url = ? AND (state = 'queued' OR (state = 'done' AND indexed = 0))`).run(PRIORITY.flag, now, checked);
    this.#noteQueued(row);
    this.#wake?.();
    const id = (this.records.db.prepare('SELECT id FROM crawl_urls WHERE url = ?').get(checked) as { id: number }).id;
    return { url: checked, id };
  }

  /**
   * Runs the crawl until no URL is due (or `stop`). Throws ConflictError when a run is already going. Documents go into `web` under its writer lock, held for the whole run.
   */
  start(): Promise<CrawlReport> {
    if (this.#run) throw new ConflictError('A crawl is already running.');
    this.#state = 'running';
    this.#counters = Crawler.#zero();
    this.#startedAt = Date.now();
    this.#run = this.#loop().finally(() => { this.#state = 'idle'; this.#run = undefined; });
    return this.#run;
  }

  pause(): void {
    if (this.#state === 'running') { this.#state = 'paused'; this.#progress(true); }
  }

  resume(): void {
    if (this.#state === 'paused') { this.#state = 'running'; this.#wake?.(); this.#progress(true); }
  }

  /** Stops dispatching, waits for the fetches in flight, records them; the run's report (undefined when idle). */
  async stop(): Promise<CrawlReport | undefined> {
    const run = this.#run;
    if (!run) return undefined;
    this.#state = 'stopping';
    this.#wake?.();
    return run;
  }

  status(): CrawlStatus {
    const seconds = Math.max(0.001, (Date.now() - this.#startedAt) / 1000);
    const s: CrawlStatus = {
      state: this.#state,
      ...this.#counters,
      inFlight: this.#inFlight,
      queued: this.records.db.open ? this.records.count(`state = 'queued'`) : 0,
      hosts: this.#hosts.size,
      pagesPerSecond: this.#startedAt ? this.#counters.pages / seconds : 0,
    };
    if (this.#startedAt) s.startedAt = new Date(this.#startedAt).toISOString();
    return s;
  }

  /** Stops a run and closes the connections. Idempotent. */
  async close(): Promise<void> {
    await this.stop();
    await this.#fetcher.close();
    if (this.records.db.open) this.records.db.close();
  }

  // ------------------------------------------------------------------------------------------------
  // Admission

  /** The canonical form of a URL the crawler may queue, or why not. */
  #check(raw: string): string | { reason: string } {
    let url: string;
    try { url = canonicalUrl(raw); } catch (err) { return { reason: (err as Error).message.replace(/\.$/, '') }; }
    const trap = trapReason(url, this.config.maxUrlLength);
    if (trap) return { reason: trap };
    if (!hostAllowed(this.config, new URL(url).hostname)) return { reason: 'the host is excluded by allowHosts/blockHosts' };
    return url;
  }

  #newUrl(url: string, kind: UrlKind, source: UrlSource, depth: number, hops: number): NewUrl {
    return { url, host: originOf(url), kind, source, priority: PRIORITY[source] + (source === 'link' ? depth : 0), depth, hops };
  }

  #host(origin: string): HostState {
    let h = this.#hosts.get(origin);
    if (!h) {
      h = {
        origin, hostname: new URL(origin).hostname, busy: false, nextAt: 0, delayMs: this.config.minDelayMs, penalty: 1,
        robotsExpiresAt: 0, fetched: 0, queued: 0, calendar: 0, claimed: new Set(),
      };
      const row = this.records.host(origin);
      if (row) {
        if (row.robots_status !== null && row.robots_expires_at !== null) {
          h.robots = robotsRules(origin, row.robots_status, row.robots_body ?? '', this.config.userAgentToken);
          h.robotsExpiresAt = row.robots_expires_at;
        }
        if (row.backoff_until !== null) h.nextAt = row.backoff_until;
        if (row.delay_ms !== null) h.delayMs = Math.max(this.config.minDelayMs, row.delay_ms);
      }
      this.#hosts.set(origin, h);
    }
    return h;
  }

  #noteQueued(u: NewUrl): void {
    if (this.#known.has(u.url)) return;
    this.#known.add(u.url);
    const h = this.#host(u.host);
    h.queued++;
    if (isCalendarUrl(u.url)) h.calendar++;
    h.due = 0;
  }

  /** A discovered URL as a frontier row, or undefined (counted as rejected) when a rule keeps it out. */
  #admit(url: string, kind: UrlKind, source: UrlSource, depth: number, hops: number): NewUrl | undefined {
    if (this.#known.has(url)) return undefined;
    if (trapReason(url, this.config.maxUrlLength) || !hostAllowed(this.config, new URL(url).hostname)) { this.#counters.rejected++; return undefined; }
    const h = this.#host(originOf(url));
    if (h.queued >= this.config.maxQueuedPerHost || (isCalendarUrl(url) && h.calendar >= this.config.maxCalendarPagesPerHost)) {
      this.#counters.rejected++;
      return undefined;
    }
    const row = this.#newUrl(url, kind, source, depth, hops);
    this.#noteQueued(row);
    return row;
  }

  /** Loads what the records know: every URL (for the budgets), the hashes of indexed pages. Once. */
  #hydrate(): void {
    if (this.#hydrated) return;
    this.#hydrated = true;
    for (const r of this.records.allUrls()) {
      this.#known.add(r.url);
      if (isCalendarUrl(r.url)) this.#host(r.host).calendar++;
    }
    for (const [origin, c] of this.records.hostCounts()) {
      const h = this.#host(origin);
      h.fetched = c.fetched;
      h.queued = c.queued;
    }
    for (const r of this.records.indexedHashes()) {
      if (r.content_hash) this.#hashes.set(r.content_hash, r.id);
      if (r.simhash !== null && r.simhash !== 0n) this.#simhashes.add(r.id, r.simhash);
    }
  }

  // ------------------------------------------------------------------------------------------------
  // The loop

  async #loop(): Promise<CrawlReport> {
    this.#hydrate();
    this.#warc = new WarcWriter(this.#warcDir, { maxBytes: this.config.warcMaxBytes, software: 'Quarry crawler (src/crawl)' });
    const channel = new Channel<ReadItem>();
    const pendingIds: PendingAck[] = [];
    let acked = 0;
    const ingest = this.#corpora.ingest('web', channel, {
      phase: 'crawling',
      onCommit: (c: AckedCommit) => {
        const n = c.committedDocs - acked;
        acked = c.committedDocs;
        this.records.markAcknowledged(pendingIds.splice(0, n));
      },
    });
    // A failing ingest (the web index unreadable, its writer held elsewhere) ends the run.
    let ingestError: unknown;
    ingest.catch((err: unknown) => { ingestError = err; this.#state = 'stopping'; this.#wake?.(); });
    this.#recover(channel, pendingIds);
    let lastScan = -Infinity;
    let flushError: unknown;
    try {
      for (;;) {
        const now = Date.now();
        if (this.#state === 'stopping') break;
        if (now - lastScan >= SCAN_INTERVAL_MS) { this.#scan(now); lastScan = now; }
        if (this.#state === 'running') this.#dispatch(now);
        if (!this.#flushing && (now - this.#lastFlush >= this.config.flushIntervalMs || this.#completed.length >= 256)) {
          // A flush that fails (the disk full, the database unwritable) ends the run; the fetches it held are redone next time.
          this.#flushing = this.#flush(channel, pendingIds)
            .catch((err: unknown) => { flushError ??= err; this.#state = 'stopping'; })
            .finally(() => { this.#flushing = undefined; this.#wake?.(); });
        }
        this.#progress(false);
        if (this.#state === 'running' && this.#inFlight === 0 && this.#completed.length === 0 && !this.#flushing && this.#idle(now)) {
          // Idle by what this process knows: confirm against the records before ending the run.
          this.#scan(now);
          lastScan = now;
          if (this.#idle(now)) break;
        }
        await this.#sleep(this.#nextWake(now));
      }
      while (this.#inFlight > 0) await this.#sleep(1000);
      await this.#flushing;
      if (flushError) throw flushError;
      await this.#flush(channel, pendingIds);
    } finally {
      channel.close();
      this.#warc.close();
    }
    let report: IngestReport | undefined;
    try { report = await ingest; } catch { /* reported below */ }
    if (ingestError) throw ingestError;
    const seconds = (Date.now() - this.#startedAt) / 1000;
    const out: CrawlReport = { ...this.#counters, seconds, pagesPerSecond: this.#counters.pages / Math.max(0.001, seconds) };
    const last = report?.commits.at(-1);
    if (last) out.generation = last.generation;
    this.#progress(true);
    this.#bus?.publish('crawl.done', { ...out });
    return out;
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(done, Math.max(1, ms));
      function done() { clearTimeout(t); resolve(); }
      this.#wake = () => { this.#wake = undefined; done(); };
    });
  }

  /** How long the loop may sleep: until the next origin may be asked, the next flush, or a rescan. */
  #nextWake(now: number): number {
    let at = now + SCAN_INTERVAL_MS;
    if (this.#completed.length > 0) at = Math.min(at, this.#lastFlush + this.config.flushIntervalMs);
    if (this.#state === 'running') {
      for (const h of this.#hosts.values()) {
        if (h.busy || h.due === undefined) continue;
        at = Math.min(at, Math.max(h.nextAt, h.due));
      }
    }
    return at - now;
  }

  /** Learns which origins have work due (new URLs, retries, revisits) from the records. */
  #scan(now: number): void {
    for (const h of this.#hosts.values()) h.due = undefined;
    const rows = this.records.db.prepare(`SELECT host, MIN(due_at) AS due FROM crawl_urls WHERE state = 'queued' OR (state = 'done' AND due_at <= ?) GROUP BY host`).all(now) as { host: string; due: number }[];
    for (const r of rows) this.#host(r.host).due = r.due;
  }

  /** Whether nothing is left to do in this run: no origin that may still be asked has work. */
  #idle(now: number): boolean {
    for (const h of this.#hosts.values()) {
      if (h.busy) return false;
      if (h.due === undefined || this.#blocked(h, now) || h.fetched >= this.config.maxPagesPerHost) continue;
      return false;
    }
    return true;
  }

  /** The origin's robots.txt was unreachable and is not to be asked again yet: its URLs wait for a later run. */
  #blocked(h: HostState, now: number): boolean {
    return h.refused === undefined && h.robots !== undefined && robotsUnreachable(h.robots.status) && h.robotsExpiresAt > now;
  }

  #dispatch(now: number): void {
    for (const h of this.#hosts.values()) {
      if (this.#inFlight >= this.config.concurrency) return;
      if (h.busy || h.due === undefined || h.due > now || h.nextAt > now) continue;
      if (this.#blocked(h, now)) continue;
      if (!h.refused && (!h.robots || h.robotsExpiresAt <= now)) {
        this.#launch(h, () => this.#fetchRobots(h));
        continue;
      }
      // Rows the robots rules, the SSRF verdict or the budget settle without a request: settle a few, then fetch one.
      for (let tries = 0; tries < 64; tries++) {
        const rows = this.records.next(h.origin, now, h.claimed.size + 8).filter((r) => !h.claimed.has(r.id));
        const row = rows[0];
        if (!row) { h.due = undefined; break; }
        if (h.refused) { this.#settle(h, row, 'refused', h.refused); continue; }
        if (!h.robots!.allows(row.url)) { this.#counters.robotsDisallowed++; this.#settle(h, row, 'robots', 'disallowed by robots.txt'); continue; }
        if (row.kind === 'page' && row.fetched_at === null && h.fetched >= this.config.maxPagesPerHost) { h.due = undefined; break; }
        h.claimed.add(row.id);
        this.#launch(h, () => this.#fetchUrl(h, row));
        break;
      }
    }
  }

  #launch(h: HostState, task: () => Promise<void>): void {
    h.busy = true;
    this.#inFlight++;
    task().catch((err: unknown) => {
      process.emitWarning(`crawl: ${h.origin}: ${(err as Error)?.stack ?? String(err)}`, 'QuarryCrawlWarning');
    }).finally(() => {
      h.busy = false;
      h.nextAt = Math.max(h.nextAt, Date.now() + h.delayMs);
      this.#inFlight--;
      this.#wake?.();
    });
  }

  /** Records a row settled without a request (robots, SSRF refusal): done until its next revisit. */
  #settle(h: HostState, row: UrlRow, outcome: Outcome, error: string): void {
    h.claimed.add(row.id);
    const update = this.#baseUpdate(row, Date.now());
    update.outcome = outcome;
    update.error = error;
    update.fetched_at = row.fetched_at;
    update.due_at = Date.now() + this.config.revisit.initialSeconds * 1000;
    this.#complete({ update, row, discovered: [], origin: h.origin }, row);
  }

  /**
   * Queues a completed fetch for the next flush. A page whose document is in the index and whose fetch
   * found it gone (404, 410) or no longer to be indexed takes its document out: the row stays `fetched`
   * until the commit that deletes it is acknowledged.
   */
  #complete(done: Completed, row: UrlRow): void {
    const u = done.update;
    if (u && row.indexed === 1 && !done.doc && u.outcome !== 'indexed'
      && (REMOVING.has(u.outcome) || (u.outcome === 'http_error' && (u.status === 404 || u.status === 410)))) {
      done.remove = row.url;
      u.state = 'fetched';
      u.indexed = 1;
    }
    this.#completed.push(done);
  }

  /** Politeness after a response: the next delay, and a Retry-After obeyed. */
  #adapt(h: HostState, res: FetchResult): void {
    const now = Date.now();
    if (res.status === 429 || res.status === 503) {
      h.penalty = Math.min(h.penalty * 2, 64);
      const wait = retryAfterMs(res.headers['retry-after'], now);
      if (wait !== undefined) h.nextAt = now + Math.min(wait, this.config.maxRetryAfterMs);
    } else if (res.status > 0) {
      h.penalty = Math.max(1, h.penalty * 0.8);
    }
    let delay = Math.max(this.config.minDelayMs, this.config.delayFactor * res.ms) * h.penalty;
    delay = Math.min(delay, this.config.maxDelayMs);
    h.delayMs = Math.max(delay, h.robots?.crawlDelayMs ?? 0);
  }

  #hostRow(h: HostState, status: number, body: string, now: number): HostRow {
    return {
      host: h.origin, robots_status: status, robots_body: body.slice(0, 512 * 1024), robots_fetched_at: now,
      robots_expires_at: h.robotsExpiresAt, delay_ms: Math.round(h.delayMs), backoff_until: h.nextAt > now ? h.nextAt : null,
    };
  }

  async #fetchRobots(h: HostState): Promise<void> {
    let url = `${h.origin}/robots.txt`;
    let res: FetchResult | undefined;
    // RFC 9309 §2.3.1.2: follow at least five redirects.
    for (let hop = 0; hop <= 5; hop++) {
      res = await this.#fetcher.fetch(url);
      if (!res.refused) this.#counters.requests++;
      this.#writeWarc(res);
      const loc = res.headers['location'];
      if (res.status >= 300 && res.status < 400 && loc) {
        try { url = new URL(loc, url).href; continue; } catch { break; }
      }
      break;
    }
    const now = Date.now();
    if (res!.refused) {
      h.refused = res!.error ?? 'address refused';
      h.robots = robotsRules(h.origin, 0, '', this.config.userAgentToken);
      h.robotsExpiresAt = now + robotsTtlMs(0, this.config.robotsCacheSeconds);
      return;
    }
    const status = res!.status >= 300 && res!.status < 400 ? 404 : res!.status; // a redirect chain too long: unavailable
    const body = res!.body ? decodeText(res!.body, undefined) : '';
    h.robots = robotsRules(h.origin, status, body, this.config.userAgentToken);
    h.robotsExpiresAt = now + robotsTtlMs(status, this.config.robotsCacheSeconds);
    this.#adapt(h, res!);
    const discovered: NewUrl[] = [];
    for (const s of h.robots.sitemaps) {
      let c: string;
      try { c = canonicalUrl(s); } catch { continue; }
      const row = this.#admit(c, 'sitemap', 'sitemap', 0, 0);
      if (row) discovered.push(row);
    }
    this.#completed.push({ discovered, host: this.#hostRow(h, status, body, now), origin: h.origin });
  }

  #baseUpdate(row: UrlRow, now: number): FetchUpdate {
    return {
      id: row.id, state: 'done', due_at: now, attempts: 0, fetched_at: now, ok_at: null, status: null, outcome: 'error',
      indexed: row.indexed, etag: row.etag, last_modified: row.last_modified, content_hash: row.content_hash, simhash: row.simhash,
      dup_of: null, title: null, lang: null, outlinks: null, changes: row.changes, revisit_s: row.revisit_s,
      warc_file: null, warc_offset: null, warc_length: null, error: null,
    };
  }

  /** The revisit interval after a fetch that found the page changed or not, seconds. */
  #revisit(row: UrlRow, changed: boolean): number {
    const r = this.config.revisit;
    if (row.revisit_s === null) return r.initialSeconds;
    return changed ? Math.max(r.minSeconds, Math.round(row.revisit_s / 2)) : Math.min(r.maxSeconds, row.revisit_s * 2);
  }

  async #fetchUrl(h: HostState, row: UrlRow): Promise<void> {
    const headers: Record<string, string> = {};
    if (row.fetched_at !== null && row.kind === 'page') {
      if (row.etag) headers['if-none-match'] = row.etag;
      if (row.last_modified) headers['if-modified-since'] = row.last_modified;
    }
    const wants = row.kind === 'sitemap' ? () => true : (t: string) => t === '' || this.config.contentTypes.includes(t);
    const res = await this.#fetcher.fetch(row.url, { headers, wants });
    if (!res.refused) this.#counters.requests++;
    this.#adapt(h, res);
    const now = Date.now();
    const update = this.#baseUpdate(row, now);
    update.status = res.status;
    const discovered: NewUrl[] = [];
    const done: Completed = { update, row, discovered, origin: h.origin };
    if (row.kind === 'page' && row.fetched_at === null) h.fetched++;
    const loc = this.#writeWarc(res, res.status === 304);
    // The row points at its last capture with a payload (what recovery and readers re-read), not at a 304 or an error.
    if (loc && res.status >= 200 && res.status < 300) { update.warc_file = loc.file; update.warc_offset = loc.offset; update.warc_length = loc.length; }
    if (res.status === 0 || res.status === 429 || res.status >= 500) {
      this.#counters.errors++;
      update.outcome = res.refused ? 'refused' : 'error';
      update.error = res.error ?? `HTTP ${res.status}`;
      update.attempts = row.attempts + 1;
      if (!res.refused && update.attempts < this.config.maxAttempts) {
        // Tried again after the host's delay (a Retry-After already moved the host's next fetch).
        update.state = 'queued';
        update.fetched_at = row.fetched_at;
        update.due_at = Math.max(h.nextAt, now + h.delayMs * 2 ** update.attempts);
      } else {
        update.due_at = now + this.config.revisit.initialSeconds * 1000;
      }
      this.#complete(done, row);
      return;
    }
    if (res.status === 304) {
      this.#counters.notModified++;
      update.ok_at = now;
      update.outcome = row.indexed ? 'indexed' : 'not_modified';
      update.revisit_s = this.#revisit(row, false);
      update.due_at = now + update.revisit_s * 1000;
      this.#complete(done, row);
      return;
    }
    if (res.status >= 300 && res.status < 400) {
      const target = res.headers['location'] ? resolveLink(res.headers['location'], row.url) : undefined;
      update.due_at = now + this.config.revisit.maxSeconds * 1000;
      if (target && row.hops + 1 > this.config.maxRedirects) update.outcome = 'redirect_limit';
      else {
        update.outcome = 'redirect';
        if (target) {
          const next = this.#admit(target, row.kind, 'redirect', row.depth, row.hops + 1);
          if (next) discovered.push(next);
        }
      }
      this.#complete(done, row);
      return;
    }
    if (res.status >= 400) {
      this.#counters.errors++;
      update.outcome = 'http_error';
      update.error = `HTTP ${res.status}`;
      update.due_at = now + this.config.revisit.maxSeconds * 1000;
      this.#complete(done, row);
      return;
    }
    // 2xx
    update.ok_at = now;
    update.etag = res.headers['etag'] ?? null;
    update.last_modified = res.headers['last-modified'] ?? null;
    if (res.truncated) {
      this.#counters.truncated++;
      update.outcome = res.truncated === 'unspecified' ? 'unsupported_type' : 'truncated';
      update.error = res.truncatedReason ?? null;
      update.due_at = now + this.config.revisit.maxSeconds * 1000;
      this.#complete(done, row);
      return;
    }
    const body = res.body ?? Buffer.alloc(0);
    if (row.kind === 'sitemap') {
      const entries = readSitemap(body, row.url, this.config.maxBodyBytes);
      for (const p of entries.pages) { const n = this.#admit(p, 'page', 'sitemap', 1, 0); if (n) discovered.push(n); }
      for (const s of entries.sitemaps) { const n = this.#admit(s, 'sitemap', 'sitemap', 0, 0); if (n) discovered.push(n); }
      update.outcome = 'sitemap';
      update.due_at = now + this.config.revisit.initialSeconds * 1000;
      this.#complete(done, row);
      return;
    }
    this.#counters.pages++;
    this.#page(row, res, body, done, now);
    this.#complete(done, row);
  }

  /** A 2xx page: facts, text, duplicates, revisit, links. */
  #page(row: UrlRow, res: FetchResult, body: Buffer, done: Completed, now: number): void {
    const update = done.update!;
    const type = res.headers['content-type'];
    const isHtml = ['text/html', 'application/xhtml+xml', ''].includes(mediaType(type));
    const robotsMeta = { noindex: false, nofollow: false };
    const xrt = res.headers['x-robots-tag'];
    if (xrt) applyXRobotsTag(xrt, this.config.userAgentToken, robotsMeta);
    let lang: string | undefined;
    if (isHtml) {
      const facts = readPage(decodeText(body, /charset\s*=\s*["']?([^"';\s]+)/i.exec(type ?? '')?.[1]), row.url, this.config.userAgentToken);
      robotsMeta.noindex ||= facts.noindex;
      robotsMeta.nofollow ||= facts.nofollow;
      lang = facts.lang;
      update.outlinks = facts.links.length;
      if (!robotsMeta.nofollow && row.depth < this.config.maxDepth) {
        for (const link of facts.links) {
          const n = this.#admit(link, 'page', 'link', row.depth + 1, 0);
          if (n) done.discovered.push(n);
        }
      }
      if (facts.canonical && facts.canonical !== row.url) {
        update.outcome = 'non_canonical';
        const n = this.#admit(facts.canonical, 'page', 'canonical', row.depth, row.hops);
        if (n) done.discovered.push(n);
      }
    }
    const doc = payloadToDoc(row.url, type, body);
    update.due_at = now + this.config.revisit.initialSeconds * 1000;
    if (doc === null || typeof doc === 'string') {
      update.outcome = doc === null ? 'unsupported_type' : 'empty';
      return;
    }
    const hash = contentHash(doc.text);
    const changed = row.content_hash !== null && row.content_hash !== hash;
    update.changes = row.changes + (changed ? 1 : 0);
    if (changed && this.#hashes.get(row.content_hash!) === row.id) this.#hashes.delete(row.content_hash!);
    update.revisit_s = this.#revisit(row, changed);
    update.due_at = now + update.revisit_s * 1000;
    update.content_hash = hash;
    update.title = doc.title;
    update.lang = lang ?? guessLanguage(doc.text) ?? null;
    if (update.outcome === 'non_canonical') return;
    if (robotsMeta.noindex) { update.outcome = 'noindex'; return; }
    if (!changed && row.indexed) { update.outcome = 'indexed'; return; } // a revisit that found the same text: the index has it
    const sh = simhash(doc.text);
    update.simhash = sh;
    const exact = this.#hashes.get(hash);
    const dup = exact !== undefined && exact !== row.id ? exact : sh !== 0n ? this.#simhashes.find(sh, row.id) : undefined;
    if (dup !== undefined) {
      this.#counters.duplicates++;
      update.outcome = 'duplicate';
      update.dup_of = dup;
      return;
    }
    this.#hashes.set(hash, row.id);
    if (sh !== 0n) this.#simhashes.add(row.id, sh);
    update.outcome = 'indexed';
    update.state = 'fetched';
    update.indexed = 0;
    done.doc = doc;
  }

  /** Appends request, response (or revisit) and metadata records; the response record's location. */
  #writeWarc(res: FetchResult, revisit = false): WarcLocation | undefined {
    if (res.status === 0) return undefined;
    const date = new Date();
    const responseId = newRecordId();
    const common = { 'WARC-IP-Address': res.ip ?? '' };
    const block = Buffer.concat([Buffer.from(res.responseHead + '\r\n', 'latin1'), revisit ? Buffer.alloc(0) : res.raw]);
    const response: WarcRecordInput = revisit
      ? { type: 'revisit', id: responseId, targetUri: res.url, date, contentType: 'application/http;msgtype=response', block,
        headers: { ...common, 'WARC-Profile': 'http://netpreserve.org/warc/1.1/revisit/server-not-modified', 'WARC-Refers-To-Target-URI': res.url } }
      : { type: 'response', id: responseId, targetUri: res.url, date, contentType: 'application/http;msgtype=response', block, payload: res.raw,
        headers: { ...common, ...(res.truncated ? { 'WARC-Truncated': res.truncated } : {}) } };
    const request: WarcRecordInput = {
      type: 'request', targetUri: res.url, date, contentType: 'application/http;msgtype=request',
      block: Buffer.from(res.requestHead + '\r\n', 'latin1'), headers: { 'WARC-Concurrent-To': responseId },
    };
    const meta = `fetchTimeMs: ${Math.round(res.ms)}\r\n${res.truncatedReason ? `truncatedReason: ${res.truncatedReason}\r\n` : ''}`;
    const metadata: WarcRecordInput = {
      type: 'metadata', targetUri: res.url, date, contentType: 'application/warc-fields', block: Buffer.from(meta),
      headers: { 'WARC-Concurrent-To': responseId },
    };
    const locs = this.#warc!.append([response, request, metadata]);
    return locs[0];
  }

  /** Makes completed fetches durable: WARC fsync, one transaction, then documents to the ingest. */
  async #flush(channel: Channel<ReadItem>, pendingIds: PendingAck[]): Promise<void> {
    this.#lastFlush = Date.now();
    if (this.#completed.length === 0) return;
    const batch = this.#completed;
    this.#completed = [];
    await this.#warc!.syncAsync();
    const updates = batch.flatMap((c) => (c.update ? [c.update] : []));
    const hosts = batch.flatMap((c) => (c.host ? [c.host] : []));
    const discovered = batch.flatMap((c) => c.discovered);
    this.records.commitFetches(updates, discovered, hosts, Date.now());
    // Their rows exist now: the next dispatch may take them without waiting for a rescan.
    for (const d of discovered) { const h = this.#hosts.get(d.host); if (h) h.due = 0; }
    for (const c of batch) {
      const h = this.#hosts.get(c.origin);
      if (c.update) {
        h?.claimed.delete(c.update.id);
        if (c.update.state === 'queued') { if (h) h.due = Math.min(h.due ?? Infinity, c.update.due_at); } else if (h) h.queued = Math.max(0, h.queued - 1);
      }
      if (c.doc) {
        channel.push({ ok: true, doc: c.doc });
        pendingIds.push({ id: c.update!.id, indexed: 1 });
        this.#counters.indexed++;
      } else if (c.remove !== undefined) {
        channel.push({ ok: true, doc: removal(c.remove) });
        pendingIds.push({ id: c.update!.id, indexed: 0 });
      }
      if (c.update && c.row && this.#onRecorded) {
        const r: RecordedFetch = { id: c.row.id, url: c.row.url, source: c.row.source, outcome: c.update.outcome, status: c.update.status };
        if (c.doc) r.doc = c.doc;
        try { this.#onRecorded(r); } catch { /* a listener's failure is its own */ }
      }
    }
  }

  /** Rows fetched but not acknowledged by an index commit when the last run ended: re-indexed from their WARC records. */
  #recover(channel: Channel<ReadItem>, pendingIds: PendingAck[]): void {
    const lost: number[] = [];
    for (const row of this.records.pendingIndex()) {
      if (row.outcome !== 'indexed') { channel.push({ ok: true, doc: removal(row.url) }); pendingIds.push({ id: row.id, indexed: 0 }); continue; }
      const item = row.warc_file !== null && row.warc_offset !== null && row.warc_length !== null
        ? readRecordAt(row.warc_file, row.warc_offset, row.warc_length) : undefined;
      if (item && item.ok) { channel.push(item); pendingIds.push({ id: row.id, indexed: 1 }); }
      else lost.push(row.id);
    }
    // A record that cannot be read back (the WARC file removed by hand): fetch the page again.
    if (lost.length) {
      const stmt = this.records.db.prepare(`UPDATE crawl_urls SET state = 'queued', due_at = ? WHERE id = ?`);
      this.records.db.transaction(() => { for (const id of lost) stmt.run(Date.now(), id); }).immediate();
    }
  }

  #progress(force: boolean): void {
    const now = Date.now();
    if (!this.#bus || (!force && now - this.#lastProgress < this.#progressIntervalMs)) return;
    this.#lastProgress = now;
    this.#bus.publish('crawl.progress', { ...this.status() });
  }
}

/** The ingest item that deletes the document of `url`. */
function removal(url: string): IngestDoc {
  return { key: url, title: '', text: '', deleted: true };
}

function robotsUnreachable(status: number): boolean {
  return status === 0 || status === 429 || status >= 500;
}

/** The document of the WARC record at `offset` (one gzip member of `length` bytes) of `file`. */
export function readRecordAt(file: string, offset: number, length: number): ReadItem | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const buf = Buffer.alloc(length);
    if (readSync(fd, buf, 0, length, offset) !== length) return undefined;
    const record = gunzipSync(buf);
    const end = record.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const h = parseHeaderLines(record.subarray(0, end).toString('utf8').split('\r\n').slice(1));
    const len = Number(h.get('content-length'));
    const content = record.subarray(end + 4, end + 4 + len);
    return recordToItem(h, content, `${file} offset ${offset}`, 64 * 1024 * 1024) ?? undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
