/**
 * The crawl's application service: the server's one `Crawler`, driven by an admin (right `crawl.admin`)
 * and by the services that queue URLs of their own (the trusted corpus's flags). Every face calls it with
 * the caller's principal and the input as sent; it checks the right, validates the body with its
 * published schema, audits every change (`crawl.start`, `crawl.pause`, `crawl.resume`, `crawl.stop`),
 * and answers the crawl's status.
 *
 * Runs: `start` adds the seeds and begins a run unless one is going; a run ends by itself when no URL is
 * due, or on `stop`. `ensureRunning` (for flags) begins a run when none is going, and when one is ending
 * begins another after it, so a URL queued at that moment is not left waiting; a paused crawl stays
 * paused until an admin resumes it. A run that fails is reported in the status's `last_error`; one that
 * failed because the web index's writer was held elsewhere (`conflict`) is tried again later (backing off from
 * `CONFLICT_RETRY_MS`), until an admin stops the crawl.
 */
import { QuarryError } from '../kernel/errors.js';
import { auditActor, requireRight, type Principal } from '../kernel/principal.js';
import { bodySchema } from '../kernel/schema.js';
import { appendAudit } from '../store/audit.js';
import type { Db } from '../store/db.js';
import { Crawler, type CrawlerOptions, type CrawlReport, type CrawlStatus, type RecordedFetch } from './crawler.js';
import { measureDomains, type DomainMeasure } from './measure.js';

/** Most seed URLs one request may add. */
export const MAX_SEEDS_PER_REQUEST = 10_000;
/**
 * After a run failed because the web corpus's writer was held elsewhere, the next try is this much later,
 * doubling after each such failure up to `MAX_CONFLICT_RETRY_MS` (a `quarry crawl` may hold it for hours).
 */
export const CONFLICT_RETRY_MS = 5000;
export const MAX_CONFLICT_RETRY_MS = 10 * 60_000;
/** Most hosts the status lists (the most fetched first). */
export const STATUS_HOSTS = 100;

export interface CrawlStartInput { seeds?: string[] }

export const CrawlStartRequest = bodySchema<CrawlStartInput>('CrawlStartRequest', {
  type: 'object', additionalProperties: false,
  properties: {
    v: { type: 'integer', const: 1, description: 'Protocol version; optional.' },
    seeds: {
      type: 'array', maxItems: MAX_SEEDS_PER_REQUEST, items: { type: 'string', minLength: 1, maxLength: 8192 },
      description: 'Absolute http(s) URLs added to the frontier (known ones are left as they are). Absent: resume what the frontier holds.',
    },
  },
});

export interface CrawlStatusResource extends CrawlStatus {
  v: 1;
  /** Why the last run ended early (its error), until the next run starts. */
  last_error?: string;
  /** The last run's report, once one has ended in this process. */
  last_run?: CrawlReport;
  /** Per host, the most fetched first (at most `STATUS_HOSTS`): the records' figures. */
  host_figures: DomainMeasure[];
}

export interface CrawlStartResource extends CrawlStatusResource {
  added: number;
  refused: { url: string; reason: string }[];
}

/** JSON Schemas of the resources, for the faces' contracts. */
export function crawlSchemas(): Record<string, Record<string, unknown>> {
  const n = { type: 'number', minimum: 0 };
  const i = { type: 'integer', minimum: 0 };
  const counters = {
    requests: i, pages: i, indexed: i, notModified: i, duplicates: i, errors: i, robotsDisallowed: i, truncated: i, rejected: i,
  };
  const status = {
    type: 'object',
    required: ['v', 'state', 'inFlight', 'queued', 'hosts', 'pagesPerSecond', 'host_figures', ...Object.keys(counters)],
    properties: {
      v: { type: 'integer', const: 1 },
      state: { type: 'string', enum: ['idle', 'running', 'paused', 'stopping'] },
      startedAt: { type: 'string', format: 'date-time', description: 'When the current (or last) run began.' },
      ...counters,
      inFlight: i, queued: { ...i, description: 'URLs waiting in the frontier.' },
      hosts: { ...i, description: 'Origins this process has dealt with.' }, pagesPerSecond: n,
      last_error: { type: 'string' },
      last_run: { type: 'object', required: ['seconds', 'pagesPerSecond'], properties: { ...counters, seconds: n, pagesPerSecond: n, generation: i } },
      host_figures: {
        type: 'array', maxItems: STATUS_HOSTS,
        items: {
          type: 'object', required: ['host', 'docs', 'fetched', 'lastSuccessAt', 'errorRate', 'duplicateRate'],
          properties: {
            host: { type: 'string' }, docs: i, fetched: i, lastSuccessAt: { type: ['string', 'null'], format: 'date-time' },
            errorRate: { type: 'number', minimum: 0, maximum: 1 }, duplicateRate: { type: 'number', minimum: 0, maximum: 1 },
          },
        },
      },
    },
  };
  const start = {
    allOf: [{ $ref: '#/components/schemas/CrawlStatus' }, {
      type: 'object', required: ['added', 'refused'],
      properties: {
        added: { ...i, description: 'Seeds new to the frontier.' },
        refused: { type: 'array', items: { type: 'object', required: ['url', 'reason'], properties: { url: { type: 'string' }, reason: { type: 'string' } } } },
      },
    }],
  };
  return { CrawlStatus: status, CrawlStarted: start, [CrawlStartRequest.name]: CrawlStartRequest.schema };
}

export interface CrawlServiceOptions extends Omit<CrawlerOptions, 'onRecorded'> {
  /** The state database (audit, figures). */
  db: Db;
  /** Where a run that fails is reported (the server's log). */
  onRunError?: (err: unknown) => void;
}

export class CrawlService {
  readonly crawler: Crawler;
  readonly #db: Db;
  readonly #listeners = new Set<(fetch: RecordedFetch) => void>();
  readonly #runEnded = new Set<() => void>();
  readonly #onRunError: ((err: unknown) => void) | undefined;
  #lastError: string | undefined;
  #lastRun: CrawlReport | undefined;
  #rerun = false;
  #closing: Promise<void> | undefined;
  #retry: NodeJS.Timeout | undefined;
  #retryMs = CONFLICT_RETRY_MS;

  constructor(options: CrawlServiceOptions) {
    const { db, onRunError, ...crawlerOptions } = options;
    this.#db = db;
    this.#onRunError = onRunError;
    this.crawler = new Crawler({ ...crawlerOptions, onRecorded: (f) => { for (const l of this.#listeners) l(f); } });
  }

  /** Calls `listener` whenever a run ends (its last index commit made, or it failed); returns the unsubscribe. */
  onRunEnded(listener: () => void): () => void {
    this.#runEnded.add(listener);
    return () => { this.#runEnded.delete(listener); };
  }

  /** Calls `listener` for every fetch once it is recorded (see `CrawlerOptions.onRecorded`); returns the unsubscribe. */
  onRecorded(listener: (fetch: RecordedFetch) => void): () => void {
    this.#listeners.add(listener);
    return () => { this.#listeners.delete(listener); };
  }

  start(principal: Principal, input: unknown): CrawlStartResource {
    requireRight(principal, 'crawl.admin');
    const { seeds = [] } = CrawlStartRequest.parse(input);
    const { added, refused } = this.crawler.addSeeds(seeds);
    const wasIdle = this.crawler.state === 'idle';
    if (this.crawler.state === 'paused') this.crawler.resume();
    else this.ensureRunning();
    this.#audit(principal, 'crawl.start', { seeds: seeds.length, added, refused: refused.length, began: wasIdle });
    return { ...this.status(principal), added, refused };
  }

  pause(principal: Principal): CrawlStatusResource {
    requireRight(principal, 'crawl.admin');
    this.crawler.pause();
    this.#audit(principal, 'crawl.pause');
    return this.status(principal);
  }

  resume(principal: Principal): CrawlStatusResource {
    requireRight(principal, 'crawl.admin');
    this.crawler.resume();
    this.#audit(principal, 'crawl.resume');
    return this.status(principal);
  }

  /** Stops dispatching; the fetches in flight finish and are recorded in the background (state `stopping`, then `idle`). */
  stop(principal: Principal): CrawlStatusResource {
    requireRight(principal, 'crawl.admin');
    this.#cancelRestarts();
    void this.crawler.stop();
    this.#audit(principal, 'crawl.stop');
    return this.status(principal);
  }

  status(principal: Principal): CrawlStatusResource {
    requireRight(principal, 'crawl.admin');
    const figures = measureDomains(this.#db).sort((a, b) => b.fetched - a.fetched || a.host.localeCompare(b.host)).slice(0, STATUS_HOSTS);
    const s: CrawlStatusResource = { v: 1, ...this.crawler.status(), host_figures: figures };
    if (this.#lastError !== undefined) s.last_error = this.#lastError;
    if (this.#lastRun !== undefined) s.last_run = this.#lastRun;
    return s;
  }

  /** Begins a run unless one is going (after the ending one, when one is ending). Not for a paused crawl: it stays paused. */
  ensureRunning(): void {
    if (this.#closing) return;
    const state = this.crawler.state;
    if (state === 'stopping') { this.#rerun = true; return; }
    if (state !== 'idle') return;
    this.#lastError = undefined;
    this.crawler.start().then(
      (report) => { this.#lastRun = report; this.#retryMs = CONFLICT_RETRY_MS; },
      (err: unknown) => {
        this.#lastError = (err as Error).message;
        this.#onRunError?.(err);
        // The web corpus's writer was held elsewhere (an import, `quarry crawl`): try again later, so
        // flagged URLs are not left waiting for the next admin start.
        if (QuarryError.is(err) && err.code === 'conflict') {
          this.#retry = setTimeout(() => { this.#retry = undefined; this.ensureRunning(); }, this.#retryMs);
          this.#retryMs = Math.min(MAX_CONFLICT_RETRY_MS, this.#retryMs * 2);
          this.#retry.unref();
        }
      },
    ).finally(() => {
      for (const l of this.#runEnded) l();
      if (this.#rerun) { this.#rerun = false; this.ensureRunning(); }
    });
  }

  /** Stops a run (its fetches in flight are recorded) and lets go of the crawler. Idempotent. */
  close(): Promise<void> {
    this.#cancelRestarts();
    this.#closing ??= this.crawler.close();
    return this.#closing;
  }

  #cancelRestarts(): void {
    this.#rerun = false;
    clearTimeout(this.#retry);
    this.#retry = undefined;
  }

  #audit(principal: Principal, action: string, detail?: Record<string, unknown>): void {
    appendAudit(this.#db, { actor: auditActor(principal), account: principal.account, action, result: 'ok', detail });
  }
}
