/**
 * `npm run soak [-- <BEIR dir | corpus.jsonl>] [--minutes 10] [--share 0.8] [--every 30] [--workers N]
 *  [--measure S] [--record]`
 *
 * The service under steady mixed load for `--minutes` (default 10; decimals allowed, `--minutes 2` for a
 * short run):
 *   - searches: `h2load --rps` (HTTP/2 over TLS, constant arrival rate) at `--share` (80%) of the capacity
 *     measured first (wrk, closed loop, 32 connections, `--measure` s), one h2load run per minute so each
 *     minute has its own percentiles;
 *   - imports: every `--every` seconds, `quarry import` (another process, as an operator runs it) of 50 new
 *     documents into the `web` corpus, then searches until the server serves all 50;
 *   - deploys: every `--every` seconds, half a period later, `POST /api/upload` of a new page bundle for
 *     the `docportal` target and `POST /api/deploy`, each followed to its verdict through `/api/ops/{id}`;
 *   - the server's resident set (RSS, workers included: they are threads) sampled every 2 s.
 * It prints one row per minute (search rate, p50/p99, errors, imports, deploys, RSS, load average) and
 * the aims: 0 errors, p99 of the last minute within 1.5× of the first, RSS of the last minute within 10%
 * of the first. `--record` writes the section into docs/reliability.md (under `## Load and soak`).
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tar from 'tar';
import { defaultCollectionPath, REPO_ROOT, type CorpusDoc } from './dataset.js';
import { openLoop, type OpenLoopResult } from './h2load.js';
import { fmt } from './measure.js';
import {
  arg, httpsRequest, importCollection, load, loadQueryMix, log as logAs, machine, positional, recordSection, rssOf, settle, startServer, wrk, type Server,
} from './service-run.js';
import { rotationScript } from './wrk.js';

const AIM = { maxP99Growth: 1.5, maxRssGrowth: 0.1 };
const CONNECTIONS = 32;
const IMPORT_DOCS = 50;
const DEPLOY_TARGET = 'docportal';
const SECTION_HEADING = '## Load and soak';
const SECTION_START = '<!-- soak:start -->';
const SECTION_END = '<!-- soak:end -->';

const log = (message: string) => logAs('soak', message);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Options {
  path: string;
  minutes: number;
  share: number;
  everyS: number;
  workers: number;
  measureS: number;
  record: boolean;
}

function options(): Options {
  const valued = new Set(['minutes', 'share', 'every', 'workers', 'measure']);
  const path = positional(valued) ?? defaultCollectionPath('scifact');
  if (!path) throw new Error('no collection given and ../shared/data/scifact is absent: npm run soak -- <BEIR dir | corpus.jsonl>');
  const o: Options = {
    path,
    minutes: Number(arg('minutes') ?? 10),
    share: Number(arg('share') ?? 0.8),
    everyS: Number(arg('every') ?? 30),
    workers: Number(arg('workers') ?? availableParallelism()),
    measureS: Number(arg('measure') ?? 10),
    record: process.argv.includes('--record'),
  };
  if (!(o.minutes > 0) || !(o.share > 0) || !(o.everyS > 0) || !Number.isInteger(o.workers) || o.workers < 0) {
    throw new Error('--minutes, --share and --every must be > 0, --workers an integer ≥ 0');
  }
  return o;
}

/** One import or deploy, as it ended. */
interface Activity { at: number; kind: 'import' | 'deploy'; ok: boolean; ms: number; error?: string }

interface Minute { index: number; seconds: number; search: OpenLoopResult; imports: Activity[]; deploys: Activity[]; rssMax: number; load: number }

/** Runs `fn` every `everyS` seconds (after `offsetS`) until `stop()` is called; records each outcome. */
function periodic(kind: Activity['kind'], everyS: number, offsetS: number, out: Activity[], fn: (round: number) => Promise<void>) {
  let stopped = false;
  const done = (async () => {
    await sleep(offsetS * 1000);
    for (let round = 0; !stopped; round++) {
      const t0 = performance.now();
      try {
        await fn(round);
        out.push({ at: Date.now(), kind, ok: true, ms: performance.now() - t0 });
      } catch (err) {
        out.push({ at: Date.now(), kind, ok: false, ms: performance.now() - t0, error: (err as Error).message.slice(0, 300) });
        log(`${kind} ${round} failed: ${(err as Error).message.slice(0, 300)}`);
      }
      const wait = everyS * 1000 - (performance.now() - t0);
      for (let waited = 0; waited < wait && !stopped; waited += 250) await sleep(Math.min(250, wait - waited));
    }
  })();
  return { stop: () => { stopped = true; return done; } };
}

/** `quarry import` of IMPORT_DOCS new documents, then searches until the server serves every one. */
async function importRound(server: Server, dataDir: string, docs: readonly CorpusDoc[], round: number): Promise<void> {
  const marker = `soakmark${round}x`;
  const file = join(dataDir, `soak-import-${round}.jsonl`);
  const lines = Array.from({ length: IMPORT_DOCS }, (_, i) => {
    const d = docs[(round * IMPORT_DOCS + i) % docs.length]!;
    return JSON.stringify({ _id: `soak-${round}-${i}`, title: d.title, text: `${d.text} ${marker}` });
  });
  writeFileSync(file, lines.join('\n') + '\n');
  const child = spawn(process.execPath, ['bin/quarry.js', 'import', '--corpus', 'web', '--data', dataDir, '--json', file], {
    cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => { stderr = (stderr + c.toString()).slice(-2000); });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  rmSync(file, { force: true });
  if (code !== 0) throw new Error(`quarry import exited ${code}: ${stderr}`);
  // The server adopts another process's commit on its refresh poll: wait for it, within bounds.
  for (let i = 0; i < 120; i++) {
    const r = await httpsRequest(`${server.url}/api/search?scope=web&q=${marker}`, server.ca);
    if (r.status !== 200) throw new Error(`search for the imported documents: ${r.status} ${r.body.slice(0, 200)}`);
    if ((JSON.parse(r.body) as { total: number }).total >= IMPORT_DOCS) return;
    await sleep(250);
  }
  throw new Error(`the ${IMPORT_DOCS} imported documents were not all searchable after 30 s`);
}

/** Follows an operation to its end; throws unless it succeeded. */
async function until(server: Server, auth: Record<string, string>, opId: string): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    const r = await httpsRequest(`${server.url}/api/ops/${opId}`, server.ca, { headers: auth });
    if (r.status !== 200) throw new Error(`GET /api/ops/${opId}: ${r.status} ${r.body.slice(0, 200)}`);
    const op = JSON.parse(r.body) as { state: string; log?: string };
    if (op.state === 'succeeded') return;
    if (op.state === 'failed') throw new Error(`operation ${opId} failed: ${String(op.log).slice(-300)}`);
    await sleep(100);
  }
  throw new Error(`operation ${opId} did not end within 2 minutes`);
}

/** Stages a new page bundle of the deploy target by upload, then deploys it; both followed to their end. */
async function deployRound(server: Server, auth: Record<string, string>, workDir: string, round: number): Promise<void> {
  const dir = join(workDir, `bundle-${round}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'index.html'), `<!doctype html><title>soak</title><p>soak round ${round}</p>\n`);
  const file = join(workDir, `bundle-${round}.tar`);
  await tar.create({ cwd: dir, file, portable: true }, ['index.html']);
  const body = readFileSync(file);
  rmSync(dir, { recursive: true, force: true });
  rmSync(file, { force: true });
  const digest = `sha256:${createHash('sha256').update(body).digest('hex')}`;
  const staged = await httpsRequest(`${server.url}/api/upload?target=${DEPLOY_TARGET}&digest=${digest}`, server.ca, {
    method: 'POST', headers: { ...auth, 'content-type': 'application/x-tar' }, body,
  });
  if (staged.status !== 202) throw new Error(`POST /api/upload: ${staged.status} ${staged.body.slice(0, 200)}`);
  await until(server, auth, (JSON.parse(staged.body) as { op_id: string }).op_id);
  const deployed = await httpsRequest(`${server.url}/api/deploy`, server.ca, {
    method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ target: DEPLOY_TARGET, reason: `soak ${round}` }),
  });
  if (deployed.status !== 202) throw new Error(`POST /api/deploy: ${deployed.status} ${deployed.body.slice(0, 200)}`);
  await until(server, auth, (JSON.parse(deployed.body) as { op_id: string }).op_id);
}

function mintCap(dataDir: string): string {
  const r = spawnSync(process.execPath, [
    'bin/quarry.js', 'cap', 'mint', '--rights', 'mgmt.read,mgmt.stage,mgmt.deploy', '--targets', DEPLOY_TARGET,
    '--ttl', '24h', '--data', dataDir,
  ], { cwd: REPO_ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`quarry cap mint failed: ${r.stderr}`);
  return r.stdout.trim();
}

const mib = (bytes: number) => fmt(bytes / 2 ** 20, 0);

function section(o: Options, name: string, docs: number, capacity: number, rate: number, minutes: Minute[], loads: { before: number; after: number }): string {
  const errors = minutes.reduce((n, m) => n + m.search.non2xx + m.search.failed + [...m.imports, ...m.deploys].filter((a) => !a.ok).length, 0);
  const full = minutes.filter((m) => m.seconds >= 30);
  const first = full[0];
  const last = full.at(-1);
  const lines = [
    SECTION_START,
    `\`npm run soak -- --minutes ${o.minutes}\` (bench/soak.ts), ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC: ${name}, ${docs} documents in the \`web\` corpus,`,
    `a real \`quarry serve\` with ${o.workers} search worker${o.workers === 1 ? '' : 's'} over TLS on loopback. Capacity measured first: ${fmt(capacity, 0)} searches/s`,
    `(wrk, ${CONNECTIONS} connections, ${o.measureS} s); then searches at ${fmt(100 * o.share, 0)}% of it (${fmt(minutes[0]?.search.rate ?? rate, 0)}/s asked, \`h2load --rps\`, HTTP/2), a \`quarry import\``,
    `of ${IMPORT_DOCS} documents every ${o.everyS} s (each followed until searchable) and an upload + deploy of \`${DEPLOY_TARGET}\` every ${o.everyS} s. ${machine()}.`,
    `Load average (1-minute) ${fmt(loads.before, 1)} before, ${fmt(loads.after, 1)} after, and per minute below.`,
    '',
    '| minute | searches/s answered | p50 ms | p99 ms | max ms | search errors | imports ok / failed | deploys ok / failed | RSS max MiB | load avg |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...minutes.map((m) => {
      const s = m.search;
      const count = (a: Activity[]) => `${a.filter((x) => x.ok).length} / ${a.filter((x) => !x.ok).length}`;
      return `| ${m.index + 1}${m.seconds < 60 ? ` (${m.seconds} s)` : ''} | ${fmt(s.achieved, 0)} | ${fmt(s.latencyMs.p50)} | ${fmt(s.latencyMs.p99)} | ${fmt(s.latencyMs.max)} | ${s.non2xx + s.failed} | ${count(m.imports)} | ${count(m.deploys)} | ${mib(m.rssMax)} | ${fmt(m.load, 1)} |`;
    }),
    '',
  ];
  const aims = [`errors: **${errors}** (aim 0: ${errors === 0 ? 'met' : 'not met'})`];
  if (first && last && first !== last) {
    const p99 = last.search.latencyMs.p99 / first.search.latencyMs.p99;
    const rss = last.rssMax / first.rssMax - 1;
    aims.push(`p99 last ÷ first minute: **${fmt(p99)}×** (aim ≤ ${AIM.maxP99Growth}×: ${p99 <= AIM.maxP99Growth ? 'met' : 'not met'})`);
    aims.push(`RSS last vs first minute: **${rss >= 0 ? '+' : ''}${fmt(100 * rss, 1)}%** (aim within ${100 * AIM.maxRssGrowth}%: ${Math.abs(rss) <= AIM.maxRssGrowth ? 'met' : 'not met'})`);
  } else {
    aims.push('p99 and RSS growth need at least two minutes of 30 s or more');
  }
  lines.push(`${aims.join('; ')}.`, '', SECTION_END);
  return lines.join('\n');
}

async function main(): Promise<void> {
  const o = options();
  const { collection, queries } = await loadQueryMix(o.path);
  log(`${collection.name}: ${collection.docs.length} documents, ${queries.length} queries; ${o.minutes} minutes; ${machine()}; load average ${load()}`);
  const loadBefore = loadavg()[0]!;
  const workDir = mkdtempSync(join(tmpdir(), 'quarry-soak-'));
  const dataDir = join(workDir, 'data');
  try {
    cpSync(join(REPO_ROOT, 'deploy'), join(workDir, 'repo', 'deploy'), { recursive: true });
    const imported = await importCollection(dataDir, o.path);
    log(`imported ${imported.docs} documents in ${fmt(imported.seconds, 1)} s`);
    const server = await startServer(dataDir, o.workers, { control: { repoRoot: join(workDir, 'repo'), resyncIntervalMs: 0 } });
    try {
      const auth = { authorization: `Bearer ${mintCap(dataDir)}` };
      const paths = queries.map((q) => `/api/search?scope=web&q=${encodeURIComponent(q)}`);
      const script = join(workDir, 'rotation.lua');
      writeFileSync(script, rotationScript(paths));
      wrk(server.url, script, 8, 1, 3);
      await settle(server, '/api/search?scope=web&q=qzx');
      const capacity = wrk(server.url, script, CONNECTIONS, 1, o.measureS).requestsPerSecond;
      const rate = o.share * capacity;
      log(`capacity ${fmt(capacity, 0)} searches/s; soaking at ${fmt(rate, 0)}/s; load average ${load()}`);
      await settle(server, '/api/search?scope=web&q=qzx');

      const rss: { at: number; bytes: number }[] = [];
      const sampler = setInterval(() => rss.push({ at: Date.now(), bytes: rssOf(server.pid) }), 2000);
      const activities: Activity[] = [];
      const imports = periodic('import', o.everyS, 0, activities, (r) => importRound(server, dataDir, collection.docs, r));
      const deploys = periodic('deploy', o.everyS, o.everyS / 2, activities, (r) => deployRound(server, auth, workDir, r));
      const minutes: Minute[] = [];
      const total = Math.round(o.minutes * 60);
      try {
        for (let index = 0, left = total; left > 0; index++, left -= 60) {
          const seconds = Math.min(60, left);
          const start = Date.now();
          const search = await openLoop({ urls: paths.map((p) => server.url + p), rate, seconds, workDir, name: `minute-${index}` });
          const end = Date.now();
          const inMinute = <T extends { at: number }>(xs: T[]) => xs.filter((x) => x.at >= start && x.at < end);
          const m: Minute = {
            index, seconds, search,
            imports: inMinute(activities).filter((a) => a.kind === 'import'),
            deploys: inMinute(activities).filter((a) => a.kind === 'deploy'),
            rssMax: Math.max(...inMinute(rss).map((s) => s.bytes)),
            load: loadavg()[0]!,
          };
          minutes.push(m);
          log(`minute ${index + 1}: ${fmt(search.achieved, 0)} searches/s, p50 ${fmt(search.latencyMs.p50)} ms, p99 ${fmt(search.latencyMs.p99)} ms, `
            + `errors ${search.non2xx + search.failed}, imports ${m.imports.length}, deploys ${m.deploys.length}, RSS ${mib(m.rssMax)} MiB, load average ${load()}`);
        }
      } finally {
        clearInterval(sampler);
        await Promise.all([imports.stop(), deploys.stop()]);
      }
      const text = section(o, collection.name, imported.docs, capacity, rate, minutes, { before: loadBefore, after: loadavg()[0]! });
      console.log(text);
      if (o.record) log(`recorded in ${recordSection('reliability.md', SECTION_HEADING, { start: SECTION_START, end: SECTION_END }, text)}`);
      if (!text.includes('errors: **0**')) process.exitCode = 1;
    } finally {
      const code = await server.stop();
      if (code !== 0) log(`warning: the server exited with ${code} on SIGTERM`);
    }
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
