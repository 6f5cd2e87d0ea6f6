/**
 * The open-loop driver of the HTTP benchmarks: Debian's `h2load` (nghttp2-client) at a constant arrival
 * rate (`--rps` per client over HTTP/2 and TLS), rotating over a list of URLs, with every request's
 * latency read from its `--log-file` (h2load's own summary has no percentiles). Requests are sent on
 * schedule whether or not earlier ones were answered (up to `streams` in flight per client), so a slow
 * server shows as latency instead of a lower rate: the measure a closed loop cannot give.
 *
 * The clients start a millisecond apart (`--rate 1 --rate-period 1ms`). Each sends on its own timer, so
 * clients started together (`--duration`) send in step: arrivals came in bursts of up to one request per
 * client (measured: 2 to 7 requests every 2.5 to 9 ms at 800 requests/s), and the size of the bursts, set by
 * how the timers happened to line up, moved the open loop's p99 by a factor of 1.5 between runs.
 * Staggered, the requests of a period arrive about a millisecond apart (the clients' phases still drift
 * with the time each TLS handshake takes, and each run reports the bursts it sent).
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { percentile } from './measure.js';

export interface OpenLoopOptions {
  /** Full URLs (https://host:port/path?query), used in rotation by every client. */
  urls: readonly string[];
  /** Requests per second over all clients. */
  rate: number;
  seconds: number;
  /** Client connections (HTTP/2 sessions), at most; fewer below 10 requests/s per client. Default: one per 100 requests/s. */
  clients?: number;
  /** Streams each client may have in flight. Default 8. */
  streams?: number;
  /**
   * Seconds sent at the rate before the measured `seconds`, left out of the figures: the clients' TLS
   * handshakes and first streams are connection setup, not the steady latency the open loop measures.
   * Default DEFAULT_WARMUP_S.
   */
  warmupS?: number;
  /** Where h2load writes its files (URL list, request log). */
  workDir: string;
  /** Name of this run's files within `workDir`. Default `open-loop`. */
  name?: string;
}

export interface OpenLoopResult {
  /** Requests per second asked for, and achieved (answered ÷ duration). */
  rate: number;
  achieved: number;
  requests: number;
  /** Answers with a status other than 2xx, and requests that got no answer (h2load's failed + errored). */
  non2xx: number;
  failed: number;
  latencyMs: { mean: number; p50: number; p90: number; p99: number; max: number };
  /**
   * How the requests arrived: h2load sends on timers, so requests leave in bursts (sent within
   * `BURST_GAP_US` of one another). Their mean size and the mean time between their starts: a server at
   * utilization u needs about u × `intervalMs` to work off each burst, a floor under the latencies no
   * server can go below.
   */
  bursts: { meanSize: number; intervalMs: number };
}

/** Seconds of an open loop's warm-up, unless its options say otherwise. */
export const DEFAULT_WARMUP_S = 2;

/** Milliseconds between the starts of two clients (h2load's `--rate-period` takes whole milliseconds). */
const CLIENT_STAGGER_MS = 1;

/** Requests per second of one h2load client whose timer fires at its 10 ms floor. */
const MAX_CLIENT_RATE = 100;

/** Requests sent less than this apart (µs) count as one burst. */
const BURST_GAP_US = 200;

/** One request of h2load's log: when it was sent (µs since the epoch), its status (-1: no answer), its latency. */
export interface LogEntry { startUs: number; status: number; latencyMs: number }

/** One line of h2load's `--log-file`: start (µs since the epoch), status (-1: no answer), latency (µs). */
export function parseH2loadLog(text: string): LogEntry[] {
  const out: LogEntry[] = [];
  for (const line of text.split('\n')) {
    const f = line.split('\t');
    if (f.length < 3) continue;
    out.push({ startUs: Number(f[0]), status: Number(f[1]), latencyMs: Number(f[2]) / 1000 });
  }
  return out;
}

/** The requests sent `warmupS` seconds or more after the run's first one. */
export function afterWarmup(entries: readonly LogEntry[], warmupS: number): LogEntry[] {
  let first = Infinity;
  for (const e of entries) if (e.startUs < first) first = e.startUs;
  return entries.filter((e) => e.startUs >= first + warmupS * 1e6);
}

/** The bursts of `entries` (see `OpenLoopResult.bursts`). */
export function burstsOf(entries: readonly LogEntry[]): OpenLoopResult['bursts'] {
  const starts = entries.map((e) => e.startUs).sort((a, b) => a - b);
  if (starts.length === 0) return { meanSize: 0, intervalMs: 0 };
  const firsts = [starts[0]!];
  for (let i = 1; i < starts.length; i++) if (starts[i]! - starts[i - 1]! >= BURST_GAP_US) firsts.push(starts[i]!);
  return { meanSize: starts.length / firsts.length, intervalMs: firsts.length < 2 ? 0 : (firsts.at(-1)! - firsts[0]!) / (firsts.length - 1) / 1000 };
}

export function summarize(entries: readonly LogEntry[], rate: number, seconds: number, failedBeforeAnswer = 0): OpenLoopResult {
  const answered = entries.filter((e) => e.status > 0);
  const times = answered.map((e) => e.latencyMs).sort((a, b) => a - b);
  const mean = times.reduce((s, t) => s + t, 0) / Math.max(1, times.length);
  return {
    rate,
    achieved: answered.length / seconds,
    requests: entries.length,
    non2xx: answered.filter((e) => e.status < 200 || e.status > 299).length,
    failed: entries.length - answered.length + failedBeforeAnswer,
    latencyMs: { mean, p50: percentile(times, 50), p90: percentile(times, 90), p99: percentile(times, 99), max: times.at(-1) ?? NaN },
    bursts: burstsOf(entries),
  };
}

/** Runs h2load in a child process (the caller's event loop stays free: the soak drives other traffic beside it). */
export async function openLoop(o: OpenLoopOptions): Promise<OpenLoopResult> {
  // Each client sends on its own timer, which fires every 1/rate s but at most every 10 ms: one client per
  // 100 requests/s, each one's requests a period apart and the clients' a millisecond apart (see the
  // header). (A whole rate per client: fewer clients at low rates keep the total close.)
  const clients = Math.max(1, Math.min(o.clients ?? Math.ceil(o.rate / MAX_CLIENT_RATE), Math.round(o.rate / 10)));
  const name = o.name ?? 'open-loop';
  const urlFile = `${o.workDir}/${name}.urls`;
  const logFile = `${o.workDir}/${name}.log`;
  writeFileSync(urlFile, o.urls.join('\n') + '\n');
  writeFileSync(logFile, '');
  const perClient = Math.max(1, Math.round(o.rate / clients));
  const warmupS = o.warmupS ?? DEFAULT_WARMUP_S;
  const child = spawn('h2load', [
    '-c', String(clients), '-m', String(o.streams ?? 8), '--rps', String(perClient), '-n', String(Math.round(perClient * clients * (o.seconds + warmupS))),
    '--rate', '1', '--rate-period', `${CLIENT_STAGGER_MS}ms`, '-i', urlFile, '--log-file', logFile,
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
  child.stderr.on('data', (c: Buffer) => { stderr = (stderr + c.toString()).slice(-8192); });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', (err) => reject(new Error(`h2load could not run (${err.message}); install Debian's nghttp2-client (scripts/system-deps.sh)`)));
    child.once('exit', resolve);
  });
  if (code !== 0) throw new Error(`h2load exited ${code}:\n${stdout}\n${stderr}`);
  // requests that never got an answer (stream or connection errors, timeouts) are in the summary only
  const summary = /requests: .*, (\d+) errored, (\d+) timeout/.exec(stdout);
  const unanswered = summary ? Number(summary[1]) + Number(summary[2]) : 0;
  return summarize(afterWarmup(parseH2loadLog(readFileSync(logFile, 'utf8')), warmupS), perClient * clients, o.seconds, unanswered);
}
