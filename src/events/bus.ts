/**
 * The in-process event bus (CONTRACT §5). Parts of the service publish status events here; the SSE
 * stream (`src/events/sse.ts`) and anything else subscribe. Every event gets an id `<epoch>-<seq>`:
 * `epoch` is fixed for the life of the bus (one server run), `seq` increases by one per event, so a
 * client's `Last-Event-ID` says exactly which events it has seen. The last `bufferSize` events are kept
 * for replay; an id older than the buffer, or from another epoch, cannot be replayed (`replaySince`
 * returns undefined and the stream sends `reset`).
 */

import { InternalError } from '../kernel/errors.js';

export type EventKind =
  | 'snapshot'
  | 'reset'
  | 'index.progress'
  | 'index.committed'
  | 'crawl.progress'
  | 'crawl.done'
  | 'trusted.flagged'
  | 'build.started'
  | 'build.log'
  | 'build.succeeded'
  | 'build.failed'
  | 'stage.succeeded'
  | 'stage.failed'
  | 'deploy.started'
  | 'deploy.verifying'
  | 'deploy.succeeded'
  | 'deploy.failed'
  | 'deploy.rolled_back'
  | 'target.drifted'
  | 'target.restarted'
  | 'shutdown';

export interface BusEvent {
  /** `<epoch>-<seq>`, the SSE `id:` line. */
  readonly id: string;
  readonly kind: EventKind;
  /** The JSON of the `data:` line: `{v, seq, ts, kind, ...payload}`. */
  readonly data: Readonly<Record<string, unknown>> & { v: 1; seq: number; ts: string; kind: EventKind };
  /** For events about a managed target: its name, so streams can filter by the reader's capability. */
  readonly target?: string;
}

export type Listener = (event: BusEvent) => void;

/**
 * What a snapshot is built for. A part that holds per-target data (verdicts) must leave out the targets
 * `canSeeTarget` refuses: the stream shows a reader only the targets its capability may read, in the
 * snapshot as in the live events.
 */
export interface SnapshotView {
  canSeeTarget(target: string): boolean;
}
export type SnapshotProvider = (view: SnapshotView) => unknown;

const SEE_ALL: SnapshotView = { canSeeTarget: () => true };
/** Fields every event's data already carries; a snapshot part may not shadow them. */
const RESERVED_PARTS = new Set(['v', 'seq', 'ts', 'kind', 'target', 'reason']);
/** Fields every event's data carries, set by the bus itself (`target` from the third argument of `publish`). */
const ENVELOPE_FIELDS = ['v', 'seq', 'ts', 'kind', 'target'] as const;

/** What was published as `event`'s payload: its data without the fields the bus set (to publish it again elsewhere). */
export function payloadOf(event: BusEvent): Record<string, unknown> {
  const payload: Record<string, unknown> = { ...event.data };
  for (const key of ENVELOPE_FIELDS) delete payload[key];
  return payload;
}

export interface EventBusOptions {
  /** Events kept for `Last-Event-ID` replay; CONTRACT §5 requires at least 10,000. */
  bufferSize?: number;
  /** Epoch of this bus; defaults to the start time in milliseconds, so a restart starts a new epoch. */
  epoch?: string;
  now?: () => Date;
}

export class EventBus {
  readonly epoch: string;
  readonly #bufferSize: number;
  readonly #now: () => Date;
  readonly #ring: BusEvent[] = [];
  readonly #listeners = new Set<Listener>();
  readonly #snapshotParts = new Map<string, SnapshotProvider>();
  #seq = 0;

  constructor(options: EventBusOptions = {}) {
    this.#bufferSize = Math.max(10_000, options.bufferSize ?? 10_000);
    this.#now = options.now ?? (() => new Date());
    this.epoch = options.epoch ?? String(this.#now().getTime());
  }

  /** Publishes an event to every listener and the replay buffer. `target` marks events about a target. */
  publish(kind: EventKind, payload: Record<string, unknown> = {}, target?: string): BusEvent {
    // The envelope's fields would silently overwrite these: a publisher using one has a bug, not an event.
    for (const key of ENVELOPE_FIELDS) {
      if (Object.hasOwn(payload, key)) throw new InternalError(`An ${kind} event's payload uses the envelope field ${JSON.stringify(key)}.`);
    }
    const seq = ++this.#seq;
    const data = { ...payload, v: 1 as const, seq, ts: this.#now().toISOString(), kind };
    const event: BusEvent = target === undefined
      ? { id: `${this.epoch}-${seq}`, kind, data }
      : { id: `${this.epoch}-${seq}`, kind, data: { ...data, target }, target };
    this.#ring.push(event);
    if (this.#ring.length > this.#bufferSize) this.#ring.splice(0, this.#ring.length - this.#bufferSize);
    for (const fn of this.#listeners) {
      try { fn(event); } catch { /* a broken listener must not stop the others or the publisher */ }
    }
    return event;
  }

  subscribe(fn: Listener): () => void {
    this.#listeners.add(fn);
    return () => { this.#listeners.delete(fn); };
  }

  /** The sequence number of the newest event (0 before any). */
  get lastSeq(): number { return this.#seq; }

  /** The id a client holds once it has seen every event so far: `<epoch>-<lastSeq>` (`-0` before any). */
  get lastId(): string { return `${this.epoch}-${this.#seq}`; }

  /** Current listeners (open streams among them): lets tests and metrics see that a stream let go. */
  get subscriberCount(): number { return this.#listeners.size; }

  /**
   * Events published after `lastEventId`, oldest first; `[]` when it is the newest. `undefined` when the
   * id is malformed, from another epoch, from the future, or older than the buffer: the caller resets.
   */
  replaySince(lastEventId: string): BusEvent[] | undefined {
    const m = /^(\d+)-(\d+)$/.exec(lastEventId);
    if (!m || m[1] !== this.epoch) return undefined;
    const seq = Number(m[2]);
    if (!Number.isSafeInteger(seq) || seq > this.#seq) return undefined;
    if (seq === this.#seq) return [];
    const first = this.#ring[0];
    if (!first || first.data.seq > seq + 1) return undefined;
    return this.#ring.slice(seq + 1 - first.data.seq);
  }

  /**
   * A part of the `snapshot` event: e.g. `index` (status per corpus), `crawl`, `targets` (verdicts).
   * Registering the same name again replaces the provider. The provider must be synchronous and must
   * reflect every event already published: publishers change their state first and publish second, so
   * that a snapshot taken at `lastSeq` is exactly the state after event `lastSeq` (the stream relies on
   * this to resume from a snapshot without losing or repeating an event).
   */
  registerSnapshotPart(name: string, provider: SnapshotProvider): void {
    if (RESERVED_PARTS.has(name)) throw new Error(`snapshot part name ${JSON.stringify(name)} is reserved`);
    this.#snapshotParts.set(name, provider);
  }

  /** The current state, built from every registered part at call time, as `view` may see it. */
  snapshot(view: SnapshotView = SEE_ALL): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [name, provider] of this.#snapshotParts) {
      try { out[name] = provider(view); } catch (err) { out[name] = { error: String((err as Error).message) }; }
    }
    return out;
  }
}
