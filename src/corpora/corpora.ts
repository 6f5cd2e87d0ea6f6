/**
 * The three corpora (CONTRACT §3) over one data directory: `own` (the configured docs, site pages and
 * library), `web` and `trusted` (filled by import, later by the crawler and trusted flags). Each is one
 * engine `Index` in `<data>/index/<scope>`.
 *
 * `Corpora` is what the server holds: it hands out the freshest searcher of a scope, runs ingests into a
 * scope while queries keep being answered (the engine's snapshots make a commit visible atomically), keeps
 * each index fresh when another process (a `quarry import`) commits, and reports on the event bus:
 * `index.progress` (throttled), `index.committed` (every commit seen, local or not) and the `index` part
 * of the snapshot (state, docs and generation per corpus).
 *
 * Lifecycle: `openCorpora` → (`ensureOwnIndexed`, `ingest`…)* → `close` (idempotent; running ingests are
 * stopped, what they had committed stays).
 *
 * An index that cannot be read (corruption, a format from another version) never takes the others down:
 * the own index is set aside as `<dir>.unreadable-<time>` and rebuilt from its sources; a web or trusted
 * index stays where it is, its corpus answers `unavailable` and shows `failed` in the status, and the
 * refresh poll tries it again every `REOPEN_INTERVAL_MS`.
 */
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { writeFileDurable } from '../kernel/durable-file.js';
import { indexDir, indexesDir, ownSourcesFile, stateDbPath } from '../kernel/data-dir.js';
import { isScope, SCOPES, type Scope } from '../kernel/scope.js';
import { join } from 'node:path';
import { BadScopeError, ConflictError, QuarryError, UnavailableError } from '../kernel/errors.js';
import type { EventBus } from '../events/bus.js';
import { openDb, type Db } from '../store/db.js';
import { Index, type IndexOptions, type Searcher } from '../engine/index.js';
import { CidRegistry } from './cid.js';
import { defaultConfigFile, loadCorporaConfig, resolveCorporaConfig, type CorporaConfig } from './config.js';
import { ingest, type AckedCommit, type IngestProgress, type IngestReport, type ReadItem } from './ingest.js';
import { listOwnSources, readSourceFile, type SourceFile } from './sources.js';

export { isScope, SCOPES, type Scope } from '../kernel/scope.js';
export { indexDir } from '../kernel/data-dir.js';

/** `ready` ⇄ `indexing` while an ingest of this process runs; `failed` when the last one failed (the index still serves what was committed). */
export type CorpusState = 'ready' | 'indexing' | 'failed';

export interface CorpusStatus {
  state: CorpusState;
  docs: number;
  generation: number;
  segments: number;
  /** The last ingest failure, while `state` is `failed`. */
  error?: string;
}

/**
 * Bump when extraction changes what a source file yields: the next start re-indexes every own file.
 * Stored in the own corpus's source fingerprint.
 */
export const EXTRACTION_VERSION = 1;

export interface CorporaOptions {
  dataDir: string;
  /**
   * The service's configuration object (`quarry serve --config`): its `corpora` member, when present, is
   * the corpora configuration (./config.ts), relative paths resolved against `configDir`. Without one,
   * `<data>/corpora.json` when present, else the defaults.
   */
  config?: Record<string, unknown>;
  configDir?: string;
  /** An already resolved configuration: wins over `config` (tests, the CLI). */
  resolved?: CorporaConfig;
  bus?: EventBus;
  /** Passed to every `Index.open`. */
  indexOptions?: IndexOptions;
  /** Least time between two `index.progress` events of one scope, in ms. Default 250. */
  progressIntervalMs?: number;
}

export interface ScopeIngestOptions {
  onCommit?: (commit: AckedCommit) => void;
  onSkip?: (where: string, reason: string) => void;
  onProgress?: (progress: IngestProgress & { total?: number }) => void;
  signal?: AbortSignal;
  deleteKeys?: readonly string[];
  /** Expected number of items, for progress reports. */
  total?: number;
  /** What to call the work in `index.progress` (`indexing` for own sources, `importing` for files). */
  phase?: string;
  /**
   * While another ingest (here or in another process) holds the scope's writer, retry for up to this
   * many ms before the ConflictError (default 0: at once). Nothing of `items` is read before the writer is held.
   */
  waitForWriterMs?: number;
}

/** The `phase` of own-corpus progress reports (and of its `index.progress` events). */
export const OWN_PHASE = 'indexing';

export interface OwnIndexReport {
  /** True when nothing had changed since the last indexing: the index was reused as it was. */
  reused: boolean;
  /** Source files listed. */
  files: number;
  /** Files read again because they were new or changed. */
  changed: number;
  /** Files gone since the last indexing, whose documents were deleted. */
  removed: number;
  /** Another process holds the own index's writer: it was left to that process. */
  busy?: boolean;
  report?: IngestReport;
}

export interface OwnProgress { phase: string; done: number; total: number }

interface Fingerprint {
  version: number;
  generation: number;
  docs: number;
  files: Record<string, string>;
}


function readFingerprint(file: string): Fingerprint | undefined {
  try {
    const v = JSON.parse(readFileSync(file, 'utf8')) as Fingerprint;
    if (typeof v !== 'object' || v === null || typeof v.files !== 'object' || typeof v.generation !== 'number') return undefined;
    return v;
  } catch {
    return undefined;
  }
}

export class Corpora {
  readonly dataDir: string;
  readonly config: CorporaConfig;
  readonly registry: CidRegistry;
  readonly #db: Db;
  readonly #bus: EventBus | undefined;
  readonly #indexes: Map<Scope, Index>;
  readonly #states = new Map<Scope, { state: CorpusState; error?: string }>();
  readonly #running = new Map<Scope, { abort: AbortController; done: Promise<unknown> }>();
  readonly #unsubscribe: (() => void)[] = [];
  readonly #progressIntervalMs: number;
  readonly #indexOptions: IndexOptions | undefined;
  #timer: NodeJS.Timeout | undefined;
  #refreshing = false;
  #lastReopen = Date.now();
  #closed: Promise<void> | undefined;
  #own: Promise<OwnIndexReport> | undefined;

  /** Use `openCorpora`. */
  constructor(
    dataDir: string, config: CorporaConfig, db: Db, indexes: Map<Scope, Index>, unreadable: Map<Scope, string>,
    bus: EventBus | undefined, options: { progressIntervalMs: number; indexOptions: IndexOptions | undefined },
  ) {
    this.dataDir = dataDir;
    this.config = config;
    this.#db = db;
    this.registry = new CidRegistry(db);
    this.#indexes = new Map();
    this.#bus = bus;
    this.#progressIntervalMs = options.progressIntervalMs;
    this.#indexOptions = options.indexOptions;
    for (const scope of SCOPES) {
      const idx = indexes.get(scope);
      if (idx) this.#attach(scope, idx);
      else this.#states.set(scope, { state: 'failed', error: unreadable.get(scope) ?? 'not open' });
    }
    bus?.registerSnapshotPart('index', () => this.status());
    this.#timer = setInterval(() => { void this.refresh(); }, config.refreshIntervalMs);
    this.#timer.unref();
  }

  #attach(scope: Scope, idx: Index): void {
    this.#indexes.set(scope, idx);
    this.#states.set(scope, { state: 'ready' });
    this.#unsubscribe.push(idx.onCommit((info) => {
      this.#bus?.publish('index.committed', { scope, generation: info.generation, docs: info.docs });
    }));
  }

  #assertOpen(): void {
    if (this.#closed) throw new UnavailableError('The corpora are closed.');
  }

  /** The index of `scope`; UnavailableError while it cannot be read (the other corpora still serve). */
  index(scope: Scope): Index {
    this.#assertOpen();
    if (!isScope(scope)) throw new BadScopeError(`Unknown corpus ${JSON.stringify(scope)}; expected one of ${SCOPES.join(', ')}.`);
    const idx = this.#indexes.get(scope);
    if (!idx) throw new UnavailableError(`The ${scope} index cannot be read: ${this.#states.get(scope)?.error ?? 'not open'}`, REOPEN_INTERVAL_MS / 1000);
    return idx;
  }

  /** The searcher of the newest commit of `scope` known here. */
  searcher(scope: Scope): Searcher {
    return this.index(scope).searcher();
  }

  status(): Record<Scope, CorpusStatus> {
    const out = {} as Record<Scope, CorpusStatus>;
    for (const scope of SCOPES) {
      const s = this.#states.get(scope)!;
      let stats = { docs: 0, generation: 0, segments: 0 };
      try { stats = this.#indexes.get(scope)?.stats() ?? stats; } catch { /* closed */ }
      out[scope] = { state: s.state, docs: stats.docs, generation: stats.generation, segments: stats.segments };
      if (s.error !== undefined) out[scope].error = s.error;
    }
    return out;
  }

  /** Adopts commits made by other processes; true when any scope changed. Never throws. */
  async refresh(): Promise<boolean> {
    if (this.#refreshing || this.#closed) return false;
    this.#refreshing = true;
    let changed = false;
    try {
      for (const scope of SCOPES) {
        const idx = this.#indexes.get(scope);
        if (idx) {
          try { changed = (await idx.refresh()) || changed; } catch { /* retried next tick */ }
        } else if (Date.now() - this.#lastReopen >= REOPEN_INTERVAL_MS) {
          this.#lastReopen = Date.now();
          // An unreadable index may have been repaired or restored by the operator: try it again.
          try {
            const reopened = await Index.open(indexDir(this.dataDir, scope), this.#indexOptions);
            if (this.#closed) { await reopened.close(); continue; }
            this.#attach(scope, reopened);
            changed = true;
          } catch (err) {
            this.#states.set(scope, { state: 'failed', error: (err as Error).message });
          }
        }
      }
    } finally {
      this.#refreshing = false;
    }
    return changed;
  }

  /**
   * Ingests `items` into `scope` under the scope's writer lock (ConflictError when another ingest, here
   * or in another process, holds it). Commits as configured; see ./ingest.ts for the durability contract.
   */
  async ingest(scope: Scope, items: AsyncIterable<ReadItem> | Iterable<ReadItem>, options: ScopeIngestOptions = {}): Promise<IngestReport> {
    const idx = this.index(scope);
    const deadline = Date.now() + (options.waitForWriterMs ?? 0);
    let writer: Awaited<ReturnType<Index['openWriter']>>;
    for (;;) {
      try {
        if (this.#running.has(scope)) throw new ConflictError(`An ingest into the ${scope} corpus is already running.`);
        writer = await idx.openWriter();
        break;
      } catch (err) {
        if (!(QuarryError.is(err) && err.code === 'conflict') || Date.now() >= deadline || this.#closed) throw err;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const abort = new AbortController();
    if (options.signal) {
      if (options.signal.aborted) abort.abort();
      else options.signal.addEventListener('abort', () => abort.abort(), { once: true });
    }
    const phase = options.phase ?? 'importing';
    let lastEvent = 0;
    const publishProgress = (p: IngestProgress, force: boolean) => {
      const now = Date.now();
      if (!force && now - lastEvent < this.#progressIntervalMs) return;
      lastEvent = now;
      const payload: Record<string, unknown> = { scope, phase, docs: p.docs, skipped: p.skipped, committed: p.committed };
      if (options.total !== undefined) payload.total = options.total;
      this.#bus?.publish('index.progress', payload);
    };
    this.#states.set(scope, { state: 'indexing' });
    publishProgress({ docs: 0, skipped: 0, committed: 0 }, true);
    const run = (async () => {
      try {
        const report = await ingest(writer, this.registry, items, {
          ...this.config.ingest,
          signal: abort.signal,
          ...(options.deleteKeys ? { deleteKeys: options.deleteKeys } : {}),
          ...(options.onCommit ? { onCommit: options.onCommit } : {}),
          ...(options.onSkip ? { onSkip: options.onSkip } : {}),
          onProgress: (p) => {
            publishProgress(p, false);
            options.onProgress?.(options.total === undefined ? p : { ...p, total: options.total });
          },
        });
        publishProgress(report, true);
        this.#states.set(scope, { state: 'ready' });
        return report;
      } catch (err) {
        this.#states.set(scope, { state: 'failed', error: (err as Error).message });
        throw err;
      } finally {
        await writer.close();
      }
    })();
    this.#running.set(scope, { abort, done: run.catch(() => undefined) });
    try {
      return await run;
    } finally {
      this.#running.delete(scope);
    }
  }

  /**
   * Makes the own corpus match its configured sources. The first time, every source file is read (with
   * progress); later, only files whose size or modification time changed, and documents of files that
   * are gone are deleted; when nothing changed it returns at once (`reused`). Concurrent calls share one
   * run. The fingerprint of the sources (`<data>/index/own.sources.json`) is written only after the last
   * commit, so an interrupted run is simply redone. `full` reads every file again (after an extraction
   * change the version constant does not cover, or to repair).
   */
  ensureOwnIndexed(onProgress?: (p: OwnProgress) => void, options: { full?: boolean } = {}): Promise<OwnIndexReport> {
    this.#assertOpen();
    this.#own ??= this.#indexOwn(onProgress, options.full === true).finally(() => { this.#own = undefined; });
    return this.#own;
  }

  async #indexOwn(onProgress: ((p: OwnProgress) => void) | undefined, full: boolean): Promise<OwnIndexReport> {
    const files = listOwnSources(this.config);
    const fpFile = ownSourcesFile(this.dataDir);
    const prev = readFingerprint(fpFile);
    // `full`: every file is read again, and documents of files gone since the last run are still deleted.
    const idx = this.index('own');
    const stats = idx.stats();
    const valid = prev !== undefined && prev.version === EXTRACTION_VERSION && stats.generation >= prev.generation
      && !(stats.docs === 0 && prev.docs > 0);
    const current = new Set(files.map((f) => f.key));
    const changed: SourceFile[] = files.filter((f) => full || !valid || prev!.files[f.key] !== f.stamp);
    const removed = valid ? Object.keys(prev!.files).filter((k) => !current.has(k)) : [];
    const base = { files: files.length, changed: changed.length, removed: removed.length };
    if (changed.length === 0 && removed.length === 0 && valid) {
      onProgress?.({ phase: OWN_PHASE, done: files.length, total: files.length });
      return { reused: true, ...base };
    }
    const { maxRecordBytes, maxTextChars } = this.config.ingest;
    let done = 0;
    const items = function* (): Generator<ReadItem> {
      for (const f of changed) {
        const item = readSourceFile(f, maxRecordBytes, maxTextChars);
        done++;
        yield item;
      }
    };
    onProgress?.({ phase: OWN_PHASE, done: 0, total: changed.length });
    let report: IngestReport;
    try {
      report = await this.ingest('own', items(), {
        phase: OWN_PHASE,
        total: changed.length,
        deleteKeys: removed,
        onProgress: () => onProgress?.({ phase: OWN_PHASE, done, total: changed.length }),
      });
    } catch (err) {
      if (QuarryError.is(err) && err.code === 'conflict') return { reused: false, busy: true, ...base };
      throw err;
    }
    // A stopped run (shutdown) keeps what it committed, but its fingerprint must not claim the sources
    // are indexed: without a new one, the next start reads the changed files again.
    if (report.aborted) return { reused: false, ...base, report };
    onProgress?.({ phase: OWN_PHASE, done: changed.length, total: changed.length });
    const after = idx.stats();
    const fp: Fingerprint = {
      version: EXTRACTION_VERSION,
      generation: after.generation,
      docs: after.docs,
      files: Object.fromEntries(files.map((f) => [f.key, f.stamp])),
    };
    mkdirSync(join(this.dataDir, 'index'), { recursive: true });
    writeFileDurable(fpFile, JSON.stringify(fp));
    return { reused: false, ...base, report };
  }

  /** Stops running ingests (their committed documents stay), closes every index. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      if (this.#timer) clearInterval(this.#timer);
      for (const r of this.#running.values()) r.abort.abort();
      await Promise.all([...this.#running.values()].map((r) => r.done));
      if (this.#own) await this.#own.catch(() => undefined);
      for (const fn of this.#unsubscribe) fn();
      for (const idx of this.#indexes.values()) await idx.close();
      this.#db.close();
    })();
    return this.#closed;
  }
}

/**
 * Opens (creating when absent) the three corpora of `dataDir`. Does not index anything: call
 * `ensureOwnIndexed` (the server does it in the background after it starts listening).
 */
export async function openCorpora(options: CorporaOptions): Promise<Corpora> {
  const { dataDir } = options;
  const section = options.config?.['corpora'];
  const config = options.resolved
    ?? (section !== undefined ? resolveCorporaConfig(section, options.configDir ?? process.cwd()) : undefined)
    ?? loadCorporaConfig(defaultConfigFile(dataDir), { optional: true });
  mkdirSync(indexesDir(dataDir), { recursive: true });
  const db = openDb(stateDbPath(dataDir));
  const indexes = new Map<Scope, Index>();
  const unreadable = new Map<Scope, string>();
  for (const scope of SCOPES) {
    const dir = indexDir(dataDir, scope);
    try {
      indexes.set(scope, await Index.open(dir, options.indexOptions));
    } catch (err) {
      const reason = (err as Error).message;
      if (scope !== 'own') { unreadable.set(scope, reason); continue; }
      // The own corpus is derived from its sources: set the unreadable copy aside (never delete data) and
      // rebuild. web and trusted cannot be rebuilt from anything here: they stay unavailable, and visible.
      const aside = `${dir}.unreadable-${new Date().toISOString().replace(/[:.]/g, '-')}`;
      try {
        renameSync(dir, aside);
        indexes.set(scope, await Index.open(dir, options.indexOptions));
        process.emitWarning(`The own index could not be read (${reason}); it was moved to ${aside} and will be rebuilt.`, 'QuarryCorpusWarning');
      } catch (err2) {
        unreadable.set(scope, `${reason} (setting it aside failed: ${(err2 as Error).message})`);
      }
    }
  }
  return new Corpora(dataDir, config, db, indexes, unreadable, options.bus, {
    progressIntervalMs: options.progressIntervalMs ?? 250, indexOptions: options.indexOptions,
  });
}

/** How often the refresh poll tries again to open an index that could not be read, in ms. */
export const REOPEN_INTERVAL_MS = 30_000;

/** Whether the index of `scope` exists in `dataDir` (read-only commands refuse to create one). */
export function corpusExists(dataDir: string, scope: Scope): boolean {
  return existsSync(indexDir(dataDir, scope));
}
