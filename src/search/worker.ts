/**
 * One thread of the search pool (./pool.ts): holds a read-only `Index` per corpus of the data directory
 * (opened on first use; no writer lock, as `quarry search` does) and answers search, document fetch and
 * completion tasks from the searcher of its newest commit. It adopts a commit when the pool announces one
 * (a broadcast per commit) and, so that no answer is older than what the main thread already sees, before
 * any task that names a newer generation than its own.
 *
 * Errors cross the thread boundary as data: a `QuarryError` comes back as `{ code, message, … }` and
 * the pool throws it again as the same kind of error; anything else is an internal error, with its stack.
 *
 * Protocol: the pool posts `{ seq, task }` for every task to every worker (or, for a task meant for one
 * worker, to that one), in order. The worker keeps them in arrival order and, one at a time, claims the
 * oldest on the pool's claim board (./claims.ts) and runs it, or drops it when another worker claimed it
 * first; it answers `{ seq, outcome }` for the tasks it ran. The JSON bytes of a `searchJson` answer are
 * transferred, not copied.
 */
import { BroadcastChannel, parentPort, workerData } from 'node:worker_threads';
import { Index, type IndexOptions, type SearchOptions } from '../engine/index.js';
import { indexDir } from '../kernel/data-dir.js';
import { errorToWire, type WireError } from '../kernel/errors.js';
import { lowerThreadPriority } from '../kernel/thread-priority.js';
import type { Scope } from '../kernel/scope.js';
import { ClaimBoard } from './claims.js';
import { searchResourceJson } from './resources.js';

export interface WorkerData {
  dataDir: string;
  indexOptions?: IndexOptions;
  /** Name of the BroadcastChannel on which the pool announces commits. */
  commits: string;
  /** The nice value this thread runs at (Linux keeps one per thread). */
  nice: number;
  /** The pool's claim board. */
  claims: SharedArrayBuffer;
  /** This worker's token on the board, unique among the pool's workers. */
  token: number;
}

/** A commit announced by the pool: the scope's index has a new generation on disk. */
export interface CommitNotice { scope: Scope; generation: number }

export type Task =
  | { op: 'search'; scope: Scope; generation: number; q: string; options: SearchOptions }
  | { op: 'searchJson'; scope: Scope; generation: number; q: string; options: SearchOptions; page: number }
  | { op: 'get'; scope: Scope; generation: number; cid: bigint }
  | { op: 'suggest'; scope: Scope; generation: number; prefix: string; limit: number }
  | { op: 'open'; scopes: Scope[] };

export type Outcome = { ok: true; value: unknown } | { ok: false; error: WireError };

/** What the pool posts, and what the worker answers. */
export interface TaskMessage { seq: number; task: Task }
export interface OutcomeMessage { seq: number; outcome: Outcome }

const data = workerData as WorkerData;
const indexes = new Map<Scope, Promise<Index>>();

function index(scope: Scope): Promise<Index> {
  let idx = indexes.get(scope);
  if (idx === undefined) {
    idx = Index.open(indexDir(data.dataDir, scope), data.indexOptions).then((i) => {
      i.warm();
      return i;
    });
    idx.catch(() => indexes.delete(scope)); // a failed open is tried again by the next task
    indexes.set(scope, idx);
  }
  return idx;
}

/** Adopts the newest commit on disk when `generation` is newer than the one held. */
async function fresh(scope: Scope, generation: number): Promise<Index> {
  const idx = await index(scope);
  if (idx.generation < generation) {
    await idx.refresh();
    idx.warm();
  }
  return idx;
}

const channel = new BroadcastChannel(data.commits);
channel.unref();
channel.onmessage = (event) => {
  const { scope, generation } = (event as { data: CommitNotice }).data;
  if (indexes.has(scope)) void fresh(scope, generation).catch(() => undefined); // the next task retries
};

async function run(task: Task): Promise<Outcome> {
  try {
    if (task.op === 'open') {
      await Promise.allSettled(task.scopes.map((scope) => index(scope))); // an unreadable index fails its own searches only
      return { ok: true, value: undefined };
    }
    const searcher = (await fresh(task.scope, task.generation)).searcher();
    switch (task.op) {
      case 'search': return { ok: true, value: searcher.search(task.q, task.options) };
      case 'searchJson': return { ok: true, value: searchResourceJson(task.q, task.scope, task.page, searcher.search(task.q, task.options)) };
      case 'get': return { ok: true, value: searcher.get(task.cid) };
      case 'suggest': return { ok: true, value: searcher.suggest(task.prefix, task.limit) };
    }
  } catch (err) {
    return { ok: false, error: errorToWire(err) };
  }
}

lowerThreadPriority(data.nice);
const port = parentPort!;
const board = new ClaimBoard(data.claims);
/** Tasks posted to this worker and not yet claimed or dropped, oldest first from `inboxHead`. */
let inbox: TaskMessage[] = [];
let inboxHead = 0;
let working = false;

port.on('message', (m: TaskMessage) => {
  inbox.push(m);
  if (!working) void work();
});

/** Runs the inbox's tasks that this worker claims, one at a time, until it is empty. */
async function work(): Promise<void> {
  working = true;
  while (inboxHead < inbox.length) {
    const m = inbox[inboxHead++]!;
    if (inboxHead === inbox.length) {
      inbox = [];
      inboxHead = 0;
    }
    if (!board.claim(m.seq, data.token)) continue; // another worker runs it, or the pool refused it
    const outcome = await run(m.task);
    const answer: OutcomeMessage = { seq: m.seq, outcome };
    const value = outcome.ok ? outcome.value : undefined;
    port.postMessage(answer, value instanceof Uint8Array ? [value.buffer as ArrayBuffer] : []);
  }
  working = false;
}
