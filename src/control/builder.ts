/**
 * Builds: a target's declared inputs are copied into a fresh scratch directory (nothing else of the
 * repository is visible to the build), the recipe's command runs there with a minimal, fixed
 * environment, and the output directory is packed into a reproducible artifact. Output lines go to the
 * caller (the operation log and `build.log` events) and to a log file kept per build.
 */
import { createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { BadRequestError } from '../kernel/errors.js';
import { type Digest, digestFile, packArtifact } from './artifact.js';
import { removeTreeAsync } from '../kernel/durable-file.js';
import type { Recipe } from './recipe.js';
import type { Spawner } from './spawner.js';

/** The nice value builds run at (POSIX: 0 normal … 19 lowest). */
const BUILD_NICE = 19;

/**
 * A build's timeout counts the time it could run: at nice 19 on cores that serve search it may wait for
 * one for long stretches, and that wait is added to its deadline, up to this many times the timeout (so a
 * build on a machine saturated for good still ends).
 */
const MAX_WAIT_GRANTED = 4;

export interface BuildResult { digest: Digest; tarFile: string; logFile: string }

export class BuildFailedError extends Error {
  readonly logFile: string;
  constructor(message: string, logFile: string) { super(message); this.logFile = logFile; this.name = 'BuildFailedError'; }
}

export interface BuildOptions {
  /** Starts the build command (the control plane's spawn helper). */
  spawner: Spawner;
  scratchDir: string;
  logFile: string;
  onLine(line: string): void;
  signal?: AbortSignal | undefined;
  /** How long process `pid` has waited for a core, in ms (default: `cpuWaitMs`, from Linux's schedstat). */
  cpuWait?: (pid: number) => number | undefined;
}

/**
 * Milliseconds process `pid` has spent runnable but waiting for a core: its threads' run delay in
 * `/proc/<pid>/task/<tid>/schedstat`. Undefined where the kernel does not say (not Linux, no schedstats,
 * the process gone). Only the process itself counts, not processes it started.
 */
export function cpuWaitMs(pid: number): number | undefined {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[1]);
    return Number.isFinite(ns) ? ns / 1e6 : undefined;
  } catch {
    return undefined;
  }
}

/** A leading `node` means the Node binary running Quarry, so builds do not depend on PATH. */
export function resolveArgv(command: readonly string[]): [string, string[]] {
  const [cmd, ...args] = command;
  return [cmd === 'node' ? process.execPath : cmd!, args];
}

export async function runBuild(recipe: Recipe, opts: BuildOptions): Promise<BuildResult> {
  const work = mkdtempSync(join(opts.scratchDir, `build-${recipe.target}-`));
  const log = createWriteStream(opts.logFile, { flags: 'a' });
  try {
    for (const input of recipe.build.inputs) {
      const src = join(recipe.sourceDir, input);
      if (!existsSync(src)) throw new BadRequestError(`Build input ${input} of ${recipe.target} does not exist.`);
      await cp(src, join(work, input), { recursive: statSync(src).isDirectory(), dereference: false });
    }
    const [cmd, args] = resolveArgv(recipe.build.command);
    await new Promise<void>((resolve, reject) => {
      // A build is background work on the cores that serve search: it yields to them (nice).
      const child = opts.spawner.spawn({
        command: cmd, args, cwd: work, output: 'pipe', nice: BUILD_NICE,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: work, LANG: 'C.UTF-8', TZ: 'UTC', SOURCE_DATE_EPOCH: '0', QUARRY_TARGET: recipe.target },
      });
      const stop = () => child.kill('SIGKILL');
      // The timeout counts from the process's start (the spawn helper reports it; on a loaded machine
      // that took longer than a short timeout). At the timeout, the time the build waited for a core since
      // it started is granted on top (see MAX_WAIT_GRANTED); each later check grants what it waited
      // meanwhile, until it waited no more. A build that does not start within the bound is stopped.
      const limit = recipe.build.timeoutMs;
      const cpuWait = opts.cpuWait ?? cpuWaitMs;
      let granted = 0;
      const expire = () => {
        const waited = child.pid === undefined ? undefined : cpuWait(child.pid);
        const more = Math.min(waited ?? 0, MAX_WAIT_GRANTED * limit) - granted;
        if (more < 1) {
          stop();
          return;
        }
        granted += more;
        timer = setTimeout(expire, more);
      };
      const started = () => {
        clearTimeout(timer);
        timer = setTimeout(expire, limit);
      };
      let timer = setTimeout(stop, (MAX_WAIT_GRANTED + 1) * limit);
      if (child.pid !== undefined) started();
      else child.once('spawn', started);
      opts.signal?.addEventListener('abort', stop, { once: true });
      if (opts.signal?.aborted) stop();
      const done = () => { clearTimeout(timer); opts.signal?.removeEventListener('abort', stop); };
      let partial = '';
      child.on('output', (chunk: Buffer) => {
        log.write(chunk);
        const text = partial + chunk.toString('utf8');
        const lines = text.split('\n');
        partial = lines.pop() ?? '';
        for (const l of lines) opts.onLine(l);
      });
      child.once('error', (err) => { done(); reject(new BuildFailedError(`build command failed to start: ${err.message}`, opts.logFile)); });
      child.once('exit', (code, signal) => {
        done();
        if (partial !== '') opts.onLine(partial);
        if (code === 0) resolve();
        else reject(new BuildFailedError(signal ? `build killed by ${signal} (timeout ${limit} ms${granted > 0 ? ` + ${Math.round(granted)} ms waiting for a core` : ''}, or cancelled)` : `build exited with code ${code}`, opts.logFile));
      });
    });
    const out = join(work, recipe.build.output);
    if (!existsSync(out) || !statSync(out).isDirectory()) throw new BuildFailedError(`build produced no ${recipe.build.output}/ directory`, opts.logFile);
    const tarFile = join(opts.scratchDir, `.artifact-${recipe.target}-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}.tar`);
    await packArtifact(out, tarFile);
    return { digest: await digestFile(tarFile), tarFile, logFile: opts.logFile };
  } finally {
    await new Promise<void>((r) => log.end(r));
    await removeTreeAsync(work);
  }
}
