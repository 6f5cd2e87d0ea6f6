/** An index directory's tuning, every field resolved: `IndexOptions` (types.ts) with its defaults, checked. */
import { availableParallelism } from 'node:os';
import { BadRequestError } from '../../kernel/errors.js';
import { DEFAULT_POSTINGS_CACHE_BYTES } from './segment-reader.js';
import { DEFAULT_STORED_CACHE_BYTES } from './store.js';
import type { IndexOptions } from './types.js';

export interface ResolvedIndexOptions {
  maxBufferedBytes: number;
  mergeFactor: number;
  mergeFloorBytes: number;
  maxMergedBytes: number;
  maxMergeAtOnce: number;
  maxMergeDictionaryBytes: number;
  threadBytes: number;
  buildThreads: number;
  storedBlockBytes: number;
  storedQuality: number;
  storedCacheBytes: number;
  postingsCacheBytes: number;
  /** No `postingsCacheBytes` given: the term cache grows with the index from the default (`TermBytesCache.fitTo`). */
  postingsCacheGrows: boolean;
}

export function resolveIndexOptions(o: IndexOptions = {}): ResolvedIndexOptions {
  const r: ResolvedIndexOptions = {
    maxBufferedBytes: o.maxBufferedBytes ?? 256 * 1024 * 1024,
    mergeFactor: o.mergeFactor ?? 8,
    mergeFloorBytes: o.mergeFloorBytes ?? 2 * 1024 * 1024,
    maxMergedBytes: o.maxMergedBytes ?? 512 * 1024 * 1024,
    maxMergeAtOnce: o.maxMergeAtOnce ?? 32,
    maxMergeDictionaryBytes: o.maxMergeDictionaryBytes ?? 384 * 1024 * 1024,
    threadBytes: o.threadBytes ?? 16 * 1024 * 1024,
    buildThreads: o.buildThreads ?? (availableParallelism() > 1 ? 1 : 0),
    storedBlockBytes: o.storedBlockBytes ?? 16 * 1024,
    storedQuality: o.storedQuality ?? 1,
    storedCacheBytes: o.storedCacheBytes ?? DEFAULT_STORED_CACHE_BYTES,
    postingsCacheBytes: o.postingsCacheBytes ?? DEFAULT_POSTINGS_CACHE_BYTES,
    postingsCacheGrows: o.postingsCacheBytes === undefined,
  };
  const positive = (k: Exclude<keyof ResolvedIndexOptions, 'postingsCacheGrows'>, min: number, max = Number.MAX_SAFE_INTEGER) => {
    const v = r[k];
    if (!Number.isSafeInteger(v) || v < min || v > max) throw new BadRequestError(`Index option ${k} must be an integer in [${min}, ${max}], got ${String(v)}.`, k);
  };
  positive('maxBufferedBytes', 1);
  positive('mergeFactor', 2);
  positive('mergeFloorBytes', 1);
  positive('maxMergedBytes', 0);
  positive('maxMergeAtOnce', 2);
  positive('maxMergeDictionaryBytes', 0);
  positive('threadBytes', 0);
  positive('buildThreads', 0, 64);
  positive('storedBlockBytes', 1);
  positive('storedQuality', 0, 11);
  positive('storedCacheBytes', 0);
  positive('postingsCacheBytes', 0);
  return r;
}
