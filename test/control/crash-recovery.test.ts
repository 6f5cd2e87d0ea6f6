// Crash safety: a real `quarry serve` is SIGKILLed 30 times at random moments while builds, stages,
// promotions and rollbacks run. After every restart, for all 41 targets: the live pointer names a
// complete release whose files match its manifest, no operation is left queued or running (interrupted
// ones are failed), no lock is held, no orphaned service process survives, and every verdict agrees with
// what the test itself finds on disk and in the process table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import Database from 'better-sqlite3';
import { connect, type TestClient } from '../support/client.js';
import { mintCap, prepare, startControlServer } from './server-support.js';
import { kindOf, versionInput } from './support.js';

const ROUNDS = Number(process.env.QUARRY_CRASH_ROUNDS ?? 30);
/** Three static targets, then three services (aimed rounds pick from the services). */
const POOL = ['sites', 'writer', 'survey', 'gengw', 'relate', 'hubgw'];

/** A small seeded PRNG so a failing run can be replayed with QUARRY_CRASH_SEED. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => { s = (s + 0x6d2b79f5) >>> 0; let t = s; t = Math.imul(t ^ (t >>> 15), t | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61); return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32; };
}

function walk(root: string, rel = ''): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of readdirSync(join(root, rel)).sort()) {
    const p = rel ? `${rel}/${name}` : name;
    const st = lstatSync(join(root, p));
    if (st.isDirectory()) { out[p] = { type: 'dir' }; Object.assign(out, walk(root, p)); }
    else if (st.isSymbolicLink()) out[p] = { type: 'symlink', to: readlinkSync(join(root, p)) };
    else out[p] = { type: 'file', size: st.size, sha256: createHash('sha256').update(readFileSync(join(root, p))).digest('hex') };
  }
  return out;
}

/** Supervised processes of this control directory, from /proc (the test's own view of the process table). */
function services(marker: string): { pid: number; target: string; version: string }[] {
  const out: { pid: number; target: string; version: string }[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    let env: string;
    try { env = readFileSync(`/proc/${e}/environ`, 'utf8'); } catch { continue; }
    const vars = Object.fromEntries(env.split('\0').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
    if (vars.QUARRY_SUPERVISOR === marker) out.push({ pid: Number(e), target: vars.QUARRY_TARGET!, version: vars.QUARRY_VERSION! });
  }
  return out;
}

test(`SIGKILL at random moments, ${ROUNDS} times: every invariant holds after each restart`, { timeout: 15 * 60_000 }, async (t) => {
  const seed = Number(process.env.QUARRY_CRASH_SEED ?? Date.now() % 100000);
  const rnd = prng(seed);
  const dir = mkdtempSync(join(tmpdir(), 'quarry-control-crash-'));
  const s = prepare(dir);
  const control = join(s.dataDir, 'control');
  const cap = mintCap(s.dataDir);
  const issued: string[] = [];
  let interrupted = 0;
  const interruptedKinds: Record<string, number> = {};
  let sawInFlight = 0;
  const targets = readFileSync(join(s.repo, 'deploy', 'allowlist.txt'), 'utf8').split('\n').map((l) => l.replace(/#.*/, '').trim()).filter(Boolean);

  async function checkInvariants(c: TestClient, round: number): Promise<void> {
    const where = `round ${round} (seed ${seed})`;
    const db = new Database(join(s.dataDir, 'state.sqlite'), { readonly: true, fileMustExist: true });
    try {
      const open = db.prepare(`SELECT op_id, kind, target, state FROM control_ops WHERE state IN ('queued', 'running')`).all();
      assert.deepEqual(open, [], `${where}: no operation left queued or running`);
      assert.deepEqual(db.prepare('SELECT target, lock_op FROM control_targets WHERE lock_op IS NOT NULL').all(), [], `${where}: no lock left`);
      for (const id of issued.splice(0)) {
        const op = db.prepare('SELECT kind, state, error FROM control_ops WHERE op_id = ?').get(id) as { kind: string; state: string; error: string | null } | undefined;
        assert.ok(op, `${where}: op ${id} was recorded`);
        assert.ok(op.state === 'succeeded' || op.state === 'failed', `${where}: op ${id} is ${op.state}`);
        if (op.error && JSON.parse(op.error).code === 'interrupted') { interrupted++; interruptedKinds[op.kind] = (interruptedKinds[op.kind] ?? 0) + 1; }
      }
    } finally { db.close(); }

    const st = await c.get('/api/deploy_status');
    assert.equal(st.status, 200, `${where}: ${st.text}`);
    const byTarget = new Map((st.json.targets as Record<string, any>[]).map((t) => [t.target, t]));
    assert.equal(byTarget.size, 41);
    const procs = services(control);
    let expectedProcs = 0;
    for (const t of targets) {
      const v = byTarget.get(t)!;
      const link = join(control, 'live', t);
      let live: string | undefined;
      if (existsSync(link) || (() => { try { lstatSync(link); return true; } catch { return false; } })()) {
        const to = readlinkSync(link);
        assert.equal(to, join('..', 'releases', t, basename(to)), `${where}: ${t} pointer is ours`);
        live = basename(to);
        const dirPath = join(control, 'releases', t, live);
        const manifestPath = `${dirPath}.manifest.json`;
        assert.ok(existsSync(dirPath) && existsSync(manifestPath), `${where}: ${t} live → complete release ${live}`);
        assert.deepEqual(walk(dirPath), JSON.parse(readFileSync(manifestPath, 'utf8')).files, `${where}: ${t} release files match the manifest`);
      }
      for (const n of existsSync(join(control, 'releases', t)) ? readdirSync(join(control, 'releases', t)) : []) {
        assert.ok(!n.startsWith('.'), `${where}: no temp debris ${t}/${n}`);
      }
      assert.equal(v.live?.version, live, `${where}: ${t} verdict's live version is the pointer's`);
      assert.equal(v.lock, null);
      assert.ok(['in_sync', 'missing', 'failed'].includes(v.verdict), `${where}: ${t} is ${v.verdict} (${v.reasons})`);
      if (v.verdict === 'in_sync') {
        assert.equal(v.desired.version, live, `${where}: ${t} in_sync means desired is live`);
        if (kindOf(s.repo, t) === 'service') {
          expectedProcs++;
          const mine = procs.filter((p) => p.target === t);
          assert.equal(mine.length, 1, `${where}: ${t} has exactly one process (${JSON.stringify(mine)})`);
          assert.equal(mine[0]!.version, live, `${where}: ${t} runs the live version`);
        }
      } else {
        assert.equal(v.desired, null, `${where}: ${t} not in sync only when nothing is desired`);
        assert.equal(live, undefined);
      }
    }
    assert.equal(procs.length, expectedProcs, `${where}: no orphaned or extra service processes`);
  }

  try {
    for (let round = 0; round <= ROUNDS; round++) {
      const srv = await startControlServer(s);
      const c = connect(srv, { validate: false, headers: { authorization: `Bearer ${cap}` } });
      try {
        await checkInvariants(c, round);
        if (round === ROUNDS) {
          c.close();
          const { code } = await srv.stop('SIGTERM');
          assert.equal(code, 0);
          assert.deepEqual(services(control), [], 'a clean shutdown stops every service');
          break;
        }
        // Work on a few targets of the pool: a new input, then build → stage → deploy (sometimes rollback).
        // Every third round aims at a promotion of a service (the slow kind: start, then health check).
        const aimed = round % 3 === 0;
        const picked = aimed ? [POOL[3 + Math.floor(rnd() * 3)]!] : POOL.filter(() => rnd() < 0.5).slice(0, 4);
        const chains = picked.map(async (t) => {
          const { file, edit } = versionInput(kindOf(s.repo, t));
          const p = join(s.repo, 'deploy', 'targets', t, file);
          if (aimed || rnd() < 0.7) { const { writeFileSync } = await import('node:fs'); writeFileSync(p, edit(readFileSync(p, 'utf8')).replace(/$/, `\n<!-- round ${round} -->`.repeat(file.endsWith('.md') ? 1 : 0))); }
          const step = async (path: string, body: Record<string, unknown>): Promise<Record<string, any> | undefined> => {
            const r = await c.post(path, body);
            if (r.status !== 202) return undefined;
            issued.push(r.json.op_id);
            for (;;) {
              const o = await c.get(`/api/ops/${r.json.op_id}`);
              if (o.json.state === 'succeeded' || o.json.state === 'failed') return o.json;
              await new Promise((res) => setTimeout(res, 20));
            }
          };
          const b = await step('/api/build', { target: t });
          if (b?.state !== 'succeeded') return;
          const st = await step('/api/upload', { target: t, version: b.version });
          if (st?.state !== 'succeeded') return;
          const d = await step('/api/deploy', { target: t, version: b.version });
          if (d?.state === 'succeeded' && rnd() < 0.3) await step('/api/rollback', { target: t, to: 'previous' });
        }).map((p) => p.catch(() => undefined));
        const open = new Database(join(s.dataDir, 'state.sqlite'), { readonly: true });
        if (aimed) {
          // Kill while the deploy or rollback is running (pointer switched, health check pending), or
          // give up after 8 s.
          const running = open.prepare(`SELECT COUNT(*) AS n FROM control_ops WHERE kind IN ('deploy', 'rollback') AND state = 'running'`);
          for (let i = 0; i < 800 && (running.get() as { n: number }).n === 0; i++) await new Promise((res) => setTimeout(res, 10));
          await new Promise((res) => setTimeout(res, rnd() * 60));
        } else {
          await new Promise((res) => setTimeout(res, 50 + rnd() * 900));
        }
        sawInFlight += (open.prepare(`SELECT COUNT(*) AS n FROM control_ops WHERE state IN ('queued', 'running')`).get() as { n: number }).n;
        open.close();
      } finally {
        c.close();
        if (srv.child.exitCode === null && srv.child.signalCode === null) await srv.stop('SIGKILL');
      }
    }
    t.diagnostic(`seed ${seed}: interrupted operations by kind ${JSON.stringify(interruptedKinds)}`);
    assert.ok(sawInFlight > 0, `some kills landed during operations (seed ${seed})`);
    assert.ok(interrupted > 0, `some operations were interrupted and marked failed (seed ${seed})`);
    assert.ok((interruptedKinds.deploy ?? 0) + (interruptedKinds.rollback ?? 0) > 0, `some promotions were interrupted (seed ${seed})`);
  } finally {
    for (const p of services(control)) { try { process.kill(p.pid, 'SIGKILL'); } catch { /* gone */ } }
    rmSync(dir, { recursive: true, force: true });
  }
});
