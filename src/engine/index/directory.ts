/**
 * The index directory's file discipline: every file is written once under a temporary name, fsynced,
 * then renamed into place, and the directory is fsynced after the renames that matter. A crash
 * therefore leaves either no file or a complete one under each final name; temporaries are garbage.
 * Named fault points let tests crash a commit at a chosen step (`QUARRY_INDEX_FAULT=<point>` kills the
 * process there) without patching code.
 */
import { join } from 'node:path';
import { writeFileDurable as writeDurable } from '../../kernel/durable-file.js';

export { fsyncDir, isTempName, tempName } from '../../kernel/durable-file.js';

/** Writes `data` to `dir/name` durably (kernel/durable-file.ts). The caller fsyncs the directory. */
export function writeFileDurable(dir: string, name: string, data: Uint8Array): void {
  writeDurable(join(dir, name), data, { syncDir: false, beforeSync: () => faultPoint('file-written') });
}

const FAULT = process.env.QUARRY_INDEX_FAULT;
/** Dies on the spot (like SIGKILL: no cleanup) when the environment names this point. */
export function faultPoint(name: string): void {
  if (FAULT !== undefined && FAULT === name) process.kill(process.pid, 'SIGKILL');
}
