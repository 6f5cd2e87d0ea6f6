/**
 * Recipes: how each target is built, what kind it is and how its health is checked. A recipe is
 * `deploy/targets/<name>/recipe.json`, beside the target's source (format in docs/control-plane.md).
 * Loading validates every field, so a bad recipe is reported as the target's invalid spec (an event and a
 * failed operation, never retried) instead of surfacing halfway through a build.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, join, normalize } from 'node:path';
import { BadRequestError } from '../kernel/errors.js';

export type TargetKind = 'static' | 'service';

export interface Recipe {
  readonly target: string;
  readonly kind: TargetKind;
  /** The directory holding the source and the recipe. */
  readonly sourceDir: string;
  readonly build: {
    /** argv; a leading `node` runs the Node binary that runs Quarry. */
    readonly command: readonly string[];
    /** Files and directories (relative to sourceDir) copied into the scratch directory: the whole input. */
    readonly inputs: readonly string[];
    /** Directory (relative to the scratch directory) whose contents become the artifact. */
    readonly output: string;
    /** Build time limit; the build is killed and fails past it. Time the build waited for a core is added (builder.ts). */
    readonly timeoutMs: number;
  };
  /** `service` only: argv run with cwd = the release directory and `PORT` in the environment. */
  readonly run?: { readonly command: readonly string[] };
  readonly health: HealthCheck;
}

export type HealthCheck =
  | { readonly type: 'http'; readonly path: string; readonly timeoutMs: number; readonly deadlineMs: number }
  | { readonly type: 'file'; readonly path: string };

export const DEFAULT_BUILD_TIMEOUT_MS = 60_000;
export const DEFAULT_HEALTH_TIMEOUT_MS = 2_000;
export const DEFAULT_HEALTH_DEADLINE_MS = 15_000;

function relPath(v: unknown, what: string): string {
  if (typeof v !== 'string' || v === '' || isAbsolute(v) || normalize(v).split(/[\\/]/).includes('..')) {
    throw new BadRequestError(`${what} must be a relative path inside the target's directory.`);
  }
  return normalize(v);
}

function argv(v: unknown, what: string): string[] {
  if (!Array.isArray(v) || v.length === 0 || !v.every((s) => typeof s === 'string' && s !== '')) {
    throw new BadRequestError(`${what} must be a non-empty array of strings.`);
  }
  return v as string[];
}

function positive(v: unknown, fallback: number, what: string): number {
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) throw new BadRequestError(`${what} must be a positive integer.`);
  return v;
}

export function parseRecipe(target: string, sourceDir: string, json: unknown): Recipe {
  const where = `recipe of ${target}`;
  if (typeof json !== 'object' || json === null) throw new BadRequestError(`${where}: not a JSON object.`);
  const r = json as Record<string, unknown>;
  if (r.kind !== 'static' && r.kind !== 'service') throw new BadRequestError(`${where}: kind must be "static" or "service".`);
  const b = r.build as Record<string, unknown> | undefined;
  if (typeof b !== 'object' || b === null) throw new BadRequestError(`${where}: build is required.`);
  const inputs = b.inputs;
  if (!Array.isArray(inputs) || inputs.length === 0) throw new BadRequestError(`${where}: build.inputs must list the input files.`);
  const h = r.health as Record<string, unknown> | undefined;
  let health: HealthCheck;
  if (h && typeof h.http === 'string' && h.http.startsWith('/')) {
    health = {
      type: 'http', path: h.http,
      timeoutMs: positive(h.timeout_ms, DEFAULT_HEALTH_TIMEOUT_MS, `${where}: health.timeout_ms`),
      deadlineMs: positive(h.deadline_ms, DEFAULT_HEALTH_DEADLINE_MS, `${where}: health.deadline_ms`),
    };
  } else if (h && typeof h.file === 'string') {
    health = { type: 'file', path: relPath(h.file, `${where}: health.file`) };
  } else {
    throw new BadRequestError(`${where}: health must be {"http": "/path"} or {"file": "relative/path"}.`);
  }
  if (r.kind === 'service' && health.type !== 'http') throw new BadRequestError(`${where}: a service needs an http health check.`);
  const recipe: Recipe = {
    target, kind: r.kind, sourceDir,
    build: {
      command: argv(b.command, `${where}: build.command`),
      inputs: inputs.map((p, i) => relPath(p, `${where}: build.inputs[${i}]`)),
      output: relPath(b.output ?? 'out', `${where}: build.output`),
      timeoutMs: positive(b.timeout_ms, DEFAULT_BUILD_TIMEOUT_MS, `${where}: build.timeout_ms`),
    },
    health,
    ...(r.kind === 'service'
      ? { run: { command: argv((r.run as Record<string, unknown> | undefined)?.command, `${where}: run.command`) } }
      : {}),
  };
  return recipe;
}

export function loadRecipe(targetsDir: string, target: string): Recipe {
  const sourceDir = join(targetsDir, target);
  let text: string;
  try { text = readFileSync(join(sourceDir, 'recipe.json'), 'utf8'); } catch {
    throw new BadRequestError(`Target ${target} has no recipe (expected ${join(sourceDir, 'recipe.json')}).`);
  }
  let json: unknown;
  try { json = JSON.parse(text); } catch { throw new BadRequestError(`recipe of ${target}: not valid JSON.`); }
  return parseRecipe(target, sourceDir, json);
}
