/**
 * How the control plane starts processes (builds, services): through one small helper process
 * (./spawn-helper.ts) that forks on its behalf. A `fork` in the server itself copies the page tables of
 * everything it maps while its event loop waits (6–10 ms a spawn at a few hundred MB resident, ~5 ms more
 * per 100 MB), and every promotion spawns twice; the helper's forks are quick and hold up no search.
 *
 * A `SpawnedProcess` stands for the child: its pid once started, its output (when piped), its exit, and
 * `kill`. The helper starts on the first spawn; like a child of our own, a child that has not exited
 * keeps the process alive, and an idle helper does not. If the helper dies, its children are killed (they
 * can no longer be watched) and reported as exited by SIGKILL; the next spawn starts a new helper.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { getPriority } from 'node:os';
import { threadModule } from '../kernel/thread-module.js';
import type { HelperEvent, HelperRequest } from './spawn-helper.js';

const HELPER_MODULE = threadModule(import.meta.url, 'spawn-helper');

export interface SpawnOptions {
  command: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  /** `pipe`: stdout and stderr come back as `output` events; `{ file }`: both are appended to the file. */
  output: 'pipe' | { file: string };
  /** The child's nice value (0 normal … 19 lowest). */
  nice?: number;
}

/**
 * A child started by the helper. Events: `spawn` (pid), `output` (bytes of stdout or stderr, piped only),
 * `exit` (code, signal: after all output), `error` (it could not start; no `exit` follows).
 */
export class SpawnedProcess extends EventEmitter<{
  spawn: [pid: number]; output: [chunk: Buffer]; exit: [code: number | null, signal: NodeJS.Signals | null]; error: [err: Error];
}> {
  /** Known once started; undefined before and when it could not start. */
  pid: number | undefined;
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  /** Settles with the pid once started, or rejects when it could not start. */
  readonly started: Promise<number>;
  #settle!: { resolve(pid: number): void; reject(err: Error): void };
  #failed = false;

  constructor(readonly id: number, readonly kill: (signal?: NodeJS.Signals) => void) {
    super();
    this.started = new Promise<number>((resolve, reject) => { this.#settle = { resolve, reject }; });
    // A failure to start is both `started`'s rejection and an 'error' event: an owner may watch either.
    this.started.catch(() => undefined);
    this.on('error', () => undefined);
  }

  /** True until it exited (or failed to start). */
  get running(): boolean { return this.exitCode === null && this.signalCode === null && !this.#failed; }

  /** @internal The helper's report. */
  deliver(e: HelperEvent): void {
    switch (e.t) {
      case 'spawned': this.pid = e.pid; this.#settle.resolve(e.pid); this.emit('spawn', e.pid); break;
      case 'output': this.emit('output', Buffer.from(e.chunk.buffer, e.chunk.byteOffset, e.chunk.byteLength)); break;
      case 'failed': {
        this.#failed = true;
        const err = new Error(e.message);
        this.#settle.reject(err);
        this.emit('error', err);
        break;
      }
      case 'exit': this.exitCode = e.code; this.signalCode = e.signal; this.emit('exit', e.code, e.signal); break;
    }
  }
}

export class Spawner {
  /**
   * The nice value of the helper, and so of every child that names none (services): the priority of the
   * thread that made the spawner, read then. A thread that lowers its own priority afterwards (the
   * control plane's) starts the helper first (`start`), so the helper does not inherit the lower one.
   */
  readonly #priority = getPriority(0);
  #helper: ChildProcess | undefined;
  readonly #live = new Map<number, SpawnedProcess>();
  #next = 0;
  #closed = false;

  spawn(o: SpawnOptions): SpawnedProcess {
    const id = this.#next++;
    const p = new SpawnedProcess(id, (signal = 'SIGTERM') => {
      if (p.running) this.#send({ t: 'kill', id, signal });
    });
    if (this.#closed) {
      queueMicrotask(() => p.deliver({ t: 'failed', id, message: 'The spawner is closed.' }));
      return p;
    }
    this.#live.set(id, p);
    const gone = () => { this.#live.delete(id); this.#holdAlive(); };
    p.once('exit', gone);
    p.once('error', gone);
    const req: HelperRequest = { t: 'spawn', id, command: o.command, args: [...o.args], cwd: o.cwd, env: o.env, output: o.output };
    if (o.nice !== undefined) req.nice = o.nice;
    this.#send(req);
    return p;
  }

  /** Starts the helper now rather than at the first spawn. */
  start(): void {
    if (!this.#closed) this.#ensureHelper();
  }

  /** Stops the helper (its children keep running: their owners stop them first). Idempotent. */
  close(): void {
    this.#closed = true;
    const h = this.#helper;
    this.#helper = undefined;
    if (h?.connected) h.disconnect();
  }

  #send(req: HelperRequest): void {
    if (this.#closed) return;
    this.#ensureHelper().send(req);
    this.#holdAlive();
  }

  /** The helper (its process and channel) keeps this process alive exactly while a child has not exited. */
  #holdAlive(): void {
    const h = this.#helper;
    if (!h) return;
    if (this.#live.size > 0) { h.ref(); h.channel?.ref(); } else { h.unref(); h.channel?.unref(); }
  }

  #ensureHelper(): ChildProcess {
    if (this.#helper) return this.#helper;
    // No inherited flags (a profiler's, a loader's): the helper is plain compiled JavaScript.
    // A helper started again later inherits the caller's current priority; it is told the one it should have.
    const h = fork(HELPER_MODULE, [String(this.#priority)], { execArgv: [], serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    h.unref();
    h.channel?.unref();
    h.on('message', (e: HelperEvent) => this.#live.get(e.id)?.deliver(e));
    h.once('exit', () => this.#helperGone(h));
    h.on('error', () => this.#helperGone(h));
    this.#helper = h;
    return h;
  }

  /** The helper died: its children cannot be watched any more, so they are stopped and reported as exited. */
  #helperGone(h: ChildProcess): void {
    if (this.#helper === h) this.#helper = undefined;
    if (this.#closed) return; // closed on purpose, after the owners stopped their children
    for (const p of [...this.#live.values()]) {
      if (p.pid === undefined) { p.deliver({ t: 'failed', id: p.id, message: 'The spawn helper exited.' }); continue; }
      try { process.kill(p.pid, 'SIGKILL'); } catch { /* already gone */ }
      p.deliver({ t: 'exit', id: p.id, code: null, signal: 'SIGKILL' });
    }
  }
}
