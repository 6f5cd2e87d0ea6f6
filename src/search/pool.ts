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
 * The queue is shared: each task is posted to every worker (to `FANOUT` of them in a larger pool), and
 * the first free one claims it on a claim board in shared memory (./claims.ts); the others drop their
 * copy. A worker that finishes a search takes the next from its own inbox at once, instead of sleeping
 * until the serving thread, busy with TLS, reads its answer and hands it another task (that wait left
 * each worker idle ~9% of the time at 32 connections, and a thread that slept ran its next search
 * slower); and no task waits behind a slow search on one worker while another it was posted to is free,
 * as it would if each worker were given tasks ahead. The price is a message per worker per task, and a
 * wake-up for each idle worker that loses the claim.
 *
 * The pool is `node:worker_threads` and that queue, not a general-purpose pool library. Piscina
 * (measured in its place) makes on the serving thread, per task, an object with fresh getters for every
 * worker and an async resource (3 KB of the ~30 KB that thread allocated per search), and parks an idle
 * worker in `Atomics.wait`, which leaves its event loop (the commit broadcasts) unserved until the next
 * task.
 *
 * Tasks are claimed in arrival order, without bound: each search carries its deadline, and a worker cuts
 * a search whose deadline passed while it waited at its first check, so a queue cannot hold work past its
 * budget. A worker that dies fails the task it claimed as an internal error and is replaced.
 */
import { randomUUID } from 'node:crypto';
import { getPriority } from 'node:os';
import { BroadcastChannel, Worker } from 'node:worker_threads';
import type { IndexOptions, SearchOptions, SearchResult, StoredDocument } from '../engine/index.js';
import { errorFromWire, InternalError, UnavailableError } from '../kernel/errors.js';
import type { Scope } from '../kernel/scope.js';
import { threadModule } from '../kernel/thread-module.js';
import type { ScopeSearcher, SearcherSource } from './service.js';
import { CLAIM_CELLS, cellOf, ClaimBoard } from './claims.js';
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

/**
 * Workers each task is posted to, at most: the serving thread pays one message per worker per task
 * (a few µs each), so a pool larger than this posts each task to this many workers, a window that turns
 * with each task, and any of them may run it.
 */
const FANOUT = 8;

/** A worker that dies sooner than this after its start is replaced after this long. */
const RESTART_PAUSE_MS = 1000;

/** A task from the caller until it is answered: `seq` once it is posted; `target` for a task only one worker may run. */
interface Job { seq: number; task: Task; target: Slot | undefined; resolve(outcome: Outcome): void; reject(err: Error): void }

/**
 * The tasks posted and not yet answered, each at its claim cell's index (`cellOf(seq)`): a cell is
 * reused only once its task has ended, so at most one posted task has each index.
 *
 * An array, not a `Map` keyed by seq: with the Map (keys that only grow, each deleted soon after it is
 * set) every other scavenge of the serving thread promoted 110–190 KB (under 2 KB without it), its heap
 * was collected in full every 1.3–2 s at 900 searches/s, and the open loop's p99 went from ~7 to ~13 ms.
 */
class PostedJobs {
  readonly #jobs: (Job | undefined)[] = new Array<Job | undefined>(CLAIM_CELLS).fill(undefined);
  #size = 0;
  /** One past the newest seq added. */
  #next = 0;

  get size(): number { return this.#size; }

  get(seq: number): Job | undefined {
    const job = this.#jobs[cellOf(seq)];
    return job?.seq === seq ? job : undefined;
  }

  /** Whether the task of `seq` may be posted: the one before it on its cell has ended. */
  isFree(seq: number): boolean {
    return this.#jobs[cellOf(seq)] === undefined;
  }

  add(job: Job): void {
    this.#jobs[cellOf(job.seq)] = job;
    this.#size++;
    this.#next = job.seq + 1;
  }

  delete(job: Job): void {
    this.#jobs[cellOf(job.seq)] = undefined;
    this.#size--;
  }

  /** The posted tasks, oldest first. */
  *inOrder(): Generator<Job> {
    for (let seq = Math.max(0, this.#next - CLAIM_CELLS); seq < this.#next; seq++) {
      const job = this.get(seq);
      if (job !== undefined) yield job;
    }
  }
}

/** What a worker is posted for `job`. */
function taskMessage(job: Job): TaskMessage {
  return { seq: job.seq, task: job.task };
}

/** One worker, its token on the claim board, and whether it has ended (until its replacement takes its place). */
interface Slot { worker: Worker; token: number; exited: boolean }

export class SearchPool {
  readonly workers: number;
  readonly #data: Omit<WorkerData, 'token'>;
  readonly #module: URL;
  readonly #commits: BroadcastChannel;
  readonly #board = new ClaimBoard();
  readonly #slots: Slot[] = [];
  /** Tasks posted to the workers and not yet answered. */
  readonly #posted = new PostedJobs();
  /** Tasks waiting for a claim cell, oldest first: the next seq's cell is held by a task not yet answered. */
  #backlog: Job[] = [];
  #nextSeq = 0;
  #nextToken = 1;
  #closing = false;
  /** Set once close() stops the workers: their exits are not replaced. */
  #terminating = false;
  #closed: Promise<void> | undefined;
  /** Settles when the last posted task is answered, while closing. */
  #drained: (() => void) | undefined;

  constructor(options: SearchPoolOptions) {
    if (!Number.isInteger(options.workers) || options.workers < 1) throw new RangeError(`A search pool needs at least one worker, not ${options.workers}.`);
    this.workers = options.workers;
    this.#module = options.workerModule ?? WORKER_MODULE;
    const commits = `quarry.search.commits.${randomUUID()}`;
    this.#commits = new BroadcastChannel(commits);
    this.#data = { dataDir: options.dataDir, commits, nice: getPriority() + SEARCH_THREAD_NICE, claims: this.#board.buffer };
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
   * task), so the first searches do not pay for starting a thread.
   */
  async warm(scopes: readonly Scope[]): Promise<void> {
    await Promise.all(this.#slots.map((slot) => this.#submit({ op: 'open', scopes: [...scopes] }, slot)));
  }

  /** Tasks no worker has claimed yet. */
  get waiting(): number {
    let n = this.#backlog.length;
    for (const job of this.#posted.inOrder()) if (this.#board.isOpen(job.seq)) n++;
    return n;
  }

  /** Refuses the tasks no worker has claimed (unavailable), lets the running ones finish, then stops the workers. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#closing = true;
      const refused = this.#backlog;
      this.#backlog = [];
      for (const job of this.#posted.inOrder()) {
        if (!this.#board.refuse(job.seq)) continue; // a worker runs it: its answer comes
        this.#posted.delete(job);
        refused.push(job);
      }
      for (const job of refused) job.reject(new UnavailableError('The search pool is closing.', 1));
      if (this.#posted.size > 0) await new Promise<void>((resolve) => { this.#drained = resolve; });
      this.#commits.close();
      this.#terminating = true;
      await Promise.all(this.#slots.map((s) => s.worker.terminate()));
    })();
    return this.#closed;
  }

  async #run<T>(task: Task): Promise<T> {
    if (this.#closing) throw new UnavailableError('The search pool is closed.', 1);
    const outcome = await this.#submit(task, undefined);
    if (!outcome.ok) throw errorFromWire(outcome.error);
    return outcome.value as T;
  }

  #submit(task: Task, target: Slot | undefined): Promise<Outcome> {
    return new Promise<Outcome>((resolve, reject) => {
      const job: Job = { seq: -1, task, target, resolve, reject };
      if (this.#backlog.length === 0 && this.#cellFree()) this.#post(job);
      else this.#backlog.push(job);
    });
  }

  /** Whether the next seq's claim cell is free: the task that used it before has been answered. */
  #cellFree(): boolean {
    return this.#posted.isFree(this.#nextSeq);
  }

  /** Opens `job` on the board and posts it to its target, or to `FANOUT` running workers in rotation. */
  #post(job: Job): void {
    job.seq = this.#nextSeq++;
    this.#board.open(job.seq);
    this.#posted.add(job);
    const message = taskMessage(job);
    if (job.target !== undefined) {
      job.target.worker.postMessage(message);
      return;
    }
    const n = this.#slots.length;
    for (let k = 0; k < Math.min(n, FANOUT); k++) {
      const slot = this.#slots[(job.seq + k) % n]!;
      if (!slot.exited) slot.worker.postMessage(message);
    }
  }

  /** A worker answered task `seq`. */
  #answered(seq: number, outcome: Outcome): void {
    const job = this.#posted.get(seq);
    if (job === undefined) return; // not possible: a task is answered once, by the worker that claimed it
    this.#posted.delete(job);
    job.resolve(outcome);
    this.#ended();
  }

  /** A posted task ended: the backlog takes the cells this frees; the pool is drained once none is left. */
  #ended(): void {
    while (this.#backlog.length > 0 && this.#cellFree()) this.#post(this.#backlog.shift()!);
    if (this.#drained !== undefined && this.#posted.size === 0) this.#drained();
  }

  #start(): Slot {
    const token = this.#nextToken++;
    const worker = new Worker(this.#module, {
      workerData: { ...this.#data, token } satisfies WorkerData,
      // Half of node's default young generation (48 MiB): between scavenges each nursery holds that much
      // garbage in the server's resident set, and a search's garbage dies young, so scavenging twice as
      // often costs little (docs/reliability.md has the memory budget).
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MIB },
    });
    const slot: Slot = { worker, token, exited: false };
    const startedAt = Date.now();
    worker.on('message', (m: OutcomeMessage) => this.#answered(m.seq, m.outcome));
    // An uncaught error (or running out of memory) ends the worker; 'exit' follows, and fails the task
    // it ran with that error as its cause, so the server's log shows where it was thrown.
    let failure: Error | undefined;
    worker.on('error', (err) => { failure = err; });
    worker.on('exit', (code) => {
      slot.exited = true;
      const why = failure === undefined ? '' : `: ${failure.message}`;
      const options = failure === undefined ? undefined : { cause: failure };
      for (const job of this.#posted.inOrder()) {
        const ran = this.#board.claimedBy(job.seq, token);
        if (!ran && job.target !== slot) continue;
        this.#posted.delete(job);
        job.reject(new InternalError(`A search worker exited (${code}) ${ran ? 'while it ran' : 'before it ran'} a ${job.task.op} task${why}.`, options));
      }
      this.#ended();
      if (this.#terminating) return;
      // A replacement is posted every task not yet answered, and claims those no worker has; one that
      // dies as it starts (its module cannot load) is started again after a pause, not in a loop.
      const i = this.#slots.indexOf(slot);
      const replace = () => {
        if (this.#terminating) return;
        const next = this.#start();
        this.#slots[i] = next;
        for (const job of this.#posted.inOrder()) if (job.target === undefined) next.worker.postMessage(taskMessage(job));
      };
      if (Date.now() - startedAt < RESTART_PAUSE_MS) setTimeout(replace, RESTART_PAUSE_MS).unref();
      else replace();
    });
    return slot;
  }
}
