/**
 * The composition root: the one place that builds every part of Quarry and wires them into one running
 * service over one data directory. Start, in order: state database → event bus → TLS material → auth
 * (policy + route group) → search routes → event routes → control plane (recovers interrupted operations,
 * reconciles targets) → binary RPC over the same services → OpenAPI document from every group → HTTPS
 * server listening → corpora opened and the own corpus indexed in the background (until then search
 * answers 503 `unavailable` + Retry-After).
 *
 * `close()` (idempotent) undoes it: announce `shutdown` on the bus, drain the server (in-flight requests
 * finish, long-lived streams end), then close the newest part first — corpora (a running indexing is
 * stopped; an in-flight commit is finished or abandoned by the engine, never half-applied), control
 * plane, auth, database. A start that fails half-way closes what it had opened.
 *
 * Nothing here knows HTTP or engine details; it only knows which factory needs what.
 */
import { resolve } from 'node:path';
import { mkdirSync, readFileSync } from 'node:fs';
import { createAuth } from './auth/index.js';
import { createLoginPage } from './auth/login-page.js';
import { createControlThread } from './control/index.js';
import { openCorpora, type Corpora } from './corpora/index.js';
import { controlRoutes } from './rest/control.js';
import { EventBus } from './events/bus.js';
import { EventsService } from './events/service.js';
import { UnavailableError } from './kernel/errors.js';
import type { ServerLimits } from './http/limits.js';
import type { RouteGroup } from './http/route.js';
import { authRoutes } from './rest/auth.js';
import { eventRoutes } from './rest/events.js';
import { API_VERSION, buildOpenApi, openApiRoutes } from './rest/openapi.js';
import { maturityRoutes } from './rest/maturity.js';
import { searchRoutes } from './rest/search.js';
import { loadContract } from './rpc/contract.js';
import { rpcRoutes } from './rpc/routes.js';
import { createMcpFace } from './mcp/index.js';
import { RollupService, crawlFigures } from './rollup/service.js';
import { resolveSearchConfig } from './search/config.js';
import { SearchPool } from './search/pool.js';
import { uiRoutes } from './ui/pages.js';
import { SearchService, type SearcherSource } from './search/service.js';
import { isScope, SCOPES } from './kernel/scope.js';
import { QuarryServer, consoleLogger, type Logger } from './http/server.js';
import { ensureTls, loadTls, type TlsMaterial } from './http/tls.js';
import { openDb, type Db } from './store/db.js';
import { crawlWarcDir, stateDbPath } from './kernel/data-dir.js';
import { CrawlService, resolveCrawlConfig } from './crawl/index.js';
import { TrustedService } from './trusted/service.js';
import { DocumentsService } from './documents/service.js';
import { crawlRoutes } from './rest/crawl.js';
import { trustedRoutes } from './rest/trusted.js';
import { documentsRoutes } from './rest/documents.js';

export interface ServiceOptions {
  /** The data directory (state database, TLS material, indexes). Created when missing. */
  dataDir: string;
  /** TCP port; 0 picks a free one (read it from `RunningService.port`). Default 8443. */
  port?: number;
  /** Address to listen on. Default 127.0.0.1. */
  host?: string;
  /** Operator PEM certificate and key; both or neither (then a self-signed pair in `<data>/tls`). */
  certFile?: string;
  keyFile?: string;
  /** The parsed configuration file (`--config`), handed to the parts that read one. */
  config?: Record<string, unknown>;
  /** Directory the configuration file lives in (relative paths in it resolve against it). */
  configDir?: string;
  limits?: ServerLimits;
  log?: Logger;
  /** Progress of the first indexing of the own corpus (for the progress bar of `quarry serve`). */
  onIndexProgress?: (progress: IndexProgress) => void;
}

/** What the corpora report while indexing the own corpus: source files done of total. */
export interface IndexProgress {
  done: number;
  total: number;
}

export interface RunningService {
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly fingerprint256: string;
  readonly tls: TlsMaterial;
  readonly bus: EventBus;
  readonly db: Db;
  readonly server: QuarryServer;
  /** Settles when the corpora are open and the own corpus indexed (rejects if that failed). */
  readonly ready: Promise<void>;
  /** Re-reads the certificate and key (SIGHUP). Open connections keep the old ones. */
  reloadTls(): TlsMaterial;
  close(): Promise<void>;
}

export async function startService(options: ServiceOptions): Promise<RunningService> {
  const closers: (() => Promise<void> | void)[] = [];
  try {
    return await startServiceWith(options, closers);
  } catch (err) {
    // A part failed to start (port in use, bad certificate, …): close what was opened, newest first.
    for (const c of closers.reverse()) {
      try { await c(); } catch { /* the original error is the one to report */ }
    }
    throw err;
  }
}

async function startServiceWith(options: ServiceOptions, closers: (() => Promise<void> | void)[]): Promise<RunningService> {
  const log = options.log ?? consoleLogger;
  const dataDir = resolve(options.dataDir);
  mkdirSync(dataDir, { recursive: true });
  const config = options.config ?? {};

  const db = openDb(stateDbPath(dataDir));
  closers.push(() => { db.close(); });
  const bus = new EventBus();

  let tls = await ensureTls({ dataDir, certFile: options.certFile, keyFile: options.keyFile });

  const section = (name: string): Record<string, unknown> => {
    const v = config[name];
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? v as Record<string, unknown> : {};
  };

  // Auth: the policy that resolves each request's principal, and the accounts-and-capabilities service.
  const auth = createAuth({ ...section('auth'), db, dataDir, bus });
  closers.push(() => auth.close());
  const groups: RouteGroup[] = [authRoutes(auth.service, createLoginPage())];

  // Corpora: opened in the background once the server listens; until then search answers 503.
  let corpora: Corpora | undefined;
  let ownReady = false;
  const search: SearcherSource = {
    searcher(scope) {
      if (!corpora) throw new UnavailableError('The indexes are not open yet; retry shortly.', 2);
      // The own corpus is indexed on first start; until that finishes its answers would be partial.
      if (scope === 'own' && !ownReady) throw new UnavailableError('The own corpus is being indexed; retry shortly.', 2);
      return corpora.searcher(scope);
    },
  };
  // Searches, document fetches and completions run on a pool of worker threads (none: on this thread).
  const searchConfig = resolveSearchConfig(section('search'));
  let pool: SearchPool | undefined;
  if (searchConfig.workers > 0) {
    const opened = new SearchPool({ dataDir, workers: searchConfig.workers });
    pool = opened;
    closers.push(() => opened.close());
    closers.push(bus.subscribe((e) => {
      const scope = e.data['scope'];
      if (e.kind === 'index.committed' && typeof scope === 'string' && isScope(scope)) opened.committed(scope, Number(e.data['generation']));
    }));
  }
  const limits = searchConfig.budgetMs === undefined ? {} : { budgetMs: searchConfig.budgetMs };
  const searchService = new SearchService(pool ? pool.source(search) : search, limits);
  groups.push(searchRoutes(searchService));
  groups.push(uiRoutes(searchService));
  groups.push(eventRoutes(new EventsService(bus)));

  // Control plane, on a thread of its own: recovers interrupted operations and reconciles targets before
  // it serves requests.
  const control = createControlThread({ ...section('control'), db, bus, dataDir, onError: (m, err) => log.error(m, err) });
  closers.push(() => control.close());
  await control.start();
  groups.push(controlRoutes(control.service));

  // The open web: the one crawler (admin control), the trusted corpus's flags, the documents API.
  const corporaNow = () => {
    if (!corpora) throw new UnavailableError('The indexes are not open yet; retry shortly.', 2);
    return corpora;
  };
  const crawl = new CrawlService({
    db, bus, stateDb: stateDbPath(dataDir), warcDir: crawlWarcDir(dataDir), config: resolveCrawlConfig(config['crawl']),
    // A documents-API request briefly holding the web writer delays a run's start instead of failing it.
    corpora: { ingest: (scope, items, o) => corporaNow().ingest(scope, items, { waitForWriterMs: 10_000, ...o }) },
    onRunError: (err) => log.error('quarry: the crawl run failed', err),
  });
  closers.push(() => crawl.close());
  const trusted = new TrustedService({ db, bus, crawl, corpora: corporaNow, onError: (err) => log.error('quarry: indexing a flagged document failed', err) });
  groups.push(crawlRoutes(crawl), trustedRoutes(trusted), documentsRoutes(new DocumentsService({ db, corpora: corporaNow })));
  const contract = loadContract();
  groups.push(rpcRoutes(contract, { search: searchService, control: control.service, auth: auth.service, trusted }));

  let openapi: Record<string, unknown> = {};
  const host = options.host ?? '127.0.0.1';
  // The agent surface over the same services. The rollup counts documents per host in the live indexes
  // (unavailable exactly when search is: `search.searcher` throws until then) and reads the crawl records.
  const rollup = new RollupService({
    hosts: { hosts: (scope) => { search.searcher(scope); return corpora!.searcher(scope).hosts(); } }, crawl: crawlFigures(db),
  });
  groups.push(maturityRoutes(rollup));
  groups.push(await createMcpFace({
    config: section('mcp'), listenHost: host, policy: auth.policy, search: searchService, rollup, mgmt: control.service,
    openapi: () => openapi, rpcContract: { mimeType: 'text/x-protobuf', text: contract.sources },
    serverVersion: API_VERSION, logError: (m, err) => log.error(m, err),
  }));
  groups.push(openApiRoutes(() => openapi));
  openapi = buildOpenApi(groups);

  const server = new QuarryServer({ groups, tls, policy: auth.policy, limits: options.limits ?? {}, log });
  closers.push(() => server.drain(0));
  const address = await server.listen(options.port ?? 8443, host);
  const urlHost = host.includes(':') ? `[${host}]` : host;
  const url = `https://${urlHost}:${address.port}`;

  let closed = false;
  let closing: Promise<void> | undefined;
  // Opening is quick; indexing the own corpus may take a while and is stopped by close().
  const opening = openCorpora({ dataDir, bus, config, ...(options.configDir ? { configDir: options.configDir } : {}) })
    .then((opened) => {
      closers.push(() => opened.close());
      // Closed before the corpora: a crawl run or a flag's ingest ends while the index is still open.
      closers.push(() => crawl.close(), () => trusted.close());
      corpora = opened;
      return opened;
    });
  const ready = opening.then(async (opened) => {
    if (closed) return;
    await opened.ensureOwnIndexed(options.onIndexProgress);
    if (closed) throw new UnavailableError('The service stopped before the own corpus was indexed.');
    await pool?.warm(SCOPES);
    ownReady = true;
    // Flags fetched before a crash but not yet copied: copied now; the rest wait for the crawler.
    await trusted.recover().catch((err: unknown) => log.error('quarry: recovering pending trusted flags failed', err));
  });
  ready.catch((err) => {
    if (!closed) log.error('quarry: opening the corpora failed; search answers 503', err);
  });

  async function close(): Promise<void> {
    closing ??= (async () => {
      closed = true;
      bus.publish('shutdown', { reason: 'server stopping' });
      await server.drain();
      await opening.catch(() => undefined);
      for (const c of closers.reverse()) {
        try { await c(); } catch (err) { log.error('quarry: error while closing', err); }
      }
    })();
    return closing;
  }

  return {
    url, host, port: address.port, get fingerprint256() { return tls.fingerprint256; }, get tls() { return tls; },
    bus, db, server, ready, close,
    reloadTls() {
      const next = loadTls({ certFile: tls.certFile, keyFile: tls.keyFile }, tls.selfSigned);
      server.setTls(next);
      tls = next;
      return next;
    },
  };
}

/** Reads a JSON configuration file (`--config`). */
export function readConfigFile(file: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`Cannot read the configuration file ${file}: ${(err as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${file} must hold a JSON object.`);
  return value as Record<string, unknown>;
}
