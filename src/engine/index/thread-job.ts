/**
 * Part of a segment's writing done in a thread of its own (a flush's encoding, a merge's stored text)
 * while the writer's thread goes on. The two share three int32s: the job's state, a heartbeat the thread
 * bumps at every checkpoint of its steps (~20 ms of work, steps.ts), and a cancel flag it reads there.
 * A failure's message comes over a port, read synchronously once the state says so.
 *
 * The writer waits synchronously (a flush started inside `upsert`, which cannot await, is finished by the
 * next one) or cooperatively (in `commit()`). A thread that ends without a word — one that could not load
 * its module or ran out of memory posts nothing, and a synchronous wait sees no `exit` event — is known by
 * its silence: no heartbeat for SILENCE_MS fails the job.
 */
import { existsSync } from 'node:fs';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort, type Transferable } from 'node:worker_threads';
import { InternalError } from '../../kernel/errors.js';
import { STEP_MS, type Steps } from './steps.js';

const STATE = 0;
const BEAT = 1;
const CANCEL = 2;
const RUNNING = 0;
const DONE = 1;
const FAILED = 2;

/** A thread that has not bumped its heartbeat for this long is taken for dead (a checkpoint is ~20 ms of work). */
const SILENCE_MS = 60_000;
/** How long one wait sleeps before it looks at the heartbeat again. */
const WAIT_SLICE_MS = 1_000;

/** `Atomics.waitAsync` (Node ≥ 16), typed here: TypeScript has it from its ES2024 library on, past this project's. */
const waitAsync = (Atomics as unknown as {
  waitAsync(a: Int32Array, index: number, value: number, timeoutMs: number): { async: false; value: string } | { async: true; value: Promise<string> };
}).waitAsync;

/** What a job's thread receives: its input, the shared int32s and the port for a failure's message. */
interface ThreadJobData<T> {
  input: T;
  shared: Int32Array;
  port: MessagePort;
}

interface Failure {
  message: string;
  stack?: string;
}

export class ThreadJob {
  /** Whether `module` was built (a library run from its sources without a build has no thread modules). */
  static available(module: URL): boolean {
    return existsSync(module);
  }

  readonly #shared = new Int32Array(new SharedArrayBuffer(12));
  readonly #port: MessagePort;
  readonly #what: string;
  #failure: Error | undefined;
  #settled = false;
  /** The heartbeat last seen, and when it changed. */
  #beat = 0;
  #heard = performance.now();

  /**
   * Starts `module` (a file that calls `runThreadJob`) on `input`, moving `transfer` (buffers of `input`
   * the caller gives up) rather than copying them. `what` names the job in errors.
   */
  constructor(module: URL, input: unknown, transfer: readonly Transferable[], what: string) {
    this.#what = what;
    const { port1, port2 } = new MessageChannel();
    this.#port = port1;
    const data: ThreadJobData<unknown> = { input, shared: this.#shared, port: port2 };
    // the worker keeps the process alive while it works (a cooperative wait's timer does not)
    const worker = new Worker(module, { workerData: data, transferList: [port2, ...transfer] });
    port1.unref();
    // a thread that fails to start, or ends without a word, is seen at once by a cooperative wait
    worker.once('error', (err) => this.#fail({ message: err.message, stack: err.stack }));
    worker.once('exit', (code) => this.#fail({ message: `its thread exited (code ${code}) before it finished` }));
  }

  /** Whether the job has ended, however it ended (`waitSync` then returns or throws at once). */
  get ended(): boolean {
    return !this.#running();
  }

  /** Blocks until the job ends; throws when it failed. */
  waitSync(): void {
    while (this.#running()) Atomics.wait(this.#shared, STATE, RUNNING, WAIT_SLICE_MS);
    this.#settle();
  }

  /**
   * Waits for the job as steps (steps.ts): asleep up to a step's time between checkpoints, so that a
   * cooperative run still gives the event loop its turns while it spends no CPU. Throws when it failed.
   */
  *waitSteps(): Steps<void> {
    while (this.#running()) {
      Atomics.wait(this.#shared, STATE, RUNNING, STEP_MS);
      if (this.#running()) yield;
    }
    this.#settle();
  }

  /** Resolves when the job ends, letting the event loop turn meanwhile; rejects when it failed. */
  async wait(): Promise<void> {
    while (this.#running()) {
      const r = waitAsync(this.#shared, STATE, RUNNING, WAIT_SLICE_MS);
      if (r.async) await r.value;
    }
    this.#settle();
  }

  /** Asks the thread to stop at its next checkpoint and waits for it to end, however it ends. */
  async cancel(): Promise<void> {
    Atomics.store(this.#shared, CANCEL, 1);
    try {
      await this.wait();
    } catch {
      // cancelled, failed or done: the caller removes what the job may have written
    }
  }

  /** Whether the thread is still at work; fails the job once it has been silent for SILENCE_MS. */
  #running(): boolean {
    if (Atomics.load(this.#shared, STATE) !== RUNNING) return false;
    const beat = Atomics.load(this.#shared, BEAT);
    const now = performance.now();
    if (beat !== this.#beat) {
      this.#beat = beat;
      this.#heard = now;
    } else if (now - this.#heard > SILENCE_MS) {
      this.#fail({ message: `its thread has been silent for ${SILENCE_MS / 1000} s` });
      return false;
    }
    return true;
  }

  #fail(failure: Failure): void {
    if (Atomics.compareExchange(this.#shared, STATE, RUNNING, FAILED) !== RUNNING) return;
    this.#failure = this.#error(failure);
    Atomics.notify(this.#shared, STATE);
  }

  #error(failure: Failure): Error {
    const cause = Object.assign(new Error(failure.message), { stack: failure.stack });
    return new InternalError(`${this.#what} failed: ${failure.message}`, { cause });
  }

  #settle(): void {
    if (!this.#settled) {
      this.#settled = true;
      if (Atomics.load(this.#shared, STATE) === FAILED && this.#failure === undefined) {
        const m = receiveMessageOnPort(this.#port)?.message as Failure | undefined;
        this.#failure = this.#error(m ?? { message: 'its thread failed without a word' });
      }
      this.#port.close();
    }
    if (this.#failure !== undefined) throw this.#failure;
  }
}

/** Thrown at a checkpoint of a cancelled job. */
class Cancelled extends Error {
  constructor() {
    super('cancelled');
  }
}

/**
 * The thread's side: runs `job` on the input with `checkpoint`, which the job calls at every step (it
 * bumps the heartbeat and throws once the job is cancelled), then reports how it ended. `job` must
 * clean up after itself when it throws.
 */
export function runThreadJob<T>(data: unknown, job: (input: T, checkpoint: () => void) => void): void {
  const { input, shared, port } = data as ThreadJobData<T>;
  const checkpoint = () => {
    Atomics.add(shared, BEAT, 1);
    if (Atomics.load(shared, CANCEL) !== 0) throw new Cancelled();
  };
  try {
    checkpoint();
    job(input, checkpoint);
    Atomics.store(shared, STATE, DONE);
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    port.postMessage({ message: e.message, stack: e.stack } satisfies Failure);
    Atomics.store(shared, STATE, FAILED);
  }
  Atomics.notify(shared, STATE);
  port.close();
}

/**
 * Runs `steps` to the end, calling `checkpoint` at each of them; what `checkpoint` throws is thrown into
 * the steps too, so that they clean up (remove their temporaries) as on a failure of their own.
 */
export function runWithCheckpoints<R>(steps: Steps<R>, checkpoint: () => void): R {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    try {
      checkpoint();
    } catch (err) {
      steps.throw(err);
      throw err;
    }
  }
}
