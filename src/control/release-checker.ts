/**
 * Checks of live releases against their manifests, run on a thread of their own
 * (./release-check-thread.ts) at the lowest CPU priority. Each check walks the release's files, reads its
 * manifest and hashes what changed (`ReleaseVerifier`); with every reconcile and observation of all
 * targets doing it for every live release, on the serving event loop that work held up searches. Here
 * the event loop only posts a request and takes the answer.
 *
 * The thread starts on the first check and keeps the process alive only while a check is in flight. If
 * it dies, the checks in flight fail (a check that fails counts as not verified) and the next check starts
 * a new thread, with an empty hash cache.
 */
import { Worker } from 'node:worker_threads';
import { threadModule } from '../kernel/thread-module.js';
import type { CheckAnswer, CheckRequest } from './release-check-thread.js';

const THREAD_MODULE = threadModule(import.meta.url, 'release-check-thread');

type Pending = { resolve(value: unknown): void; reject(err: Error): void };

export class ReleaseChecker {
  #worker: Worker | undefined;
  readonly #pending = new Map<number, Pending>();
  #next = 0;
  #closed = false;

  /**
   * Paths of `dir` that differ from the manifest at `manifestPath` (added, removed, changed type, size,
   * content or link target), sorted; undefined when the manifest is unreadable or `dir` does not exist.
   */
  check(manifestPath: string, dir: string): Promise<string[] | undefined> {
    return this.#ask({ op: 'check', manifestPath, dir }) as Promise<string[] | undefined>;
  }

  /** Files hashed by the current thread since it started (its cache at work when this stays put). */
  hashed(): Promise<number> { return this.#ask({ op: 'hashed' }) as Promise<number>; }

  /** Drops what is remembered of `dir` (a pruned release). */
  forget(dir: string): void {
    this.#worker?.postMessage({ op: 'forget', dir } satisfies CheckRequest);
  }

  /** Stops the thread; checks in flight fail. Idempotent. */
  async close(): Promise<void> {
    this.#closed = true;
    const w = this.#worker;
    this.#worker = undefined;
    if (w) await w.terminate();
    this.#failAll(new Error('The release checker is closed.'));
  }

  #ask(req: { op: 'check'; manifestPath: string; dir: string } | { op: 'hashed' }): Promise<unknown> {
    if (this.#closed) return Promise.reject(new Error('The release checker is closed.'));
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      const w = this.#thread();
      w.ref();
      w.postMessage({ ...req, id } satisfies CheckRequest);
    });
  }

  #thread(): Worker {
    if (this.#worker) return this.#worker;
    const w = new Worker(THREAD_MODULE);
    w.unref();
    w.on('message', (a: CheckAnswer) => {
      const p = this.#pending.get(a.id);
      if (!p) return;
      this.#pending.delete(a.id);
      if (this.#pending.size === 0) w.unref();
      if (a.ok) p.resolve(a.value);
      else p.reject(new Error(a.message));
    });
    const died = (err: Error) => {
      if (this.#worker !== w) return;
      this.#worker = undefined;
      this.#failAll(err);
    };
    w.on('error', died);
    w.on('exit', (code) => died(new Error(`The release check thread exited (${code}).`)));
    this.#worker = w;
    return w;
  }

  #failAll(err: Error): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) p.reject(err);
  }
}
