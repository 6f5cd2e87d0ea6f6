/**
 * `npm run bench:startup [-- --data DIR] [--runs N] [--query Q]`
 *
 * What starting Quarry costs, as users run it (`bin/quarry.js`, the build in dist/):
 *   1. `quarry serve --json` over an existing data directory, until it prints `{"event":"ready"}` (corpora
 *      open, the own corpus checked for changes): the CPU time the process and the children it waited for
 *      have used by then (utime + stime + cutime + cstime of /proc/PID/stat, read the moment the line
 *      arrives), and the wall time; then SIGTERM.
 *   2. `quarry search QUERY` over the same directory, a new process each time: wall time and CPU time
 *      (the children's times in this process's /proc/self/stat, before and after).
 * Without `--data`, a temporary data directory is made by a first start over the default own corpus (the
 * repository's docs/ and site/ and the machine's manual pages), which is not counted. Medians and minima
 * of `--runs` runs (default 10). Linux only (/proc). The aims (issue 9): serve ready under 1 s of CPU,
 * search under 300 ms.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT } from './dataset.js';

const QUARRY = join(REPO_ROOT, 'bin', 'quarry.js');
/** Clock ticks per second of /proc/PID/stat times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** utime, stime, cutime, cstime of a process, in ms. */
function cpuTimes(pid: number | 'self'): { own: number; children: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
  const ms = (t: number) => (t * 1000) / TICKS_PER_SECOND;
  return { own: ms(f[11]! + f[12]!), children: ms(f[13]! + f[14]!) };
}

interface Run { cpuMs: number; wallMs: number }

/** Starts `quarry serve` and resolves at its ready line with the CPU it used so far; stops it. */
function serveOnce(dataDir: string): Promise<Run> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [QUARRY, 'serve', '--json', '--data', dataDir, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
  return new Promise<Run>((resolve, reject) => {
    let out = '';
    let run: Run | undefined;
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (run === undefined && /"event":"(ready|degraded)"/.test(out)) {
        const wallMs = performance.now() - t0;
        const t = cpuTimes(child.pid!);
        run = { cpuMs: t.own + t.children, wallMs };
        if (/"event":"degraded"/.test(out)) reject(new Error(`quarry serve is degraded: ${out}`));
        child.kill('SIGTERM');
      }
    });
    child.on('close', (code) => {
      if (run !== undefined) resolve(run);
      else reject(new Error(`quarry serve exited (${code}) before it was ready:\n${stderr}`));
    });
  });
}

function searchOnce(dataDir: string, query: string): Run {
  const before = cpuTimes('self').children;
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [QUARRY, 'search', '--data', dataDir, query], { encoding: 'utf8' });
  const wallMs = performance.now() - t0;
  if (r.status !== 0) throw new Error(`quarry search failed (${r.status}): ${r.stderr}`);
  return { cpuMs: cpuTimes('self').children - before, wallMs };
}

function summary(name: string, runs: Run[]): string {
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const cpu = runs.map((r) => r.cpuMs);
  const wall = runs.map((r) => r.wallMs);
  return `${name.padEnd(28)} CPU median ${med(cpu).toFixed(0).padStart(4)} ms (min ${Math.min(...cpu).toFixed(0)})   `
    + `wall median ${med(wall).toFixed(0).padStart(4)} ms (min ${Math.min(...wall).toFixed(0)})   ${runs.length} runs`;
}

const { values } = parseArgs({ options: { data: { type: 'string' }, runs: { type: 'string', default: '10' }, query: { type: 'string', default: 'index commit' } } });
const runs = Number(values.runs);
let dataDir = values.data;
let made: string | undefined;
if (dataDir === undefined) {
  made = mkdtempSync(join(tmpdir(), 'quarry-bench-startup-'));
  dataDir = join(made, 'data');
  process.stderr.write(`first start over the default corpus in ${dataDir} (not counted)…\n`);
  await serveOnce(dataDir);
}
try {
  const serve: Run[] = [];
  for (let i = 0; i < runs; i++) serve.push(await serveOnce(dataDir));
  const search: Run[] = [];
  searchOnce(dataDir, values.query!); // warms the page cache like the serve runs did
  for (let i = 0; i < runs; i++) search.push(searchOnce(dataDir, values.query!));
  console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}, node ${process.version}`);
  console.log(summary('quarry serve → ready', serve));
  console.log(summary(`quarry search ${JSON.stringify(values.query)}`, search));
} finally {
  if (made !== undefined) rmSync(made, { recursive: true, force: true });
}
