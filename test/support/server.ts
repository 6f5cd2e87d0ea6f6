/**
 * Starts a real `quarry serve` process for a test: port 0, a fresh temporary data directory, JSON-line
 * output parsed, and a `stop()` that sends a signal and waits for the exit code.
 *
 *   import { startServer } from '../support/server.js';
 *   const srv = await startServer();                 // waits for {"event":"ready"}
 *   // srv.url = 'https://127.0.0.1:PORT', srv.ca = the self-signed certificate (PEM) to trust,
 *   // srv.fingerprint256, srv.port, srv.dataDir, srv.pid, srv.events (every JSON line so far), srv.stderr()
 *   const { code } = await srv.stop();               // SIGTERM → graceful drain → code 0
 *
 * Options: `args` (extra `quarry serve` arguments), `env`, `dataDir` (reuse one; not deleted by stop),
 * `waitFor: 'listening'` (do not wait for the corpora), `rateLimit` (default: off, so a busy test is not
 * throttled; pass `{ perSecond, burst }` to test limiting), `setup(dataDir)` (runs before the process
 * starts: e.g. write a fixture corpus or a config file), `timeoutMs` for start-up (default 60 s),
 * `own`: what the own corpus indexes — `'none'` (default: no sources, so start-up is instant), a
 * directory of Markdown/HTML/text docs, or `'default'` (the shipped docs, site and man pages: slow).
 * It is written to `<data>/corpora.json` unless `setup` wrote that file itself.
 * The process is killed (SIGKILL) if the test process exits without calling stop().
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The `quarry` command as users run it: the build in dist/ (scripts/run-tests.mjs rebuilds it when a source changed). */
export const QUARRY_BIN = join(REPO_ROOT, 'bin', 'quarry.js');

export interface StartServerOptions {
  args?: string[];
  env?: Record<string, string>;
  dataDir?: string;
  waitFor?: 'listening' | 'ready';
  rateLimit?: { perSecond: number; burst?: number };
  setup?: (dataDir: string) => void | Promise<void>;
  timeoutMs?: number;
  own?: 'none' | 'default' | string;
}

export interface ServerEvent {
  event: string;
  [k: string]: unknown;
}

export interface TestServer {
  url: string;
  port: number;
  fingerprint256: string;
  /** PEM of the server certificate: pass as `ca` to trust exactly this server. */
  ca: Buffer;
  certFile: string;
  dataDir: string;
  pid: number;
  child: ChildProcess;
  /** Every JSON line the server printed so far, in order. */
  events: ServerEvent[];
  /** Resolves with the first event of this kind printed from now on (or already printed, when `past`). */
  waitForEvent(kind: string, options?: { past?: boolean; timeoutMs?: number }): Promise<ServerEvent>;
  /** What the server wrote to stderr so far. */
  stderr(): string;
  /** Sends `signal` (default SIGTERM), waits for exit, removes the data directory if it made it. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const live = new Set<ChildProcess>();
process.on('exit', () => { for (const c of live) c.kill('SIGKILL'); });

export async function startServer(options: StartServerOptions = {}): Promise<TestServer> {
  const ownDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'quarry-test-'));
  await options.setup?.(dataDir);
  const corporaFile = join(dataDir, 'corpora.json');
  const own = options.own ?? 'none';
  if (own !== 'default' && !existsSync(corporaFile)) {
    writeFileSync(corporaFile, JSON.stringify({ own: { docs: own === 'none' ? null : own, site: null, library: null } }));
  }
  const rate = options.rateLimit;
  const args = [
    QUARRY_BIN, 'serve',
    '--port', '0', '--data', dataDir, '--json',
    '--rate-limit', String(rate?.perSecond ?? 0),
    ...(rate?.burst !== undefined ? ['--rate-burst', String(rate.burst)] : []),
    ...(options.args ?? []),
  ];
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => { stderr += c.toString(); });
  const events: ServerEvent[] = [];
  const waiters: { kind: string; resolve: (e: ServerEvent) => void }[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    let e: ServerEvent;
    try { e = JSON.parse(line) as ServerEvent; } catch { return; }
    events.push(e);
    for (const w of [...waiters]) {
      if (w.kind === e.event || (w.kind === 'ready' && e.event === 'degraded')) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(e);
      }
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    });
  });

  function waitForEvent(kind: string, o: { past?: boolean; timeoutMs?: number } = {}): Promise<ServerEvent> {
    if (o.past) {
      const seen = events.find((e) => e.event === kind);
      if (seen) return Promise.resolve(seen);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`quarry serve printed no ${kind} event within ${o.timeoutMs ?? 60_000} ms; stderr:\n${stderr}`)), o.timeoutMs ?? 60_000);
      waiters.push({ kind, resolve: (e) => { clearTimeout(timer); resolve(e); } });
      void exited.then(({ code, signal }) => {
        clearTimeout(timer);
        reject(new Error(`quarry serve exited (code ${code}, signal ${signal}) before ${kind}; stderr:\n${stderr}`));
      });
    });
  }

  const want = options.waitFor ?? 'ready';
  const started = await waitForEvent(want, { past: true, timeoutMs: options.timeoutMs ?? 60_000 });
  if (started.event === 'degraded') {
    child.kill('SIGKILL');
    throw new Error(`quarry serve could not open its indexes: ${String(started.error)}; stderr:\n${stderr}`);
  }
  const certFile = String(started.certFile);
  return {
    url: String(started.url),
    port: Number(started.port),
    fingerprint256: String(started.fingerprint256),
    ca: readFileSync(certFile),
    certFile,
    dataDir,
    pid: child.pid!,
    child,
    events,
    waitForEvent,
    stderr: () => stderr,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const result = await exited;
      if (ownDir) rmSync(dataDir, { recursive: true, force: true });
      return result;
    },
  };
}
