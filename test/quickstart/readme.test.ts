// The README's quick start, run as a new user would: clone the repository (this checkout's HEAD) into a
// temporary directory, run the install-and-start command exactly as README.md writes it (only the port is
// overridden, through QUARRY_PORT=0, so the test never collides with a running server), wait for the
// printed address and certificate fingerprint, search the default corpus over real HTTPS, stop it with
// SIGTERM (exit 0), then start again and check that the index was reused, not rebuilt.
//
// The commands are read from README.md, so changing the README without this test breaks it. The second
// README command (the test suite) is not run from here — that would recurse — but it must be the command
// CI runs (.ci/run).
//
// Slow by nature: `npm ci` in the clone compiles better-sqlite3 (about two minutes on this machine).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from '../support/client.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
/** How long the first start may take: `npm ci` (native build) plus the first indexing of the own corpus. */
const FIRST_START_TIMEOUT_MS = 12 * 60_000;
const SECOND_START_TIMEOUT_MS = 3 * 60_000;
/** A word of docs/events.md, which the default own corpus (the repository's docs/) always holds. */
const QUERY = 'keepalive';

/** The two commands of README.md's "Quick start" block, comments removed. */
function quickStartCommands(): { installAndStart: string; installAndTest: string } {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  const section = /^## Quick start\s*\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(readme);
  assert.ok(section, 'README.md has a "## Quick start" section');
  const block = /```(?:sh|bash|console)?\n([\s\S]*?)```/.exec(section[1]!);
  assert.ok(block, 'the Quick start section has a code block');
  const commands = block[1]!.split('\n').map((l) => l.replace(/\s+#.*$/, '').trim()).filter((l) => l !== '' && !l.startsWith('#'));
  assert.equal(commands.length, 2, `two commands in the Quick start block, got ${JSON.stringify(commands)}`);
  const installAndStart = commands.find((c) => /\bnpm (run )?start\b/.test(c));
  const installAndTest = commands.find((c) => /\bnpm (run )?test\b/.test(c));
  assert.ok(installAndStart && installAndTest, `one command starts the service and one runs the tests: ${JSON.stringify(commands)}`);
  return { installAndStart, installAndTest };
}

/** The environment of a new user's shell: nothing inherited from the `npm test` that runs this file. */
function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(npm_|QUARRY_|NODE_OPTIONS$|NODE_TEST|INIT_CWD$)/i.test(k)) continue;
    env[k] = v;
  }
  return { ...env, QUARRY_PORT: '0', CI: '1' };
}

/** Every process below `pid` (from /proc), to find the server under `sh` and `npm`. */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
    } catch { /* gone */ }
  }
  const out: number[] = [];
  const walk = (p: number): void => { for (const c of children.get(p) ?? []) { out.push(c); walk(c); } };
  walk(pid);
  return out;
}

function isNode(pid: number): boolean {
  try { return basename(readlinkSync(`/proc/${pid}/exe`)).startsWith('node'); } catch { return false; }
}

function cmdline(pid: number): string {
  try { return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' '); } catch { return ''; }
}

interface Started {
  child: ChildProcess;
  url: string;
  fingerprint: string;
  output: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Runs `command` in `cwd` as a user's shell would and waits for "ready" with the address and fingerprint. */
function startCommand(command: string, cwd: string, timeoutMs: number): Promise<Started> {
  const child = spawn('sh', ['-c', command], { cwd, env: userEnv(), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  running.add(child);
  let out = '';
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => { running.delete(child); resolve({ code, signal }); });
  });
  return new Promise<Started>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "ready" within ${timeoutMs / 1000} s; output:\n${out.slice(-4000)}`)), timeoutMs);
    const onData = (c: Buffer): void => {
      out += c.toString();
      const ready = /Quarry is ready on (https:\/\/\S+)/.exec(out);
      const fp = /Certificate SHA-256 fingerprint: ([0-9A-F]{2}(?::[0-9A-F]{2}){31})/.exec(out);
      if (ready && fp) {
        clearTimeout(timer);
        resolve({ child, url: ready[1]!, fingerprint: fp[1]!, output: () => out, exit });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exit.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`"${command}" ended (code ${code}, signal ${signal}) before the service was ready; output:\n${out.slice(-4000)}`));
    });
  });
}

/** SIGTERM to the server process itself (as a supervisor would), then the whole command must exit 0. */
async function stop(s: Started): Promise<void> {
  // npm runs the script through `sh -c`, so the server is the node process (not a shell) running `serve`.
  const server = descendants(s.child.pid!).find((p) => isNode(p) && / serve\b/.test(cmdline(p)) && /bin\/quarry\.js/.test(cmdline(p)));
  assert.ok(server, `the server process under ${s.child.pid}: ${descendants(s.child.pid!).map(cmdline).join(' | ')}`);
  process.kill(server, 'SIGTERM');
  const { code, signal } = await s.exit;
  assert.equal(signal, null, `the command was killed by ${signal}; output:\n${s.output().slice(-2000)}`);
  assert.equal(code, 0, `exit code after SIGTERM; output:\n${s.output().slice(-2000)}`);
}

/** What a re-indexing would change: the own corpus's source fingerprint and its index files. */
function ownIndexState(dataDir: string): string {
  const dir = join(dataDir, 'index', 'own');
  const files = readdirSync(dir).sort().map((f) => `${f}:${statSync(join(dir, f)).size}`);
  return `${readFileSync(join(dataDir, 'index', 'own.sources.json'), 'utf8')}\n${files.join('\n')}`;
}

async function searchFinds(s: Started, dataDir: string): Promise<void> {
  const ca = readFileSync(join(dataDir, 'tls', 'cert.pem'));
  assert.equal(new X509Certificate(ca).fingerprint256, s.fingerprint, 'the printed fingerprint is the certificate\'s');
  const api = connect({ url: s.url, ca }); // trusts only that certificate; checks answers against the OpenAPI document
  try {
    const r = await api.get(`/api/search?q=${QUERY}`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.v, 1);
    assert.ok(r.json.nresults > 0, `"${QUERY}" finds something in the default corpus: ${r.text.slice(0, 300)}`);
  } finally {
    api.close();
  }
}

const running = new Set<ChildProcess>();
let workDir: string | undefined;
after(() => {
  for (const child of running) {
    try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ }
  }
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

test('the README names the test command, and CI runs it', () => {
  const { installAndTest } = quickStartCommands();
  assert.match(installAndTest, /^npm ci && npm test$/);
  const ci = readFileSync(join(REPO, '.ci', 'run'), 'utf8');
  assert.match(ci, /^npm ci$/m);
  assert.match(ci, /^npm test$/m);
});

test('the README quick start works from a fresh clone: serve, search, stop, restart on the same index', { timeout: FIRST_START_TIMEOUT_MS + SECOND_START_TIMEOUT_MS + 120_000 }, async () => {
  const { installAndStart } = quickStartCommands();
  const startOnly = installAndStart.split('&&').at(-1)!.trim();
  assert.match(startOnly, /^npm (run )?start$/);

  workDir = mkdtempSync(join(tmpdir(), 'quarry-quickstart-'));
  const clone = join(workDir, 'quarry');
  const git = spawnSync('git', ['clone', '--quiet', REPO, clone], { encoding: 'utf8' });
  assert.equal(git.status, 0, git.stderr);
  const dataDir = join(clone, 'data');
  assert.equal(existsSync(dataDir), false, 'a fresh clone has no data directory');

  const first = await startCommand(installAndStart, clone, FIRST_START_TIMEOUT_MS);
  assert.ok(existsSync(join(dataDir, 'state.sqlite')) && existsSync(join(dataDir, 'tls', 'cert.pem')), 'the first start created ./data');
  await searchFinds(first, dataDir);
  await stop(first);
  const indexed = ownIndexState(dataDir);

  const second = await startCommand(startOnly, clone, SECOND_START_TIMEOUT_MS);
  assert.equal(second.fingerprint, first.fingerprint, 'the second start reuses the certificate');
  assert.equal(ownIndexState(dataDir), indexed, 'the second start reused the index: no new commit, same sources fingerprint');
  await searchFinds(second, dataDir);
  await stop(second);
});
