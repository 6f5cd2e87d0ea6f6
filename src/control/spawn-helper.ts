/**
 * The spawn helper's process (started by ./spawner.ts): starts the control plane's child processes on the
 * server's behalf and reports what becomes of them. It exists because `fork` copies the page tables of
 * the process that calls it, and the event loop waits for that: in the server (hundreds of MB resident)
 * a spawn held search for 6–10 ms; this process stays small, so its forks are quick, and its waiting
 * holds up nobody.
 *
 * Messages are the types below, over the IPC channel with the `advanced` serialization (output chunks
 * travel as bytes). When the server goes away (the channel closes) this process exits and leaves its
 * children running, as the server's own children were left when it died: the next server stops them as
 * orphans (they carry the supervisor's marker) or they finish on their own (builds have a timeout).
 */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** What the server asks. `output`: the child's stdout and stderr piped back, or appended to a file. */
export type HelperRequest =
  | { t: 'spawn'; id: number; command: string; args: string[]; cwd: string; env: Record<string, string>; output: 'pipe' | { file: string }; nice?: number }
  | { t: 'kill'; id: number; signal: NodeJS.Signals };

/** What the helper tells. `exit` comes last, after all output of the child. */
export type HelperEvent =
  | { t: 'spawned'; id: number; pid: number }
  | { t: 'failed'; id: number; message: string }
  | { t: 'output'; id: number; chunk: Uint8Array }
  | { t: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null };

// The priority the spawner asked for (its own when it was made): a helper forked by a thread that runs at
// a lower one takes it back where the system permits (raising a priority needs CAP_SYS_NICE).
const priority = Number(process.argv[2]);
if (Number.isInteger(priority) && getPriority(0) !== priority) {
  try { setPriority(0, priority); } catch { /* not permitted: the inherited priority */ }
}

const children = new Map<number, ChildProcess>();
const send = (e: HelperEvent): void => { process.send?.(e); };

function start(req: Extract<HelperRequest, { t: 'spawn' }>): void {
  let fd: number | undefined;
  let child: ChildProcess;
  try {
    const stdio: StdioOptions = req.output === 'pipe' ? ['ignore', 'pipe', 'pipe'] : ['ignore', fd = openSync(req.output.file, 'a'), fd];
    child = spawn(req.command, req.args, { cwd: req.cwd, env: req.env, stdio });
  } catch (err) {
    send({ t: 'failed', id: req.id, message: (err as Error).message });
    return;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  children.set(req.id, child);
  child.once('spawn', () => {
    if (req.nice !== undefined) { try { setPriority(child.pid!, req.nice); } catch { /* not permitted: normal priority */ } }
    send({ t: 'spawned', id: req.id, pid: child.pid! });
  });
  child.on('error', (err) => {
    // Only a child that never started is reported here; one that ran ends with its 'close' (a failed
    // kill of it is not an event the server waits for).
    if (child.pid !== undefined) return;
    children.delete(req.id);
    send({ t: 'failed', id: req.id, message: err.message });
  });
  const forward = (chunk: Buffer): void => send({ t: 'output', id: req.id, chunk });
  child.stdout?.on('data', forward);
  child.stderr?.on('data', forward);
  child.once('close', (code, signal) => {
    if (child.pid === undefined) return;
    children.delete(req.id);
    send({ t: 'exit', id: req.id, code, signal });
  });
}

process.on('message', (req: HelperRequest) => {
  if (req.t === 'spawn') start(req);
  else children.get(req.id)?.kill(req.signal);
});
process.on('disconnect', () => process.exit(0));
