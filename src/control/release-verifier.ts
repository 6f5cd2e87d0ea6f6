/**
 * Checks a release directory against its manifest without hashing a file twice: a file's hash is
 * remembered with the stat that produced it, and a later check stats every path but hashes only a file
 * whose (size, mtime, ctime, inode) changed, so the steady state of a resync costs one `lstat` per file.
 * The server runs it on the release-check thread (./release-check-thread.ts), off the event loop that
 * serves search; the walk still stats in slices and hashes as a stream, so that thread answers its other
 * requests between them.
 *
 * A cached hash is trusted only when the file's mtime and ctime are older than the moment the hash was
 * started by more than `racyMs` (1 s) (git's "racily clean" rule): timestamps are coarse (a few ms on some
 * file systems), so an edit in the same tick as the hash would otherwise keep an old hash forever.
 * ctime cannot be set from user space, so `touch -m` with an old date does not fool the cache.
 */
import { createHash } from 'node:crypto';
import { createReadStream, lstatSync, readdirSync, type Stats } from 'node:fs';
import { lstat, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { FileManifest } from './artifact.js';
import { forEachBounded } from './bounded.js';

/** Paths stat'ed in one turn of the event loop while walking a release; files hashed at once. */
const WALK_SLICE = 128;
const HASH_CONCURRENCY = 4;
/** Stamps younger than this (relative to the start of their hash) are re-hashed next time. */
const DEFAULT_RACY_MS = 1_000;

interface Hashed { size: number; mtimeMs: number; ctimeMs: number; ino: number; sha256: string; hashedAt: number }

export class ReleaseVerifier {
  /** Release directory → relative path → the last hash of that file. */
  readonly #cache = new Map<string, Map<string, Hashed>>();
  /** Files hashed since construction (the cache works when a check of an unchanged release leaves it put). */
  hashed = 0;
  readonly #racyMs: number;

  /** `racyMs`: how recent a change must be, relative to its hash, for the hash not to be trusted. */
  constructor(racyMs = DEFAULT_RACY_MS) { this.#racyMs = racyMs; }

  /**
   * Paths of `dir` that differ from `manifest` (added, removed, changed type, size, content or link
   * target), sorted; undefined when `dir` does not exist.
   */
  async diff(dir: string, manifest: FileManifest): Promise<string[] | undefined> {
    const actual = new Map<string, Stats>();
    try { await lstat(dir); } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') { this.#cache.delete(dir); return undefined; }
      throw err;
    }
    await walk(dir, actual);
    const before = this.#cache.get(dir) ?? new Map<string, Hashed>();
    const after = new Map<string, Hashed>();
    const out: string[] = [];
    const toHash: { p: string; st: Stats; sha256: string }[] = [];
    for (const [p, want] of Object.entries(manifest)) {
      const st = actual.get(p);
      let same: boolean;
      if (!st) same = false;
      else if (want.type === 'dir') same = st.isDirectory();
      else if (want.type === 'symlink') same = st.isSymbolicLink() && (await readlink(join(dir, p)).catch(() => undefined)) === want.to;
      else if (!st.isFile() || st.size !== want.size) same = false;
      else { toHash.push({ p, st, sha256: want.sha256 }); continue; }
      if (!same) out.push(p);
    }
    await forEachBounded(toHash, HASH_CONCURRENCY, async ({ p, st, sha256 }) => {
      const h = await this.#hash(join(dir, p), st, before.get(p));
      if (h) after.set(p, h);
      if (h?.sha256 !== sha256) out.push(p);
    });
    for (const p of actual.keys()) if (!(p in manifest)) out.push(p);
    this.#cache.set(dir, after);
    return out.sort();
  }

  /** Drops what is remembered of `dir` (a pruned release). */
  forget(dir: string): void { this.#cache.delete(dir); }

  async #hash(file: string, st: Stats, cached: Hashed | undefined): Promise<Hashed | undefined> {
    if (cached && cached.size === st.size && cached.mtimeMs === st.mtimeMs && cached.ctimeMs === st.ctimeMs && cached.ino === st.ino
      && Math.max(st.mtimeMs, st.ctimeMs) < cached.hashedAt - this.#racyMs) return cached;
    const hashedAt = Date.now();
    const h = createHash('sha256');
    try {
      for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
    } catch { return undefined; } // vanished or unreadable: counted as different
    this.hashed++;
    return { size: st.size, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, sha256: h.digest('hex'), hashedAt };
  }
}

/**
 * Every path under `root` with its lstat; a path that vanishes during the walk is left out (it is then
 * missing). The stats are synchronous, in slices of `WALK_SLICE` with a turn of the event loop between
 * slices: a slice blocks the loop for well under a millisecond, and a synchronous lstat costs a tenth of
 * the CPU of an asynchronous one (no thread-pool hop, no promise per file), which matters when every
 * reconcile and observation of all targets walks every live release.
 */
async function walk(root: string, out: Map<string, Stats>): Promise<void> {
  const pending = [''];
  let budget = WALK_SLICE;
  while (pending.length > 0) {
    const rel = pending.pop()!;
    let names: string[];
    try { names = readdirSync(rel === '' ? root : join(root, rel)); } catch (err) { if (isGone(err)) continue; throw err; }
    budget -= 1;
    for (const name of names) {
      if (budget <= 0) {
        await yieldToLoop();
        budget = WALK_SLICE;
      }
      budget -= 1;
      const p = rel === '' ? name : `${rel}/${name}`;
      const st = lstatSync(join(root, p), { throwIfNoEntry: false });
      if (!st) continue;
      out.set(p, st);
      if (st.isDirectory()) pending.push(p);
    }
  }
}

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

function isGone(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
