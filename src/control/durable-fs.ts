/**
 * Crash-safe file primitives of the control plane. Every write the control plane acknowledges goes
 * through here: write a temp file, fsync it, rename it over the final name, fsync the directory. A live
 * pointer is a symlink replaced the same way (a temp symlink renamed over it), so a reader resolving it
 * sees the old target or the new one, never a missing or half-made link.
 */
import { closeSync, fsyncSync, openSync, renameSync, rmSync, symlinkSync, writeSync, readdirSync, statSync, lstatSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';

export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try { fsyncSync(fd); } finally { closeSync(fd); }
}

/** fsyncs every file and directory under `root` (bottom-up), so a later rename publishes durable content. */
export function fsyncTree(root: string): void {
  for (const name of readdirSync(root)) {
    const p = join(root, name);
    const st = lstatSync(p);
    if (st.isDirectory()) fsyncTree(p);
    else if (st.isFile()) {
      const fd = openSync(p, 'r');
      try { fsyncSync(fd); } finally { closeSync(fd); }
    }
  }
  fsyncDir(root);
}

export function tempName(final: string): string {
  return join(dirname(final), `.tmp-${basename(final)}-${randomBytes(6).toString('hex')}`);
}

export function writeFileAtomic(file: string, data: string | Buffer, mode = 0o644): void {
  const tmp = tempName(file);
  const fd = openSync(tmp, 'w', mode);
  try {
    const buf = typeof data === 'string' ? Buffer.from(data) : data;
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off);
    fsyncSync(fd);
  } finally { closeSync(fd); }
  try { renameSync(tmp, file); } catch (err) { rmSync(tmp, { force: true }); throw err; }
  fsyncDir(dirname(file));
}

/** Points `link` at `target` (a relative path is resolved from the link's directory) in one rename. */
export function switchSymlink(link: string, target: string): void {
  const tmp = tempName(link);
  symlinkSync(target, tmp);
  try { renameSync(tmp, link); } catch (err) { rmSync(tmp, { force: true }); throw err; }
  fsyncDir(dirname(link));
}

/** Removes a tree even when its files were made read-only. */
export function removeTree(p: string): void {
  try { statSync(p); } catch { try { lstatSync(p); } catch { return; } }
  rmSync(p, { recursive: true, force: true });
}
