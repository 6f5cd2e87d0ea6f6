/**
 * Durable file writes, the one implementation of "nothing acknowledged is lost" on disk: a new file is
 * written under a unique temporary name in its final directory, fsynced, renamed over the final name,
 * and the directory fsynced. A crash leaves the old file or the new one under the final name, never a
 * torn one; what is left behind is a temporary (`*.tmp`), garbage that its owner's recovery removes.
 *
 * A live pointer is a symlink replaced the same way (a temporary symlink renamed over it), so a reader
 * resolving it sees the old target or the new one, never a missing or half-made link.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync, fsyncSync, linkSync, lstatSync, openSync, renameSync, rmSync, statSync, symlinkSync, writeSync,
} from 'node:fs';
import { lstat, open, readdir, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Every temporary this module makes ends so; recovery code recognizes garbage by it. */
const TMP_SUFFIX = '.tmp';

export function isTempName(name: string): boolean {
  return name.endsWith(TMP_SUFFIX);
}

/** A fresh temporary name beside `final`: unique across processes and calls, hidden, ending in `.tmp`. */
export function tempName(final: string): string {
  return join(dirname(final), `.${basename(final)}.${process.pid}-${randomBytes(6).toString('hex')}${TMP_SUFFIX}`);
}

export interface DurableWriteOptions {
  /** File mode of the new file (applied at creation, so a secret is never readable by others). Default 0o644. */
  mode?: number;
  /**
   * fsync the directory after the rename. Default true. A caller that renames several files into one
   * directory (an index commit) passes false and calls `fsyncDir` once after the last rename.
   */
  syncDir?: boolean;
  /** Keep an existing file: the write fails with EEXIST instead of replacing it (first writer wins). */
  exclusive?: boolean;
  /** Called after the data is written and before the fsync: a fault point for crash tests. */
  beforeSync?: () => void;
}

/**
 * A file written durably piece by piece, for contents too large to hold whole (an index segment): the
 * pieces go to the temporary as they come, and `commit` fsyncs it and renames it over the final name.
 * Until then the final name is untouched; `abort` (or a crash) leaves only the temporary.
 */
export class DurableWriter {
  readonly file: string;
  readonly #tmp: string;
  readonly #options: DurableWriteOptions;
  #fd: number | undefined;
  #bytes = 0;

  constructor(file: string, options: DurableWriteOptions = {}) {
    this.file = file;
    this.#options = options;
    this.#tmp = tempName(file);
    this.#fd = openSync(this.#tmp, 'wx', options.mode ?? 0o644);
  }

  /** Bytes written so far. */
  get bytes(): number { return this.#bytes; }

  write(data: Uint8Array): void {
    const fd = this.#open();
    let off = 0;
    while (off < data.length) off += writeSync(fd, data, off, data.length - off);
    this.#bytes += data.length;
  }

  /** fsync, rename over the final name (or link, when exclusive), and fsync the directory unless told not to. */
  commit(): void {
    const fd = this.#open();
    try {
      try {
        this.#options.beforeSync?.();
        fsyncSync(fd);
      } finally {
        this.#fd = undefined;
        closeSync(fd);
      }
      // link() refuses to replace an existing file, which is what an exclusive write wants.
      if (this.#options.exclusive) linkSync(this.#tmp, this.file);
      else renameSync(this.#tmp, this.file);
    } finally {
      rmSync(this.#tmp, { force: true });
    }
    if (this.#options.syncDir !== false) fsyncDir(dirname(this.file));
  }

  /** Drops the temporary; the final name keeps what it had. Safe to call more than once. */
  abort(): void {
    if (this.#fd !== undefined) {
      const fd = this.#fd;
      this.#fd = undefined;
      closeSync(fd);
    }
    rmSync(this.#tmp, { force: true });
  }

  #open(): number {
    if (this.#fd === undefined) throw new Error(`${this.file}: the write was already committed or aborted.`);
    return this.#fd;
  }
}

/** Writes `data` to `file` durably (temporary → write → fsync → rename → fsync directory). */
export function writeFileDurable(file: string, data: string | Uint8Array, options: DurableWriteOptions = {}): void {
  const w = new DurableWriter(file, options);
  try {
    w.write(typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
    w.commit();
  } catch (err) {
    w.abort();
    throw err;
  }
}

/** Makes completed renames, links and unlinks in `dir` durable. */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try { fsyncSync(fd); } finally { closeSync(fd); }
}

/**
 * fsyncs every file and directory under `root` (each directory after its contents), so a later rename
 * publishes durable content. Asynchronous, a directory's entries together (the thread pool bounds how
 * many run at once): a tree of thousands of files is as many fsyncs, which must not hold the event loop.
 */
export async function fsyncTree(root: string): Promise<void> {
  await Promise.all((await readdir(root)).map(async (name) => {
    const p = join(root, name);
    const st = await lstat(p);
    if (st.isDirectory()) await fsyncTree(p);
    else if (st.isFile()) await fsyncPath(p);
  }));
  await fsyncPath(root);
}

async function fsyncPath(p: string): Promise<void> {
  const fh = await open(p, 'r');
  try { await fh.sync(); } finally { await fh.close(); }
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

/** `removeTree` without holding the event loop (large trees: releases, build directories). */
export async function removeTreeAsync(p: string): Promise<void> {
  await rm(p, { recursive: true, force: true });
}
