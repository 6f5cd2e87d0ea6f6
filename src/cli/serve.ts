/**
 * `quarry serve`: runs the HTTPS service over a data directory until SIGTERM/SIGINT (graceful: drain,
 * exit 0) and reloads the certificate on SIGHUP. Prints the address and the certificate's SHA-256
 * fingerprint once listening; with `--json`, one JSON object per line on stdout instead
 * (`{"event":"listening",…}`, then `{"event":"ready",…}` once the corpora are open), which is what tests
 * and scripts parse. Options override environment variables, which override defaults.
 */
import { dirname, resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { parseCommandArgs, runCommand, UsageError } from './command.js';
import { startService, readConfigFile, type IndexProgress, type RunningService } from '../service.js';
import type { ServerLimits } from '../http/limits.js';

const HELP = `usage: quarry serve [options]

  --port N          TCP port (default 8443, or QUARRY_PORT); 0 picks a free port and prints it
  --host ADDR       address to listen on (default 127.0.0.1, or QUARRY_HOST)
  --data DIR        data directory (default ./data, or QUARRY_DATA)
  --cert FILE       PEM certificate (with --key); default: a self-signed one in DIR/tls
  --key FILE        PEM private key of --cert
  --config FILE     JSON configuration file (or QUARRY_CONFIG)
  --rate-limit N    requests per second per client, decimals allowed (default 100, or QUARRY_RATE_LIMIT); 0 turns it off
  --rate-burst N    burst size of the rate limit (default 200, or QUARRY_RATE_BURST)
  --drain-timeout S seconds SIGTERM waits for in-flight requests (default 10)
  --search-workers N threads that run searches (default one per core, or QUARRY_SEARCH_WORKERS); 0 runs them on the event loop
  --json            print machine-readable JSON lines instead of prose
`;

/**
 * How far past what its last full collection kept V8 lets a heap grow before the next one, in percent.
 * V8's own factor reaches 4× for a heap that allocates fast: the event loop of a busy server, with some
 * 45 MiB live, held a few hundred MiB of garbage. Read at every collection, the flag bounds the event
 * loop's heap and the search workers' alike, from here on (node cannot cap a running heap's size). An
 * operator's own `--heap-growing-percent` on node's command line wins (NODE_OPTIONS does not take it).
 */
const HEAP_GROWING_PERCENT = 25;

function boundHeapGrowth(): void {
  if (process.execArgv.some((a) => a.startsWith('--heap-growing-percent'))) return;
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}

function intOption(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^[0-9]+$/.test(raw) || !Number.isSafeInteger(Number(raw))) throw new UsageError(`${name} must be a whole number ≥ 0, got ${JSON.stringify(raw)}.`);
  return Number(raw);
}

/** Requests per second: a decimal number ≥ 0 (0.5 = one request every two seconds; 0 = no limit). */
function rateOption(raw: string | undefined): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^[0-9]+(\.[0-9]+)?$/.test(raw)) throw new UsageError(`--rate-limit must be a number ≥ 0, got ${JSON.stringify(raw)}.`);
  return Number(raw);
}

class ProgressBar {
  #last = 0;
  #drawn = false;
  constructor(private readonly tty: boolean) {}
  update(p: IndexProgress): void {
    const now = Date.now();
    if (now - this.#last < (this.tty ? 100 : 2000)) return;
    this.#last = now;
    const done = typeof p.done === 'number' ? p.done : undefined;
    const total = typeof p.total === 'number' && p.total > 0 ? p.total : undefined;
    const phase = 'indexing the own corpus';
    let line: string;
    if (done !== undefined && total !== undefined) {
      const frac = Math.min(1, done / total);
      const width = 30;
      const fill = Math.round(frac * width);
      line = `${phase} [${'#'.repeat(fill)}${' '.repeat(width - fill)}] ${Math.floor(frac * 100)}% ${done}/${total}`;
    } else {
      line = `${phase}${done !== undefined ? ` ${done}` : ''}`;
    }
    if (this.tty) {
      process.stderr.write(`\r${line.padEnd(78)}`);
      this.#drawn = true;
    } else {
      process.stderr.write(`${line}\n`);
    }
  }
  finish(): void {
    if (this.#drawn) process.stderr.write('\n');
    this.#drawn = false;
  }
}

export function run(args: string[]): Promise<number> {
  let json = args.includes('--json');
  return runCommand('serve', HELP, () => json, async () => {
    const code = await serve(args);
    json = false;
    return code;
  });
}

async function serve(args: string[]): Promise<number> {
  const { values } = parseCommandArgs(args, {
    port: { type: 'string' }, host: { type: 'string' }, data: { type: 'string' },
    cert: { type: 'string' }, key: { type: 'string' }, config: { type: 'string' },
    'rate-limit': { type: 'string' }, 'rate-burst': { type: 'string' }, 'drain-timeout': { type: 'string' },
    'search-workers': { type: 'string' },
    json: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false },
  }, false);
  if (values.help) {
    console.log(HELP);
    return 0;
  }
  const env = process.env;
  const json = values.json === true;
  const out = (event: Record<string, unknown>, prose: string) => {
    if (json) process.stdout.write(JSON.stringify(event) + '\n');
    else console.log(prose);
  };

  const configFile = values.config ?? env.QUARRY_CONFIG;
  const config = configFile ? readConfigFile(configFile) : {};
  const workers = intOption('--search-workers', values['search-workers'] ?? env.QUARRY_SEARCH_WORKERS);
  if (workers !== undefined) {
    const search = typeof config.search === 'object' && config.search !== null ? config.search : {};
    config.search = { ...search, workers };
  }
  const serverConfig = (typeof config.server === 'object' && config.server !== null ? config.server : {}) as Record<string, unknown>;
  const limits: ServerLimits = { ...(serverConfig.limits as ServerLimits | undefined) };
  const rate = rateOption(values['rate-limit'] ?? env.QUARRY_RATE_LIMIT);
  if (rate !== undefined) limits.ratePerSecond = rate;
  const burst = intOption('--rate-burst', values['rate-burst'] ?? env.QUARRY_RATE_BURST);
  if (burst !== undefined) limits.rateBurst = burst;
  const drain = intOption('--drain-timeout', values['drain-timeout']);
  if (drain !== undefined) limits.drainTimeoutMs = drain * 1000;

  const port = intOption('--port', values.port ?? env.QUARRY_PORT) ?? (typeof serverConfig.port === 'number' ? serverConfig.port : 8443);
  if (port > 65535) throw new UsageError(`--port must be at most 65535, got ${port}.`);
  const host = values.host ?? env.QUARRY_HOST ?? (typeof serverConfig.host === 'string' ? serverConfig.host : '127.0.0.1');
  const dataDir = resolve(values.data ?? env.QUARRY_DATA ?? 'data');
  // Paths from the configuration file are relative to it; paths on the command line to the working directory.
  const configDir = configFile ? dirname(resolve(configFile)) : process.cwd();
  const fromConfig = (v: unknown) => (typeof v === 'string' ? resolve(configDir, v) : undefined);
  const certFile = values.cert !== undefined ? resolve(values.cert) : fromConfig(serverConfig.cert);
  const keyFile = values.key !== undefined ? resolve(values.key) : fromConfig(serverConfig.key);
  if ((certFile === undefined) !== (keyFile === undefined)) throw new UsageError('Give both --cert and --key, or neither.');

  boundHeapGrowth();
  const bar = new ProgressBar(!json && process.stderr.isTTY === true);
  const service: RunningService = await startService({
    dataDir, port, host, config,
    ...(configFile ? { configDir: dirname(resolve(configFile)) } : {}),
    ...(certFile !== undefined ? { certFile } : {}),
    ...(keyFile !== undefined ? { keyFile } : {}),
    limits,
    onIndexProgress: (p) => {
      if (json) process.stdout.write(JSON.stringify({ event: 'progress', ...p }) + '\n');
      else bar.update(p);
    },
  });
  const info = { url: service.url, host: service.host, port: service.port, fingerprint256: service.fingerprint256, certFile: service.tls.certFile, dataDir, pid: process.pid };
  out({ event: 'listening', ...info }, `Quarry is listening on ${service.url} (data: ${dataDir}); opening the indexes…`);

  let stopping = false;
  const exited = new Promise<number>((resolveExit) => {
    const stop = (signal: string) => {
      if (stopping) {
        process.stderr.write(`quarry: ${signal} again; exiting without waiting.\n`);
        process.exit(1);
      }
      stopping = true;
      process.stderr.write(`quarry: ${signal}: draining in-flight requests…\n`);
      service.close().then(() => {
        out({ event: 'stopped', signal }, 'quarry: stopped.');
        resolveExit(0);
      }, (err: unknown) => {
        process.stderr.write(`quarry: error while stopping: ${(err as Error)?.stack ?? String(err)}\n`);
        resolveExit(1);
      });
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
  });
  process.on('SIGHUP', () => {
    try {
      const tls = service.reloadTls();
      out({ event: 'tls-reloaded', fingerprint256: tls.fingerprint256 }, `quarry: certificate reloaded; SHA-256 fingerprint ${tls.fingerprint256}`);
    } catch (err) {
      process.stderr.write(`quarry: SIGHUP: keeping the old certificate: ${(err as Error).message}\n`);
    }
  });

  service.ready.then(() => {
    if (stopping) return;
    bar.finish();
    out({ event: 'ready', ...info },
      `Quarry is ready on ${service.url}\nCertificate SHA-256 fingerprint: ${service.fingerprint256}${service.tls.selfSigned ? ` (self-signed, ${service.tls.certFile})` : ''}`);
  }, (err: unknown) => {
    bar.finish();
    if (stopping) return;
    out({ event: 'degraded', error: String((err as Error)?.message ?? err) }, `quarry: the indexes could not be opened (${(err as Error)?.message}); search answers 503.`);
  });

  const code = await exited;
  // Everything is closed; a handle some library forgot to unref must not keep the process alive.
  setTimeout(() => process.exit(code), 2000).unref();
  return code;
}
