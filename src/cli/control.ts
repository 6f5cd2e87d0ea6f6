/**
 * The operator's control-plane commands: `quarry build|stage|deploy|status|rollback|reconcile|restart`.
 * They talk to the running server over HTTPS (the server owns the supervisor and the per-target locks,
 * so a second process must not act on the data directory behind its back), wait for the operation to
 * finish unless `--no-wait`, and print its log. Exit 0 when the operation succeeded, 1 when it failed
 * or was refused, 2 for a usage error.
 *
 * Connection: `--url` (else QUARRY_URL, else https://127.0.0.1:8443), the capability from `--cap-file`
 * or QUARRY_CAP, and TLS trust from `--ca FILE` (default: `<data>/tls/cert.pem` when it exists, the
 * self-signed certificate `quarry serve` made) or `--insecure` (testing only).
 */
import { selfSignedTlsPaths } from '../kernel/data-dir.js';
import { existsSync, readFileSync, statSync, createReadStream } from 'node:fs';
import { createHash } from 'node:crypto';
import https from 'node:https';
import { EXIT_FAILURE, EXIT_OK, UsageError, parseCommandArgs, printJsonLine, resolveDataDir, runCommand } from './command.js';

type Command = { run(args: string[]): Promise<number> };

/** How often `--wait` polls `GET /api/ops/{id}`. */
const POLL_INTERVAL_MS = 200;

const CONNECTION_OPTIONS = {
  url: { type: 'string' },
  'cap-file': { type: 'string' },
  ca: { type: 'string' },
  insecure: { type: 'boolean', default: false },
  data: { type: 'string' },
  json: { type: 'boolean', default: false },
  'no-wait': { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

const CONNECTION_HELP = `connection:
  --url URL        server (default QUARRY_URL, else https://127.0.0.1:8443)
  --cap-file FILE  file holding the capability (default: the QUARRY_CAP environment variable)
  --ca FILE        trust this certificate (default <data>/tls/cert.pem when present)
  --insecure       accept any certificate (testing only)
  --data DIR       data directory, for the default --ca (default QUARRY_DATA, else ./data)
  --no-wait        print the accepted operation and return without waiting
  --json           print JSON lines instead of text`;

interface Conn { base: URL; agent: https.Agent; headers: Record<string, string> }

function connection(values: Record<string, unknown>): Conn {
  const base = new URL(String(values.url ?? process.env.QUARRY_URL ?? 'https://127.0.0.1:8443'));
  if (base.protocol !== 'https:') throw new UsageError('--url must be an https:// URL');
  const capFile = values['cap-file'] as string | undefined;
  const cap = capFile ? readFileSync(capFile, 'utf8').trim() : process.env.QUARRY_CAP;
  const headers: Record<string, string> = cap ? { authorization: `Bearer ${cap}` } : {};
  const caFile = (values.ca as string | undefined) ?? selfSignedTlsPaths(resolveDataDir(values.data as string | undefined)).certFile;
  const agentOptions: https.AgentOptions = { minVersion: 'TLSv1.3', keepAlive: true };
  if (values.insecure) agentOptions.rejectUnauthorized = false;
  else if (existsSync(caFile)) agentOptions.ca = readFileSync(caFile);
  else if (values.ca !== undefined) throw new UsageError(`--ca ${caFile} does not exist`);
  return { base, agent: new https.Agent(agentOptions), headers };
}

function call(conn: Conn, method: string, path: string, body?: unknown, extra: { headers?: Record<string, string>; stream?: NodeJS.ReadableStream; length?: number } = {}): Promise<{ status: number; json: Record<string, any> }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...conn.headers, ...extra.headers };
    let data: Buffer | undefined;
    if (body !== undefined) { data = Buffer.from(JSON.stringify(body)); headers['content-type'] = 'application/json'; headers['content-length'] = String(data.length); }
    if (extra.length !== undefined) headers['content-length'] = String(extra.length);
    const req = https.request(new URL(path, conn.base), { method, agent: conn.agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        let json: Record<string, any> = {};
        try { json = JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch { /* status tells */ }
        resolve({ status: res.statusCode ?? 0, json });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (extra.stream) extra.stream.pipe(req); else req.end(data);
  });
}

function failIfError(r: { status: number; json: Record<string, any> }): void {
  if (r.status >= 400) {
    const e = r.json.error as { code?: string; message?: string } | undefined;
    throw new Error(`${r.status} ${e?.code ?? ''}: ${e?.message ?? 'request failed'}`);
  }
}

/** Prints an accepted operation, waits for it unless --no-wait, prints the outcome. */
async function follow(conn: Conn, accepted: Record<string, any>, values: Record<string, unknown>): Promise<number> {
  const json = values.json as boolean;
  if (accepted.dry_run === true) {
    if (json) printJsonLine(accepted);
    else {
      process.stdout.write(`plan for ${accepted.kind} of ${accepted.target} (nothing changed):\n`);
      for (const s of accepted.plan.steps as string[]) process.stdout.write(`  - ${s}\n`);
    }
    return EXIT_OK;
  }
  if (!json) process.stderr.write(`${accepted.kind} ${accepted.target ?? '(all targets)'}: operation ${accepted.op_id} accepted\n`);
  if (values['no-wait']) { if (json) printJsonLine(accepted); return EXIT_OK; }
  for (;;) {
    const r = await call(conn, 'GET', `/api/ops/${encodeURIComponent(accepted.op_id)}`);
    failIfError(r);
    if (r.json.state === 'succeeded' || r.json.state === 'failed' || r.json.state === 'cancelled') {
      if (json) printJsonLine(r.json);
      else {
        if (r.json.log) process.stdout.write(r.json.log);
        process.stdout.write(`${r.json.state}${r.json.version ? `: ${r.json.target} ${r.json.version} ${r.json.digest ?? ''}` : ''}${r.json.error ? ` (${r.json.error.code}: ${r.json.error.message})` : ''}\n`);
      }
      return r.json.state === 'succeeded' ? EXIT_OK : EXIT_FAILURE;
    }
    await new Promise((res) => setTimeout(res, POLL_INTERVAL_MS));
  }
}

function command(name: string, usage: string, extraOptions: Record<string, { type: 'string' | 'boolean'; default?: boolean }>,
  body: (conn: Conn, positionals: string[], values: Record<string, unknown>) => Promise<number>): Command {
  return {
    run(args) {
      let json = false;
      const full = `${usage}\n\n${CONNECTION_HELP}`;
      return runCommand(name, full, () => json, async () => {
        const { values, positionals } = parseCommandArgs(args, { ...CONNECTION_OPTIONS, ...extraOptions } as typeof CONNECTION_OPTIONS);
        json = Boolean(values.json);
        if (values.help) { process.stdout.write(`${full}\n`); return EXIT_OK; }
        return body(connection(values), positionals, values as Record<string, unknown>);
      });
    },
  };
}

function oneTarget(positionals: string[]): string {
  if (positionals.length !== 1) throw new UsageError('exactly one TARGET is required');
  return positionals[0]!;
}

export const build = command('build', 'usage: quarry build TARGET [connection options]', {}, async (conn, pos, values) => {
  const r = await call(conn, 'POST', '/api/build', { target: oneTarget(pos) });
  failIfError(r);
  return follow(conn, r.json, values);
});

export const stage = command('stage', `usage: quarry stage TARGET --version VERSION      stage a built version
       quarry stage TARGET --artifact FILE.tar   upload and stage an artifact (its sha256 is computed here)`,
{ version: { type: 'string' }, artifact: { type: 'string' } }, async (conn, pos, values) => {
  const target = oneTarget(pos);
  if ((values.version === undefined) === (values.artifact === undefined)) throw new UsageError('give exactly one of --version or --artifact');
  let r;
  if (values.version !== undefined) r = await call(conn, 'POST', '/api/upload', { target, version: values.version });
  else {
    const file = String(values.artifact);
    const h = createHash('sha256');
    for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
    const digest = `sha256:${h.digest('hex')}`;
    r = await call(conn, 'POST', `/api/upload?target=${encodeURIComponent(target)}&digest=${digest}`, undefined,
      { headers: { 'content-type': 'application/x-tar' }, stream: createReadStream(file), length: statSync(file).size });
  }
  failIfError(r);
  return follow(conn, r.json, values);
});

export const deploy = command('deploy', 'usage: quarry deploy TARGET [--version VERSION] [--reason TEXT] [--expected-generation N] [--dry-run]',
  { version: { type: 'string' }, reason: { type: 'string' }, 'expected-generation': { type: 'string' }, 'dry-run': { type: 'boolean', default: false } },
  async (conn, pos, values) => {
    const body: Record<string, unknown> = { target: oneTarget(pos) };
    if (values.version !== undefined) body.version = values.version;
    if (values.reason !== undefined) body.reason = values.reason;
    if (values['dry-run']) body.dry_run = true;
    if (values['expected-generation'] !== undefined) {
      const g = Number(values['expected-generation']);
      if (!Number.isInteger(g)) throw new UsageError('--expected-generation must be an integer');
      body.expected_generation = g;
    }
    const r = await call(conn, 'POST', '/api/deploy', body);
    failIfError(r);
    return follow(conn, r.json, values);
  });

export const rollback = command('rollback', 'usage: quarry rollback TARGET [--to previous|VERSION] [--reason TEXT] [--dry-run]',
  { to: { type: 'string' }, reason: { type: 'string' }, 'dry-run': { type: 'boolean', default: false } },
  async (conn, pos, values) => {
    const body: Record<string, unknown> = { target: oneTarget(pos), to: values.to ?? 'previous' };
    if (values.reason !== undefined) body.reason = values.reason;
    if (values['dry-run']) body.dry_run = true;
    const r = await call(conn, 'POST', '/api/rollback', body);
    failIfError(r);
    return follow(conn, r.json, values);
  });

export const reconcile = command('reconcile', 'usage: quarry reconcile [TARGET]   (every target when none is named)', {}, async (conn, pos, values) => {
  if (pos.length > 1) throw new UsageError('at most one TARGET');
  const r = await call(conn, 'POST', '/api/reconcile', pos[0] === undefined ? {} : { target: pos[0] });
  failIfError(r);
  return follow(conn, r.json, values);
});

export const restart = command('restart', 'usage: quarry restart TARGET [--reason TEXT]', { reason: { type: 'string' } }, async (conn, pos, values) => {
  const body: Record<string, unknown> = { target: oneTarget(pos) };
  if (values.reason !== undefined) body.reason = values.reason;
  const r = await call(conn, 'POST', '/api/restart', body);
  failIfError(r);
  return follow(conn, r.json, values);
});

export const status = command('status', 'usage: quarry status [TARGET]   verdicts from GET /api/deploy_status; exit 1 unless all in_sync', {}, async (conn, pos, values) => {
  if (pos.length > 1) throw new UsageError('at most one TARGET');
  const r = await call(conn, 'GET', `/api/deploy_status${pos[0] ? `?target=${encodeURIComponent(pos[0])}` : ''}`);
  failIfError(r);
  const targets = r.json.targets as Record<string, any>[];
  if (values.json) printJsonLine(r.json);
  else {
    const w = Math.max(6, ...targets.map((t) => t.target.length));
    process.stdout.write(`${'TARGET'.padEnd(w)}  ${'VERDICT'.padEnd(11)}  ${'LIVE'.padEnd(12)}  ${'DESIRED'.padEnd(12)}  GEN  REASONS\n`);
    for (const t of targets) {
      process.stdout.write(`${t.target.padEnd(w)}  ${t.verdict.padEnd(11)}  ${(t.live?.version ?? '-').padEnd(12)}  ${(t.desired?.version ?? '-').padEnd(12)}  ${String(t.generation).padStart(3)}  ${(t.reasons as string[]).join(', ')}\n`);
    }
  }
  return targets.every((t) => t.verdict === 'in_sync') ? EXIT_OK : EXIT_FAILURE;
});
