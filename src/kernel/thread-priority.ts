/**
 * The calling thread's CPU priority, for threads that do background or bulk work beside the event loop
 * that serves requests (search threads, the control plane's threads).
 */
import { getPriority, setPriority } from 'node:os';

/** The lowest priority: nice 19. */
export const LOWEST_NICE = 19;

/**
 * Runs the calling thread at nice value `nice` (0 normal … 19 lowest), or leaves it as it is when it
 * already runs at that or lower. Linux only: there a nice value is a thread's own; elsewhere it is the
 * whole process's, and a worker thread lowering it would slow the event loop too. A refusal (a sandbox's
 * seccomp policy) leaves the priority as it was.
 */
export function lowerThreadPriority(nice: number): void {
  if (process.platform !== 'linux') return;
  try {
    const target = Math.min(LOWEST_NICE, nice);
    if (target > getPriority()) setPriority(target);
  } catch {
    // not permitted: the thread keeps the process's priority
  }
}
