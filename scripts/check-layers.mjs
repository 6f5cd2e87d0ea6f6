#!/usr/bin/env node
// Checks the layering rules of .dependency-cruiser.cjs over ROOT/src (default: this repository) and prints
// each violation; exits 1 when there is one. `npm run check:layers`.
//
// dependency-cruiser reads TypeScript through the TypeScript compiler's JavaScript API, which TypeScript 7
// no longer has. So each `src/**/*.ts` is first turned into JavaScript with esbuild (the same relative
// paths, `.js`), with every import kept: `import type` becomes a plain import before the transform and
// `verbatimModuleSyntax` keeps the rest, because a type-only import couples two layers just the same.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';
import { cruise } from 'dependency-cruiser';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const root = process.argv[2] ?? REPO;
const config = createRequire(import.meta.url)(join(REPO, '.dependency-cruiser.cjs'));

function* tsFiles(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* tsFiles(p);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) yield p;
  }
}

/** The source file a transformed module came from (package imports stay as written). */
const tsName = (p) => (p.startsWith('src/') ? p.replace(/\.js$/, '.ts') : p);

const work = mkdtempSync(join(tmpdir(), 'quarry-layers-'));
try {
  symlinkSync(join(REPO, 'node_modules'), join(work, 'node_modules')); // packages resolve as they do in the repository
  for (const file of tsFiles(join(root, 'src'))) {
    const source = readFileSync(file, 'utf8')
      .replace(/^(\s*)import\s+type\s+/gm, '$1import ')
      .replace(/^(\s*)export\s+type\s+(\{[^}]*\}\s*from)/gm, '$1export $2')
      .replace(/([{,]\s*)type\s+(?=[A-Za-z_$][\w$]*\s*(?:[,}]|as\b))/g, '$1');
    const { code } = transformSync(source, {
      loader: 'ts', format: 'esm', sourcefile: file,
      tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } },
    });
    const out = join(work, relative(root, file)).replace(/\.ts$/, '.js');
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, code);
  }
  const { options, ...ruleSet } = config;
  const result = await cruise(['src'], { ...options, baseDir: work, ruleSet, validate: true, outputType: 'json' });
  const out = JSON.parse(result.output);
  const violations = out.summary.violations.map((v) => `${v.rule.name}: ${tsName(v.from)} → ${tsName(v.to)}`);
  if (process.argv.includes('--json')) console.log(JSON.stringify({ modules: out.summary.totalCruised, violations }));
  else {
    for (const v of violations) console.log(v);
    console.log(`${violations.length} violation(s) in ${out.summary.totalCruised} modules.`);
  }
  process.exitCode = violations.length > 0 ? 1 : 0;
} finally {
  rmSync(work, { recursive: true, force: true });
}
