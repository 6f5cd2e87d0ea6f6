/**
 * The layout of a data directory (docs/data-directory.md): where every part keeps its files. Paths are
 * built here only, so the server, the CLI and the tests agree on them.
 */
import { join } from 'node:path';
import type { Scope } from './scope.js';

/** The SQLite state database: accounts, capabilities, audit, control-plane records, cids. */
export function stateDbPath(dataDir: string): string { return join(dataDir, 'state.sqlite'); }

/** The self-signed TLS pair made on first start (key mode 0600). */
export function selfSignedTlsPaths(dataDir: string): { certFile: string; keyFile: string } {
  return { certFile: join(dataDir, 'tls', 'cert.pem'), keyFile: join(dataDir, 'tls', 'key.pem') };
}

/** The parent of every corpus index. */
export function indexesDir(dataDir: string): string { return join(dataDir, 'index'); }

/** One corpus's index directory. */
export function indexDir(dataDir: string, scope: Scope): string { return join(dataDir, 'index', scope); }

/** The fingerprint of the own corpus's sources at its last indexing. */
export function ownSourcesFile(dataDir: string): string { return join(dataDir, 'index', 'own.sources.json'); }

/** The corpora configuration written by `quarry` when none is given. */
export function corporaConfigFile(dataDir: string): string { return join(dataDir, 'corpora.json'); }

/** The crawler's WARC files (docs/crawling.md). */
export function crawlWarcDir(dataDir: string): string { return join(dataDir, 'crawl', 'warc'); }

/** The control plane's artifacts, releases, live pointers and logs. */
export function controlDir(dataDir: string): string { return join(dataDir, 'control'); }
