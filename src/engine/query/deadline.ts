/**
 * The time budget of the search running on this thread. A search is synchronous, so one module-level
 * deadline is enough: `withDeadline` sets it for the duration of one call, and the executor's loops call
 * `checkDeadline` between blocks of work (segments, postings windows, candidates, snippets), which throws
 * `UnavailableError` once the budget is spent. Without a deadline a check costs one comparison.
 */
import { UnavailableError } from '../../kernel/errors.js';

let deadline = Infinity;

/** Runs `fn` with the deadline `at` (epoch ms, as `Date.now()`; undefined: none), restoring the previous one. */
export function withDeadline<T>(at: number | undefined, fn: () => T): T {
  const previous = deadline;
  deadline = at === undefined ? Infinity : Math.min(at, previous);
  try {
    checkDeadline();
    return fn();
  } finally {
    deadline = previous;
  }
}

/** Throws `UnavailableError` when the current search is past its deadline. */
export function checkDeadline(): void {
  if (deadline !== Infinity && Date.now() > deadline) {
    throw new UnavailableError('The search did not finish within its time budget.', 1);
  }
}
