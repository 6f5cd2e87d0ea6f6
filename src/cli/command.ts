/**
 * What every `quarry` command shares — reuse it for new commands: argument parsing with usage errors,
 * the data directory (`--data`, else `QUARRY_DATA`, else `./data`), JSON output (`--json`, cids as
 * strings), and one place that turns a failure into a one-line message and an exit code:
 *
 *   0 success · 1 failure (I/O, conflict, not found, a failed import) · 2 usage (unknown option, missing or
 *   malformed argument: the command's usage is printed) · 130 interrupted (SIGINT).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { resolve } from 'node:path';
import { QuarryError } from '../kernel/errors.js';
import { toJson } from '../kernel/json.js';

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
export const EXIT_INTERRUPTED = 130;

/** A mistake in how the command was called: exit 2 with the usage text. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The options every data command takes. */
export const COMMON_OPTIONS = {
  data: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const satisfies NonNullable<ParseArgsConfig['options']>;

/** `parseArgs` in strict mode whose complaints are UsageErrors. */
export function parseCommandArgs<O extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: O, allowPositionals = true) {
  try {
    return parseArgs({ args, options, allowPositionals, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/\. To specify a positional argument.*$/s, '.'));
  }
}

/** The data directory: `--data`, else `QUARRY_DATA`, else `./data`; absolute. */
export function resolveDataDir(flag: string | undefined): string {
  return resolve(flag ?? process.env['QUARRY_DATA'] ?? 'data');
}


/** One JSON line on stdout. */
export function printJsonLine(value: unknown): void {
  process.stdout.write(toJson(value) + '\n');
}

/** A non-negative integer option, or UsageError naming it. */
export function intOption(name: string, raw: string | undefined, min = 0): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^[0-9]+$/.test(raw) || Number(raw) < min || !Number.isSafeInteger(Number(raw))) {
    throw new UsageError(`--${name} must be an integer ≥ ${min}, got ${JSON.stringify(raw)}.`);
  }
  return Number(raw);
}

/**
 * Runs a command body and maps what it throws to an exit code with a one-line message on stderr:
 * `quarry <name>: <message>` (plus the usage for a UsageError). With `json`, failures are also a JSON line
 * `{"error": {code, message}}` on stdout, so scripts need not parse stderr.
 */
export async function runCommand(name: string, usage: string, json: () => boolean, body: () => Promise<number>): Promise<number> {
  // `quarry search … | head`: a reader that stops early is not an error of ours.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => { if (err.code === 'EPIPE') process.exit(EXIT_OK); });
  try {
    return await body();
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`quarry ${name}: ${err.message}\n\n${usage}\n`);
      if (json()) printJsonLine({ error: { code: 'usage', message: err.message } });
      return EXIT_USAGE;
    }
    const message = (err as Error)?.message ?? String(err);
    process.stderr.write(`quarry ${name}: ${message}\n`);
    if (json()) printJsonLine({ error: { code: QuarryError.is(err) ? err.code : 'internal', message } });
    if (QuarryError.is(err) && /^bad_/.test(err.code)) return EXIT_USAGE;
    return EXIT_FAILURE;
  }
}
