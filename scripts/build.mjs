#!/usr/bin/env node
// Builds what the server and the CLI run, into dist/:
//   - src/**/*.ts compiled by tsc (tsconfig.build.json) to dist/**/*.js, and the other files of src/ (the
//     SQL migrations) copied beside them, so dist/ mirrors src/ and paths relative to a module hold in both;
//   - the browser scripts of web/ bundled by esbuild into dist/web/, with the static files of web/.
// Nothing compiles or bundles at run time. The build goes to a temporary directory that replaces dist/
// only once complete, so a failed build leaves the previous one in place.
//
//   node scripts/build.mjs              always build (`npm run build`, and `npm ci` through `prepare`)
//   node scripts/build.mjs --if-stale   build only when an input changed since the last build (`npm start`,
//                                       `npm test`): inputs are hashed, the hash is kept in dist/.inputs
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(root, 'dist');
const STAMP = '.inputs';
/** The browser entry points of web/, each bundled to dist/web/<name>.js. */
const WEB_ENTRIES = ['login.ts', 'search.ts', 'console.ts'];

function files(dir, out = []) {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) files(p, out);
    else out.push(p);
  }
  return out;
}

/** SHA-256 over the path and content of every input: a changed, added or removed file changes it. */
function inputsHash() {
  const h = createHash('sha256');
  const inputs = [
    ...files(join(root, 'src')), ...files(join(root, 'web')),
    ...['tsconfig.json', 'tsconfig.build.json', 'package-lock.json', 'scripts/build.mjs'].map((f) => join(root, f)),
  ];
  for (const f of inputs) h.update(`${relative(root, f)}\0`).update(readFileSync(f)).update('\0');
  return h.digest('hex');
}

function isCurrent(hash) {
  try { return readFileSync(join(DIST, STAMP), 'utf8') === hash; } catch { return false; }
}

async function build(hash) {
  const out = join(root, `.dist-${process.pid}`);
  rmSync(out, { recursive: true, force: true });
  try {
    const tsc = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', out], { stdio: 'inherit' });
    if (tsc.status !== 0) throw new Error(`tsc failed (exit ${tsc.status ?? tsc.signal})`);
    for (const f of files(join(root, 'src')).filter((p) => !p.endsWith('.ts'))) {
      const to = join(out, relative(join(root, 'src'), f));
      mkdirSync(dirname(to), { recursive: true });
      copyFileSync(f, to);
    }
    const esbuild = await import('esbuild');
    await esbuild.build({
      entryPoints: WEB_ENTRIES.map((e) => join(root, 'web', e)), outdir: join(out, 'web'),
      bundle: true, format: 'esm', platform: 'browser', target: 'es2022', minify: true, legalComments: 'none', logLevel: 'warning',
    });
    for (const f of readdirSync(join(root, 'web')).filter((n) => !n.endsWith('.ts'))) {
      if (statSync(join(root, 'web', f)).isFile()) copyFileSync(join(root, 'web', f), join(out, 'web', f));
    }
    writeFileSync(join(out, STAMP), hash);
    const old = join(root, `.dist-old-${process.pid}`);
    if (existsSync(DIST)) renameSync(DIST, old);
    renameSync(out, DIST);
    rmSync(old, { recursive: true, force: true });
  } catch (err) {
    rmSync(out, { recursive: true, force: true });
    throw err;
  }
}

const hash = inputsHash();
if (process.argv.includes('--if-stale') && isCurrent(hash)) process.exit(0);
const t0 = performance.now();
await build(hash).catch((err) => {
  console.error(`build: ${err.message}`);
  process.exit(1);
});
console.error(`build: dist/ built in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
