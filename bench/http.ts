/**
 * `npm run bench:http [-- <BEIR dir | corpus.jsonl>] [--workers 0,1,N] [--connections 32] [--duration S]
 *  [--rounds N] [--open S] [--open-share 0.7] [--threads N] [--inproc S] [--floor S] [--record]`
 *
 * The service's search throughput and latency over HTTPS, with searches on the event loop and on the
 * search pool, in one run on one machine:
 *   1. imports the collection (default: SciFact from ../shared/data when present) into the `web` corpus of
 *      a temporary data directory through the corpora import (as `quarry import` does);
 *   2. measures the engine in process: `searcher.search` over the query mix, with the options of
 *      `GET /api/search` (page 0, 20 results, snippets), one thread, after a warm-up pass;
 *   3. for each search-worker count (`--workers`, default `0,1,<cores>`: 0 = every search on the event
 *      loop, the single-threaded server), starts a real server (`quarry serve --json --search-workers W`,
 *      rate limit off) on its own copy of the data directory, all at once, and warms each up;
 *   4. runs Debian's `wrk` (closed loop, HTTP/1.1 over TLS) against `GET /api/search?scope=web&q=…` at each
 *      connection count, rotating over the query mix, on each server in turn, `--rounds` times: the servers
 *      take turns so that a change in the machine's other load falls on all of them, and the figures
 *      compared are medians over the rounds (each round's ratio is taken within the round);
 *   5. with the last server (the pool), runs an open loop: `h2load` (HTTP/2 over TLS) at a constant arrival
 *      rate of `--open-share` (70%) of its median throughput at 32 connections;
 *   6. with the first server, runs wrk once with a query that matches nothing: the HTTP layer alone;
 *   7. prints every row with the machine's load average when it ran, and the aims: at 32 connections the
 *      pool's throughput ≥ 1.6× the single-threaded server's, its p99 ≤ 2× its mean (no convoys), and the
 *      open loop's p99 ≤ 10 ms. `--record` writes the section into docs/benchmarks.md.
 *
 * Queries: the collection's own queries in plain OR form (bench/dataset.ts `plainQuery`, the rule the
 * engine benchmark uses), URL-encoded. A bare JSONL corpus gets 1,000 seeded 1–3-word queries.
 * On a shared machine, run it when the load average is below the core count, and compare rows within a
 * run: every row reports the 1-minute load average next to its figures.
 */
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultCollectionPath } from './dataset.js';
import { DEFAULT_WARMUP_S, openLoop, type OpenLoopResult } from './h2load.js';
import { fmt } from './measure.js';
import {
  arg, httpsRequest, importCollection, load, loadQueryMix, log as logAs, machine, measureInProcess, positional, recordSection, settle, startServer, wrk,
  type InProcess, type Server,
} from './service-run.js';
import { rotationScript, type WrkResult } from './wrk.js';

/** The aims at this connection count. */
const AIM = { connections: 32, minSpeedup: 1.6, maxP99OverMean: 2, maxOpenP99Ms: 10 };
/** A one-word query no corpus holds, shorter than 4 letters so no spelling correction is tried: the search ends at the dictionary lookup. */
const FLOOR_QUERY = 'qzx';
const SECTION_HEADING = '## HTTP benchmark (`npm run bench:http`)';
const SECTION_START = '<!-- bench:http:start -->';
const SECTION_END = '<!-- bench:http:end -->';

const log = (message: string) => logAs('bench:http', message);

interface Options {
  path: string;
  durationS: number;
  warmupS: number;
  inprocS: number;
  /** Seconds of the HTTP-layer-only run (a query matching nothing); 0 skips it. */
  floorS: number;
  /** Seconds of the open-loop run; 0 skips it. */
  openS: number;
  /** Arrival rate of the open loop, as a share of the closed-loop throughput at 32 connections. */
  openShare: number;
  connections: number[];
  /** Times each server is measured at each connection count, in turn with the others. */
  rounds: number;
  /** Search-worker counts, one server each; the last is the pool the open loop measures. */
  workers: number[];
  threads: number;
  record: boolean;
}

function options(): Options {
  const valued = new Set(['duration', 'connections', 'threads', 'inproc', 'warmup', 'floor', 'workers', 'open', 'open-share', 'rounds']);
  const path = positional(valued) ?? defaultCollectionPath('scifact');
  if (!path) throw new Error('no collection given and ../shared/data/scifact is absent: npm run bench:http -- <BEIR dir | corpus.jsonl>');
  const list = (raw: string) => raw.split(',').map(Number);
  return {
    path,
    durationS: Number(arg('duration') ?? 6),
    rounds: Number(arg('rounds') ?? 3),
    warmupS: Number(arg('warmup') ?? 3),
    inprocS: Number(arg('inproc') ?? 5),
    floorS: Number(arg('floor') ?? 5),
    openS: Number(arg('open') ?? 20),
    openShare: Number(arg('open-share') ?? 0.7),
    connections: list(arg('connections') ?? String(AIM.connections)),
    workers: list(arg('workers') ?? `0,1,${availableParallelism()}`),
    threads: Number(arg('threads') ?? 1),
    record: process.argv.includes('--record'),
  };
}

interface Row { round: number; workers: number; load: number; wrk: WrkResult }
interface OpenRow { workers: number; load: number; result: OpenLoopResult }

const workersLabel = (w: number) => (w === 0 ? '0 (event loop)' : String(w));

function section(o: Options, name: string, docs: number, queries: number, inproc: InProcess, rows: Row[], open: OpenRow | undefined,
  floor: WrkResult | undefined, loads: { before: number; after: number }): string {
  const lines = [
    SECTION_START,
    `\`npm run bench:http\` (bench/http.ts), ${new Date().toISOString().slice(0, 10)}: ${name}, ${docs} documents in the \`web\` corpus,`,
    `${queries} queries (plain OR form, URL-encoded, in rotation) against \`GET /api/search?scope=web&q=…\` of a real`,
    `\`quarry serve\` process over TLS 1.3 on loopback (rate limit off), one server per search-worker count.`,
    `Closed loop: Debian's \`wrk\` (HTTP/1.1, ${o.threads} thread${o.threads === 1 ? '' : 's'}, ${o.durationS} s per row after a warm-up), the servers in turn, ${o.rounds} round${o.rounds === 1 ? '' : 's'}.`,
    `Open loop: \`h2load --rps\` (HTTP/2, constant arrival rate, clients started 1 ms apart, ${o.openS} s measured after ${DEFAULT_WARMUP_S} s of connection set-up). In-process: \`searcher.search\` over the same mix`,
    `with the handler's options (page 0, 20 results, snippets), one thread, ${o.inprocS} s. ${machine()}.`,
    `Server, load generators and the benchmark share the machine's cores. Load average (1-minute): ${fmt(loads.before, 1)} before the run,`,
    `${fmt(loads.after, 1)} after it, and per row below; figures taken at a load above the core count measure the machine's other work as much as Quarry.`,
    '',
    `In-process: **${fmt(inproc.qps, 0)} searches/s** (p50 ${fmt(inproc.p50Ms)} ms, p99 ${fmt(inproc.p99Ms)} ms).`,
    '',
    '| round | search workers | connections | requests/s | mean ms | p50 ms | p99 ms | max ms | p99 / mean | non-2xx | socket errors | load avg |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(({ round, workers, load: l, wrk: r }) => {
      const errors = r.socketErrors.connect + r.socketErrors.read + r.socketErrors.write + r.socketErrors.timeout;
      return `| ${round} | ${workersLabel(workers)} | ${r.connections} | ${fmt(r.requestsPerSecond, 0)} | ${fmt(r.latencyMs.mean)} | ${fmt(r.latencyMs.p50)} | ${fmt(r.latencyMs.p99)} | ${fmt(r.latencyMs.max)} | ${fmt(r.latencyMs.p99 / r.latencyMs.mean)} | ${r.non2xx} | ${errors} | ${fmt(l, 1)} |`;
    }),
    '',
  ];
  if (open) {
    const r = open.result;
    lines.push(`Open loop, ${workersLabel(open.workers)} search workers, ${fmt(r.rate, 0)} requests/s asked (${fmt(100 * o.openShare, 0)}% of its median closed-loop throughput at ${AIM.connections} connections), `
      + `${fmt(r.achieved, 0)} answered per second: mean ${fmt(r.latencyMs.mean)} ms, p50 ${fmt(r.latencyMs.p50)} ms, p90 ${fmt(r.latencyMs.p90)} ms, **p99 ${fmt(r.latencyMs.p99)} ms**, max ${fmt(r.latencyMs.max)} ms; `
      + `non-2xx ${r.non2xx}, unanswered ${r.failed}; load average ${fmt(open.load, 1)}. `
      + `h2load sent in bursts: ${fmt(r.bursts.meanSize, 1)} requests every ${fmt(r.bursts.intervalMs, 1)} ms on average, so each burst alone keeps the server busy for about `
      + `${fmt(o.openShare * r.bursts.intervalMs, 1)} ms at ${fmt(100 * o.openShare, 0)}% of capacity: the last request of a burst waits that long before any other cause of delay.`, '');
  }
  if (floor) {
    lines.push(`The HTTP layer alone (a query that matches nothing, so the engine does almost no work; ${floor.connections} connections, searches on the event loop): `
      + `${fmt(floor.requestsPerSecond, 0)} requests/s, p50 ${fmt(floor.latencyMs.p50)} ms, p99 ${fmt(floor.latencyMs.p99)} ms, non-2xx ${floor.non2xx}.`, '');
  }
  const at = (w: number, round: number) => rows.find((r) => r.workers === w && r.round === round && r.wrk.connections === AIM.connections)?.wrk;
  const rounds = [...new Set(rows.map((r) => r.round))];
  /** The median over the rounds of `f`, for the rounds where it is defined. */
  const median = (f: (round: number) => number | undefined): number | undefined => {
    const xs = rounds.map(f).filter((x): x is number => x !== undefined).sort((a, b) => a - b);
    return xs.length === 0 ? undefined : xs.length % 2 === 1 ? xs[(xs.length - 1) / 2] : (xs[xs.length / 2 - 1]! + xs[xs.length / 2]!) / 2;
  };
  const pool = o.workers.at(-1)!;
  const aims: string[] = [];
  const throughputs = o.workers.map((w) => `${workersLabel(w)}: ${fmt(median((r) => at(w, r)?.requestsPerSecond) ?? NaN, 0)}`);
  aims.push(`median requests/s by search workers — ${throughputs.join(', ')}`);
  const ratio = (w: number) => median((r) => {
    const a = at(pool, r);
    const b = at(w, r);
    return a && b ? a.requestsPerSecond / b.requestsPerSecond : undefined;
  });
  const speedup = pool !== 0 ? ratio(0) : undefined;
  if (speedup !== undefined) aims.push(`throughput with ${pool} search workers ÷ on the event loop (median of the rounds' ratios): **${fmt(speedup)}×** (aim ≥ ${AIM.minSpeedup}×: ${speedup >= AIM.minSpeedup ? 'met' : 'not met'})`);
  const overOne = pool !== 1 ? ratio(1) : undefined;
  if (overOne !== undefined) aims.push(`÷ with 1 search worker: ${fmt(overOne)}×`);
  const spread = median((r) => { const a = at(pool, r); return a ? a.latencyMs.p99 / a.latencyMs.mean : undefined; });
  if (spread !== undefined) aims.push(`p99 ÷ mean with ${pool} search workers (median): **${fmt(spread)}** (aim ≤ ${AIM.maxP99OverMean}: ${spread <= AIM.maxP99OverMean ? 'met' : 'not met'})`);
  if (open) aims.push(`open-loop p99: **${fmt(open.result.latencyMs.p99)} ms** (aim ≤ ${AIM.maxOpenP99Ms} ms: ${open.result.latencyMs.p99 <= AIM.maxOpenP99Ms ? 'met' : 'not met'})`);
  lines.push(`At ${AIM.connections} connections: ${aims.join('; ')}.`, '');
  lines.push(SECTION_END);
  return lines.join('\n');
}

async function main(): Promise<void> {
  const o = options();
  const { collection, queries } = await loadQueryMix(o.path);
  log(`${collection.name}: ${collection.docs.length} documents, ${queries.length} queries; ${machine()}; load average ${load()}`);

  const loadBefore = loadavg()[0]!;
  const dataDir = mkdtempSync(join(tmpdir(), 'quarry-bench-http-'));
  try {
    const imported = await importCollection(dataDir, o.path);
    log(`imported ${imported.docs} documents into the web corpus in ${fmt(imported.seconds, 1)} s`);

    const inproc = await measureInProcess(dataDir, queries, o.inprocS);
    log(`in-process: ${fmt(inproc.qps, 0)} searches/s, p50 ${fmt(inproc.p50Ms)} ms, p99 ${fmt(inproc.p99Ms)} ms (${inproc.zeroHits} queries match nothing)`);

    const paths = queries.map((q) => `/api/search?scope=web&q=${encodeURIComponent(q)}`);
    const script = join(dataDir, 'rotation.lua');
    writeFileSync(script, rotationScript(paths));
    const floorPath = `/api/search?scope=web&q=${FLOOR_QUERY}`;
    const floorScript = join(dataDir, 'floor.lua');
    writeFileSync(floorScript, rotationScript([floorPath]));

    // One server per worker count, each on its own copy of the data directory, all started before any is measured.
    const servers: { workers: number; server: Server }[] = [];
    const rows: Row[] = [];
    let floor: WrkResult | undefined;
    let open: OpenRow | undefined;
    try {
      for (const [i, workers] of o.workers.entries()) {
        const dir = i === 0 ? dataDir : `${dataDir}-${i}`;
        if (i > 0) cpSync(dataDir, dir, { recursive: true });
        const server = await startServer(dir, workers);
        servers.push({ workers, server });
        log(`server with ${workers} search workers ready at ${server.url}; load average ${load()}`);
        const probe = await httpsRequest(server.url + paths[0], server.ca);
        const found = (JSON.parse(probe.body) as { nresults?: number }).nresults;
        if (probe.status !== 200 || !(Number(found) > 0)) throw new Error(`the first query did not find anything: ${probe.status} ${probe.body.slice(0, 300)}`);
        // The floor first, on an idle server: TLS, HTTP, routing, JSON and the handler, with a search that
        // finds nothing at once.
        if (i === 0 && o.floorS > 0) {
          floor = wrk(server.url, floorScript, AIM.connections, o.threads, o.floorS);
          log(`HTTP layer alone: ${fmt(floor.requestsPerSecond, 0)} requests/s, p99 ${fmt(floor.latencyMs.p99)} ms`);
        }
        if (o.warmupS > 0) wrk(server.url, script, 8, o.threads, o.warmupS);
      }
      for (let round = 1; round <= o.rounds; round++) {
        for (const c of o.connections) {
          for (const { workers, server } of servers) {
            await settle(server, floorPath);
            const r = wrk(server.url, script, c, o.threads, o.durationS);
            rows.push({ round, workers, load: loadavg()[0]!, wrk: r });
            log(`round ${round}, ${workers} workers, ${c} connections: ${fmt(r.requestsPerSecond, 0)} requests/s, mean ${fmt(r.latencyMs.mean)} ms, p99 ${fmt(r.latencyMs.p99)} ms, non-2xx ${r.non2xx}; load average ${load()}`);
          }
        }
      }
      const { workers, server } = servers.at(-1)!;
      const capacities = rows.filter((r) => r.workers === workers && r.wrk.connections === AIM.connections).map((r) => r.wrk.requestsPerSecond).sort((a, b) => a - b);
      if (o.openS > 0 && capacities.length > 0) {
        const capacity = capacities[Math.floor(capacities.length / 2)]!;
        await settle(server, floorPath);
        const result = await openLoop({ urls: paths.map((p) => server.url + p), rate: o.openShare * capacity, seconds: o.openS, workDir: dataDir });
        open = { workers, load: loadavg()[0]!, result };
        log(`open loop at ${fmt(result.rate, 0)} requests/s: p50 ${fmt(result.latencyMs.p50)} ms, p99 ${fmt(result.latencyMs.p99)} ms, non-2xx ${result.non2xx}, unanswered ${result.failed}; load average ${load()}`);
      }
    } finally {
      for (const { workers, server } of servers) {
        const code = await server.stop();
        if (code !== 0) log(`warning: the server with ${workers} search workers exited with ${code} on SIGTERM`);
      }
      for (let i = 1; i < o.workers.length; i++) rmSync(`${dataDir}-${i}`, { recursive: true, force: true });
    }

    const text = section(o, collection.name, imported.docs, queries.length, inproc, rows, open, floor, { before: loadBefore, after: loadavg()[0]! });
    console.log(text);
    if (o.record) log(`recorded in ${recordSection('benchmarks.md', SECTION_HEADING, { start: SECTION_START, end: SECTION_END }, text)}`);
    const bad = [...rows.filter((r) => r.wrk.non2xx > 0).map((r) => `${r.workers} workers at ${r.wrk.connections} connections, round ${r.round} (${r.wrk.non2xx})`),
      ...(open && open.result.non2xx + open.result.failed > 0 ? [`the open loop (${open.result.non2xx + open.result.failed})`] : [])];
    if (bad.length > 0) {
      log(`failed requests: ${bad.join(', ')}: must be 0`);
      process.exitCode = 1;
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
