/**
 * The writer lock: `write.lock` in the index directory, created exclusively (O_EXCL) and holding the
 * owner's pid. A lock whose pid no longer runs is stale (its writer was killed) and is taken over: renamed
 * away (atomic, so of two takers one gets it), checked to be the stale lock that was judged (a taker that
 * grabbed a fresh lock instead puts it back and gives up), then replaced by an O_EXCL create.
 * Limits, documented rather than hidden: three processes racing over one stale lock can still leave two
 * believing they write (Node has no flock); a recycled pid makes a stale lock look live until that
 * process exits. Both need a crash followed by a race or a wrap-around.
 */
import { closeSync, linkSync, openSync, readFileSync, realpathSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ConflictError } from '../../kernel/errors.js';

export const LOCK_FILE = 'write.lock';

/** Locks held by this process, by directory: a second writer here is refused like one elsewhere. */
const heldHere = new Set<string>();

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class WriterLock {
  private released = false;
  private constructor(readonly path: string) {}

  static acquire(dir: string): WriterLock {
    const path = join(realpathSync(dir), LOCK_FILE); // one key per directory however it is spelled
    if (heldHere.has(path)) throw new ConflictError(`The index at ${dir} already has an open writer in this process.`);
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const fd = openSync(path, 'wx', 0o644);
        try {
          writeSync(fd, `${process.pid}\n`);
        } finally {
          closeSync(fd);
        }
        heldHere.add(path);
        return new WriterLock(path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      let pid = NaN;
      try {
        pid = Number.parseInt(readFileSync(path, 'utf8'), 10);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw err;
      }
      // A lock with our own pid that this process does not hold was left by a previous process with the same pid.
      if (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && pidAlive(pid)) {
        throw new ConflictError(`The index at ${dir} is being written by process ${pid}.`);
      }
      // Take the stale lock away by renaming it (atomic: of two takers, one gets the file), then check
      // that what we took is the stale lock we judged and not a fresh one another taker just created.
      const taken = `${path}.${process.pid}.tmp`; // collected by the next writer if we die right here
      try {
        renameSync(path, taken);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw err;
      }
      let takenPid = NaN;
      try {
        takenPid = Number.parseInt(readFileSync(taken, 'utf8'), 10);
      } catch {
        // unreadable: it was stale
      }
      if (Number.isSafeInteger(takenPid) && takenPid > 0 && takenPid !== pid && takenPid !== process.pid && pidAlive(takenPid)) {
        // a live writer's fresh lock: put it back (link fails only if yet another lock appeared)
        try {
          linkSync(taken, path);
        } catch {
          // the other taker will find its lock gone on release; nothing better is possible without flock
        }
        unlinkSync(taken);
        throw new ConflictError(`The index at ${dir} is being written by process ${takenPid}.`);
      }
      unlinkSync(taken);
    }
    throw new ConflictError(`Could not take the writer lock of ${dir}: another process keeps taking it.`);
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    heldHere.delete(this.path);
    try {
      const pid = Number.parseInt(readFileSync(this.path, 'utf8'), 10);
      if (pid === process.pid) unlinkSync(this.path);
    } catch {
      // already gone: nothing to release
    }
  }
}
