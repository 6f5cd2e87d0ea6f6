/**
 * Long encodings (a segment, a merge) are written as generators that `yield` at checkpoints, so the
 * same code runs to completion synchronously (a write buffer overflowing inside `upsert`, which is
 * synchronous) or cooperatively inside `commit()`, giving the event loop — queries served by this
 * process — a turn at every checkpoint.
 */
export type Steps<T> = Generator<void, T, void>;

/** Checkpoint spacing: roughly this many milliseconds of work between turns of the event loop. */
export const STEP_MS = 20;

export function runSync<T>(steps: Steps<T>): T {
  let r = steps.next();
  while (!r.done) r = steps.next();
  return r.value;
}

export async function runCooperatively<T>(steps: Steps<T>): Promise<T> {
  let r = steps.next();
  while (!r.done) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    r = steps.next();
  }
  return r.value;
}

/** A checkpoint predicate: true when STEP_MS have passed since it last returned true. */
export function stepClock(): () => boolean {
  let last = performance.now();
  return () => {
    const now = performance.now();
    if (now - last < STEP_MS) return false;
    last = now;
    return true;
  };
}
