/**
 * The documents API's application service: add, replace and delete documents of any corpus with a
 * capability holding `index.write`, through the corpora's one ingest path (the same as `quarry import`).
 *
 *   - `add`: a batch as a JSON array or as NDJSON, each record with the JSONL import's fields (`title`,
 *     `text`, `url?`, `_id?`; CONTRACT §3). A record whose key (its canonical URL, else `_id` within the
 *     collection, default `api`) is already in the corpus replaces that document. A malformed record is
 *     reported by its number (the NDJSON line, or the array position counting from 1) and skipped; the
 *     others are committed.
 *   - `delete`: one document by cid, or every document of a host (`site`, as `site:` matches it).
 *
 * Both answer only after the ingest's last commit has returned, so what a 2xx reports survives a crash
 * (the engine's commit is durable: files fsynced, manifest renamed). An `Idempotency-Key` replays the
 * first answer of (caller, key, route) for 24 h instead of doing the work again. Every call is audited
 * (`documents.add`, `documents.delete`); the corpora publish `index.progress` and `index.committed`.
 * While another ingest holds the corpus's writer (a crawl run holds `web`'s for its whole length, an
 * import), a request waits up to `WRITER_WAIT_MS`, then answers 409 `conflict`.
 */
import type { Corpora } from '../corpora/corpora.js';
import type { IngestDoc, ReadItem } from '../corpora/ingest.js';
import { recordToDoc } from '../corpora/jsonl.js';
import { parseCid, type Cid } from '../kernel/cid.js';
import { BadRequestError, BadScopeError, NotFoundError, UnsupportedMediaTypeError } from '../kernel/errors.js';
import { auditActor, requireRight, type Principal } from '../kernel/principal.js';
import { isScope, SCOPES, type Scope } from '../kernel/scope.js';
import { appendAudit } from '../store/audit.js';
import type { Db } from '../store/db.js';

/** The largest batch body, in bytes (the route's `bodyLimit`). */
export const MAX_BATCH_BYTES = 32 * 1024 * 1024;
/** Most errors listed in an answer (all are counted in `skipped`). */
export const MAX_LISTED_ERRORS = 1000;
/** How long a request waits for a corpus's writer held by another ingest before 409. */
export const WRITER_WAIT_MS = 10_000;
/** How long an `Idempotency-Key` answer is replayed. */
export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
/** Longest `Idempotency-Key`. */
const MAX_KEY_CHARS = 255;

export interface BatchInput {
  corpus: unknown;
  collection?: unknown;
  /** The media type of the body: `application/json` (an array) or `application/x-ndjson` (one record a line). */
  contentType: string | undefined;
  body: Buffer;
}

export interface DeleteInput { corpus: unknown; cid?: unknown; site?: unknown }

export interface RecordError { line: number; reason: string }

export interface BatchResource {
  corpus: Scope;
  /** Documents added or replaced. */
  added: number;
  /** Malformed records, skipped. */
  skipped: number;
  errors: RecordError[];
  /** The index generation that holds the batch (absent when nothing was written). */
  generation?: number;
}

export interface DeleteResource { corpus: Scope; deleted: number; generation?: number }

export interface Answered<T> { answer: T; replayed: boolean }

export function documentsSchemas(): Record<string, Record<string, unknown>> {
  const v = { type: 'integer', const: 1 };
  const n = { type: 'integer', minimum: 0 };
  const corpus = { type: 'string', enum: [...SCOPES] };
  return {
    DocumentRecordInput: {
      type: 'object', required: ['text'],
      description: 'One record, as a line of a JSONL import: the cid comes from `url` (canonicalised) when present, else from `_id` within the collection.',
      properties: {
        title: { type: 'string', description: 'Default: the first line of text.' },
        text: { type: 'string' },
        url: { type: ['string', 'null'], description: 'Absolute http(s) URL; its host is what `site:` matches.' },
        _id: { type: ['string', 'number'], description: 'A source id, when there is no URL.' },
      },
    },
    DocumentsBatchResult: {
      type: 'object', required: ['v', 'corpus', 'added', 'skipped', 'errors'],
      properties: {
        v, corpus, added: n, skipped: n,
        errors: {
          type: 'array', maxItems: MAX_LISTED_ERRORS,
          description: `Malformed records (the first ${MAX_LISTED_ERRORS}): line is the NDJSON line, or the array position from 1.`,
          items: { type: 'object', required: ['line', 'reason'], properties: { line: { type: 'integer', minimum: 1 }, reason: { type: 'string' } } },
        },
        generation: { ...n, description: 'The durable index commit that holds the batch.' },
      },
    },
    DocumentsDeleted: {
      type: 'object', required: ['v', 'corpus', 'deleted'],
      properties: { v, corpus, deleted: n, generation: { ...n, description: 'The durable index commit without them.' } },
    },
  };
}

export interface DocumentsServiceOptions {
  db: Db;
  /** The corpora, once open (throws `unavailable` before). */
  corpora: () => Pick<Corpora, 'ingest' | 'searcher' | 'registry'>;
}

export class DocumentsService {
  readonly #db: Db;
  readonly #corpora: DocumentsServiceOptions['corpora'];
  readonly #inflight = new Map<string, Promise<unknown>>();

  constructor(options: DocumentsServiceOptions) {
    this.#db = options.db;
    this.#corpora = options.corpora;
  }

  /** Adds or replaces a batch; answers once it is committed. */
  async add(principal: Principal, input: BatchInput, idempotencyKey?: string): Promise<Answered<BatchResource>> {
    requireRight(principal, 'index.write');
    const corpus = parseCorpus(input.corpus);
    const collection = parseCollection(input.collection);
    const records = parseBatch(input.contentType, input.body);
    return this.#idempotent(principal, idempotencyKey, `POST ${corpus}`, async () => {
      const errors: RecordError[] = [];
      let skipped = 0;
      const items = function* (): Generator<ReadItem> {
        for (const r of records) {
          const doc = 'reason' in r ? r.reason : recordToDoc(r.value, collection);
          if (typeof doc === 'string') {
            skipped++;
            if (errors.length < MAX_LISTED_ERRORS) errors.push({ line: r.line, reason: doc });
            continue;
          }
          yield { ok: true, doc: doc.doc };
        }
      };
      const report = await this.#corpora().ingest(corpus, items(), { phase: 'api', waitForWriterMs: WRITER_WAIT_MS });
      const answer: BatchResource = { corpus, added: report.docs, skipped, errors };
      const last = report.commits.at(-1);
      if (last) answer.generation = last.generation;
      this.#audit(principal, 'documents.add', corpus, { added: answer.added, skipped, generation: answer.generation ?? null, idempotency_key: idempotencyKey ?? null });
      return answer;
    });
  }

  /** Deletes one document (`cid`) or every document of a host (`site`); answers once it is committed. */
  async delete(principal: Principal, input: DeleteInput, idempotencyKey?: string): Promise<Answered<DeleteResource>> {
    requireRight(principal, 'index.write');
    const corpus = parseCorpus(input.corpus);
    const hasCid = input.cid !== undefined && input.cid !== null;
    const hasSite = input.site !== undefined && input.site !== null;
    if (hasCid === hasSite) throw new BadRequestError('Give exactly one of cid and site.', hasCid ? 'site' : 'cid');
    const cid = hasCid ? parseCid(input.cid) : undefined;
    const site = hasSite ? parseSite(input.site) : undefined;
    return this.#idempotent(principal, idempotencyKey, `DELETE ${corpus}`, async () => {
      const corpora = this.#corpora();
      const searcher = corpora.searcher(corpus);
      let targets: { cid: Cid; key: string }[];
      if (cid !== undefined) {
        const key = corpora.registry.keyOf(cid);
        if (key === undefined || !searcher.get(cid)) throw new NotFoundError(`No document ${cid} in the ${corpus} corpus.`, 'cid');
        targets = [{ cid, key }];
      } else {
        targets = corpora.registry.urlKeysOfHost(site!).filter((t) => searcher.get(t.cid) !== undefined);
      }
      const answer: DeleteResource = { corpus, deleted: 0 };
      if (targets.length > 0) {
        const items = targets.map((t): ReadItem => ({ ok: true, doc: { key: t.key, title: '', text: '', deleted: true } satisfies IngestDoc }));
        const report = await corpora.ingest(corpus, items, { phase: 'api', waitForWriterMs: WRITER_WAIT_MS });
        answer.deleted = targets.length;
        const last = report.commits.at(-1);
        if (last) answer.generation = last.generation;
      }
      this.#audit(principal, 'documents.delete', corpus, {
        cid: cid === undefined ? null : String(cid), site: site ?? null, deleted: answer.deleted, idempotency_key: idempotencyKey ?? null,
      });
      return answer;
    });
  }

  /** Replays the first answer of (caller, key, route); runs `fn` once per key even when requests race. */
  async #idempotent<T>(principal: Principal, key: string | undefined, route: string, fn: () => Promise<T>): Promise<Answered<T>> {
    if (key === undefined) return { answer: await fn(), replayed: false };
    if (key === '' || key.length > MAX_KEY_CHARS) throw new BadRequestError(`Idempotency-Key must be 1–${MAX_KEY_CHARS} characters.`, 'Idempotency-Key');
    const actor = auditActor(principal) ?? '';
    const id = JSON.stringify([actor, key, route]);
    for (;;) {
      const running = this.#inflight.get(id);
      if (!running) break;
      await running.catch(() => undefined);
    }
    const since = new Date(Date.now() - IDEMPOTENCY_TTL_MS).toISOString();
    const stored = this.#db.prepare('SELECT answer FROM documents_idempotency WHERE actor = ? AND key = ? AND route = ? AND created_at >= ?')
      .get(actor, key, route, since) as { answer: string } | undefined;
    if (stored) return { answer: JSON.parse(stored.answer) as T, replayed: true };
    const run = fn();
    this.#inflight.set(id, run);
    try {
      const answer = await run;
      this.#db.prepare('DELETE FROM documents_idempotency WHERE created_at < ?').run(since);
      this.#db.prepare('INSERT OR REPLACE INTO documents_idempotency (actor, key, route, status, answer, created_at) VALUES (?, ?, ?, 200, ?, ?)')
        .run(actor, key, route, JSON.stringify(answer), new Date().toISOString());
      return { answer, replayed: false };
    } finally {
      this.#inflight.delete(id);
    }
  }

  #audit(principal: Principal, action: string, corpus: Scope, detail: Record<string, unknown>): void {
    appendAudit(this.#db, { actor: auditActor(principal), account: principal.account, action, target: corpus, result: 'ok', detail });
  }
}

function parseCorpus(raw: unknown): Scope {
  if (typeof raw === 'string' && isScope(raw)) return raw;
  throw new BadScopeError(`corpus must be one of ${SCOPES.join(', ')}; got ${JSON.stringify(raw ?? null)}.`, 'corpus');
}

function parseCollection(raw: unknown): string {
  if (raw === undefined || raw === null) return 'api';
  if (typeof raw === 'string' && /^[A-Za-z0-9._\/-]{1,200}$/.test(raw)) return raw;
  throw new BadRequestError('collection must be 1–200 characters of letters, digits, ".", "_", "-" and "/".', 'collection');
}

/** `site` as `site:` takes it: a host name (lower-cased; a `site:` prefix is allowed). */
function parseSite(raw: unknown): string {
  if (typeof raw !== 'string') throw new BadRequestError('site must be a host name.', 'site');
  const host = raw.replace(/^site:/i, '').toLowerCase().replace(/\.$/, '');
  if (!/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(host) || host.length > 253) {
    throw new BadRequestError(`site must be a host name such as docs.example.com; got ${JSON.stringify(raw.slice(0, 100))}.`, 'site');
  }
  return host;
}

type ParsedRecord = { line: number; value: unknown } | { line: number; reason: string };

/** The records of a batch body: a JSON array, or NDJSON (blank lines skipped, each other line one record). */
function parseBatch(contentType: string | undefined, body: Buffer): ParsedRecord[] {
  const media = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  const text = body.toString('utf8');
  if (media === 'application/json') {
    let value: unknown;
    try { value = JSON.parse(text); } catch (err) { throw new BadRequestError(`The body is not valid JSON (${(err as Error).message}).`, 'body'); }
    if (!Array.isArray(value)) throw new BadRequestError('A JSON body must be an array of records.', 'body');
    return value.map((v, i) => ({ line: i + 1, value: v }));
  }
  if (media === 'application/x-ndjson' || media === 'application/jsonl' || media === 'application/ndjson') {
    const out: ParsedRecord[] = [];
    const lines = text.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!.trim();
      if (line === '') continue;
      try { out.push({ line: i + 1, value: JSON.parse(line) }); } catch (err) { out.push({ line: i + 1, reason: `not valid JSON (${(err as Error).message})` }); }
    }
    return out;
  }
  throw new UnsupportedMediaTypeError(media || undefined, 'application/json (an array of records) or application/x-ndjson (one record a line)');
}

