// Builds and services are started by the spawn helper, not by a fork of the server: the child's output,
// exit code, signal, nice value and log file come through as with a spawn of our own; a command that
// cannot start is an error, not an exit; and if the helper dies, its children are stopped and reported.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { Spawner, type SpawnedProcess } from '../../src/control/spawner.js';

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
const node = (script: string) => ({ command: process.execPath, args: ['-e', script], cwd: tmpdir(), env });

async function exitOf(p: SpawnedProcess): Promise<[number | null, NodeJS.Signals | null]> {
  return (await once(p, 'exit')) as [number | null, NodeJS.Signals | null];
}

/** The nice value of a process (Linux: the 19th field of its stat). */
function niceOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

test('output, exit code and nice value of a child started by the helper', async () => {
  const spawner = new Spawner();
  try {
    const p = spawner.spawn({ ...node('console.log("out"); console.error("err"); setTimeout(() => process.exit(3), 200)'), output: 'pipe', nice: 19 });
    let output = '';
    p.on('output', (chunk) => { output += chunk.toString('utf8'); });
    const pid = await p.started;
    assert.ok(pid > 0 && pid !== process.pid);
    assert.equal(niceOf(pid), 19);
    assert.deepEqual(await exitOf(p), [3, null]);
    assert.equal(output.split('\n').filter(Boolean).sort().join(','), 'err,out', 'all output arrives before the exit');
    assert.equal(p.running, false);
  } finally {
    spawner.close();
  }
});

test('a killed child reports its signal; a file receives the output of a child that writes to it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-spawner-'));
  const spawner = new Spawner();
  try {
    const log = join(dir, 'service.log');
    const p = spawner.spawn({ ...node('console.log("started"); setInterval(() => {}, 1000)'), output: { file: log } });
    await p.started;
    for (let i = 0; i < 100 && !readFileSync(log, 'utf8').includes('started'); i++) await new Promise((r) => setTimeout(r, 20));
    p.kill('SIGTERM');
    assert.deepEqual(await exitOf(p), [null, 'SIGTERM']);
    assert.equal(readFileSync(log, 'utf8'), 'started\n');
  } finally {
    spawner.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a command that cannot start is an error and never an exit', async () => {
  const spawner = new Spawner();
  try {
    const p = spawner.spawn({ command: '/nonexistent/quarry-no-such-command', args: [], cwd: tmpdir(), env, output: 'pipe' });
    let exited = false;
    p.on('exit', () => { exited = true; });
    const [err] = (await once(p, 'error')) as [Error];
    assert.match(err.message, /ENOENT/);
    await assert.rejects(p.started, /ENOENT/);
    assert.equal(exited, false);
    assert.equal(p.running, false);
  } finally {
    spawner.close();
  }
});

test('when the helper dies, its children are stopped and reported as killed, and the next spawn starts a new helper', async () => {
  const spawner = new Spawner();
  try {
    const p = spawner.spawn({ ...node('setInterval(() => {}, 1000)'), output: 'pipe' });
    const pid = await p.started;
    // The helper is this child's parent.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const helper = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    assert.notEqual(helper, process.pid);
    process.kill(helper, 'SIGKILL');
    assert.deepEqual(await exitOf(p), [null, 'SIGKILL']);
    for (let i = 0; i < 100; i++) {
      try { process.kill(pid, 0); } catch { break; }
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.throws(() => process.kill(pid, 0), 'the orphan was stopped');
    const q = spawner.spawn({ ...node('process.exit(0)'), output: 'pipe' });
    assert.deepEqual(await exitOf(q), [0, null]);
  } finally {
    spawner.close();
  }
});
