/**
 * Server-sent-event framing and the per-connection send queue (CONTRACT §5). Framing is the
 * `text/event-stream` wire form: `id:`, `event:`, one `data:` line of JSON, a blank line. The queue sits
 * between the event bus (which never waits) and one client's socket (which may): it writes while the
 * socket accepts, holds frames while the socket is full, and gives up on the client when the backlog of
 * live frames passes a bound, so that one stuck reader can never make the server hold unbounded memory.
 * A dropped client reconnects with its `Last-Event-ID` and catches up from the bus's replay buffer.
 */
import type { BusEvent } from './bus.js';

/** Where frames go: the `StreamReply` sink of src/http/route.ts, plus an optional hard stop. */
export interface SseSink {
  /** Queues `chunk` on the response; false when the transport's buffer is full (wait for drain). */
  write(chunk: string): boolean;
  /** Calls `fn` once the transport can take more after a `write` returned false. */
  onDrain(fn: () => void): void;
  /** Ends the response cleanly after what was written. */
  end(): void;
  /**
   * Tears the response down at once, dropping what is buffered (a slow client's socket is by definition
   * not draining, so `end()` would linger until the idle timeout). Falls back to `end()` when absent.
   */
  destroy?(): void;
}

export interface SseQueueOptions {
  /** Live frames held for a client that is not reading before it is dropped. CONTRACT §5: 1,000. */
  maxQueuedEvents?: number;
  /** Bytes of live frames held for a client that is not reading before it is dropped. CONTRACT §5: 1 MiB. */
  maxQueuedBytes?: number;
  /** Frames are joined into writes of at most about this many bytes when catching up. Default 64 KiB. */
  batchBytes?: number;
  /**
   * A client whose transport takes nothing (no drain) across this many keep-alive ticks in a row is
   * dropped as dead, however short its queue: a peer that vanished without a reset, or a response the
   * server closed without telling the stream, must not hold a subscription forever. Default 2 (so a
   * stall of one to two keep-alive periods). Zero: never.
   */
  maxStalledTicks?: number;
}

export const DEFAULT_MAX_QUEUED_EVENTS = 1_000;
export const DEFAULT_MAX_QUEUED_BYTES = 1024 * 1024;
export const DEFAULT_MAX_STALLED_TICKS = 2;
const DEFAULT_BATCH_BYTES = 64 * 1024;

/** One encoded frame and its UTF-8 length (what the queue bound counts). */
export interface Frame {
  readonly text: string;
  readonly bytes: number;
}

function frame(text: string): Frame {
  return { text, bytes: Buffer.byteLength(text) };
}

/**
 * Encodes one event. `data` is serialized with JSON.stringify, which escapes CR and LF inside strings, so
 * the payload is always exactly one `data:` line; `id` and `event` come from the bus and never hold
 * line breaks.
 */
export function encodeFrame(fields: { id?: string; event?: string; data?: unknown; retryMs?: number }): Frame {
  let text = '';
  if (fields.retryMs !== undefined) text += `retry: ${fields.retryMs}\n`;
  if (fields.id !== undefined) text += `id: ${fields.id}\n`;
  if (fields.event !== undefined) text += `event: ${fields.event}\n`;
  if (fields.data !== undefined) text += `data: ${JSON.stringify(fields.data)}\n`;
  return frame(text + '\n');
}

/** A comment line: ignored by clients, keeps proxies and idle timers from closing a quiet stream. */
export const KEEPALIVE_FRAME: Frame = frame(': keepalive\n\n');

// Every subscriber of a bus event sends the same bytes: encode once per event, not once per client.
const encoded = new WeakMap<BusEvent, Frame>();

/** The frame of a bus event, encoded once and shared by every connection that sends it. */
export function busEventFrame(event: BusEvent): Frame {
  let f = encoded.get(event);
  if (!f) {
    f = encodeFrame({ id: event.id, event: event.kind, data: event.data });
    encoded.set(event, f);
  }
  return f;
}

export type QueueState = 'open' | 'ending' | 'closed';

/**
 * The send side of one SSE connection. Two sources feed it: a backlog (a replay from the bus buffer,
 * already bounded by the buffer's size and sent as fast as the client reads, so it never counts towards
 * the slow-client bound) and live frames (counted: a client that falls 1,000 frames or 1 MiB behind the
 * live stream is dropped). Frames leave strictly in the order they were given: backlog first, then live.
 *
 * States: `open` → `ending` (end requested: send what is queued, then end) → `closed`; or `open`/`ending`
 * → `closed` directly on `drop` or `close`. `closed` is terminal and every method is then a no-op.
 */
export class SseQueue {
  readonly #sink: SseSink;
  readonly #maxEvents: number;
  readonly #maxBytes: number;
  readonly #batchBytes: number;
  readonly #maxStalledTicks: number;
  /** Keep-alive ticks seen while blocked since the last drain. */
  #stalledTicks = 0;
  readonly #onClosed: (reason: 'ended' | 'dropped' | 'closed') => void;
  #backlog: readonly Frame[] = [];
  #backlogAt = 0;
  #live: Frame[] = [];
  #liveAt = 0;
  #liveBytes = 0;
  /** True between a `write` that returned false and the sink's drain. */
  #blocked = false;
  #state: QueueState = 'open';

  constructor(sink: SseSink, options: SseQueueOptions & { onClosed?: (reason: 'ended' | 'dropped' | 'closed') => void } = {}) {
    this.#sink = sink;
    this.#maxEvents = options.maxQueuedEvents ?? DEFAULT_MAX_QUEUED_EVENTS;
    this.#maxBytes = options.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES;
    this.#batchBytes = options.batchBytes ?? DEFAULT_BATCH_BYTES;
    this.#maxStalledTicks = options.maxStalledTicks ?? DEFAULT_MAX_STALLED_TICKS;
    this.#onClosed = options.onClosed ?? (() => {});
  }

  get state(): QueueState { return this.#state; }
  /** Live frames waiting for the client (the number the slow-client bound applies to). */
  get queuedEvents(): number { return this.#live.length - this.#liveAt; }
  get queuedBytes(): number { return this.#liveBytes; }

  /** Sends `first` at once, ahead of everything: the opening frame of a connection. */
  writeFirst(first: Frame): void {
    if (this.#state !== 'open') return;
    this.#write(first.text);
  }

  /** Frames to send before any live frame (a replay). Set once, before live frames arrive. */
  setBacklog(frames: readonly Frame[]): void {
    this.#backlog = frames;
    this.#backlogAt = 0;
    this.#flush();
  }

  /** Queues a live frame; drops the client when its backlog of live frames passes the bound. */
  push(f: Frame): void {
    if (this.#state !== 'open') return;
    if (!this.#blocked && this.#backlogAt >= this.#backlog.length && this.queuedEvents === 0) {
      // The common case: the client keeps up, the frame goes straight to the transport.
      this.#write(f.text);
      return;
    }
    this.#live.push(f);
    this.#liveBytes += f.bytes;
    if (this.queuedEvents > this.#maxEvents || this.#liveBytes > this.#maxBytes) {
      this.drop();
      return;
    }
    this.#flush();
  }

  /**
   * The keep-alive tick: writes a keep-alive comment when the client is idle; drops a client whose
   * transport has taken nothing for `maxStalledTicks` ticks. On a quiet stream the comment is also what
   * reveals a response that is already gone: its write is refused, and the following ticks drop it.
   */
  keepalive(): void {
    if (this.#state !== 'open') return;
    if (this.#blocked) {
      if (this.#maxStalledTicks > 0 && ++this.#stalledTicks >= this.#maxStalledTicks) this.drop();
      return;
    }
    if (this.queuedEvents > 0 || this.#backlogAt < this.#backlog.length) return;
    this.#write(KEEPALIVE_FRAME.text);
  }

  /**
   * Sends everything queued, then ends the response. A client that is not reading keeps the response
   * open until it drains or its owner calls `close` (the server's shutdown deadline aborts the request).
   */
  endAfterFlush(): void {
    if (this.#state !== 'open') return;
    this.#state = 'ending';
    this.#flush();
  }

  /** Disconnects a client that is not keeping up: discards its queue and tears the response down. */
  drop(): void {
    if (this.#state === 'closed') return;
    this.#finish('dropped');
    try {
      if (this.#sink.destroy) this.#sink.destroy(); else this.#sink.end();
    } catch { /* the transport is already gone */ }
  }

  /** The client went away or the server is stopping: release everything without writing more. */
  close(): void {
    if (this.#state === 'closed') return;
    this.#finish('closed');
    try { this.#sink.end(); } catch { /* already gone */ }
  }

  #finish(reason: 'ended' | 'dropped' | 'closed'): void {
    this.#state = 'closed';
    this.#backlog = [];
    this.#live = [];
    this.#liveAt = 0;
    this.#liveBytes = 0;
    this.#onClosed(reason);
  }

  #write(text: string): void {
    let ok: boolean;
    try {
      ok = this.#sink.write(text);
    } catch {
      this.close();
      return;
    }
    if (!ok && !this.#blocked) {
      this.#blocked = true;
      this.#sink.onDrain(() => {
        this.#blocked = false;
        this.#stalledTicks = 0;
        this.#flush();
      });
    }
  }

  /** Moves queued frames to the transport in batches until it pushes back or nothing is left. */
  #flush(): void {
    while (this.#state !== 'closed' && !this.#blocked) {
      let chunk = '';
      let size = 0;
      while (size < this.#batchBytes && this.#backlogAt < this.#backlog.length) {
        const f = this.#backlog[this.#backlogAt++]!;
        chunk += f.text;
        size += f.bytes;
      }
      while (size < this.#batchBytes && this.#liveAt < this.#live.length) {
        const f = this.#live[this.#liveAt++]!;
        chunk += f.text;
        size += f.bytes;
        this.#liveBytes -= f.bytes;
      }
      if (this.#liveAt === this.#live.length) { this.#live = []; this.#liveAt = 0; }
      else if (this.#liveAt > 1024) { this.#live = this.#live.slice(this.#liveAt); this.#liveAt = 0; }
      if (size === 0) break;
      this.#write(chunk);
    }
    if (this.#state === 'ending' && !this.#blocked && this.#backlogAt >= this.#backlog.length && this.queuedEvents === 0) {
      this.#finish('ended');
      try { this.#sink.end(); } catch { /* already gone */ }
    }
  }
}
