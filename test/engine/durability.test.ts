/**
 * Durability (issue 2 item 7): a child process indexes and commits in a loop and is SIGKILLed at random
 * moments, 50 times, over one index directory. After each kill the index must pass the consistency
 * check and hold exactly the live set of the last commit that returned — or of the commit in flight at
 * the kill, when the manifest on disk proves that one completed (its generation is on disk). The child
 * announces each commit's generation and expected digest before starting it and confirms after it
 * returns, with synchronous writes, so the assertion is exact.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { checkIndex, Index } from '../../src/engine/index/index.js';
import { digestOf } from './index/durability-digest.js';

const KILLS = 50;

function liveDocs(index: Index): Map<bigint, { title: string; text: string }> {
  const out = new Map<bigint, { title: string; text: string }>();
  for (const seg of index.snapshot().segments) {
    for (let d = 0; d < seg.maxDoc; d++) {
      if (!seg.isLive(d)) continue;
      const s = seg.stored(d);
      assert.ok(!out.has(s.cid), `cid ${s.cid} live twice`);
      out.set(s.cid, { title: s.title, text: s.text });
    }
  }
  return out;
}

/** Runs the child and SIGKILLs it `killAfterMs` after its READY line (or after spawn when `fromSpawn`). */
function runChild(script: string, dir: string, seed: number, killAfterMs: number, fromSpawn: boolean): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, dir, String(seed)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let timer: NodeJS.Timeout | undefined;
    const arm = () => (timer ??= setTimeout(() => child.kill('SIGKILL'), killAfterMs));
    if (fromSpawn) arm();
    child.stdout.setEncoding('utf8').on('data', (s: string) => {
      out += s;
      if (out.includes('READY')) arm();
    });
    child.stderr.setEncoding('utf8').on('data', (s: string) => (err += s));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (signal !== 'SIGKILL') reject(new Error(`child exited by itself (code ${code}, signal ${signal}): ${err}`));
      else resolve(out.split('\n').filter((l) => l.length > 0));
    });
  });
}

test('SIGKILL at random moments: after each, the index is consistent and holds exactly the last acknowledged (or provably completed in-flight) commit', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'quarry-durability-'));
  try {
    // Bundle the child once: starting 50 plain-node processes is far cheaper than 50 tsx ones.
    const script = join(tmp, 'child.mjs');
    buildSync({
      entryPoints: [fileURLToPath(new URL('./index/durability-child.ts', import.meta.url))],
      bundle: true, platform: 'node', format: 'esm', target: 'node20', outfile: script, logLevel: 'error',
    });
    const dir = join(tmp, 'index');
    const expected = new Map<number, string>([[0, digestOf(new Map())]]);
    let committed = 0; // last generation known to be acknowledged
    let rng = 12345;
    const next = () => ((rng = (Math.imul(rng, 1103515245) + 12345) >>> 0) / 4294967296);
    let sawInFlight = 0;
    let maxGeneration = 0;
    for (let round = 0; round < KILLS; round++) {
      // most kills land while the child commits; one in five while it starts (opening, lock takeover)
      const fromSpawn = next() < 0.2;
      const lines = await runChild(script, dir, round + 1, Math.floor(next() * (fromSpawn ? 300 : 700)), fromSpawn);
      let begun = committed;
      for (const line of lines) {
        const [kind, gen, digest] = line.split(' ');
        if (kind === 'BEGIN') {
          begun = Number(gen);
          expected.set(begun, digest!);
        } else if (kind === 'DONE') {
          committed = Number(gen);
        }
      }
      const report = checkIndex(dir);
      assert.ok(report.ok, `round ${round}: ${report.problems.join('; ')}`);
      const index = await Index.open(dir);
      try {
        const g = index.snapshot().generation;
        assert.ok(g === committed || g === begun, `round ${round}: generation ${g} on disk, acknowledged ${committed}, in flight ${begun}`);
        if (g !== committed) sawInFlight++;
        committed = g;
        maxGeneration = g;
        assert.equal(digestOf(liveDocs(index)), expected.get(g), `round ${round}: live set of generation ${g}`);
      } finally {
        await index.close();
      }
    }
    // The test is only meaningful if the children got to commit a fair amount.
    assert.ok(maxGeneration >= KILLS / 2, `only ${maxGeneration} commits in ${KILLS} rounds`);
    console.log(`${maxGeneration} commits, ${sawInFlight} in-flight commits found completed after a kill`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
