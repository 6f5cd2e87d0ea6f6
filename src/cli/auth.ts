/**
 * The operator's authentication commands: `quarry user`, `quarry invite`, `quarry cap` work directly on a
 * data directory (whoever can read it is already trusted with its secrets), `quarry login` is a real
 * OPAQUE client against a running server. Passwords are read from the terminal without echo, or with
 * `--password-stdin` from standard input — never from the command line, where `ps` and shell history
 * would keep them — and are never stored: only OPAQUE registration records are.
 */
import { parseArgs } from 'node:util';
import https from 'node:https';
import tls from 'node:tls';
import { X509Certificate } from 'node:crypto';
import { openDb } from '../store/db.js';
import { resolveDataDir, UsageError } from './command.js';
import { createAuth, stateDbPath, type Auth } from '../auth/index.js';
import { LOCAL_OPERATOR, RIGHTS, isRight, type Right } from '../kernel/principal.js';
import { TARGET_PATTERN } from '../auth/capability.js';
import { checkUsername } from '../auth/accounts.js';
import { OPAQUE_KEY_STRETCHING } from '../auth/opaque-config.js';
import { loadOpaque } from '../auth/opaque.js';

type Command = { run(args: string[]): Promise<number> };


/** `90s`, `15m`, `12h`, `7d`, or a plain number of seconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+)([smhd]?)$/.exec(text.trim());
  if (!m) throw new UsageError(`invalid duration ${JSON.stringify(text)}: use e.g. 90s, 15m, 12h, 7d`);
  return Number(m[1]) * { '': 1, s: 1, m: 60, h: 3600, d: 86_400 }[m[2]!]!;
}

function parseRightsArg(text: string | undefined): Right[] {
  if (text === undefined) throw new UsageError(`--rights is required (comma-separated: ${RIGHTS.join(',')})`);
  const list = text.split(',').map((s) => s.trim()).filter((s) => s !== '');
  const bad = list.filter((r) => !isRight(r));
  if (bad.length > 0) throw new UsageError(`unknown right(s) ${bad.join(', ')}; rights are ${RIGHTS.join(', ')}`);
  return list as Right[];
}

function parseTargetsArg(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  const list = text.split(',').map((s) => s.trim()).filter((s) => s !== '');
  const bad = list.filter((t) => !TARGET_PATTERN.test(t));
  if (bad.length > 0) throw new UsageError(`invalid target name(s) ${bad.join(', ')}`);
  return list;
}

/** Opens the auth pieces over a data directory for one command, closing the database after. */
async function withAuth<T>(dataDir: string, fn: (auth: Auth) => Promise<T> | T): Promise<T> {
  const db = openDb(stateDbPath(dataDir));
  try {
    return await fn(createAuth({ db, dataDir }));
  } finally {
    db.close();
  }
}

/** Reads a password: one line of stdin (`--password-stdin`), or from the terminal without echo. */
async function readPassword(fromStdin: boolean, prompt: string, confirm: boolean): Promise<string> {
  if (fromStdin) {
    const chunks: Buffer[] = [];
    for await (const c of process.stdin) chunks.push(c as Buffer);
    const line = Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '';
    if (line === '') throw new UsageError('no password on standard input');
    return line;
  }
  if (!process.stdin.isTTY) throw new UsageError('standard input is not a terminal: pass the password with --password-stdin');
  const first = await promptHidden(prompt);
  if (first === '') throw new UsageError('empty password');
  if (confirm && (await promptHidden('Repeat the password: ')) !== first) throw new UsageError('the passwords differ');
  return first;
}

function promptHidden(prompt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdin = process.stdin;
    process.stderr.write(prompt);
    stdin.setRawMode(true);
    stdin.resume();
    let text = '';
    const done = (err?: Error): void => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      process.stderr.write('\n');
      if (err) reject(err); else resolve(text);
    };
    const onData = (buf: Buffer): void => {
      for (const ch of buf.toString('utf8')) {
        if (ch === '\r' || ch === '\n') return done();
        if (ch === '\u0003') return done(new UsageError('interrupted'));
        if (ch === '\u007f' || ch === '\b') text = text.slice(0, -1);
        else text += ch;
      }
    };
    stdin.on('data', onData);
  });
}

function fail(err: unknown, usage: string): number {
  if (err instanceof UsageError || (err as { code?: string })?.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || (err as { code?: string })?.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    console.error(`quarry: ${(err as Error).message}\n\n${usage}`);
    return 2;
  }
  console.error(`quarry: ${(err as Error)?.message ?? String(err)}`);
  return 1;
}

const USER_USAGE = `usage: quarry user add NAME [--admin | --rights R[,R…]] [--targets T[,T…]] [--password-stdin] [--data DIR]
       quarry user list [--json] [--data DIR]
       quarry user disable NAME [--data DIR]
  add      creates an account on this machine (the first admin: --admin grants every right)
  disable  stops the account's logins and every capability issued to it`;

export const user: Command = {
  async run(args) {
    try {
      const { values, positionals } = parseArgs({
        args, allowPositionals: true,
        options: {
          admin: { type: 'boolean' }, rights: { type: 'string' }, targets: { type: 'string' },
          'password-stdin': { type: 'boolean' }, data: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
        },
      });
      if (values.help) { console.log(USER_USAGE); return 0; }
      const [sub, name] = positionals;
      const dataDir = resolveDataDir(values.data);
      if (sub === 'add') {
        if (name === undefined) throw new UsageError('user add needs a NAME');
        checkUsername(name, 'NAME');
        if (values.admin && values.rights !== undefined) throw new UsageError('--admin already grants every right; drop --rights');
        const rights = values.admin ? [...RIGHTS] : values.rights === undefined ? (['search'] as Right[]) : parseRightsArg(values.rights);
        const targets = parseTargetsArg(values.targets);
        const password = await readPassword(values['password-stdin'] === true, `Password for ${name}: `, true);
        await withAuth(dataDir, (auth) => auth.accounts.createLocally(name, password, rights, targets));
        console.error(`Created account ${name} with rights ${rights.join(', ')}.`);
        return 0;
      }
      if (sub === 'list') {
        const list = await withAuth(dataDir, (auth) => auth.accounts.list());
        if (values.json) console.log(JSON.stringify(list, null, 2));
        else for (const a of list) console.log(`${a.name}\t${a.disabled ? 'disabled' : 'active'}\t${a.rights.join(',')}${a.targets ? `\ttargets=${a.targets.join(',')}` : ''}`);
        return 0;
      }
      if (sub === 'disable') {
        if (name === undefined) throw new UsageError('user disable needs a NAME');
        const n = await withAuth(dataDir, (auth) => { auth.accounts.disable(name, { actor: 'local' }); return auth.capabilities.revokeAccount(name); });
        console.error(`Disabled ${name}; ${n} capabilities revoked.`);
        return 0;
      }
      throw new UsageError(sub === undefined ? 'missing subcommand' : `unknown subcommand ${JSON.stringify(sub)}`);
    } catch (err) {
      return fail(err, USER_USAGE);
    }
  },
};

const INVITE_USAGE = `usage: quarry invite create --rights R[,R…] [--targets T[,T…]] [--ttl DURATION] [--data DIR]
  prints a single-use invite code; the account registered with it gets these rights (default ttl 7d)`;

export const invite: Command = {
  async run(args) {
    try {
      const { values, positionals } = parseArgs({
        args, allowPositionals: true,
        options: { rights: { type: 'string' }, targets: { type: 'string' }, ttl: { type: 'string' }, data: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      });
      if (values.help) { console.log(INVITE_USAGE); return 0; }
      if (positionals[0] !== 'create') throw new UsageError('the subcommand is create');
      const rights = parseRightsArg(values.rights);
      const targets = parseTargetsArg(values.targets);
      const ttlSeconds = values.ttl === undefined ? undefined : parseDuration(values.ttl);
      const r = await withAuth(resolveDataDir(values.data), (auth) => auth.accounts.createInvite({ rights, targets, ttlSeconds }, { actor: 'local' }));
      console.log(r.invite);
      console.error(`Invite ${r.id} for ${rights.join(', ')}, valid until ${r.expiresAt.toISOString()}.`);
      return 0;
    } catch (err) {
      return fail(err, INVITE_USAGE);
    }
  },
};

const CAP_USAGE = `usage: quarry cap mint --rights R[,R…] [--targets T[,T…]] [--ttl DURATION] [--data DIR]
       quarry cap list [--data DIR]
       quarry cap revoke CAP_ID [--data DIR]
  mint    prints a new capability for scripts (default ttl 30d; --ttl 0: no expiry)
  revoke  revokes a capability and every capability derived from it`;

export const cap: Command = {
  async run(args) {
    try {
      const { values, positionals } = parseArgs({
        args, allowPositionals: true,
        options: { rights: { type: 'string' }, targets: { type: 'string' }, ttl: { type: 'string' }, data: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      });
      if (values.help) { console.log(CAP_USAGE); return 0; }
      const dataDir = resolveDataDir(values.data);
      const [sub, id] = positionals;
      if (sub === 'mint') {
        const rights = parseRightsArg(values.rights);
        const targets = parseTargetsArg(values.targets);
        const ttl = parseDuration(values.ttl ?? '30d');
        const minted = await withAuth(dataDir, (auth) =>
          auth.service.mintCapability(LOCAL_OPERATOR, { rights, targets, ttlSeconds: ttl === 0 ? undefined : ttl }));
        console.log(minted.cap);
        console.error(`Capability ${minted.cap_id}: ${minted.rights.join(', ')}${minted.expires_at ? `, until ${minted.expires_at}` : ', no expiry'}.`);
        return 0;
      }
      if (sub === 'list') {
        const list = await withAuth(dataDir, (auth) => auth.service.listCapabilities(LOCAL_OPERATOR).caps);
        for (const c of list) {
          console.log([c.cap_id, c.parent_id ?? '-', c.account ?? '-', c.rights.join(','), c.expires_at ?? 'never', c.revoked ? 'revoked' : 'active'].join('\t'));
        }
        return 0;
      }
      if (sub === 'revoke') {
        if (id === undefined) throw new UsageError('cap revoke needs a CAP_ID');
        const r = await withAuth(dataDir, (auth) => auth.service.revokeCapability(LOCAL_OPERATOR, { cap_id: id }, {}));
        console.log(r.revoked);
        return 0;
      }
      throw new UsageError(sub === undefined ? 'missing subcommand' : `unknown subcommand ${JSON.stringify(sub)}`);
    } catch (err) {
      return fail(err, CAP_USAGE);
    }
  },
};

const LOGIN_USAGE = `usage: quarry login NAME --url URL [--password-stdin] [--fingerprint SHA256 | --insecure | --ca FILE]
  logs in with OPAQUE and prints the login's capability on standard output.
  --fingerprint  accept exactly the certificate with this SHA-256 fingerprint (as \`quarry serve\` prints it)
  --ca           trust this PEM certificate (or CA)
  --insecure     accept any certificate (testing only: a man in the middle could relay the login)`;

interface TlsChoice { fingerprint?: string | undefined; insecure?: boolean | undefined; ca?: string | undefined }

function normalizeFingerprint(text: string): string {
  const hex = text.replace(/^sha256:/i, '').replace(/:/g, '').toUpperCase();
  if (!/^[0-9A-F]{64}$/.test(hex)) throw new UsageError('--fingerprint must be a SHA-256 fingerprint (64 hex digits, colons allowed)');
  return hex.match(/../g)!.join(':');
}

/** Fetches the server's certificate once, to use it as the only trusted one when it matches the pin. */
function peerCertificate(url: URL): Promise<X509Certificate> {
  return new Promise((resolve, reject) => {
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1'); // URL keeps IPv6 brackets; sockets do not want them
    const socket = tls.connect({
      host, port: Number(url.port || 443), servername: /^[\d.]+$|:/.test(host) ? undefined : host,
      rejectUnauthorized: false, minVersion: 'TLSv1.3', ALPNProtocols: ['http/1.1'],
    }, () => {
      const raw = socket.getPeerX509Certificate();
      socket.end();
      if (raw === undefined) reject(new Error('the server sent no certificate')); else resolve(raw);
    });
    socket.on('error', reject);
  });
}

async function agentFor(url: URL, choice: TlsChoice): Promise<https.Agent> {
  const base = { minVersion: 'TLSv1.3' as const, keepAlive: false };
  if (choice.insecure) return new https.Agent({ ...base, rejectUnauthorized: false });
  if (choice.ca !== undefined) {
    const { readFileSync } = await import('node:fs');
    return new https.Agent({ ...base, ca: readFileSync(choice.ca) });
  }
  if (choice.fingerprint !== undefined) {
    const pin = normalizeFingerprint(choice.fingerprint);
    const cert = await peerCertificate(url);
    if (cert.fingerprint256 !== pin) throw new Error(`the server's certificate has fingerprint ${cert.fingerprint256}, not the pinned ${pin}`);
    // Trust exactly that certificate; the name check is replaced by the pin (which is stronger).
    return new https.Agent({
      ...base, ca: cert.toString(),
      checkServerIdentity: (_host, peer) => (peer.fingerprint256 === pin ? undefined : new Error('certificate fingerprint mismatch')),
    });
  }
  return new https.Agent(base);
}

function postJson(agent: https.Agent, url: URL, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const data = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        let json: Record<string, unknown> = {};
        try { json = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>; } catch { /* not JSON: status tells */ }
        resolve({ status: res.statusCode ?? 0, json });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(data);
  });
}

/** A real OPAQUE client login; returns the login response body (`cap`, `cap_id`, …). */
export async function opaqueLogin(baseUrl: string, username: string, password: string, choice: TlsChoice): Promise<Record<string, unknown>> {
  const url = new URL(baseUrl);
  const agent = await agentFor(url, choice);
  try {
    const opaque = await loadOpaque();
    const { clientLoginState, startLoginRequest } = opaque.client.startLogin({ password });
    const start = await postJson(agent, new URL('/api/auth/login/start', url), { username, ke1: startLoginRequest });
    if (start.status !== 200) throw new Error(errorText(start));
    const finished = opaque.client.finishLogin({
      clientLoginState, loginResponse: String(start.json['ke2']), password, keyStretching: OPAQUE_KEY_STRETCHING,
    });
    if (finished === undefined) throw new Error('the login failed: wrong user name or password');
    const finish = await postJson(agent, new URL('/api/auth/login/finish', url), { login_id: start.json['login_id'], ke3: finished.finishLoginRequest });
    if (finish.status !== 200) throw new Error(errorText(finish));
    return finish.json;
  } finally {
    agent.destroy();
  }
}

function errorText(r: { status: number; json: Record<string, unknown> }): string {
  const e = r.json['error'] as { message?: string } | undefined;
  return `the login failed: HTTP ${r.status}${e?.message ? `: ${e.message}` : ''}`;
}

export const login: Command = {
  async run(args) {
    try {
      const { values, positionals } = parseArgs({
        args, allowPositionals: true,
        options: {
          url: { type: 'string' }, 'password-stdin': { type: 'boolean' }, fingerprint: { type: 'string' },
          insecure: { type: 'boolean' }, ca: { type: 'string' }, help: { type: 'boolean', short: 'h' },
        },
      });
      if (values.help) { console.log(LOGIN_USAGE); return 0; }
      const name = positionals[0];
      if (name === undefined) throw new UsageError('login needs a NAME');
      if (values.url === undefined) throw new UsageError('--url is required');
      if ([values.fingerprint, values.insecure, values.ca].filter((v) => v !== undefined && v !== false).length > 1) {
        throw new UsageError('choose one of --fingerprint, --ca, --insecure');
      }
      const password = await readPassword(values['password-stdin'] === true, `Password for ${name}: `, false);
      const r = await opaqueLogin(values.url, name, password, { fingerprint: values.fingerprint, insecure: values.insecure, ca: values.ca });
      console.log(String(r['cap']));
      console.error(`Logged in as ${name}: capability ${String(r['cap_id'])}, rights ${(r['rights'] as string[]).join(', ')}, until ${String(r['expires_at'])}.`);
      return 0;
    } catch (err) {
      return fail(err, LOGIN_USAGE);
    }
  },
};
