/**
 * The index directory's file discipline: every file is written once under a temporary name, fsynced,
 * then renamed into place, and the directory is fsynced after the renames that matter. A crash
 * therefore leaves either no file or a complete one under each final name; temporaries are garbage.
 * Named fault points let tests crash a commit at a chosen step (`QUARRY_INDEX_FAULT=<point>` kills the
 * process there) without patching code.
 */
import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const TMP_SUFFIX = '.tmp';

/** Writes `data` to `dir/name` durably: tmp → write → fsync → rename. The caller fsyncs the directory. */
export function writeFileDurable(dir: string, name: string, data: Uint8Array): void {
  const tmp = join(dir, `${name}.${process.pid}${TMP_SUFFIX}`);
  const fd = openSync(tmp, 'w', 0o644);
  try {
    let off = 0;
    while (off < data.length) off += writeSync(fd, data, off, data.length - off);
    faultPoint('file-written');
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, join(dir, name));
}

/** Makes completed renames and unlinks in `dir` durable. */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

const FAULT = process.env.QUARRY_INDEX_FAULT;
/** Dies on the spot (like SIGKILL: no cleanup) when the environment names this point. */
export function faultPoint(name: string): void {
  if (FAULT !== undefined && FAULT === name) process.kill(process.pid, 'SIGKILL');
}
