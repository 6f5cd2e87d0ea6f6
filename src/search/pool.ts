/**
 * Searches on every core: a pool of worker threads (piscina) that run searches with their snippets,
 * document fetches and completions, so the event loop keeps only TLS, routing and auth.
 * Each worker (./worker.ts) holds read-only searchers over the immutable segments of each corpus and
 * adopts every commit: the pool broadcasts `committed(scope, generation)` to all of them, and every task
 * carries the generation the main thread sees, which a worker reaches before it answers — so an
 * acknowledged import is visible to the next search whichever worker takes it.
 *
 * `SearchPool.source(local)` wraps the main thread's `SearcherSource` (which still decides whether a
 * corpus is open and at which generation) into one whose searchers run on the pool; the search service
 * does not know the difference. A pool of 0 workers is not a pool: the caller uses `local` itself (the
 * CLI and the in-process library do).
 *
 * Tasks queue without bound: each search carries its deadline, and a worker cuts a search whose deadline
 * passed while it waited at its first check, so a queue cannot hold work past its budget.
 */
import { randomUUID } from 'node:crypto';
import { BroadcastChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { IndexOptions, SearchOptions, SearchResult, StoredDocument } from '../engine/index.js';
import { errorFromWire, UnavailableError } from '../kernel/errors.js';
import type { Scope } from '../kernel/scope.js';
import { threadModule } from '../kernel/thread-module.js';
import type { ScopeSearcher, SearcherSource } from './service.js';
import type { CommitNotice, Outcome, Task, WorkerData } from './worker.js';

export interface SearchPoolOptions {
  dataDir: string;
  /** Worker threads, ≥ 1. */
  workers: number;
  /** Passed to every `Index.open` of the workers. */
  indexOptions?: IndexOptions;
}

/** The worker's module, compiled (see threadModule). */
const WORKER_MODULE = threadModule(import.meta.url, 'worker').href;

const WORKER_YOUNG_GENERATION_MIB = 24;

export class SearchPool {
  readonly workers: number;
  readonly #pool: Piscina<Task, Outcome>;
  readonly #commits: BroadcastChannel;
  #closed: Promise<void> | undefined;

  constructor(options: SearchPoolOptions) {
    if (!Number.isInteger(options.workers) || options.workers < 1) throw new RangeError(`A search pool needs at least one worker, not ${options.workers}.`);
    this.workers = options.workers;
    const commits = `quarry.search.commits.${randomUUID()}`;
    this.#commits = new BroadcastChannel(commits);
    const workerData: WorkerData = { dataDir: options.dataDir, commits };
    if (options.indexOptions) workerData.indexOptions = options.indexOptions;
    this.#pool = new Piscina<Task, Outcome>({
      filename: WORKER_MODULE,
      minThreads: options.workers,
      maxThreads: options.workers,
      idleTimeout: Infinity,
      concurrentTasksPerWorker: 1,
      // a task that finds every worker busy goes back to the head of the queue, not its tail: arrival order
      // is kept, so no search waits behind those that came after it (no convoys)
      stricterFIFO: true,
      workerData,
      // Half of node's default young generation (48 MiB): between scavenges each nursery holds that much
      // garbage in the server's resident set, and a search's garbage dies young, so scavenging twice as
      // often costs little (docs/reliability.md has the memory budget).
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MIB },
    });
  }

  /** `local`'s corpora and generations, searched on the pool. */
  source(local: SearcherSource): SearcherSource {
    return {
      searcher: (scope) => {
        const s = local.searcher(scope);
        return s === undefined ? undefined : this.searcher(scope, s.generation ?? 0);
      },
    };
  }

  /** A searcher of `scope` at `generation` or newer, answering on the pool. */
  searcher(scope: Scope, generation: number): ScopeSearcher {
    return {
      generation,
      search: (q: string, options: SearchOptions) => this.#run<SearchResult>({ op: 'search', scope, generation, q, options }),
      searchJson: (q: string, options: SearchOptions, _scope: Scope, page: number) => this.#run<Uint8Array>({ op: 'searchJson', scope, generation, q, options, page }),
      get: (cid: bigint) => this.#run<StoredDocument | undefined>({ op: 'get', scope, generation, cid }),
      suggest: (prefix: string, limit: number) => this.#run<string[]>({ op: 'suggest', scope, generation, prefix, limit }),
    };
  }

  /** Tells every worker that `scope` committed `generation`: they adopt it now rather than on their next task. */
  committed(scope: Scope, generation: number): void {
    if (this.#closed) return;
    const notice: CommitNotice = { scope, generation };
    this.#commits.postMessage(notice);
  }

  /**
   * Settles when the workers have started and opened the indexes of `scopes` (one task per worker; idle
   * workers take them in turn), so the first searches do not pay for starting a thread.
   */
  async warm(scopes: readonly Scope[]): Promise<void> {
    await Promise.all(Array.from({ length: this.workers }, () => this.#run({ op: 'open', scopes: [...scopes] })));
  }

  /** Tasks waiting for a worker. */
  get queued(): number { return this.#pool.queueSize; }

  /** Waits for running tasks, then stops the workers. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#commits.close();
      await this.#pool.close();
    })();
    return this.#closed;
  }

  async #run<T>(task: Task): Promise<T> {
    if (this.#closed) throw new UnavailableError('The search pool is closed.', 1);
    const outcome = await this.#pool.run(task);
    if (!outcome.ok) throw errorFromWire(outcome.error);
    return outcome.value as T;
  }
}
