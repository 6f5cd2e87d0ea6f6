/**
 * The control-plane benchmarks' fixture: a private copy of the repository's deploy/ directory in which
 * one static target (`docportal`) also carries 1,000 files of 16 KiB (`bulk/`, copied into its
 * release), so building, staging and checking a live release against its manifest have real work to do.
 */
import { appendFileSync, cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './dataset.js';

/** The target that carries the extra files. */
export const LARGE_TARGET = 'docportal';

/** Copies deploy/ into `<dir>/repo` and adds the extra files to LARGE_TARGET; returns the repository root. */
export function prepareDeploy(dir: string): string {
  const repo = join(dir, 'repo');
  cpSync(join(REPO_ROOT, 'deploy'), join(repo, 'deploy'), { recursive: true });
  const target = join(repo, 'deploy', 'targets', LARGE_TARGET);
  for (let i = 0; i < 1000; i++) {
    const d = join(target, 'bulk', String(i % 20));
    mkdirSync(d, { recursive: true });
    writeFileSync(join(d, `f${i}.txt`), `${String(i).padStart(8, '0')}\n`.repeat(16 * 1024 / 9));
  }
  const recipeFile = join(target, 'recipe.json');
  const recipe = JSON.parse(readFileSync(recipeFile, 'utf8')) as { build: { inputs: string[] } };
  recipe.build.inputs.push('bulk');
  writeFileSync(recipeFile, JSON.stringify(recipe, null, 2));
  appendFileSync(join(target, 'build.mjs'), "\n(await import('node:fs')).cpSync('bulk', 'out/bulk', { recursive: true });\n");
  return repo;
}

