/**
 * The supervisor: runs `service` targets as child processes, one current process per target, each on a
 * port of its own on 127.0.0.1 (`PORT` in its environment). A current process that exits is restarted
 * after a capped exponential back-off; its stdout and stderr go straight to `logs/<target>/service.log`
 * (the file descriptor is handed to the child, so logs survive even if Quarry dies first). Children are
 * started through the control plane's spawn helper (./spawner.ts), so a start never stalls the server.
 *
 * Lifecycle decision: children are not re-adopted across Quarry restarts. Every child carries
 * `QUARRY_SUPERVISOR=<control dir>` in its environment; on start, `killOrphans()` finds processes left by
 * a previous run (after a crash) through /proc and stops them, and the controller starts fresh ones for
 * the desired versions. On `close()` every child gets SIGTERM, then SIGKILL after the grace period.
 */
import { readdirSync, readFileSync, renameSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { request } from 'node:http';
import { join } from 'node:path';
import { resolveArgv } from './builder.js';
import type { SpawnedProcess, Spawner } from './spawner.js';

export interface SupervisorOptions {
  /** Starts the children (the control plane's spawn helper). */
  spawner: Spawner;
  /** Marker put in every child's environment; identifies our orphans after a crash. */
  marker: string;
  logsDir(target: string): string;
  /** First restart delay after a crash; doubles per consecutive crash. Default 200 ms. */
  restartInitialMs?: number;
  /** Cap of the restart delay. Default 10 s. */
  restartMaxMs?: number;
  /** A process that ran this long resets the back-off. Default 10 s. */
  restartResetMs?: number;
  /** SIGTERM → SIGKILL grace on stop. Default 5 s. */
  stopGraceMs?: number;
  /** service.log is rotated to service.log.1 when it passes this size at a (re)start. Default 10 MiB. */
  logMaxBytes?: number;
  onRestart?(target: string, version: string, restarts: number): void;
}

export interface ServiceProcess {
  readonly target: string;
  readonly version: string;
  readonly dir: string;
  readonly port: number;
  pid: number;
  state: 'running' | 'backoff' | 'stopped';
  restarts: number;
  /** True once it is the target's current process (restarted on exit); candidates are not. */
  current: boolean;
  child: SpawnedProcess | undefined;
  exited: Promise<void>;
  startedAt: number;
  timer?: NodeJS.Timeout;
}

export async function allocatePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/** One HTTP GET; true on a 2xx answer within `timeoutMs`. */
export function probeHttp(port: number, path: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET', timeout: timeoutMs, agent: false }, (res) => {
      res.resume();
      resolve((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300);
    });
    req.on('timeout', () => { req.destroy(); resolve(false); });
    req.on('error', () => resolve(false));
    req.end();
  });
}

export class Supervisor {
  readonly #o: Required<Omit<SupervisorOptions, 'onRestart'>> & Pick<SupervisorOptions, 'onRestart'>;
  readonly #current = new Map<string, ServiceProcess>();
  readonly #all = new Set<ServiceProcess>();
  #closed = false;

  constructor(o: SupervisorOptions) {
    this.#o = {
      restartInitialMs: 200, restartMaxMs: 10_000, restartResetMs: 10_000, stopGraceMs: 5_000, logMaxBytes: 10 * 1024 * 1024,
      ...o,
    };
  }

  current(target: string): ServiceProcess | undefined { return this.#current.get(target); }

  /** Starts a candidate process for `version` from `dir` (not yet current: not restarted on exit). */
  async start(target: string, version: string, dir: string, command: readonly string[]): Promise<ServiceProcess> {
    const port = await allocatePort();
    const proc: ServiceProcess = {
      target, version, dir, port, pid: 0, state: 'running', restarts: 0, current: false, child: undefined,
      exited: Promise.resolve(), startedAt: Date.now(),
    };
    this.#all.add(proc);
    // Its pid is known when this settles, as it would be after a spawn of our own; a child that could
    // not start has exited (`exited` settled, the health check fails).
    await this.#spawn(proc, command).started.catch(() => undefined);
    return proc;
  }

  #spawn(proc: ServiceProcess, command: readonly string[]): SpawnedProcess {
    const logFile = join(this.#o.logsDir(proc.target), 'service.log');
    try { if (statSync(logFile).size > this.#o.logMaxBytes) renameSync(logFile, `${logFile}.1`); } catch { /* no log yet */ }
    const [cmd, args] = resolveArgv(command);
    const child = this.#o.spawner.spawn({
      command: cmd, args, cwd: proc.dir, output: { file: logFile },
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', TZ: 'UTC',
        PORT: String(proc.port), HOST: '127.0.0.1',
        QUARRY_TARGET: proc.target, QUARRY_VERSION: proc.version, QUARRY_SUPERVISOR: this.#o.marker,
      },
    });
    proc.child = child;
    proc.pid = 0;
    proc.state = 'running';
    proc.startedAt = Date.now();
    child.once('spawn', (pid) => { if (proc.child === child) proc.pid = pid; });
    proc.exited = new Promise<void>((resolve) => {
      child.once('error', () => resolve());
      child.once('exit', () => {
        resolve();
        if (proc.state === 'stopped' || this.#closed) return;
        if (!proc.current) { proc.state = 'stopped'; return; }
        // A crash of the current process: restart with capped exponential back-off.
        if (Date.now() - proc.startedAt >= this.#o.restartResetMs) proc.restarts = 0;
        const delay = Math.min(this.#o.restartMaxMs, this.#o.restartInitialMs * 2 ** proc.restarts);
        proc.restarts++;
        proc.state = 'backoff';
        proc.timer = setTimeout(() => {
          if (proc.state !== 'backoff' || this.#closed) return;
          this.#spawn(proc, command);
          this.#o.onRestart?.(proc.target, proc.version, proc.restarts);
        }, delay);
      });
    });
    return child;
  }

  /** Makes `proc` the target's current process and returns the one it replaces (still running). */
  makeCurrent(proc: ServiceProcess): ServiceProcess | undefined {
    const old = this.#current.get(proc.target);
    proc.current = true;
    this.#current.set(proc.target, proc);
    if (old && old !== proc) old.current = false;
    return old === proc ? undefined : old;
  }

  /** Stops a process: SIGTERM, SIGKILL after the grace period. Idempotent. */
  async stop(proc: ServiceProcess): Promise<void> {
    proc.state = 'stopped';
    if (proc.timer) clearTimeout(proc.timer);
    if (this.#current.get(proc.target) === proc) this.#current.delete(proc.target);
    proc.current = false;
    const child = proc.child;
    if (child?.running) {
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), this.#o.stopGraceMs);
      await proc.exited;
      clearTimeout(t);
    }
    this.#all.delete(proc);
  }

  /** Stops the target's current process, if any. */
  async stopTarget(target: string): Promise<void> {
    const cur = this.#current.get(target);
    if (cur) await this.stop(cur);
  }

  isAlive(proc: ServiceProcess): boolean {
    if (proc.state !== 'running') return false;
    // Asked to start, its pid not known yet: starting counts as alive.
    if (proc.pid === 0) return proc.child?.running ?? false;
    try { process.kill(proc.pid, 0); return true; } catch { return false; }
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#all].map((p) => this.stop(p)));
  }

  /**
   * Stops processes a previous run of this supervisor left behind (found by the marker in
   * /proc/<pid>/environ; Linux only, a no-op elsewhere). Returns their pids.
   */
  async killOrphans(): Promise<number[]> {
    const needle = Buffer.from(`QUARRY_SUPERVISOR=${this.#o.marker}\0`);
    const mine = new Set([...this.#all].map((p) => p.pid));
    const found: number[] = [];
    let entries: string[];
    try { entries = readdirSync('/proc'); } catch { return []; }
    for (const e of entries) {
      if (!/^\d+$/.test(e)) continue;
      const pid = Number(e);
      if (pid === process.pid || mine.has(pid)) continue;
      try {
        const env = readFileSync(`/proc/${pid}/environ`);
        if (env.includes(needle)) found.push(pid);
      } catch { /* gone, or not ours to read */ }
    }
    for (const pid of found) { try { process.kill(pid, 'SIGTERM'); } catch { /* already gone */ } }
    const deadline = Date.now() + this.#o.stopGraceMs;
    for (const pid of found) {
      while (Date.now() < deadline && alive(pid)) await new Promise((r) => setTimeout(r, 20));
      if (alive(pid)) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
    }
    return found;
  }
}

function alive(pid: number): boolean {
  try {
    // A zombie still answers kill(0); its state letter in /proc says it is dead.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (/\) Z /.test(stat)) return false;
    process.kill(pid, 0);
    return true;
  } catch { return false; }
}
