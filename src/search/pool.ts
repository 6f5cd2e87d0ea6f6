/**
 * Searches on every core: a fixed pool of worker threads that run searches with their snippets, document
 * fetches and completions, so the event loop keeps only TLS, routing and auth.
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
 * The pool is `node:worker_threads` and a queue, not a general-purpose pool library: a task is one
 * message each way, and an idle worker waits for the next on its event loop. Piscina (measured in its
 * place) makes on the serving thread, per task, an object with fresh getters for every worker and an
 * async resource (3 KB of the ~30 KB that thread allocated per search), and parks an idle worker in
 * `Atomics.wait`, which leaves its event loop (the commit broadcasts) unserved until the next task.
 *
 * Tasks wait in arrival order, without bound: each search carries its deadline, and a worker cuts a
 * search whose deadline passed while it waited at its first check, so a queue cannot hold work past its
 * budget. A worker that dies fails its task as an internal error and is replaced.
 */
import { randomUUID } from 'node:crypto';
import { getPriority } from 'node:os';
import { BroadcastChannel, Worker } from 'node:worker_threads';
import type { IndexOptions, SearchOptions, SearchResult, StoredDocument } from '../engine/index.js';
import { errorFromWire, InternalError, UnavailableError } from '../kernel/errors.js';
import type { Scope } from '../kernel/scope.js';
import { threadModule } from '../kernel/thread-module.js';
import type { ScopeSearcher, SearcherSource } from './service.js';
import type { CommitNotice, Outcome, TaskMessage, Task, WorkerData, OutcomeMessage } from './worker.js';

export interface SearchPoolOptions {
  dataDir: string;
  /** Worker threads, ≥ 1. */
  workers: number;
  /** Passed to every `Index.open` of the workers. */
  indexOptions?: IndexOptions;
  /** The workers' module, compiled. Default ./worker.js; a test gives one that loads it and adds to it. */
  workerModule?: URL;
}

/** The worker's module, compiled (see threadModule). */
const WORKER_MODULE = threadModule(import.meta.url, 'worker');

const WORKER_YOUNG_GENERATION_MIB = 24;

/**
 * How much lower than the serving thread a search thread runs (nice steps). Every request waits for the
 * serving thread (TLS, routing, handing the search over, writing the answer), which needs the CPU often
 * and briefly; at the same priority it waited behind busy search threads for the scheduler's next slice
 * whenever they held every core. A search thread still takes any core the serving thread leaves idle.
 */
export const SEARCH_THREAD_NICE = 8;

/** A worker that dies sooner than this after its start is replaced after this long. */
const RESTART_PAUSE_MS = 1000;

/** A task waiting for, or running on, a worker. */
interface Job { id: number; task: Task; resolve(outcome: Outcome): void; reject(err: Error): void }

/** One worker and the job it runs, if any; `exited` once it has ended (until its replacement takes its place). */
interface Slot { worker: Worker; job: Job | undefined; exited: boolean }

export class SearchPool {
  readonly workers: number;
  readonly #data: WorkerData;
  readonly #module: URL;
  readonly #commits: BroadcastChannel;
  readonly #slots: Slot[] = [];
  /** Jobs no worker has taken yet, oldest first, from `#head` on (those before it were taken). */
  #queue: (Job | undefined)[] = [];
  #head = 0;
  #nextId = 1;
  #closing = false;
  /** Set once close() stops the workers: their exits are not replaced. */
  #terminating = false;
  #closed: Promise<void> | undefined;
  /** Settles when the last job ends, while closing. */
  #drained: (() => void) | undefined;

  constructor(options: SearchPoolOptions) {
    if (!Number.isInteger(options.workers) || options.workers < 1) throw new RangeError(`A search pool needs at least one worker, not ${options.workers}.`);
    this.workers = options.workers;
    this.#module = options.workerModule ?? WORKER_MODULE;
    const commits = `quarry.search.commits.${randomUUID()}`;
    this.#commits = new BroadcastChannel(commits);
    this.#data = { dataDir: options.dataDir, commits, nice: getPriority() + SEARCH_THREAD_NICE };
    if (options.indexOptions) this.#data.indexOptions = options.indexOptions;
    for (let i = 0; i < options.workers; i++) this.#slots.push(this.#start());
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
      searchJson: (q: string, options: SearchOptions, page: number) => this.#run<Uint8Array>({ op: 'searchJson', scope, generation, q, options, page }),
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
   * Settles when every worker has started and opened the indexes of `scopes` (each is sent its own
   * task, ahead of the queue), so the first searches do not pay for starting a thread.
   */
  async warm(scopes: readonly Scope[]): Promise<void> {
    await Promise.all(this.#slots.map((slot) => new Promise<Outcome>((resolve, reject) => {
      const job = { id: this.#nextId++, task: { op: 'open', scopes: [...scopes] } as Task, resolve, reject };
      if (slot.job === undefined) this.#post(slot, job);
      else this.#queue.splice(this.#head, 0, job); // a worker busy already takes it next
    })));
  }

  /** Tasks waiting for a worker. */
  get queued(): number { return this.#queue.length - this.#head; }

  /** Refuses the queued tasks (unavailable), lets the running ones finish, then stops the workers. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#closing = true;
      const queued = this.#queue.slice(this.#head);
      this.#queue = [];
      this.#head = 0;
      for (const job of queued) job?.reject(new UnavailableError('The search pool is closing.', 1));
      if (this.#slots.some((s) => s.job !== undefined)) {
        await new Promise<void>((resolve) => { this.#drained = resolve; });
      }
      this.#commits.close();
      this.#terminating = true;
      await Promise.all(this.#slots.map((s) => s.worker.terminate()));
    })();
    return this.#closed;
  }

  async #run<T>(task: Task): Promise<T> {
    if (this.#closing) throw new UnavailableError('The search pool is closed.', 1);
    const outcome = await new Promise<Outcome>((resolve, reject) => {
      const job: Job = { id: this.#nextId++, task, resolve, reject };
      const idle = this.#slots.find((s) => s.job === undefined && !s.exited);
      if (idle !== undefined && this.queued === 0) this.#post(idle, job);
      else this.#queue.push(job);
    });
    if (!outcome.ok) throw errorFromWire(outcome.error);
    return outcome.value as T;
  }

  #post(slot: Slot, job: Job): void {
    slot.job = job;
    const message: TaskMessage = { id: job.id, task: job.task };
    slot.worker.postMessage(message);
  }

  /** `slot` is free: it takes the oldest queued job, if any. */
  #next(slot: Slot): void {
    slot.job = undefined;
    if (this.#head < this.#queue.length) {
      const job = this.#queue[this.#head]!;
      this.#queue[this.#head++] = undefined;
      if (this.#head === this.#queue.length) {
        this.#queue = [];
        this.#head = 0;
      }
      this.#post(slot, job);
      return;
    }
    if (this.#drained !== undefined && this.#slots.every((s) => s.job === undefined)) this.#drained();
  }

  #start(): Slot {
    const worker = new Worker(this.#module, {
      workerData: this.#data,
      // Half of node's default young generation (48 MiB): between scavenges each nursery holds that much
      // garbage in the server's resident set, and a search's garbage dies young, so scavenging twice as
      // often costs little (docs/reliability.md has the memory budget).
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MIB },
    });
    const slot: Slot = { worker, job: undefined, exited: false };
    const startedAt = Date.now();
    worker.on('message', (m: OutcomeMessage) => {
      const job = slot.job;
      if (job === undefined || job.id !== m.id) return; // not possible: a worker answers the one job it was given
      this.#next(slot);
      job.resolve(m.outcome);
    });
    // An uncaught error (or running out of memory) ends the worker; 'exit' follows, and fails the task
    // it ran with that error as its cause, so the server's log shows where it was thrown.
    let failure: Error | undefined;
    worker.on('error', (err) => { failure = err; });
    worker.on('exit', (code) => {
      const job = slot.job;
      slot.job = undefined;
      slot.exited = true;
      const why = failure === undefined ? '' : `: ${failure.message}`;
      job?.reject(new InternalError(`A search worker exited (${code}) while it ran a ${job.task.op} task${why}.`, failure === undefined ? undefined : { cause: failure }));
      if (this.#terminating) return;
      // A replacement takes the queue where this worker left it; one that dies as it starts (its module
      // cannot load) is started again after a pause, not in a loop.
      const i = this.#slots.indexOf(slot);
      const replace = () => {
        if (this.#terminating) return;
        const next = this.#start();
        this.#slots[i] = next;
        this.#next(next);
      };
      if (Date.now() - startedAt < RESTART_PAUSE_MS) setTimeout(replace, RESTART_PAUSE_MS).unref();
      else replace();
    });
    return slot;
  }
}
