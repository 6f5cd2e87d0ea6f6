// A build's timeout: a build still running past it is killed and fails, and the time it waited for a core
// (it runs at nice 19 beside the search workers) is added to its deadline, within a bound. Real builds
// started by the spawn helper; only the reading of the kernel's wait figure is replaced where a test
// needs a machine that starves the build.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BuildFailedError, cpuWaitMs, runBuild } from '../../src/control/builder.js';
import type { Recipe } from '../../src/control/recipe.js';
import { Spawner } from '../../src/control/spawner.js';

/** A static target whose build writes `out/index.html` after `delayMs`. */
function target(root: string, delayMs: number, timeoutMs: number): Recipe {
  const sourceDir = join(root, 'src');
  mkdirSync(sourceDir, { recursive: true });
  writeFileSync(join(sourceDir, 'build.js'), `setTimeout(() => {
    require('node:fs').mkdirSync('out');
    require('node:fs').writeFileSync('out/index.html', 'built');
  }, ${delayMs});\n`);
  return {
    target: 'slow', kind: 'static', sourceDir,
    build: { command: ['node', 'build.js'], inputs: ['build.js'], output: 'out', timeoutMs },
    health: { type: 'file', path: 'index.html' },
  };
}

async function withBuild<T>(fn: (root: string, spawner: Spawner) => Promise<T>): Promise<T> {
  const root = mkdtempSync(join(tmpdir(), 'quarry-build-timeout-'));
  const spawner = new Spawner();
  try {
    return await fn(root, spawner);
  } finally {
    spawner.close();
    rmSync(root, { recursive: true, force: true });
  }
}

const options = (root: string, spawner: Spawner) => {
  mkdirSync(join(root, 'scratch'), { recursive: true });
  return { spawner, scratchDir: join(root, 'scratch'), logFile: join(root, 'build.log'), onLine: () => undefined };
};

test('a build still running at its timeout, having waited for no core, is killed and fails', async () => {
  await withBuild(async (root, spawner) => {
    const started = Date.now();
    await assert.rejects(
      runBuild(target(root, 30_000, 300), { ...options(root, spawner), cpuWait: () => 0 }),
      (err: unknown) => err instanceof BuildFailedError && /killed by SIGKILL \(timeout 300 ms, or cancelled\)/.test(err.message),
    );
    assert.ok(Date.now() - started < 20_000, 'killed at its timeout, not left to finish');
  });
});

test('the time a build waited for a core is added to its deadline', async () => {
  await withBuild(async (root, spawner) => {
    // the build needs ~1 s of wall time against a 300 ms timeout, but waited 2 s for a core by then
    const result = await runBuild(target(root, 1_000, 300), { ...options(root, spawner), cpuWait: () => 2_000 });
    assert.match(result.digest, /^sha256:/);
  });
});

test('what is granted for waiting is bounded, so a build on a machine starved for good still ends', async () => {
  await withBuild(async (root, spawner) => {
    let waited = 0;
    const started = Date.now();
    // the wait reported grows faster than time passes: without the bound the build would never be stopped
    await assert.rejects(
      runBuild(target(root, 60_000, 200), { ...options(root, spawner), cpuWait: () => (waited += 1_000) }),
      (err: unknown) => err instanceof BuildFailedError && /timeout 200 ms \+ 800 ms waiting for a core/.test(err.message),
    );
    assert.ok(Date.now() - started < 20_000);
  });
});

test('the kernel reports a process\'s wait for a core, and nothing for a process that is gone', () => {
  const own = cpuWaitMs(process.pid);
  if (process.platform === 'linux') assert.ok(own !== undefined && Number.isFinite(own) && own >= 0, String(own));
  assert.equal(cpuWaitMs(2 ** 22 + 12_345), undefined);
});
