/**
 * What the service benchmarks (`bench:http`, `soak`) share: a collection imported into the `web` corpus
 * of a temporary data directory through the corpora import (as `quarry import` does), a real
 * `quarry serve` process on it (rate limit off, search workers as asked), HTTPS requests trusting its
 * certificate, wrk runs, and a line describing the machine.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { openCorpora } from '../src/corpora/index.js';
import { readJsonl } from '../src/corpora/jsonl.js';
import { loadCollection, plainQuery, REPO_ROOT, type Collection } from './dataset.js';
import { fmt, percentile } from './measure.js';
import { seededQueries } from './queries.js';
import { parseWrkOutput, type WrkResult } from './wrk.js';

/** A JSONL line longer than this is skipped by the import (BEIR lines are a few KiB). */
const MAX_LINE_BYTES = 16 * 1024 * 1024;
/**
 * The service configuration of a run: no own-corpus sources, so the server starts without indexing the
 * repository's docs and man pages (the benchmarks search only the `web` corpus).
 */
export const BENCH_CONFIG = { corpora: { own: { docs: null, site: null, library: null } } };
/** A cheap request answered within this many ms means the server is idle again. */
const SETTLED_MS = 50;

export function log(tool: string, message: string): void {
  process.stderr.write(`${tool}: ${message}\n`);
}

/** `--name value` from the command line. */
export function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

/** The first argument that is neither an option nor an option's value. */
export function positional(valued: ReadonlySet<string>): string | undefined {
  const argv = process.argv.slice(2);
  return argv.find((a, i) => !a.startsWith('--') && !(i > 0 && valued.has(argv[i - 1]!.slice(2))));
}

/**
 * The collection at `path` and its query mix: its own queries in plain OR form (the rule of the engine
 * benchmark), or 1,000 seeded 1–3-word queries for a bare JSONL corpus.
 */
export async function loadQueryMix(path: string): Promise<{ collection: Collection; queries: string[] }> {
  const collection = await loadCollection(path);
  let queries = collection.queries.map((q) => plainQuery(q.text)).filter((q) => q !== '');
  if (queries.length === 0) queries = seededQueries(collection.docs, 1000, 42).map((q) => q.q);
  return { collection, queries };
}

/** The collection at `path` (a BEIR directory or a JSONL file) into the `web` corpus of `dataDir`. */
export async function importCollection(dataDir: string, path: string): Promise<{ docs: number; seconds: number }> {
  const file = statSync(path).isDirectory() ? join(path, 'corpus.jsonl') : path;
  const started = performance.now();
  const corpora = await openCorpora({ dataDir, config: BENCH_CONFIG });
  try {
    const report = await corpora.ingest('web', readJsonl(file, { maxLineBytes: MAX_LINE_BYTES }), { phase: 'importing' });
    return { docs: report.docs, seconds: (performance.now() - started) / 1000 };
  } finally {
    await corpora.close();
  }
}

export interface Server { child: ChildProcess; url: string; ca: Buffer; pid: number; stop(): Promise<number | null> }

/**
 * The real server, as `npm start` runs it, on `dataDir`, with `workers` search threads (0: searches on
 * the event loop) and `config` merged into the benchmark configuration. Resolves once it is ready.
 * `QUARRY_BENCH_NODE_ARGS` adds node flags to the server, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`.
 */
export async function startServer(dataDir: string, workers: number, config: Record<string, unknown> = {}): Promise<Server> {
  const configFile = join(dataDir, `bench-config-${workers}.json`);
  writeFileSync(configFile, JSON.stringify({ ...BENCH_CONFIG, ...config }));
  const child = spawn(process.execPath, [...(process.env.QUARRY_BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean),
    'bin/quarry.js', 'serve', '--json', '--data', dataDir, '--config', configFile, '--port', '0',
    '--rate-limit', '0', '--search-workers', String(workers),
  ], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, QUARRY_PORT: '0' } });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => { stderr = (stderr + c.toString()).slice(-8192); });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const lines = createInterface({ input: child.stdout! });
  let listening: { url: string; certFile: string } | undefined;
  const ready = new Promise<void>((resolve, reject) => {
    lines.on('line', (line) => {
      let e: Record<string, unknown>;
      try { e = JSON.parse(line) as Record<string, unknown>; } catch { return; }
      if (e.event === 'listening') listening = { url: String(e.url), certFile: String(e.certFile) };
      if (e.event === 'ready') resolve();
      if (e.event === 'degraded') reject(new Error(`the server could not open its indexes: ${String(e.error)}`));
    });
    void exited.then((code) => reject(new Error(`the server exited (${code}) before it was ready:\n${stderr}`)));
  });
  await ready;
  return {
    child,
    pid: child.pid!,
    url: listening!.url,
    ca: readFileSync(listening!.certFile),
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

export interface HttpsAnswer { status: number; body: string }

export function httpsRequest(url: string, ca: Buffer, options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { ca, agent: false, method: options.method ?? 'GET', headers: options.headers ?? {} }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { body += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/**
 * Waits until the server has worked off what the previous run left in flight (wrk stops sending at its
 * deadline, but the server still answers every request it accepted): a cheap request must come back
 * fast before the next run starts, so that no run pays for its predecessor's backlog.
 */
export async function settle(server: Server, cheapPath: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const t0 = performance.now();
    await httpsRequest(server.url + cheapPath, server.ca);
    if (performance.now() - t0 < SETTLED_MS) return;
  }
}

export function wrk(url: string, script: string, connections: number, threads: number, seconds: number): WrkResult {
  const t = Math.max(1, Math.min(threads, connections));
  const r = spawnSync('wrk', [`-t${t}`, `-c${connections}`, `-d${seconds}s`, '--latency', '--timeout', '10s', '-s', script, url], {
    encoding: 'utf8', timeout: (seconds + 30) * 1000,
  });
  if (r.error) throw new Error(`wrk could not run (${r.error.message}); install Debian's wrk (scripts/system-deps.sh)`);
  if (r.status !== 0) throw new Error(`wrk exited ${r.status}:\n${r.stdout}\n${r.stderr}`);
  return parseWrkOutput(r.stdout);
}

/** Resident set of process `pid` in bytes (Linux /proc), or NaN when it cannot be read. */
export function rssOf(pid: number): number {
  try {
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? NaN : Number(kb) * 1024;
  } catch {
    return NaN;
  }
}

export function machine(): string {
  const version = (tool: string, flag: string) => (spawnSync(tool, [flag], { encoding: 'utf8' }).stdout ?? '').split('\n')[0]!.split(' Copyright')[0]!.trim();
  return `node ${process.version}, ${cpus()[0]?.model ?? '?'} × ${cpus().length}, ${Math.round(totalmem() / 2 ** 30)} GiB, ${version('wrk', '--version')}, ${version('h2load', '--version')}`;
}

/** The 1-minute load average, formatted. */
export function load(): string {
  return fmt(loadavg()[0]!, 1);
}

/**
 * Writes a benchmark's section into a document of docs/: replaces the previous run's (between `start`
 * and `end` markers, which `text` carries), else puts it under `heading`, else appends the heading and
 * the section. Nothing outside the markers changes: the rest of the document belongs to others.
 */
export function recordSection(doc: string, heading: string, markers: { start: string; end: string }, text: string): string {
  const file = join(REPO_ROOT, 'docs', doc);
  const old = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const a = old.indexOf(markers.start);
  const b = old.indexOf(markers.end);
  const under = old.indexOf(`\n${heading}\n`);
  let next: string;
  if (a >= 0 && b > a) next = old.slice(0, a) + text + old.slice(b + markers.end.length);
  else if (under >= 0) {
    const at = under + heading.length + 2;
    next = `${old.slice(0, at)}\n${text}\n${old.slice(at)}`;
  } else next = `${old.replace(/\n*$/, '\n')}\n${heading}\n\n${text}\n`;
  writeFileSync(file, next);
  return file;
}

export interface InProcess { qps: number; p50Ms: number; p99Ms: number; searches: number; zeroHits: number }

/** The engine alone, one thread, with the options of `GET /api/search` (page 0, 20 results, snippets). */
export async function measureInProcess(dataDir: string, queries: readonly string[], seconds: number): Promise<InProcess> {
  const corpora = await openCorpora({ dataDir, config: BENCH_CONFIG });
  try {
    const searcher = corpora.searcher('web');
    const run = (q: string) => searcher.search(q, { page: 0, pageSize: 20, snippets: true });
    let zeroHits = 0;
    for (const q of queries) if (run(q).total === 0) zeroHits++; // warm-up pass, and a sanity count
    const times: number[] = [];
    const deadline = performance.now() + seconds * 1000;
    let i = 0;
    const started = performance.now();
    while (performance.now() < deadline) {
      const t0 = performance.now();
      run(queries[i++ % queries.length]!);
      times.push(performance.now() - t0);
    }
    const elapsed = (performance.now() - started) / 1000;
    times.sort((a, b) => a - b);
    return { qps: times.length / elapsed, p50Ms: percentile(times, 50), p99Ms: percentile(times, 99), searches: times.length, zeroHits };
  } finally {
    await corpora.close();
  }
}
