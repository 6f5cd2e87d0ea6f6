/**
 * `npm run bench:control`: how long the control plane holds the event loop it shares with search.
 *
 * An in-process control plane (real state database, real builds, a private copy of deploy/ in which
 * `docportal` carries 1,000 extra files, 16 MiB) runs, one after the other: a build, a stage and a
 * promotion of that large target, two reconciles of all 41 targets and two observations of all 41
 * (`deploy_status`). A 2 ms ticker runs meanwhile; a gap between two ticks is time the event loop
 * could not serve anything else. For each phase: its duration, the longest gap, and the time spent in
 * gaps over 20 ms. On a shared machine the scheduler adds gaps of its own (compare with the load
 * average printed); a gap of the phase's whole duration means the work was synchronous.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ControlPlane, ControlService, type Submitted } from '../src/control/index.js';
import { EventBus } from '../src/events/bus.js';
import { RIGHTS, type Principal } from '../src/kernel/principal.js';
import { openDb } from '../src/store/db.js';
import { LARGE_TARGET, prepareDeploy } from './control-fixture.js';
import { fmt } from './measure.js';

const operator: Principal = { kind: 'capability', capId: 'bench', rights: new Set(RIGHTS), can: () => true };

interface Phase { name: string; ms: number; longestStallMs: number; stalledMs: number }

async function measure(name: string, fn: () => Promise<unknown>): Promise<Phase> {
  let last = performance.now();
  let longest = 0;
  let stalled = 0;
  const gap = (): void => {
    const now = performance.now();
    const g = now - last;
    last = now;
    longest = Math.max(longest, g);
    if (g > 20) stalled += g;
  };
  const ticker = setInterval(gap, 2);
  const started = performance.now();
  try { await fn(); } finally { gap(); clearInterval(ticker); }
  return { name, ms: performance.now() - started, longestStallMs: longest, stalledMs: stalled };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-bench-control-'));
  const load = loadavg()[0]!;
  try {
    const repo = prepareDeploy(dir);
    const db = openDb(join(dir, 'data', 'state.sqlite'));
    const plane = new ControlPlane({ db, bus: new EventBus(), dataDir: join(dir, 'data'), repoRoot: repo, resyncIntervalMs: 0 });
    const service = new ControlService(plane);
    await plane.start();
    const done = async (s: Submitted): Promise<{ version: string | null; state: string }> => {
      const op = await plane.waitOp((s.answer as { op_id: string }).op_id);
      if (op.state !== 'succeeded') throw new Error(`${op.kind} failed: ${JSON.stringify(op.error)}\n${op.log}`);
      return op;
    };
    const phases: Phase[] = [];
    let version: string | null = null;
    phases.push(await measure(`build ${LARGE_TARGET}`, async () => { version = (await done(await service.build(operator, { target: LARGE_TARGET }))).version; }));
    phases.push(await measure(`stage ${LARGE_TARGET}`, async () => done(await service.stage(operator, { target: LARGE_TARGET, version }))));
    phases.push(await measure(`promote ${LARGE_TARGET}`, async () => done(await service.deploy(operator, { target: LARGE_TARGET }))));
    for (const n of [1, 2]) phases.push(await measure(`reconcile all 41 (${n})`, async () => done(await service.reconcile(operator, {}))));
    for (const n of [1, 2]) phases.push(await measure(`observe all 41 (${n})`, () => plane.status()));
    await plane.close();
    db.close();
    console.log(`bench:control (bench/control-stalls.ts), ${new Date().toISOString().slice(0, 10)}, node ${process.version}, load average ${fmt(load, 1)} before and ${fmt(loadavg()[0]!, 1)} after (1-minute)`);
    console.log('');
    console.log('| phase | duration ms | longest event-loop stall ms | time in stalls > 20 ms |');
    console.log('|---|---:|---:|---:|');
    for (const p of phases) console.log(`| ${p.name} | ${fmt(p.ms, 0)} | ${fmt(p.longestStallMs, 0)} | ${fmt(p.stalledMs, 0)} |`);
    console.log('');
    console.log(`Files hashed by the release verifier: ${plane.observer.files.hashed} (the release has ${1000 + 2} files; a check of an unchanged release hashes none).`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
