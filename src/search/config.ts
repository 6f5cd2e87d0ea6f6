/**
 * The `search` section of the service configuration: how many worker threads answer searches
 * (`workers`, default one per core, 0 = on the event loop) and the time budget of one search
 * (`budgetMs`, see `SearchLimits.budgetMs`).
 */
import { availableParallelism } from 'node:os';
import { BadRequestError } from '../kernel/errors.js';

export interface SearchConfig {
  /** Worker threads of the search pool; 0 runs searches on the event loop. Default: the number of cores. */
  workers: number;
  /** Most milliseconds one search may run. Default: the service's (10 s). */
  budgetMs?: number;
}

export function resolveSearchConfig(section: Record<string, unknown>): SearchConfig {
  const { workers, budgetMs, ...rest } = section;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) throw new BadRequestError(`Unknown member of search in the configuration: ${unknown.join(', ')}.`, 'search');
  const config: SearchConfig = { workers: availableParallelism() };
  if (workers !== undefined) {
    if (!Number.isInteger(workers) || (workers as number) < 0 || (workers as number) > 256) {
      throw new BadRequestError(`search.workers must be an integer from 0 to 256, got ${JSON.stringify(workers)}.`, 'search.workers');
    }
    config.workers = workers as number;
  }
  if (budgetMs !== undefined) {
    if (!Number.isInteger(budgetMs) || (budgetMs as number) < 1) {
      throw new BadRequestError(`search.budgetMs must be a whole number of milliseconds ≥ 1, got ${JSON.stringify(budgetMs)}.`, 'search.budgetMs');
    }
    config.budgetMs = budgetMs as number;
  }
  return config;
}
