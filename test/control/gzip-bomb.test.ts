// A gzip bomb costs the server its declared limits, not its inflated size: decompression is streamed and
// bounded while the archive is inspected, and the process's peak memory stays flat. Each case runs in a
// child process so that its peak resident set size (`maxRSS`) belongs to the inspection alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { gzipBomb } from './tarball.js';
import { REPO_ROOT } from '../support/server.js';

const MiB = 1024 * 1024;

/** Inspects `file` in a fresh process; returns its outcome and how much its peak RSS grew meanwhile (MiB). */
function inspectInChild(file: string, limits: { maxUnpackedBytes: number; maxEntries: number }): Promise<{ error?: string; growthMiB: number }> {
  const script = `
    import { inspectArtifact } from ${JSON.stringify(join(REPO_ROOT, 'src/control/artifact.ts'))};
    globalThis.gc?.();
    const before = process.resourceUsage().maxRSS;
    let error;
    try { await inspectArtifact(${JSON.stringify(file)}, ${JSON.stringify(limits)}); } catch (e) { error = e.message; }
    const growthMiB = (process.resourceUsage().maxRSS - before) / 1024;
    console.log(JSON.stringify({ error, growthMiB }));
  `;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--import', 'tsx', '--expose-gc', '--input-type=module', '-e', script], { cwd: REPO_ROOT, maxBuffer: MiB },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`${err.message}\n${stderr}`));
        resolve(JSON.parse(stdout.trim().split('\n').pop()!) as { error?: string; growthMiB: number });
      });
  });
}

/** Writes `bytes` to a temporary file, inspects it in a child process, and removes it. */
async function inspectBytes(bytes: Buffer, limits: { maxUnpackedBytes: number; maxEntries: number }): Promise<{ error?: string; growthMiB: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-bomb-'));
  try {
    const file = join(dir, 'artifact.tar');
    writeFileSync(file, bytes);
    return await inspectInChild(file, limits);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a gzip bomb whose header declares more than the limit is refused without inflating it', async () => {
  // ~1 MiB on the wire, 1 GiB inflated, the header says 1 GiB; the limit is 64 MiB.
  const r = await inspectBytes(gzipBomb(1024 * MiB, 1024 * MiB), { maxUnpackedBytes: 64 * MiB, maxEntries: 1000 });
  assert.match(r.error ?? '', /more than 67108864 bytes/);
  assert.ok(r.growthMiB < 64, `peak RSS grew by ${r.growthMiB.toFixed(0)} MiB`);
});

test('what follows the end of the archive is not inflated', async () => {
  // The header declares 1 MiB; 1 GiB of zeros follow: the file's body, then end-of-archive blocks and
  // more zeros than any limit allows, which a tar reader ignores.
  const r = await inspectBytes(gzipBomb(MiB, 1024 * MiB), { maxUnpackedBytes: 64 * MiB, maxEntries: 1000 });
  assert.equal(r.error, undefined);
  assert.ok(r.growthMiB < 64, `peak RSS grew by ${r.growthMiB.toFixed(0)} MiB`);
});

test('a large compressed archive within the limits is inspected in bounded memory', async () => {
  // A real (if silly) artifact: one 512 MiB file of zeros, under a 1 GiB limit.
  const r = await inspectBytes(Buffer.concat([gzipBomb(512 * MiB, 512 * MiB), gzipSyncEnd()]), { maxUnpackedBytes: 1024 * MiB, maxEntries: 1000 });
  assert.equal(r.error, undefined);
  assert.ok(r.growthMiB < 64, `peak RSS grew by ${r.growthMiB.toFixed(0)} MiB`);
});

/** The two zero blocks that end a tar archive, as one more gzip member. */
function gzipSyncEnd(): Buffer {
  return gzipSync(Buffer.alloc(1024));
}
