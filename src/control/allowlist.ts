/**
 * The allowlist: the one file that says which targets the control plane manages. The inventory derives
 * from it and every operation checks it first (CONTRACT §6), so a name that is not in the file is
 * `unknown_target` before any other work. The file is re-read when it changes on disk (by size and mtime),
 * so an operator can add a target without restarting, and its sha256 is the inventory's `revision`.
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { InternalError, UnknownTargetError } from '../kernel/errors.js';

/** Target names: what a directory name and a URL segment can carry safely. No `..`, no slash. */
export const TARGET_NAME = /^[a-z0-9][a-z0-9_.-]{0,63}$/;

export interface Allowlist {
  /** The file as given to the control plane. */
  readonly file: string;
  /** `sha256:<hex>` of the file's bytes. */
  readonly revision: string;
  /** Names in file order. */
  readonly targets: readonly string[];
  readonly set: ReadonlySet<string>;
}

export function parseAllowlist(file: string, text: string): Allowlist {
  const targets: string[] = [];
  const set = new Set<string>();
  text.split('\n').forEach((line, i) => {
    const name = line.replace(/#.*/, '').trim();
    if (name === '') return;
    if (!TARGET_NAME.test(name) || name.includes('..')) {
      throw new InternalError(`${file}:${i + 1}: ${JSON.stringify(name)} is not a valid target name.`);
    }
    if (set.has(name)) throw new InternalError(`${file}:${i + 1}: target ${name} is listed twice.`);
    set.add(name);
    targets.push(name);
  });
  return { file, revision: `sha256:${createHash('sha256').update(text).digest('hex')}`, targets, set };
}

/** Reads the allowlist, re-parsing only when the file changed. */
export class AllowlistSource {
  readonly file: string;
  #cached: { key: string; list: Allowlist } | undefined;

  constructor(file: string) { this.file = file; }

  current(): Allowlist {
    const st = statSync(this.file);
    const key = `${st.size}:${st.mtimeMs}:${st.ino}`;
    if (this.#cached?.key !== key) this.#cached = { key, list: parseAllowlist(this.file, readFileSync(this.file, 'utf8')) };
    return this.#cached.list;
  }

  /** Throws `UnknownTargetError` unless `name` is allowlisted; returns the name typed as a target. */
  check(name: unknown): string {
    if (typeof name !== 'string' || !this.current().set.has(name)) throw new UnknownTargetError(String(name));
    return name;
  }
}
