/**
 * Control-plane tests against a real `quarry serve` process: a data directory and a private copy of
 * deploy/ wired in through the configuration file (no corpora sources, so start-up is quick), and a
 * capability minted with `quarry cap mint` on that data directory.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, REPO_ROOT, type TestServer } from '../support/server.js';
import { copyDeploy } from './support.js';

export const ALL_MGMT = 'mgmt.read,mgmt.build,mgmt.stage,mgmt.deploy,mgmt.rollback,mgmt.reconcile,mgmt.restart';

export interface ControlServerSetup { dir: string; repo: string; dataDir: string; configFile: string }

export function prepare(dir: string, control: Record<string, unknown> = {}): ControlServerSetup {
  const repo = copyDeploy(dir);
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir, { recursive: true });
  const configFile = join(dir, 'quarry.json');
  writeFileSync(configFile, JSON.stringify({
    corpora: { own: { docs: null, site: null, library: null } },
    control: { repoRoot: repo, resyncIntervalMs: 0, ...control },
  }));
  return { dir, repo, dataDir, configFile };
}

export function startControlServer(s: ControlServerSetup): Promise<TestServer> {
  return startServer({ dataDir: s.dataDir, args: ['--config', s.configFile], waitFor: 'listening', timeoutMs: 120_000 });
}

/** Mints a capability on the data directory (as an operator would with the CLI). */
export function mintCap(dataDir: string, rights = ALL_MGMT, targets?: string): string {
  const r = spawnSync(process.execPath, [
    join(REPO_ROOT, 'bin/quarry.js'), 'cap', 'mint', '--rights', rights, '--ttl', '2h', '--data', dataDir,
    ...(targets ? ['--targets', targets] : []),
  ], { cwd: REPO_ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`cap mint failed: ${r.stderr}`);
  return r.stdout.trim();
}
