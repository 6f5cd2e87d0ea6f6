/**
 * The corpora configuration: which sources make the `own` corpus, and the ingest limits. A JSON file
 * (`<data>/corpora.json` by default, or the `corpora` member of a larger configuration object), validated
 * field by field: a mistake is a BadRequestError whose `param` is the dotted path of the field
 * (`own.library.sections[1]`) and whose message says what was expected. Relative paths resolve against
 * the directory of the file that holds them.
 *
 * `CorporaConfigInput` is what a person writes (every field optional); `CorporaConfig` is the resolved
 * form with every default applied. The defaults are documented in docs/corpora.md ("Configuration").
 */
import { corporaConfigFile } from '../kernel/data-dir.js';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BadRequestError } from '../kernel/errors.js';

/** The repository root (where `docs/` and `site/` live): two levels above this file. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Default man-page directory of the own corpus's library, used when it exists. */
export const DEFAULT_LIBRARY_DIR = '/usr/share/man';

export interface LibraryConfigInput {
  /** A directory of reference documents. Man-page trees (`manN/` subdirectories) are read as such. */
  dir?: string;
  /** Man sections to read (`manN` directories), when `dir` is a man-page tree. Default `["1", "8"]`. */
  sections?: string[];
  /**
   * At most this many library documents (pages in file-name order within sections in the order given).
   * Default 4000: keeps the first start well under a minute on two cores. 0 means no limit.
   */
  maxDocs?: number;
  /**
   * Man-page trees only: read a page only when a command of its name is installed (in `COMMAND_DIRS`), so
   * the library is the manual of this machine's commands rather than every page of a vendored SDK.
   * Default true.
   */
  commandsOnly?: boolean;
}

/** Where `commandsOnly` looks for installed commands. */
export const COMMAND_DIRS = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

export interface IngestConfigInput {
  /** Commit after this many documents (≥ 1). Default 2000. */
  commitEveryDocs?: number;
  /** Commit at least this often while documents keep coming, in seconds (> 0). Default 5. */
  commitEverySeconds?: number;
  /** A document's extracted text is cut at this many UTF-16 code units (≥ 1024). Default 4 Mi. */
  maxTextChars?: number;
  /** A single input record (JSONL line, WARC record, file) over this many bytes is skipped. Default 64 MiB. */
  maxRecordBytes?: number;
}

export interface CorporaConfigInput {
  own?: {
    /** Directory of Markdown/HTML/plain-text docs; `null` for none. Default `<repo>/docs`. */
    docs?: string | null;
    /** Directory of the site's HTML pages; `null` for none. Default `<repo>/site`. */
    site?: string | null;
    /** The library; a string is `{dir}`; `null` for none. Default the man pages when present. */
    library?: LibraryConfigInput | string | null;
  };
  ingest?: IngestConfigInput;
  /** How often (ms, ≥ 50) the server looks for commits made by another process. Default 1000. */
  refreshIntervalMs?: number;
}

export interface LibraryConfig { dir: string; sections: string[]; maxDocs: number; commandsOnly: boolean }
export interface IngestConfig { commitEveryDocs: number; commitEverySeconds: number; maxTextChars: number; maxRecordBytes: number }
export interface CorporaConfig {
  own: { docs: string | null; site: string | null; library: LibraryConfig | null };
  ingest: IngestConfig;
  refreshIntervalMs: number;
}

export const DEFAULT_INGEST: IngestConfig = {
  commitEveryDocs: 2000,
  commitEverySeconds: 5,
  maxTextChars: 4 * 1024 * 1024,
  maxRecordBytes: 64 * 1024 * 1024,
};
export const DEFAULT_LIBRARY_SECTIONS = ['1', '8'];
export const DEFAULT_LIBRARY_MAX_DOCS = 4000;
export const DEFAULT_REFRESH_INTERVAL_MS = 1000;

function fail(param: string, message: string): never {
  throw new BadRequestError(`Corpora configuration: ${param} ${message}.`, param);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function checkKeys(obj: Record<string, unknown>, allowed: string[], at: string): void {
  for (const k of Object.keys(obj)) {
    if (!allowed.includes(k)) fail(at ? `${at}.${k}` : k, `is not a known field (known: ${allowed.join(', ')})`);
  }
}

function pathField(v: unknown, param: string, baseDir: string): string {
  if (typeof v !== 'string' || v.trim() === '') fail(param, 'must be a non-empty path string');
  return isAbsolute(v) ? v : resolve(baseDir, v);
}

function intField(v: unknown, param: string, min: number, fallback: number): number {
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) fail(param, `must be an integer ≥ ${min}`);
  return v;
}

function positiveNumber(v: unknown, param: string, fallback: number): number {
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) fail(param, 'must be a number > 0');
  return v;
}

/**
 * Validates and resolves a configuration value (parsed JSON). `baseDir` resolves relative paths;
 * `defaults` can point the default sources elsewhere (tests).
 */
export function resolveCorporaConfig(
  value: unknown,
  baseDir: string,
  defaults: { repoRoot?: string; libraryDir?: string } = {},
): CorporaConfig {
  const input = value ?? {};
  if (!isObject(input)) fail('(root)', 'must be a JSON object');
  checkKeys(input, ['own', 'ingest', 'refreshIntervalMs'], '');
  const repo = defaults.repoRoot ?? REPO_ROOT;
  const libDefault = defaults.libraryDir ?? DEFAULT_LIBRARY_DIR;

  const own = input.own ?? {};
  if (!isObject(own)) fail('own', 'must be an object');
  checkKeys(own, ['docs', 'site', 'library'], 'own');
  const docs = own.docs === null ? null : own.docs === undefined ? join(repo, 'docs') : pathField(own.docs, 'own.docs', baseDir);
  const site = own.site === null ? null : own.site === undefined ? join(repo, 'site') : pathField(own.site, 'own.site', baseDir);

  let library: LibraryConfig | null;
  const lib = own.library;
  if (lib === null) library = null;
  else if (lib === undefined) {
    library = existsSync(libDefault)
      ? { dir: libDefault, sections: DEFAULT_LIBRARY_SECTIONS, maxDocs: DEFAULT_LIBRARY_MAX_DOCS, commandsOnly: true }
      : null;
  } else if (typeof lib === 'string') {
    library = { dir: pathField(lib, 'own.library', baseDir), sections: DEFAULT_LIBRARY_SECTIONS, maxDocs: DEFAULT_LIBRARY_MAX_DOCS, commandsOnly: true };
  } else if (isObject(lib)) {
    checkKeys(lib, ['dir', 'sections', 'maxDocs', 'commandsOnly'], 'own.library');
    const dir = lib.dir === undefined ? libDefault : pathField(lib.dir, 'own.library.dir', baseDir);
    let sections = DEFAULT_LIBRARY_SECTIONS;
    if (lib.sections !== undefined) {
      if (!Array.isArray(lib.sections) || lib.sections.length === 0) fail('own.library.sections', 'must be a non-empty array of section names');
      sections = lib.sections.map((s, i) => {
        if (typeof s !== 'string' || !/^[0-9a-z]{1,8}$/i.test(s)) fail(`own.library.sections[${i}]`, 'must be a man section name such as "1" or "3pm"');
        return s;
      });
    }
    if (lib.commandsOnly !== undefined && typeof lib.commandsOnly !== 'boolean') fail('own.library.commandsOnly', 'must be true or false');
    library = {
      dir,
      sections,
      maxDocs: intField(lib.maxDocs, 'own.library.maxDocs', 0, DEFAULT_LIBRARY_MAX_DOCS),
      commandsOnly: lib.commandsOnly ?? true,
    };
  } else {
    fail('own.library', 'must be a path, an object {dir, sections, maxDocs, commandsOnly} or null');
  }

  const ing = input.ingest ?? {};
  if (!isObject(ing)) fail('ingest', 'must be an object');
  checkKeys(ing, ['commitEveryDocs', 'commitEverySeconds', 'maxTextChars', 'maxRecordBytes'], 'ingest');
  const ingest: IngestConfig = {
    commitEveryDocs: intField(ing.commitEveryDocs, 'ingest.commitEveryDocs', 1, DEFAULT_INGEST.commitEveryDocs),
    commitEverySeconds: positiveNumber(ing.commitEverySeconds, 'ingest.commitEverySeconds', DEFAULT_INGEST.commitEverySeconds),
    maxTextChars: intField(ing.maxTextChars, 'ingest.maxTextChars', 1024, DEFAULT_INGEST.maxTextChars),
    maxRecordBytes: intField(ing.maxRecordBytes, 'ingest.maxRecordBytes', 1024, DEFAULT_INGEST.maxRecordBytes),
  };
  return {
    own: { docs, site, library },
    ingest,
    refreshIntervalMs: intField(input.refreshIntervalMs, 'refreshIntervalMs', 50, DEFAULT_REFRESH_INTERVAL_MS),
  };
}

/** The default location of the corpora configuration in a data directory. */
export function defaultConfigFile(dataDir: string): string {
  return corporaConfigFile(dataDir);
}

/**
 * Reads and resolves the configuration file `file`; a missing file gives the defaults only when
 * `optional` (the default location), otherwise it is an error, as is a file that is not valid JSON.
 */
export function loadCorporaConfig(file: string, options: { optional?: boolean; repoRoot?: string; libraryDir?: string } = {}): CorporaConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && options.optional) return resolveCorporaConfig(undefined, dirname(file), options);
    throw new BadRequestError(`Corpora configuration ${file} cannot be read: ${(err as Error).message}.`, 'config');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new BadRequestError(`Corpora configuration ${file} is not valid JSON: ${(err as Error).message}.`, 'config');
  }
  return resolveCorporaConfig(value, dirname(resolve(file)), options);
}

/**
 * The corpora configuration of a `--config` file as `quarry serve` reads it: the file's `corpora` member
 * when it has one (a whole service configuration), else the file itself (a corpora-only file).
 */
export function loadCorporaConfigFromServiceFile(file: string): CorporaConfig {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new BadRequestError(`Configuration ${file} cannot be read as JSON: ${(err as Error).message}.`, 'config');
  }
  const section = isObject(value) && 'corpora' in value ? value.corpora : value;
  return resolveCorporaConfig(section, dirname(resolve(file)));
}
