/**
 * The claim board of the search pool: shared memory in which each posted task has a cell, and a worker
 * takes a task by compare-and-swap on that cell. The pool posts each task to several workers (./pool.ts);
 * whichever is free first claims it and runs it, the others find it taken and drop their copy. So a worker that
 * finishes a search starts the next queued one at once, without waiting for the serving thread, and no
 * task waits behind a slow search while another worker is free.
 *
 * A task is numbered (`seq`) when it is posted, and its cell is `cellOf(seq)`. While the task is
 * open the cell holds its mark (the seq, as a non-negative int32); a worker's claim replaces the mark
 * with the negative of the worker's token; the pool's refusal (on close) with `REFUSED`. A cell is only
 * compared against the mark of the task being claimed, so a copy a worker holds of a task that another
 * ended long ago cannot take the cell of the newer task that now uses it. The pool reuses a cell only
 * once the task that held it before has ended (`SearchPool` keeps at most `CLAIM_CELLS` tasks posted).
 */

/** Cells on the board: the most tasks the pool has posted and not yet seen ended. */
export const CLAIM_CELLS = 4096;
/** The value of a refused cell: below every claim (`-token`; a worker's token is a positive int32). */
const REFUSED = -0x8000_0000;

export class ClaimBoard {
  readonly buffer: SharedArrayBuffer;
  readonly #cells: Int32Array;

  /** A new board, or (in a worker) a view of the pool's `buffer`. */
  constructor(buffer: SharedArrayBuffer = new SharedArrayBuffer(CLAIM_CELLS * Int32Array.BYTES_PER_ELEMENT)) {
    this.buffer = buffer;
    this.#cells = new Int32Array(buffer);
  }

  /** Marks task `seq` open to claims. Its cell's previous task must have ended. */
  open(seq: number): void {
    Atomics.store(this.#cells, cellOf(seq), mark(seq));
  }

  /** Takes task `seq` for the worker with `token`; false when another worker took it or the pool refused it. */
  claim(seq: number, token: number): boolean {
    return Atomics.compareExchange(this.#cells, cellOf(seq), mark(seq), -token) === mark(seq);
  }

  /** Takes task `seq` back from the workers; false when one has claimed it already. */
  refuse(seq: number): boolean {
    return Atomics.compareExchange(this.#cells, cellOf(seq), mark(seq), REFUSED) === mark(seq);
  }

  /** Whether task `seq` is open: no worker has claimed it and the pool has not refused it. */
  isOpen(seq: number): boolean {
    return Atomics.load(this.#cells, cellOf(seq)) === mark(seq);
  }

  /** Whether the worker with `token` claimed task `seq`, which must be the newest task of its cell. */
  claimedBy(seq: number, token: number): boolean {
    return Atomics.load(this.#cells, cellOf(seq)) === -token;
  }
}

/** The index of task `seq`'s cell. */
export function cellOf(seq: number): number {
  return seq % CLAIM_CELLS;
}

function mark(seq: number): number {
  return seq & 0x7fff_ffff;
}
