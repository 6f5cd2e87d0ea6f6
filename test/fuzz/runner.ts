/**
 * The fuzz run: starts a real `quarry serve` on a data directory it creates (the fixture corpus, the
 * control plane over a private copy of deploy/, a capability holding every right), sends `count` inputs
 * drawn from `KINDS` with `concurrency` in flight, and checks what the service promises whatever it is
 * sent (docs/reliability.md):
 *
 *   - no 5xx, and every error body in CONTRACT §1's shape (`transport.ts` `checkAnswer`);
 *   - no hang: every input is answered (or its connection closed) within `deadlineMs`;
 *   - no crash: the process is alive at the end and still answers a search;
 *   - no internal-error line in the server's log: input alone must never look like a bug;
 *   - resident memory (sampled from /proc every 200 ms) never above `rssBoundMiB`.
 *
 * Input i is generated from its own generator seeded with (seed, i), so `only: i` replays it alone.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type TestServer } from '../support/server.js';
import { writeFixtureCorpus } from '../support/fixture-corpus.js';
import { mintCap, prepare } from '../control/server-support.js';
import { KINDS, setAllowlisted, type FuzzTarget, type Kind } from './inputs.js';
import { Random } from './random.js';
import { H2Pool, HangError } from './transport.js';

export interface FuzzOptions {
  seed: number;
  count: number;
  /** Inputs in flight at once. Default 24. */
  concurrency?: number;
  /** Per-input hang guard. Default 15 s (the server's own timeouts are 30 s idle, 60 s per request). */
  deadlineMs?: number;
  /** Largest resident set the server may reach during the run. Default 512 MiB. */
  rssBoundMiB?: number;
  /** Stop drawing new inputs after this long (the report says how many ran). Default: no limit. */
  maxDurationMs?: number;
  /** Replay only these input indices. */
  only?: number[];
  /** Draw inputs of these kinds only (by name, e.g. `upload`, `rpc`), at their relative weights. Default: every kind. */
  kinds?: string[];
  /** Progress lines (every 10% of the run). */
  progress?: (line: string) => void;
}

export interface FuzzFailure { index: number; kind: string; problem: string }

export interface FuzzReport {
  seed: number;
  inputs: number;
  durationMs: number;
  perKind: Record<string, number>;
  /** Slowest input of each kind, in ms (the server's answer time plus the client's). */
  slowestMs: Record<string, number>;
  /** Answers by status; 0 = stream reset, -2 = node's client refused to send it (nothing tested). */
  statuses: Record<string, number>;
  /** Stream resets (status 0) by kind of input. */
  resetsPerKind: Record<string, number>;
  failures: FuzzFailure[];
  failureCount: number;
  /** CPU seconds the server and this process spent on the run (wall time on a quiet machine is about the larger). */
  serverCpuSeconds: number;
  clientCpuSeconds: number;
  baselineRssMiB: number;
  maxRssMiB: number;
  rssBoundMiB: number;
  internalLogLines: string[];
  crashed: boolean;
}

const ALL_RIGHTS = 'search,trusted.flag,events.read,mgmt.read,mgmt.build,mgmt.stage,mgmt.deploy,mgmt.rollback,mgmt.reconcile,mgmt.restart,auth.admin';

/** Lines of the server's stderr that report a bug (an internal error, or a stack). */
const INTERNAL_LINE = /internal error|error while streaming|^\s+at |Uncaught|unhandled/i;

/** A 32-bit seed for input `index` of run `seed` (murmur3's finalizer over both, so runs do not overlap). */
function inputSeed(seed: number, index: number): number {
  let h = (Math.imul(seed >>> 0, 0x9e3779b1) + Math.imul(index + 1, 0x85ebca77)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

/** user + system CPU seconds of a process, from /proc. */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

function rssMiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

async function startFuzzServer(dir: string): Promise<{ srv: TestServer; cap: string; allowlist: string[] }> {
  const setup = prepare(dir);
  await writeFixtureCorpus(setup.dataDir);
  const config = JSON.parse(readFileSync(setup.configFile, 'utf8')) as Record<string, any>;
  config.corpora = { own: { docs: join(setup.dataDir, 'fixture-own'), site: null, library: null } };
  writeFileSync(setup.configFile, JSON.stringify(config));
  const srv = await startServer({ dataDir: setup.dataDir, args: ['--config', setup.configFile], timeoutMs: 120_000 });
  const cap = mintCap(setup.dataDir, ALL_RIGHTS);
  const allowlist = readFileSync(join(setup.repo, 'deploy', 'allowlist.txt'), 'utf8').split('\n')
    .map((l) => l.replace(/#.*/, '').trim()).filter((l) => l !== '');
  return { srv, cap, allowlist };
}

async function describeApi(t: FuzzTarget): Promise<void> {
  const a = await t.h2.request('GET', '/api/openapi.json', {}, undefined, 30_000);
  if (!('status' in a) || a.status !== 200) throw new Error('could not read /api/openapi.json');
  const doc = JSON.parse(a.body.toString('utf8')) as { paths: Record<string, Record<string, any>>; components?: { schemas?: Record<string, any> } };
  const resolve = (s: any): any => (s?.$ref ? doc.components?.schemas?.[String(s.$ref).split('/').pop()!] : s);
  for (const [path, ops] of Object.entries(doc.paths)) {
    // Long-lived streams (server-sent events) answer by staying open: not a fit for a per-input deadline.
    if (ops['get'] && !/event/.test(path)) t.getPaths.push(path);
    if (ops['post']) {
      const schema = resolve(ops['post'].requestBody?.content?.['application/json']?.schema);
      const props = new Set<string>();
      for (const s of [schema, ...(schema?.oneOf ?? []), ...(schema?.anyOf ?? [])].map(resolve)) {
        for (const p of Object.keys(s?.properties ?? {})) props.add(p);
      }
      t.postPaths.push({ path, properties: [...props] });
    }
  }
}

/** The kinds a run draws from: all, or those named (an unknown name is an error, not an empty run). */
function kindsOf(names: readonly string[] | undefined): Kind[] {
  if (names === undefined) return KINDS;
  const unknown = names.filter((n) => !KINDS.some((k) => k.name === n));
  if (unknown.length > 0 || names.length === 0) {
    throw new Error(`unknown fuzz kind ${unknown.join(', ') || '(none given)'}; the kinds are ${KINDS.map((k) => k.name).join(', ')}`);
  }
  return KINDS.filter((k) => names.includes(k.name));
}

export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const concurrency = options.concurrency ?? 24;
  const deadlineMs = options.deadlineMs ?? 15_000;
  const rssBoundMiB = options.rssBoundMiB ?? 512;
  const kinds: (readonly [number, Kind])[] = kindsOf(options.kinds).map((k) => [k.weight, k] as const);
  const dir = mkdtempSync(join(tmpdir(), 'quarry-fuzz-'));
  const { srv, cap, allowlist } = await startFuzzServer(dir);
  setAllowlisted(allowlist);
  const h2 = new H2Pool(srv, 4);
  const t: FuzzTarget = {
    url: srv.url, port: srv.port, ca: srv.ca, h2, cap, getPaths: [], postPaths: [], deadlineMs,
    targets: [...allowlist.slice(0, 3), 'nope', 'x'.repeat(200), '', '../etc', 'Sites', 'sites ', 'a/b', '\u00e9'],
  };
  const report: FuzzReport = {
    seed: options.seed, inputs: 0, durationMs: 0, perKind: {}, slowestMs: {}, statuses: {}, resetsPerKind: {}, failures: [], failureCount: 0,
    serverCpuSeconds: 0, clientCpuSeconds: 0, baselineRssMiB: 0, maxRssMiB: 0, rssBoundMiB, internalLogLines: [], crashed: false,
  };
  let crashed = false;
  srv.child.on('exit', () => { crashed = true; });
  const fail = (index: number, kind: string, problem: string): void => {
    report.failureCount++;
    if (report.failures.length < 50) report.failures.push({ index, kind, problem });
  };
  const started = Date.now();
  try {
    await describeApi(t);
    report.baselineRssMiB = rssMiB(srv.pid);
    const cpu0 = cpuSeconds(srv.pid);
    const client0 = process.cpuUsage();
    const sampler = setInterval(() => { report.maxRssMiB = Math.max(report.maxRssMiB, rssMiB(srv.pid)); }, 200);
    const indices = options.only ?? Array.from({ length: options.count }, (_, i) => i);
    let next = 0;
    let lastProgress = 0;
    const worker = async (): Promise<void> => {
      const stopAt = started + (options.maxDurationMs ?? Infinity);
      while (next < indices.length && !crashed && Date.now() < stopAt) {
        const index = indices[next++]!;
        const r = new Random(inputSeed(options.seed, index));
        const kind = r.weighted(kinds);
        report.perKind[kind.name] = (report.perKind[kind.name] ?? 0) + 1;
        const t0 = Date.now();
        try {
          const out = await kind.run(r, t);
          for (const s of out.statuses) {
            report.statuses[s] = (report.statuses[s] ?? 0) + 1;
            if (s === 0) report.resetsPerKind[kind.name] = (report.resetsPerKind[kind.name] ?? 0) + 1;
          }
          for (const p of out.problems) fail(index, kind.name, p);
        } catch (err) {
          fail(index, kind.name, err instanceof HangError ? `hang: ${err.message}` : `harness: ${(err as Error).stack ?? String(err)}`);
        }
        report.slowestMs[kind.name] = Math.max(report.slowestMs[kind.name] ?? 0, Date.now() - t0);
        report.inputs++;
        if (options.progress && report.inputs - lastProgress >= Math.max(1, Math.floor(indices.length / 10))) {
          lastProgress = report.inputs;
          options.progress(`fuzz: ${report.inputs}/${indices.length} inputs, ${report.failureCount} failures, RSS max ${report.maxRssMiB.toFixed(0)} MiB, ${((Date.now() - started) / 1000).toFixed(0)} s`);
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    clearInterval(sampler);
    report.maxRssMiB = Math.max(report.maxRssMiB, rssMiB(srv.pid));
    report.durationMs = Date.now() - started;
    report.serverCpuSeconds = Math.round((cpuSeconds(srv.pid) - cpu0) * 10) / 10;
    const client = process.cpuUsage(client0);
    report.clientCpuSeconds = Math.round((client.user + client.system) / 1e5) / 10;
    if (crashed) {
      report.crashed = true;
      fail(-1, 'server', `the server exited: ${srv.stderr().slice(-2000)}`);
    } else {
      const alive = await h2.request('GET', '/api/search?q=granite', {}, undefined, 30_000);
      if (!('status' in alive) || alive.status !== 200) fail(-1, 'server', `the server no longer answers a search: ${JSON.stringify(alive)}`);
    }
    if (report.maxRssMiB > rssBoundMiB) fail(-1, 'server', `RSS reached ${report.maxRssMiB.toFixed(0)} MiB, over the bound of ${rssBoundMiB} MiB`);
    report.internalLogLines = srv.stderr().split('\n').filter((l) => INTERNAL_LINE.test(l)).slice(0, 50);
    if (report.internalLogLines.length > 0) fail(-1, 'server', `the server logged ${report.internalLogLines.length} internal-error line(s)`);
  } finally {
    h2.close();
    if (!crashed) await srv.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return report;
}

