/**
 * `npm run bench:http:phases [-- <BEIR dir | corpus.jsonl>] [--duration S] [--connections 1,8,32,128]
 *  [--threads N] [--inproc S] [--floor S] [--record]`
 *
 * The service's search throughput over HTTPS against the engine's own, in one run on one machine:
 *   1. imports the collection (default: SciFact from ../shared/data when present) into the `web` corpus of
 *      a temporary data directory through the corpora import (`openCorpora` + `ingest`, as
 *      `quarry import` does);
 *   2. measures the engine in process: `searcher.search` over the query mix, with the options the
 *      `/api/search` handler uses (page 0, 20 results, snippets), single-threaded after a warm-up pass;
 *   3. starts the real server (`quarry serve --json`, rate limit off) on that data directory;
 *   4. runs Debian's `wrk` against `GET /api/search?scope=web&q=…` over TLS on loopback at each connection
 *      count, rotating over the same query mix (wrk speaks HTTP/1.1), after a warm-up run;
 *   5. runs wrk once more with a query that matches nothing: the cost of the HTTP layer alone;
 *   6. prints requests/s, latency percentiles, non-2xx responses and socket errors, and the ratio of HTTP
 *      throughput to in-process throughput; `--record` writes the section into docs/benchmarks.md;
 *   7. the control-plane phase (`--control S`, 0 skips it): with 14 targets deployed (one static target
 *      carrying 1,000 extra files, 16 MiB), search load at 32 connections for S seconds on a quiet
 *      control plane, then S seconds while the control plane rebuilds and promotes three small targets in
 *      turn (a real input change each time; one build and promotion started a second at most, each
 *      waiting for the previous) and, beside them, reconciles all 41 targets (`POST /api/reconcile`) and
 *      observes all 41 (`GET /api/deploy_status`), at most once a second;
 *      quiet and busy alternate twice (machine load drifts). Aim: mean p99 busy ≤ 1.5× mean p99 quiet.
 *   8. the binary RPC phase (`--rpc S`, 0 skips it): at 1 and 32 connections, the same query mix as
 *      `GET /api/search` (JSON), as binary `Call`s to `POST /api/rpc` (`quarry.v1.SearchService/Search`,
 *      `application/proto`) and in the Connect GET form of that method, in three rounds of REST, RPC,
 *      GET, GET, RPC, REST runs of S/2 seconds on the same server. Aim: the RPC at least as fast.
 *
 * Queries: the collection's own queries in plain OR form (bench/dataset.ts `plainQuery`, the rule the
 * engine benchmark uses), URL-encoded. A bare JSONL corpus gets 1,000 seeded 1–3-word queries.
 * The aim (issue 3): at 32 connections, at least 60% of the in-process throughput and p99 under 25 ms.
 */
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultCollectionPath, REPO_ROOT } from './dataset.js';
import { prepareDeploy } from './control-fixture.js';
import { openLoop, type OpenLoopResult } from './h2load.js';
import { fmt } from './measure.js';
import {
  arg, httpsRequest, importCollection, loadQueryMix, log as logAs, machine, measureInProcess, positional, recordSection, settle, startServer, wrk, type InProcess, type Server,
} from './service-run.js';
import { parseWrkOutput, postRotationScript, rotationScript, type WrkResult } from './wrk.js';
import { create, toBinary } from '@bufbuild/protobuf';
import { CallSchema } from '../src/rpc/gen/quarry/v1/call_pb.js';
import { Scope, SearchRequestSchema } from '../src/rpc/gen/quarry/v1/search_pb.js';

/** The issue's aim at this connection count. */
const AIM = { connections: 32, minRatio: 0.6, maxP99Ms: 25 };
/** A one-word query no corpus holds, shorter than 4 letters so no spelling correction is tried: the search ends at the dictionary lookup. */
const FLOOR_QUERY = 'qzx';
/** The control-plane phase's aim: search p99 with control-plane activity ≤ this × the quiet p99. */
const CONTROL_AIM = 1.5;
/** Targets deployed before the control-plane phase; CONTROL_CHURN are rebuilt and promoted during it (docportal, the large one, is checked by every reconcile and observation). */
const CONTROL_TARGETS = ['docportal', 'sites', 'gengw', 'email', 'office', 'siteedit', 'siteintake', 'studio', 'survey', 'toolchain', 'writer', 'meshgw', 'vaultgw', 'toolsapi'];
const CONTROL_CHURN = ['sites', 'gengw', 'email'];
/** One build and promotion of a churn target starts at most this often (a deployment pipeline at 3,600 an hour). */
const CHURN_INTERVAL_MS = 1000;
/** The open loop's arrival rate, as a share of the quiet closed loop's throughput. */
const OPEN_SHARE = 0.7;
const ALL_MGMT = 'mgmt.read,mgmt.build,mgmt.stage,mgmt.deploy,mgmt.rollback,mgmt.reconcile,mgmt.restart';
const SECTION_HEADING = '## HTTP phases: control-plane activity and the binary RPC (`npm run bench:http:phases`)';
const SECTION_START = '<!-- bench:http-phases:start -->';
const SECTION_END = '<!-- bench:http-phases:end -->';

interface Options {
  path: string;
  durationS: number;
  warmupS: number;
  inprocS: number;
  /** Seconds of the HTTP-layer-only run (a query matching nothing); 0 skips it. */
  floorS: number;
  connections: number[];
  threads: number;
  record: boolean;
  /** Seconds of each half of the control-plane phase; 0 skips it. */
  controlS: number;
  /** Seconds of each run of the RPC-versus-REST phase; 0 skips it. */
  rpcS: number;
}

function options(): Options {
  const valued = new Set(['duration', 'connections', 'threads', 'inproc', 'warmup', 'floor', 'control', 'rpc']);
  const path = positional(valued) ?? defaultCollectionPath('scifact');
  if (!path) throw new Error('no collection given and ../shared/data/scifact is absent: npm run bench:http:phases -- <BEIR dir | corpus.jsonl>');
  return {
    path,
    durationS: Number(arg('duration') ?? 10),
    warmupS: Number(arg('warmup') ?? 3),
    inprocS: Number(arg('inproc') ?? 5),
    floorS: Number(arg('floor') ?? 5),
    connections: (arg('connections') ?? '1,8,32,128').split(',').map(Number),
    threads: Number(arg('threads') ?? 1),
    record: process.argv.includes('--record'),
    controlS: Number(arg('control') ?? 15),
    rpcS: Number(arg('rpc') ?? 10),
  };
}

const log = (message: string) => logAs('bench:http:phases', message);

/** wrk without blocking this process, so the control-plane activity can run beside it. */
function wrkAsync(url: string, script: string, connections: number, threads: number, seconds: number): Promise<WrkResult> {
  const t = Math.max(1, Math.min(threads, connections));
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', [`-t${t}`, `-c${connections}`, `-d${seconds}s`, '--latency', '--timeout', '10s', '-s', script, url], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.on('data', (c: Buffer) => { out += c.toString(); });
    child.stderr!.on('data', (c: Buffer) => { out += c.toString(); });
    child.on('error', (err) => reject(new Error(`wrk could not run (${err.message}); install Debian's wrk (scripts/system-deps.sh)`)));
    child.on('exit', (code) => { if (code === 0) resolve(parseWrkOutput(out)); else reject(new Error(`wrk exited ${code}:\n${out}`)); });
  });
}

/** A capability with every mgmt.* right, minted on the data directory as an operator would. */
function mintCap(dataDir: string): string {
  const r = spawnSync(process.execPath, ['bin/quarry.js', 'cap', 'mint', '--rights', ALL_MGMT, '--ttl', '2h', '--data', dataDir], { cwd: REPO_ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`cap mint failed: ${r.stderr}`);
  return r.stdout.trim();
}

/**
 * One keep-alive connection pool per server for the control plane's requests, as `quarry build`/`deploy`
 * keep theirs (src/cli/control.ts): a new TLS handshake per request and per poll would measure the
 * driver's handshakes, on the server's event loop, rather than the control plane.
 */
const agents = new WeakMap<Server, https.Agent>();
function agentOf(server: Server): https.Agent {
  let agent = agents.get(server);
  if (!agent) {
    agent = new https.Agent({ keepAlive: true, ca: server.ca, minVersion: 'TLSv1.3' });
    agents.set(server, agent);
  }
  return agent;
}

function api(server: Server, cap: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = https.request(server.url + path, {
      method, agent: agentOf(server),
      headers: { authorization: `Bearer ${cap}`, ...(data ? { 'content-type': 'application/json' } : {}) },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text || '{}') as Record<string, unknown> }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

/** Starts an operation and waits for it; throws unless it succeeds. */
async function operation(server: Server, cap: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const r = await api(server, cap, 'POST', path, body);
  if (r.status !== 202) throw new Error(`${path}: ${r.status} ${JSON.stringify(r.json)}`);
  for (;;) {
    const op = (await api(server, cap, 'GET', `/api/ops/${String(r.json.op_id)}`)).json;
    if (op.state === 'succeeded') return op;
    if (op.state === 'failed') throw new Error(`${path} ${JSON.stringify(body)} failed: ${JSON.stringify(op.error)}\n${String(op.log)}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

async function ship(server: Server, cap: string, target: string): Promise<void> {
  const built = await operation(server, cap, '/api/build', { target });
  await operation(server, cap, '/api/upload', { target, version: built.version });
  await operation(server, cap, '/api/deploy', { target, version: built.version });
}

/** A real input change of a template target: a new version to build and promote. */
function changeInput(repo: string, target: string, round: number): void {
  const dir = join(repo, 'deploy', 'targets', target);
  if (existsSync(join(dir, 'content.md'))) { appendFileSync(join(dir, 'content.md'), `\nRound ${round} of the benchmark.\n`); return; }
  const file = join(dir, 'config.json');
  const config = JSON.parse(readFileSync(file, 'utf8')) as { message: string };
  config.message = `${config.message.replace(/ \(round \d+\)$/, '')} (round ${round})`;
  writeFileSync(file, JSON.stringify(config, null, 2));
}

interface ControlPhase {
  /** Alternating runs, quiet first: machine load drifts, so each condition is measured twice. */
  quiet: WrkResult[];
  busy: WrkResult[];
  /** The same at a constant arrival rate (`openRate`, 70% of the quiet closed loop's throughput). */
  openQuiet: OpenLoopResult[];
  openBusy: OpenLoopResult[];
  openRate: number;
  promotions: number;
  reconciles: number;
  observations: number;
  setupSeconds: number;
}

const mean = (xs: readonly number[]): number => xs.reduce((a, x) => a + x, 0) / xs.length;
const meanP99 = (runs: readonly { latencyMs: { p99: number } }[]): number => mean(runs.map((r) => r.latencyMs.p99));

/**
 * Step 7: search p99 on a quiet control plane and while it builds, promotes, reconciles and observes,
 * first in a closed loop (wrk, 32 connections: the machine saturated, so every core-second the control
 * plane takes shows as lost throughput and longer queues), then in an open loop (h2load at a constant
 * 70% of the quiet throughput: the same work in both conditions, so the difference is the control
 * plane's interference alone, as a service with headroom sees it).
 */
async function controlPhase(server: Server, cap: string, repo: string, paths: readonly string[], script: string, workDir: string, o: Options): Promise<ControlPhase> {
  const started = performance.now();
  for (const t of CONTROL_TARGETS) await ship(server, cap, t);
  const setupSeconds = (performance.now() - started) / 1000;
  log(`control plane: ${CONTROL_TARGETS.length} targets deployed in ${fmt(setupSeconds, 1)} s`);
  const cheap = `/api/search?scope=web&q=${FLOOR_QUERY}`;
  const phase: ControlPhase = { quiet: [], busy: [], openQuiet: [], openBusy: [], openRate: 0, promotions: 0, reconciles: 0, observations: 0, setupSeconds };
  let round = 0;

  /** Runs `measure` while the control plane churns and resyncs; stops them when it ends. */
  async function busyWhile<T>(measure: () => Promise<T>): Promise<T> {
    let stop = false;
    // A fixed rate rather than back to back: the faster the control plane, the more work an unpaced loop
    // would give it, and the more of the machine it would take from search.
    const churn = (async () => {
      while (!stop) {
        round++;
        for (const t of CONTROL_CHURN) {
          if (stop) break;
          const t0 = performance.now();
          changeInput(repo, t, round);
          await ship(server, cap, t);
          phase.promotions++;
          await new Promise((res) => setTimeout(res, Math.max(0, CHURN_INTERVAL_MS - (performance.now() - t0))));
        }
      }
    })();
    const resync = (async () => {
      while (!stop) {
        const t0 = performance.now();
        // Every target reconciled (files checked against their manifests), then every target observed.
        await operation(server, cap, '/api/reconcile');
        phase.reconciles++;
        const st = await api(server, cap, 'GET', '/api/deploy_status');
        if (st.status !== 200 || (st.json.targets as unknown[]).length !== 41) throw new Error(`deploy_status: ${st.status}`);
        phase.observations++;
        await new Promise((res) => setTimeout(res, Math.max(0, 1000 - (performance.now() - t0))));
      }
    })();
    try {
      return await measure();
    } finally {
      stop = true;
      await Promise.all([churn, resync]);
    }
  }

  const activity = (before: ControlPhase) => `${phase.promotions - before.promotions} promotions, ${phase.reconciles - before.reconciles} reconciles and `
    + `${phase.observations - before.observations} observations of all 41 targets`;
  for (let i = 0; i < 2; i++) {
    await settle(server, cheap);
    const quiet = await wrkAsync(server.url, script, AIM.connections, o.threads, o.controlS);
    phase.quiet.push(quiet);
    log(`closed loop, quiet control plane: p99 ${fmt(quiet.latencyMs.p99)} ms, ${fmt(quiet.requestsPerSecond, 0)} requests/s (load ${fmt(loadavg()[0]!, 1)})`);
    await settle(server, cheap);
    const before = { ...phase };
    const busy = await busyWhile(() => wrkAsync(server.url, script, AIM.connections, o.threads, o.controlS));
    phase.busy.push(busy);
    log(`closed loop, busy control plane: p99 ${fmt(busy.latencyMs.p99)} ms, ${fmt(busy.requestsPerSecond, 0)} requests/s (load ${fmt(loadavg()[0]!, 1)}); ${activity(before)}`);
  }
  const capacity = Math.min(...phase.quiet.map((r) => r.requestsPerSecond));
  phase.openRate = Math.round(OPEN_SHARE * capacity);
  const urls = paths.map((p) => server.url + p);
  for (let i = 0; i < 2; i++) {
    await settle(server, cheap);
    const quiet = await openLoop({ urls, rate: phase.openRate, seconds: o.controlS, workDir, name: `control-quiet-${i}` });
    phase.openQuiet.push(quiet);
    log(`open loop at ${phase.openRate}/s, quiet control plane: p99 ${fmt(quiet.latencyMs.p99)} ms, non-2xx ${quiet.non2xx}, unanswered ${quiet.failed} (load ${fmt(loadavg()[0]!, 1)})`);
    await settle(server, cheap);
    const before = { ...phase };
    const busy = await busyWhile(() => openLoop({ urls, rate: phase.openRate, seconds: o.controlS, workDir, name: `control-busy-${i}` }));
    phase.openBusy.push(busy);
    log(`open loop at ${phase.openRate}/s, busy control plane: p99 ${fmt(busy.latencyMs.p99)} ms, non-2xx ${busy.non2xx}, unanswered ${busy.failed} (load ${fmt(loadavg()[0]!, 1)}); ${activity(before)}`);
  }
  return phase;
}

/** Connection counts of the RPC phase. */
const RPC_CONNECTIONS = [1, 32];
/** Rounds of REST, RPC, RPC, REST at each connection count. */
const RPC_ROUNDS = 3;

interface RpcRow { connections: number; rest: WrkResult; rpc: WrkResult; get: WrkResult }

/**
 * Step 8: the same searches as JSON over REST, as binary Calls over POST /api/rpc, and in the Connect
 * GET form of the same method, alternating at each connection count so all see the same machine load.
 */
async function rpcPhase(server: Server, scripts: { rest: string; rpc: string; get: string }, o: Options): Promise<RpcRow[]> {
  const rows: RpcRow[] = [];
  const cheap = `/api/search?scope=web&q=${FLOOR_QUERY}`;
  const run = (script: string, c: number) => wrk(server.url, script, c, o.threads, Math.max(1, Math.round(o.rpcS / 2)));
  const forms = ['rest', 'rpc', 'get'] as const;
  for (const c of RPC_CONNECTIONS) {
    // REST, RPC, GET, GET, RPC, REST, RPC_ROUNDS times: a load change on the shared machine during a
    // round hits every form alike, and the rounds average out the drift of a single run (up to ±10% here).
    const runs: Record<(typeof forms)[number], WrkResult[]> = { rest: [], rpc: [], get: [] };
    for (let round = 0; round < RPC_ROUNDS; round++) {
      for (const form of [...forms, ...[...forms].reverse()]) {
        await settle(server, cheap);
        runs[form].push(run(scripts[form], c));
      }
    }
    const row = { connections: c, rest: combine(runs.rest), rpc: combine(runs.rpc), get: combine(runs.get) };
    rows.push(row);
    log(`${c} connections: REST ${fmt(row.rest.requestsPerSecond, 0)} requests/s (p99 ${fmt(row.rest.latencyMs.p99)} ms), `
      + `RPC ${fmt(row.rpc.requestsPerSecond, 0)} requests/s (p99 ${fmt(row.rpc.latencyMs.p99)} ms), `
      + `Connect GET ${fmt(row.get.requestsPerSecond, 0)} requests/s (p99 ${fmt(row.get.latencyMs.p99)} ms), non-2xx ${row.rest.non2xx}/${row.rpc.non2xx}/${row.get.non2xx}`);
  }
  return rows;
}

/** Runs as one: requests over their summed duration; the mean latency weighted by requests, percentiles the mean of the runs. */
function combine(runs: readonly WrkResult[]): WrkResult {
  const sum = (f: (r: WrkResult) => number) => runs.reduce((a, r) => a + f(r), 0);
  const avg = (f: (r: WrkResult) => number) => sum(f) / runs.length;
  const requests = sum((r) => r.requests);
  const durationSeconds = sum((r) => r.durationSeconds);
  const l = (r: WrkResult) => r.latencyMs;
  return {
    ...runs[0]!, requests, durationSeconds, requestsPerSecond: requests / durationSeconds, non2xx: sum((r) => r.non2xx),
    latencyMs: {
      mean: sum((r) => l(r).mean * r.requests) / Math.max(1, requests),
      p50: avg((r) => l(r).p50), p75: avg((r) => l(r).p75), p90: avg((r) => l(r).p90), p99: avg((r) => l(r).p99),
      max: Math.max(...runs.map((r) => l(r).max)),
    },
  };
}

/** The query mix as binary `SearchService/Search` requests in the web corpus, bare and in a `quarry.v1.Call`. */
function rpcBodies(queries: readonly string[]): { request: Uint8Array; call: Uint8Array }[] {
  return queries.map((q) => {
    const request = toBinary(SearchRequestSchema, create(SearchRequestSchema, { q, scope: Scope.WEB }));
    return { request, call: toBinary(CallSchema, create(CallSchema, { procedure: 'quarry.v1.SearchService/Search', message: request })) };
  });
}

function section(o: Options, name: string, docs: number, queries: number, inproc: InProcess, rows: WrkResult[], load: { before: number; after: number }, floor: WrkResult | undefined, control: ControlPhase | undefined, rpc: RpcRow[]): string {
  const aimRow = rows.find((r) => r.connections === AIM.connections);
  const lines = [
    SECTION_START,
    `\`npm run bench:http:phases\` (bench/http-phases.ts), ${new Date().toISOString().slice(0, 10)}: ${name}, ${docs} documents in the \`web\` corpus,`,
    `${queries} queries (plain OR form, URL-encoded, in rotation) against \`GET /api/search?scope=web&q=…\` of a real`,
    `\`quarry serve\` process (${availableParallelism()} search workers) over TLS 1.3 on loopback (HTTP/1.1, rate limit off), driven by Debian's \`wrk\``,
    `(${o.threads} thread${o.threads === 1 ? '' : 's'}, ${o.durationS} s per row, after a ${o.warmupS} s warm-up). In-process: \`searcher.search\``,
    `over the same mix with the handler's options (page 0, 20 results, snippets), one thread, ${o.inprocS} s. ${machine()}.`,
    `Server, wrk and the benchmark share the machine's cores; other work on the machine shows in the load average, ${fmt(load.before, 1)} before the run and ${fmt(load.after, 1)} after it (1-minute). On this shared machine a row can differ by up to 2× between runs: compare rows within one run, and the ratio rather than absolute figures.`,
    '',
    `In-process: **${fmt(inproc.qps, 0)} searches/s** (p50 ${fmt(inproc.p50Ms)} ms, p99 ${fmt(inproc.p99Ms)} ms).`,
    '',
    '| connections | requests/s | p50 ms | p90 ms | p99 ms | max ms | non-2xx | socket errors | HTTP / in-process |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map((r) => {
      const errors = r.socketErrors.connect + r.socketErrors.read + r.socketErrors.write + r.socketErrors.timeout;
      return `| ${r.connections} | ${fmt(r.requestsPerSecond, 0)} | ${fmt(r.latencyMs.p50)} | ${fmt(r.latencyMs.p90)} | ${fmt(r.latencyMs.p99)} | ${fmt(r.latencyMs.max)} | ${r.non2xx} | ${errors} | ${fmt(100 * r.requestsPerSecond / inproc.qps, 0)}% |`;
    }),
    '',
  ];
  if (floor) {
    lines.push(`The HTTP layer alone (a query that matches nothing, so the engine does almost no work; ${floor.connections} connections): `
      + `${fmt(floor.requestsPerSecond, 0)} requests/s, p50 ${fmt(floor.latencyMs.p50)} ms, p99 ${fmt(floor.latencyMs.p99)} ms, non-2xx ${floor.non2xx} — `
      + `so the layer costs at most ${fmt(1000 / floor.requestsPerSecond, 3)} ms of the server's event loop per request.`, '');
  }
  if (aimRow) {
    const ratio = aimRow.requestsPerSecond / inproc.qps;
    const met = ratio >= AIM.minRatio && aimRow.latencyMs.p99 < AIM.maxP99Ms;
    lines.push(`Aim at ${AIM.connections} connections: ≥ ${AIM.minRatio * 100}% of in-process throughput and p99 < ${AIM.maxP99Ms} ms — `
      + `measured ${fmt(100 * ratio, 0)}% and ${fmt(aimRow.latencyMs.p99)} ms: **${met ? 'met' : 'not met'}**.`, '');
    // In a closed loop every connection has a request queued: latency ≈ connections × service time ÷ the
    // cores serving. The p99 aim thus bounds the machine's time per request.
    const budgetMs = AIM.maxP99Ms / AIM.connections;
    lines.push(`Reading: with ${AIM.connections} connections busy a request waits for about ${AIM.connections} others, so p99 < ${AIM.maxP99Ms} ms `
      + `needs the server to finish one request every ${fmt(budgetMs)} ms (≥ ${fmt(1000 / budgetMs, 0)} requests/s) on cores it shares with wrk. `
      + `The HTTP layer alone takes ${floor ? `about ${fmt(1000 / floor.requestsPerSecond, 2)} ms of the event loop` : 'a fraction of that'}; `
      + `the search with its 20 snippets takes ${fmt(1000 / inproc.qps, 2)} ms of a core.`, '');
  }
  if (control) {
    const closed = meanP99(control.busy) / meanP99(control.quiet);
    const open = meanP99(control.openBusy) / meanP99(control.openQuiet);
    const runs = (rs: WrkResult[]): string => rs.map((r) => `${fmt(r.latencyMs.p99)} ms (${fmt(r.requestsPerSecond, 0)}/s)`).join(', ');
    const openRuns = (rs: OpenLoopResult[]): string => rs.map((r) => `${fmt(r.latencyMs.p99)} ms`).join(', ');
    const bursts = [...control.openQuiet, ...control.openBusy].map((r) => r.bursts);
    const verdict = (ratio: number) => `**${fmt(ratio, 2)}×** (aim ≤ ${CONTROL_AIM}×: **${ratio <= CONTROL_AIM ? 'met' : 'not met'}**)`;
    const errors = [...control.busy, ...control.quiet].reduce((a, r) => a + r.non2xx, 0)
      + [...control.openBusy, ...control.openQuiet].reduce((a, r) => a + r.non2xx + r.failed, 0);
    lines.push(`Search while the control plane works (same server, ${o.controlS} s per run, quiet and busy alternating twice in each loop): `
      + `${CONTROL_TARGETS.length} targets live (one static release of 1,000 extra files, 16 MiB). Busy: the control plane ran ${control.promotions} builds and promotions of `
      + `${CONTROL_CHURN.join(', ')} (a real input change each, at most one a second), ${control.reconciles} reconciles of all 41 targets and ${control.observations} `
      + `observations of all 41 (\`GET /api/deploy_status\`), one of each a second at most. The control plane runs on a thread of the server at nice 10 `
      + `(its own event loop and heap); builds run in child processes at nice 19, the checks of the live releases on a thread at nice 19 from a `
      + `per-file cache. Non-2xx or unanswered: ${errors}.`, '',
    `- Closed loop (wrk, ${AIM.connections} connections, the machine saturated): p99 quiet ${runs(control.quiet)}; busy ${runs(control.busy)}. `
      + `Mean p99 busy / quiet: ${verdict(closed)}. Every core-second the control plane takes (its builds and the services it restarts are `
      + 'processes of their own) is throughput search loses here, and the queue of 32 grows with it.',
    `- Open loop (h2load, HTTP/2, a constant ${control.openRate} requests/s, ${Math.round(OPEN_SHARE * 100)}% of the quiet closed loop's throughput): `
      + `p99 quiet ${openRuns(control.openQuiet)}; busy ${openRuns(control.openBusy)}. Mean p99 busy / quiet: ${verdict(open)}. `
      + `(h2load sends in bursts, here ${fmt(mean(bursts.map((b) => b.meanSize)), 1)} requests every ${fmt(mean(bursts.map((b) => b.intervalMs)), 1)} ms on average.)`, '');
  }
  if (rpc.length > 0) {
    const runS = Math.max(1, Math.round(o.rpcS / 2));
    lines.push(`The binary RPC against REST (same server, same query mix, ${RPC_ROUNDS * 2 * runS} s of each form at each count, in ${RPC_ROUNDS} rounds of REST, RPC, GET, GET, RPC, REST with ${runS} s runs): `
      + '`GET /api/search?scope=web&q=…` answering JSON; `POST /api/rpc` with a binary `quarry.v1.Call` of `SearchService/Search` answering `application/proto`; '
      + 'and the Connect GET form of the same method, `GET /api/rpc/quarry.v1.SearchService/Search?encoding=proto&base64=1&message=…`.', '',
    '| connections | REST requests/s | REST p99 ms | RPC requests/s | RPC p99 ms | RPC / REST | Connect GET requests/s | GET p99 ms | GET / REST | non-2xx |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rpc.map((r) => `| ${r.connections} | ${fmt(r.rest.requestsPerSecond, 0)} | ${fmt(r.rest.latencyMs.p99)} | ${fmt(r.rpc.requestsPerSecond, 0)} | ${fmt(r.rpc.latencyMs.p99)} | ${fmt(r.rpc.requestsPerSecond / r.rest.requestsPerSecond, 2)}× `
      + `| ${fmt(r.get.requestsPerSecond, 0)} | ${fmt(r.get.latencyMs.p99)} | ${fmt(r.get.requestsPerSecond / r.rest.requestsPerSecond, 2)}× | ${r.rest.non2xx + r.rpc.non2xx + r.get.non2xx} |`),
    '');
    const met = rpc.every((r) => r.rpc.requestsPerSecond >= r.rest.requestsPerSecond);
    lines.push(`Aim: the RPC (\`POST /api/rpc\`) at least as fast as REST at every count: **${met ? 'met' : 'not met'}** (on a shared machine a difference of a few percent is noise).`, '');
  }
  lines.push(SECTION_END);
  return lines.join('\n');
}

/**
 * Writes the HTTP section into docs/benchmarks.md: replaces the previous one (between its markers), or
 * fills the placeholder under the file's `bench:http` heading, or appends the section with a heading.
 * Nothing outside the markers changes: the rest of the file belongs to the engine benchmarks.
 */
async function main(): Promise<void> {
  const o = options();
  const { collection, queries } = await loadQueryMix(o.path);
  log(`${collection.name}: ${collection.docs.length} documents, ${queries.length} queries; ${machine()}`);

  const loadBefore = loadavg()[0]!;
  const dataDir = mkdtempSync(join(tmpdir(), 'quarry-bench-http-'));
  let server: Server | undefined;
  try {
    const imported = await importCollection(dataDir, o.path);
    log(`imported ${imported.docs} documents into the web corpus in ${fmt(imported.seconds, 1)} s`);

    const inproc = await measureInProcess(dataDir, queries, o.inprocS);
    log(`in-process: ${fmt(inproc.qps, 0)} searches/s, p50 ${fmt(inproc.p50Ms)} ms, p99 ${fmt(inproc.p99Ms)} ms (${inproc.zeroHits} queries match nothing)`);

    const repo = o.controlS > 0 ? prepareDeploy(dataDir) : undefined;
    const cap = o.controlS > 0 ? mintCap(dataDir) : '';
    // The periodic resync is off: the control-plane phase forces its resyncs, so the other rows stay quiet.
    server = await startServer(dataDir, availableParallelism(), { control: repo ? { repoRoot: repo, resyncIntervalMs: 0 } : {} });
    log(`server ready at ${server.url}`);
    const paths = queries.map((q) => `/api/search?scope=web&q=${encodeURIComponent(q)}`);
    const probe = await httpsRequest(server.url + paths[0], server.ca);
    const probeJson = JSON.parse(probe.body) as { nresults?: number };
    if (probe.status !== 200 || !(Number(probeJson.nresults) > 0)) throw new Error(`the first query did not find anything: ${probe.status} ${probe.body.slice(0, 300)}`);
    const script = join(dataDir, 'rotation.lua');
    writeFileSync(script, rotationScript(paths));

    // The floor first, on an idle server: TLS, HTTP, routing, JSON and the handler, with a search that
    // finds nothing at once.
    const floorScript = join(dataDir, 'floor.lua');
    writeFileSync(floorScript, rotationScript([`/api/search?scope=web&q=${FLOOR_QUERY}`]));
    const floor = o.floorS > 0 ? wrk(server.url, floorScript, AIM.connections, o.threads, o.floorS) : undefined;
    if (floor) log(`HTTP layer alone: ${fmt(floor.requestsPerSecond, 0)} requests/s, p99 ${fmt(floor.latencyMs.p99)} ms`);

    if (o.warmupS > 0) wrk(server.url, script, 8, o.threads, o.warmupS);
    const rows: WrkResult[] = [];
    for (const c of o.connections) {
      await settle(server, `/api/search?scope=web&q=${FLOOR_QUERY}`);
      const r = wrk(server.url, script, c, o.threads, o.durationS);
      rows.push(r);
      log(`${c} connections: ${fmt(r.requestsPerSecond, 0)} requests/s, p50 ${fmt(r.latencyMs.p50)} ms, p99 ${fmt(r.latencyMs.p99)} ms, non-2xx ${r.non2xx}`);
    }
    let rpc: RpcRow[] = [];
    if (o.rpcS > 0) {
      const rpcScript = join(dataDir, 'rpc.lua');
      const bodies = rpcBodies(queries);
      writeFileSync(rpcScript, postRotationScript('/api/rpc', 'application/proto', bodies.map((b) => b.call)));
      const getScript = join(dataDir, 'rpc-get.lua');
      writeFileSync(getScript, rotationScript(bodies.map((b) => `/api/rpc/quarry.v1.SearchService/Search?encoding=proto&base64=1&message=${Buffer.from(b.request).toString('base64url')}`)));
      rpc = await rpcPhase(server, { rest: script, rpc: rpcScript, get: getScript }, o);
    }
    const control = repo ? await controlPhase(server, cap, repo, paths, script, dataDir, o) : undefined;
    agents.get(server)?.destroy();
    const code = await server.stop();
    server = undefined;
    if (code !== 0) log(`warning: the server exited with ${code} on SIGTERM`);

    const text = section(o, collection.name, imported.docs, queries.length, inproc, rows, { before: loadBefore, after: loadavg()[0]! }, floor, control, rpc);
    console.log(text);
    if (o.record) log(`recorded in ${recordSection('benchmarks.md', SECTION_HEADING, { start: SECTION_START, end: SECTION_END }, text)}`);
    const bad = [...rows, ...rpc.flatMap((r) => [r.rest, r.rpc, r.get])].filter((r) => r.non2xx > 0);
    if (bad.length > 0) {
      log(`non-2xx responses at ${bad.map((r) => `${r.connections} connections (${r.non2xx})`).join(', ')}: must be 0`);
      process.exitCode = 1;
    }
  } finally {
    if (server) await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
