/**
 * The in-process event bus (CONTRACT §5). Parts of the service publish status events here; the SSE
 * stream (`src/events/sse.ts`) and anything else subscribe. Every event gets an id `<epoch>-<seq>`:
 * `epoch` is fixed for the life of the bus (one server run), `seq` increases by one per event, so a
 * client's `Last-Event-ID` says exactly which events it has seen. The last `bufferSize` events are kept
 * for replay; an id older than the buffer, or from another epoch, cannot be replayed (`replaySince`
 * returns undefined and the stream sends `reset`).
 */

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
  readonly #snapshotParts = new Map<string, () => unknown>();
  #seq = 0;

  constructor(options: EventBusOptions = {}) {
    this.#bufferSize = Math.max(10_000, options.bufferSize ?? 10_000);
    this.#now = options.now ?? (() => new Date());
    this.epoch = options.epoch ?? String(this.#now().getTime());
  }

  /** Publishes an event to every listener and the replay buffer. `target` marks events about a target. */
  publish(kind: EventKind, payload: Record<string, unknown> = {}, target?: string): BusEvent {
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
   * Registering the same name again replaces the provider.
   */
  registerSnapshotPart(name: string, provider: () => unknown): void {
    this.#snapshotParts.set(name, provider);
  }

  /** The current state, built from every registered part at call time. */
  snapshot(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [name, provider] of this.#snapshotParts) {
      try { out[name] = provider(); } catch (err) { out[name] = { error: String((err as Error).message) }; }
    }
    return out;
  }
}
