#!/usr/bin/env node
// Runs every test file under test/ and src/ (`*.test.ts`) with node's own test runner through tsx.
// Node 20 does not glob `.ts` test files itself, so this script lists them. A run that finds no test
// file, or whose runner executes no test, fails: a green run must mean tests ran. The tests that start
// `quarry` as a process run the build users run (bin/quarry.js → dist/), so dist/ is rebuilt first when
// a source changed since the last build.
//   npm test                    every test
//   npm test -- engine http     only files whose path contains one of the words
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const filters = process.argv.slice(2).filter((a) => !a.startsWith('-'));

function walk(dir, out) {
  let entries;
  try { entries = readdirSync(dir); } catch { return out; }
  for (const name of entries.sort()) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name.endsWith('.test.ts')) out.push(relative(root, p));
  }
  return out;
}

const files = [...walk(join(root, 'test'), []), ...walk(join(root, 'src'), [])]
  .filter((f) => filters.length === 0 || filters.some((w) => f.includes(w)));
if (files.length === 0) {
  console.error('run-tests: no test files matched; a run that executes no test fails.');
  process.exit(1);
}

// System tools some tests drive for real (openssl, chromium, wrk, protoc): install them when missing.
const deps = spawnSync('bash', [join(root, 'scripts/system-deps.sh')], { stdio: 'inherit' });
if (deps.status !== 0) process.exit(deps.status ?? 1);

const build = spawnSync(process.execPath, [join(root, 'scripts/build.mjs'), '--if-stale'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

const concurrency = process.env.QUARRY_TEST_CONCURRENCY ?? '2';
const child = spawn(process.execPath, [
  '--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, ...files,
], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, QUARRY_TEST: '1' } });

let tail = '';
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  tail = (tail + chunk.toString()).slice(-4096);
});
child.on('close', (code, signal) => {
  const ran = /^# tests (\d+)/m.exec(tail) ?? /ℹ tests (\d+)/.exec(tail);
  if (code === 0 && (!ran || Number(ran[1]) === 0)) {
    console.error('run-tests: the runner executed no test; failing.');
    process.exit(1);
  }
  process.exit(code ?? (signal ? 1 : 0));
});
