/**
 * The trusted corpus's application service (CONTRACT §3): clients holding `trusted.flag` flag documents
 * as good references, unflag them and list the flags. Every face calls it with the caller's principal
 * and the input as sent.
 *
 *   - `flag {cid}`: a document of the own or web corpus is copied into `trusted` at once (201, `fetched`).
 *   - `flag {url}`: a URL whose document the web corpus already holds is copied the same way; any other
 *     URL is handed to the crawler (`Crawler.flag`: hostile URLs — not http(s), too long, a blocked host,
 *     an address the SSRF guard refuses — are a 400 and nothing is fetched), which fetches it politely
 *     ahead of everything else; the flag is `pending` (202) until the fetch is recorded, then `fetched`
 *     (its document indexed into `trusted`) or `failed` (with the crawler's outcome). A later revisit of
 *     a flagged page refreshes its trusted copy.
 *   - every flag records who (capability id, account), when and the note (`trusted_flags`), is audited
 *     (`trusted.flag`, `trusted.unflag`) and published as `trusted.flagged` (again when its state changes).
 *
 * Documents reach the trusted index through the corpora's one ingest path, one batch at a time; while
 * another ingest into `trusted` holds its writer (the documents API), the batch waits and retries.
 */
import type { Corpora } from '../corpora/corpora.js';
import { canonicalUrl, hostOf } from '../corpora/cid.js';
import type { IngestDoc } from '../corpora/ingest.js';
import type { CrawlService, RecordedFetch } from '../crawl/index.js';
import type { EventBus } from '../events/bus.js';
import { parseCid, type Cid } from '../kernel/cid.js';
import { BadPageError, BadRequestError, NotFoundError } from '../kernel/errors.js';
import { auditActor, requireRight, type Principal } from '../kernel/principal.js';
import { bodySchema } from '../kernel/schema.js';
import { appendAudit } from '../store/audit.js';
import type { Db } from '../store/db.js';

/** Flags per page of `GET /api/trusted`. */
export const TRUSTED_PAGE_SIZE = 20;
/** Longest URL the body may carry; the crawler's own limit (`maxUrlLength`) is usually lower. */
export const MAX_FLAG_URL_CHARS = 8192;
/** How long a batch waits for the trusted index's writer (held by another ingest) before its flags fail. */
const WRITER_WAIT_MS = 60_000;

export interface FlagInput { url?: string; cid?: string; note?: string | null }

export const FlagRequest = bodySchema<FlagInput>('TrustedFlagRequest', {
  type: 'object', additionalProperties: false,
  description: 'Exactly one of `url` and `cid`.',
  properties: {
    v: { type: 'integer', const: 1, description: 'Protocol version; optional.' },
    url: { type: 'string', minLength: 1, maxLength: MAX_FLAG_URL_CHARS, description: 'An absolute http(s) URL: copied from the web corpus when there, else fetched by the crawler.' },
    cid: { type: 'string', pattern: '^(0|[1-9][0-9]{0,18})$', description: 'A document of the own or web corpus.' },
    note: { type: ['string', 'null'], maxLength: 1000, description: 'Why it is a good reference; listed with the flag.' },
  },
});

export type FlagState = 'pending' | 'fetched' | 'failed';

export interface FlagResource {
  cid: Cid;
  url: string | null;
  title: string | null;
  note: string | null;
  flagged_by: { cap_id: string | null; account: string | null };
  flagged_at: string;
  state: FlagState;
  error?: string;
}

export function trustedSchemas(): Record<string, Record<string, unknown>> {
  const str = (d: string) => ({ type: ['string', 'null'], description: d });
  const flag = {
    type: 'object', required: ['cid', 'url', 'title', 'note', 'flagged_by', 'flagged_at', 'state'],
    properties: {
      cid: { $ref: '#/components/schemas/Cid' },
      url: str('The canonical URL, when the document has one.'),
      title: str('The title, once the document is in the trusted corpus.'),
      note: str('The flagger\'s note.'),
      flagged_by: {
        type: 'object', required: ['cap_id', 'account'],
        properties: { cap_id: str('Capability id of the flagger (`local` for the operator).'), account: str('The account the capability was issued to.') },
      },
      flagged_at: { type: 'string', format: 'date-time' },
      state: { type: 'string', enum: ['pending', 'fetched', 'failed'], description: '`pending` until the crawler has fetched the URL.' },
      error: { type: 'string', description: 'Why a `failed` flag has no document (the fetch outcome).' },
    },
  };
  return {
    [FlagRequest.name]: FlagRequest.schema,
    TrustedFlag: flag,
    TrustedFlagged: { allOf: [{ $ref: '#/components/schemas/TrustedFlag' }, { type: 'object', required: ['v'], properties: { v: { type: 'integer', const: 1 } } }] },
    TrustedList: {
      type: 'object', required: ['v', 'page', 'total', 'flags'],
      properties: {
        v: { type: 'integer', const: 1 }, page: { type: 'integer', minimum: 0 }, total: { type: 'integer', minimum: 0 },
        flags: { type: 'array', maxItems: TRUSTED_PAGE_SIZE, items: { $ref: '#/components/schemas/TrustedFlag' } },
      },
    },
    TrustedUnflagged: {
      type: 'object', required: ['v', 'cid', 'unflagged'],
      properties: { v: { type: 'integer', const: 1 }, cid: { $ref: '#/components/schemas/Cid' }, unflagged: { type: 'boolean', const: true } },
    },
  };
}

export interface TrustedServiceOptions {
  db: Db;
  /** The corpora, once open (throws `unavailable` before). */
  corpora: () => Pick<Corpora, 'ingest' | 'searcher' | 'registry'>;
  crawl: CrawlService;
  bus?: EventBus;
  /** Where a failed background ingest is reported (the server's log). */
  onError?: (err: unknown) => void;
}

interface FlagRow {
  cid: bigint; url: string | null; title: string | null; note: string | null; cap_id: string | null; account: string | null;
  flagged_at: string; state: FlagState; error: string | null;
}

export class TrustedService {
  readonly #db: Db;
  readonly #corpora: TrustedServiceOptions['corpora'];
  readonly #crawl: CrawlService;
  readonly #bus: EventBus | undefined;
  readonly #onError: ((err: unknown) => void) | undefined;
  readonly #byUrl;
  readonly #unsubscribe: () => void;
  /** Documents waiting for the next trusted ingest, by cid. */
  #queue = new Map<bigint, IngestDoc>();
  #ingesting: Promise<void> | undefined;

  constructor(options: TrustedServiceOptions) {
    this.#db = options.db;
    this.#corpora = options.corpora;
    this.#crawl = options.crawl;
    this.#bus = options.bus;
    this.#onError = options.onError;
    this.#byUrl = this.#db.prepare('SELECT cid FROM trusted_flags WHERE url = ?').safeIntegers(true);
    const offRecorded = this.#crawl.onRecorded((f) => this.#recorded(f));
    // A page recorded before a crash reaches the web index again from its WARC record during the next
    // run, without a new fetch to report: pending flags are checked against the web corpus after each run.
    const offRunEnded = this.#crawl.onRunEnded(() => { void this.#copyFromWeb().catch((err: unknown) => this.#onError?.(err)); });
    this.#unsubscribe = () => { offRecorded(); offRunEnded(); };
  }

  async flag(principal: Principal, input: unknown): Promise<FlagResource> {
    requireRight(principal, 'trusted.flag');
    const body = FlagRequest.parse(input);
    if ((body.url === undefined) === (body.cid === undefined)) throw new BadRequestError('Give exactly one of url and cid.', body.url === undefined ? 'url' : 'cid');
    const corpora = this.#corpora();
    let doc: IngestDoc | undefined;
    let cid: Cid;
    let url: string | null = null;
    if (body.cid !== undefined) {
      cid = parseCid(body.cid);
      doc = this.#find(cid);
      if (!doc) throw new NotFoundError(`No document ${cid} in the own or web corpus.`, 'cid');
      url = doc.url ?? null;
    } else {
      const raw = body.url!;
      let known: Cid | undefined;
      try { known = corpora.registry.lookup(canonicalUrl(raw)); } catch { /* not a URL: the crawler says why */ }
      doc = known === undefined ? undefined : this.#find(known, ['web']);
      if (doc) {
        cid = known!;
        url = doc.url ?? null;
      } else {
        const flagged = await this.#crawl.crawler.flag(raw);
        url = flagged.url;
        cid = corpora.registry.assign(url);
      }
    }
    const now = new Date().toISOString();
    this.#db.prepare(`INSERT INTO trusted_flags (cid, url, title, note, cap_id, account, flagged_at, state, error)
        VALUES (?, ?, NULL, ?, ?, ?, ?, 'pending', NULL)
        ON CONFLICT (cid) DO UPDATE SET note = excluded.note, cap_id = excluded.cap_id, account = excluded.account,
          flagged_at = excluded.flagged_at, state = CASE WHEN state = 'fetched' THEN 'fetched' ELSE 'pending' END, error = NULL`)
      .run(cid, url, body.note ?? null, auditActor(principal) ?? null, principal.account ?? null, now);
    appendAudit(this.#db, {
      actor: auditActor(principal), account: principal.account, action: 'trusted.flag', target: String(cid), result: 'ok',
      detail: { url, note: body.note ?? null, copied: doc !== undefined },
    });
    // A copy is announced by the indexing (`fetched`); a URL for the crawler is announced `pending` now.
    if (doc) {
      await this.#index([[cid, doc]]);
      return this.#resource(this.#row(cid)!);
    }
    this.#crawl.ensureRunning();
    const resource = this.#resource(this.#row(cid)!);
    this.#publish(resource);
    return resource;
  }

  async unflag(principal: Principal, input: { cid?: unknown }): Promise<{ cid: Cid; unflagged: true }> {
    requireRight(principal, 'trusted.flag');
    const cid = parseCid(input.cid);
    const row = this.#row(cid);
    const inIndex = this.#find(cid, ['trusted']) !== undefined;
    if (!row && !inIndex) throw new NotFoundError(`No flagged document ${cid}.`, 'cid');
    this.#queue.delete(cid);
    this.#db.prepare('DELETE FROM trusted_flags WHERE cid = ?').run(cid);
    if (inIndex) {
      const key = this.#corpora().registry.keyOf(cid)!;
      await this.#ingestNow([{ key, title: '', text: '', deleted: true }]);
    }
    appendAudit(this.#db, { actor: auditActor(principal), account: principal.account, action: 'trusted.unflag', target: String(cid), result: 'ok', detail: { url: row?.url ?? null } });
    return { cid, unflagged: true };
  }

  list(principal: Principal, input: { page?: unknown }): { page: number; total: number; flags: FlagResource[] } {
    requireRight(principal, 'trusted.flag');
    const raw = input.page;
    let page = 0;
    if (raw !== undefined && raw !== null) {
      if (typeof raw !== 'string' || !/^[0-9]{1,9}$/.test(raw)) throw new BadPageError(`page must be a base-10 integer ≥ 0; got ${JSON.stringify(raw)}.`);
      page = Number(raw);
    }
    const total = (this.#db.prepare('SELECT COUNT(*) AS n FROM trusted_flags').get() as { n: number }).n;
    const rows = this.#db.prepare('SELECT * FROM trusted_flags ORDER BY flagged_at DESC, cid LIMIT ? OFFSET ?')
      .safeIntegers(true).all(TRUSTED_PAGE_SIZE, page * TRUSTED_PAGE_SIZE) as FlagRow[];
    return { page, total, flags: rows.map((r) => this.#resource(r)) };
  }

  /**
   * After a restart: pending flags whose page the web corpus already holds (fetched before a crash, not
   * yet copied) are copied now; the others wait for the crawler, which is started for them.
   */
  async recover(): Promise<void> {
    if (await this.#copyFromWeb()) this.#crawl.ensureRunning();
  }

  /** Copies pending flags whose document the web corpus holds; true when some are still pending. */
  async #copyFromWeb(): Promise<boolean> {
    const pending = this.#db.prepare(`SELECT cid FROM trusted_flags WHERE state = 'pending'`).safeIntegers(true).all() as { cid: bigint }[];
    const found: [bigint, IngestDoc][] = [];
    for (const { cid } of pending) {
      const doc = this.#find(cid, ['web']);
      if (doc) found.push([cid, doc]);
    }
    if (found.length > 0) await this.#index(found);
    return pending.length > found.length;
  }

  async close(): Promise<void> {
    this.#unsubscribe();
    await this.#ingesting?.catch(() => undefined);
  }

  /** A recorded fetch of a flagged URL: its document goes into `trusted`; a fetch without one fails a pending flag. */
  #recorded(fetch: RecordedFetch): void {
    const hit = this.#byUrl.get(fetch.url) as { cid: bigint } | undefined;
    if (!hit) return;
    if (fetch.doc) {
      void this.#index([[hit.cid, fetch.doc]]).catch((err: unknown) => this.#onError?.(err));
      return;
    }
    const error = `fetch outcome ${fetch.outcome}${fetch.status ? ` (HTTP ${fetch.status})` : ''}`;
    const r = this.#db.prepare(`UPDATE trusted_flags SET state = 'failed', error = ? WHERE cid = ? AND state = 'pending'`).run(error, hit.cid);
    if (r.changes > 0) this.#publish(this.#resource(this.#row(hit.cid)!));
  }

  /** Queues documents for the trusted index and waits until the batch holding them is committed. */
  async #index(docs: [bigint, IngestDoc][]): Promise<void> {
    for (const [cid, doc] of docs) this.#queue.set(cid, doc);
    // One ingest at a time: the batch in flight takes what is queued when it starts.
    while (this.#queue.size > 0 && docs.some(([cid]) => this.#queue.has(cid))) {
      if (this.#ingesting) { await this.#ingesting.catch(() => undefined); continue; }
      const batch = this.#queue;
      this.#queue = new Map();
      this.#ingesting = this.#ingestNow([...batch.values()]).then(() => {
        const update = this.#db.prepare(`UPDATE trusted_flags SET state = 'fetched', title = ?, error = NULL WHERE cid = ?`);
        for (const [cid, doc] of batch) {
          if (update.run(doc.title, cid).changes > 0) this.#publish(this.#resource(this.#row(cid)!));
        }
      }).finally(() => { this.#ingesting = undefined; });
      await this.#ingesting;
    }
  }

  /** One ingest into `trusted`, waiting (up to `WRITER_WAIT_MS`) while another ingest holds its writer. */
  async #ingestNow(docs: IngestDoc[]): Promise<void> {
    await this.#corpora().ingest('trusted', docs.map((doc) => ({ ok: true as const, doc })), { phase: 'flagging', waitForWriterMs: WRITER_WAIT_MS });
  }

  /** The document `cid` of the first of `scopes` that holds it, as an ingest item under its own key. */
  #find(cid: Cid, scopes: ('own' | 'web' | 'trusted')[] = ['own', 'web']): IngestDoc | undefined {
    const corpora = this.#corpora();
    for (const scope of scopes) {
      const d = corpora.searcher(scope).get(cid);
      if (!d) continue;
      const key = corpora.registry.keyOf(cid);
      if (key === undefined) continue;
      const doc: IngestDoc = { key, title: d.title, text: d.text };
      if (d.url) { doc.url = d.url; doc.host = d.host ?? hostOf(d.url); }
      return doc;
    }
    return undefined;
  }

  #row(cid: Cid): FlagRow | undefined {
    return this.#db.prepare('SELECT * FROM trusted_flags WHERE cid = ?').safeIntegers(true).get(cid) as FlagRow | undefined;
  }

  #resource(r: FlagRow): FlagResource {
    const out: FlagResource = {
      cid: r.cid, url: r.url, title: r.title, note: r.note, flagged_by: { cap_id: r.cap_id, account: r.account },
      flagged_at: r.flagged_at, state: r.state,
    };
    if (r.error !== null) out.error = r.error;
    return out;
  }

  #publish(flag: FlagResource): void {
    this.#bus?.publish('trusted.flagged', { cid: String(flag.cid), url: flag.url, state: flag.state, account: flag.flagged_by.account });
  }
}
