/**
 * Shared fixtures of the control-plane tests: a private copy of deploy/ (so a test can change a
 * target's input for a "second version" without touching the repository), a real state database and
 * event bus in a temp directory, and principals built directly (the library tests do not need the auth
 * module's capabilities).
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RIGHTS, type Principal, type Right } from '../../src/kernel/principal.js';
import { EventBus, type BusEvent } from '../../src/events/bus.js';
import { openDb, type Db } from '../../src/store/db.js';
import { ControlPlane, ControlService, type ControlPlaneOptions, type OpView, type Submitted } from '../../src/control/index.js';
import { manifestOf, type FileManifest } from '../../src/control/artifact.js';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));

export function principal(rights: readonly Right[] | 'all' = 'all', targets?: readonly string[], capId = 'cap_test'): Principal {
  const set = new Set<Right>(rights === 'all' ? RIGHTS : rights);
  return {
    kind: 'capability', capId, account: 'tester', rights: set,
    can: (right, target) => set.has(right) && (target === undefined || targets === undefined || targets.includes(target)),
  };
}

/** A small release (`index.html`, `sub/a.css`, the symlink `home` → `index.html`) in a new temp directory, with its manifest. */
export async function smallRelease(prefix: string): Promise<{ dir: string; release: string; manifest: FileManifest }> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const release = join(dir, 'r');
  mkdirSync(join(release, 'sub'), { recursive: true });
  writeFileSync(join(release, 'index.html'), '<p>hello</p>');
  writeFileSync(join(release, 'sub', 'a.css'), 'a{}');
  symlinkSync('index.html', join(release, 'home'));
  return { dir, release, manifest: await manifestOf(release) };
}

export const anonymous: Principal = { kind: 'anonymous', rights: new Set(), can: () => false };

export interface Fixture {
  dir: string;
  repo: string;
  dataDir: string;
  db: Db;
  bus: EventBus;
  events: BusEvent[];
  cp: ControlPlane;
  /** The application service over `cp`: what the faces call. */
  svc: ControlService;
  /** Writes a new input for a target (a real input change → a new version). */
  editInput(target: string, file: string, edit: (text: string) => string): void;
  close(): Promise<void>;
}

/** A private copy of the repository's deploy/ directory (allowlist, targets). */
export function copyDeploy(dir: string): string {
  const repo = join(dir, 'repo');
  cpSync(join(REPO, 'deploy'), join(repo, 'deploy'), { recursive: true });
  return repo;
}

export async function fixture(options: Partial<ControlPlaneOptions> & { start?: boolean } = {}): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), 'quarry-control-'));
  const repo = copyDeploy(dir);
  const dataDir = join(dir, 'data');
  const db = openDb(join(dataDir, 'state.sqlite'));
  const bus = new EventBus();
  const events: BusEvent[] = [];
  bus.subscribe((e) => events.push(e));
  const cp = new ControlPlane({ db, bus, dataDir, repoRoot: repo, resyncIntervalMs: 0, ...options });
  if (options.start !== false) await cp.start();
  return {
    dir, repo, dataDir, db, bus, events, cp, svc: new ControlService(cp),
    editInput(target, file, edit) {
      const p = join(repo, 'deploy', 'targets', target, file);
      writeFileSync(p, edit(readFileSync(p, 'utf8')));
    },
    async close() {
      await cp.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Waits for an operation (a service's `Submitted` or a bare answer) and asserts nothing about it: the caller checks `state`. */
export async function settle(cp: ControlPlane, submitted: Submitted | { op_id: string } | object): Promise<OpView> {
  const answer = 'answer' in submitted ? submitted.answer : submitted;
  return cp.waitOp((answer as { op_id: string }).op_id);
}

/** The input file a template target's second version changes. */
export function versionInput(kind: 'static' | 'service'): { file: string; edit: (t: string) => string } {
  return kind === 'static'
    ? { file: 'content.md', edit: (t) => `${t}\nSecond release: the page now says more.\n` }
    : { file: 'config.json', edit: (t) => t.replace(/"message": "([^"]*)"/, '"message": "$1, second release"') };
}

export function kindOf(repo: string, target: string): 'static' | 'service' {
  return JSON.parse(readFileSync(join(repo, 'deploy', 'targets', target, 'recipe.json'), 'utf8')).kind;
}
