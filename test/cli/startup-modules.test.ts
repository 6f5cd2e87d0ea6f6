// What a start loads, recorded by a module-loading hook in the real processes (bin/quarry.js, the build):
// `quarry serve` runs compiled JavaScript only — no tsx, TypeScript or esbuild, no X.509 library or its
// Reflect polyfill (the certificate is made in a child process), no OPAQUE until a login — and
// `quarry search` loads the engine without SQLite, the HTML extractors or OPAQUE.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { QUARRY_BIN, REPO_ROOT, startServer } from '../support/server.js';

const dir = mkdtempSync(join(tmpdir(), 'quarry-startup-modules-'));
after(() => rmSync(dir, { recursive: true, force: true }));

// `--import` this file and every module the process loads is appended to $QUARRY_MODULE_LOG as "pid url".
const hooks = join(dir, 'hooks.mjs');
writeFileSync(hooks, `import { appendFileSync } from 'node:fs';
let log, pid;
export function initialize(data) { log = data.log; pid = data.pid; }
export async function load(url, context, next) { appendFileSync(log, pid + ' ' + url + '\\n'); return next(url, context); }
`);
const registerHooks = join(dir, 'register.mjs');
writeFileSync(registerHooks, `import { register } from 'node:module';
register(${JSON.stringify(pathToFileURL(hooks).href)}, { data: { log: process.env.QUARRY_MODULE_LOG, pid: process.pid } });
`);
const hookEnv = (log: string) => ({ NODE_OPTIONS: `--import=${pathToFileURL(registerHooks).href}`, QUARRY_MODULE_LOG: log });

/** The modules process `pid` loaded, as paths relative to the repository or `node_modules/<package>/…`. */
function loaded(log: string, pid: number): string[] {
  return readFileSync(log, 'utf8').split('\n')
    .filter((l) => l.startsWith(`${pid} file:`))
    .map((l) => l.slice(l.indexOf(' ') + 1).replace(/^.*\/node_modules\//, 'node_modules/').replace(pathToFileURL(REPO_ROOT).href, ''));
}

const BUILD_TIME_ONLY = /^node_modules\/(tsx|typescript|esbuild|@esbuild)\/|^src\/|\.ts$/;

test('quarry serve loads compiled code only, and neither the X.509 library, its polyfill nor OPAQUE', async () => {
  const log = join(dir, 'serve.log');
  writeFileSync(log, '');
  const srv = await startServer({ env: hookEnv(log) }); // a first start: the certificate is generated too
  try {
    const modules = loaded(log, srv.pid);
    assert.ok(modules.includes('dist/cli/serve.js'), `the hook saw the server's modules: ${modules.slice(0, 5).join(', ')}`);
    assert.ok(modules.some((m) => m.startsWith('node_modules/better-sqlite3/')), 'the state database is loaded');
    assert.deepEqual(modules.filter((m) => BUILD_TIME_ONLY.test(m)), [], 'no build tool, no TypeScript source');
    assert.deepEqual(modules.filter((m) => /^node_modules\/(@peculiar|tsyringe|@serenity-kit)\/|reflect-metadata/.test(m)), []);
  } finally {
    assert.equal((await srv.stop()).code, 0);
  }
});

test('quarry search loads the engine without SQLite, the extractors or OPAQUE', async () => {
  const data = join(dir, 'data');
  mkdirSync(data);
  const srv = await startServer({ dataDir: data }); // creates the own corpus's index
  assert.equal((await srv.stop()).code, 0);
  const log = join(dir, 'search.log');
  writeFileSync(log, '');
  const r = spawnSync(process.execPath, [QUARRY_BIN, 'search', '--data', data, '--json', 'anything'], {
    encoding: 'utf8', env: { ...process.env, ...hookEnv(log) },
  });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).total, 0);
  const pids = new Set(readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => Number(l.split(' ')[0])));
  assert.equal(pids.size, 1, 'one process');
  const modules = loaded(log, [...pids][0]!);
  assert.ok(modules.includes('dist/cli/search.js'));
  assert.deepEqual(modules.filter((m) => BUILD_TIME_ONLY.test(m)), []);
  assert.deepEqual(modules.filter((m) => /^node_modules\/(better-sqlite3|htmlparser2|@serenity-kit)\//.test(m)), []);
});
