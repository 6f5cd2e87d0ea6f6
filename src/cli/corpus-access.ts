/**
 * How the data commands reach the corpora: the configuration (`--config` / `QUARRY_CONFIG`, else
 * `<data>/corpora.json`, else the defaults: the same rule as `quarry serve`), the `--corpus` option, and
 * read-only opening of one index, which takes no writer lock, so `quarry search` works while a server
 * or an import runs on the same data directory. It imports the engine and the kernel only (not the
 * corpora service, which brings SQLite and the extractors), so a read-only command starts fast.
 */
import { existsSync } from 'node:fs';
import { Index } from '../engine/index.js';
import { isScope, SCOPES, type Scope } from '../kernel/scope.js';
import { indexDir } from '../kernel/data-dir.js';
import { defaultConfigFile, loadCorporaConfig, loadCorporaConfigFromServiceFile, type CorporaConfig } from '../corpora/config.js';
import { NotFoundError } from '../kernel/errors.js';
import { SearchService, type SearchLimits } from '../search/service.js';
import { UsageError } from './command.js';

export const CORPUS_OPTIONS = {
  corpus: { type: 'string' },
  /** Alias of --corpus, named as in the HTTP API. */
  scope: { type: 'string' },
} as const;

/** `--corpus` (or `--scope`): own, web or trusted; `fallback` when absent. */
export function corpusOption(values: { corpus?: string | undefined; scope?: string | undefined }, fallback: Scope = 'own'): Scope {
  const raw = values.corpus ?? values.scope;
  if (raw === undefined) return fallback;
  if (!isScope(raw)) throw new UsageError(`--corpus must be one of ${SCOPES.join(', ')}, got ${JSON.stringify(raw)}.`);
  return raw;
}

export function loadCliCorporaConfig(configFlag: string | undefined, dataDir: string): CorporaConfig {
  const file = configFlag ?? process.env['QUARRY_CONFIG'];
  if (file) return loadCorporaConfigFromServiceFile(file);
  return loadCorporaConfig(defaultConfigFile(dataDir), { optional: true });
}

/**
 * The search service over one index opened read-only, as the operator at the machine sees it: the same
 * rules and resources as every other face. `close()` closes the index.
 */
export async function openSearchService(dataDir: string, scope: Scope, limits: SearchLimits = {}): Promise<{ service: SearchService; close(): Promise<void> }> {
  const index = await openIndexReadOnly(dataDir, scope);
  const service = new SearchService({ searcher: (s) => (s === scope ? index.searcher() : undefined) }, limits);
  return { service, close: () => index.close() };
}

/** The wire form of a scope: absent for the own corpus (as the HTTP API takes it). */
export function wireScope(scope: Scope): Scope | undefined {
  return scope === 'own' ? undefined : scope;
}

/** Whether the corpus `scope` has an index in `dataDir` (it was ever indexed or imported). */
export function hasIndex(dataDir: string, scope: Scope): boolean {
  return existsSync(indexDir(dataDir, scope));
}

/** Opens the index of `scope` for reading; NotFoundError when it was never created. */
export async function openIndexReadOnly(dataDir: string, scope: Scope): Promise<Index> {
  if (!hasIndex(dataDir, scope)) {
    const hint = scope === 'own' ? 'quarry index' : `quarry import --corpus ${scope}`;
    throw new NotFoundError(`The ${scope} corpus has no index in ${dataDir} yet; create it with \`${hint}\`.`);
  }
  return Index.open(indexDir(dataDir, scope));
}
