/**
 * One client's event stream (CONTRACT §5): joins the event bus to an SSE queue for as long as the client
 * stays. It decides how the stream opens — a fresh `snapshot`, a replay after `Last-Event-ID`, or a
 * `reset` with a fresh snapshot when that id cannot be replayed — filters events about targets to those
 * the reader may see, sends keep-alive comments, and ends on `shutdown`.
 *
 * Why no event is lost or repeated across reconnects: the opening frame and the subscription to live
 * events happen in one synchronous step, so no event can slip between them. A `snapshot` or `reset` frame
 * carries the id of the last event already reflected in it (`<epoch>-<lastSeq>`; `<epoch>-0` before any
 * event), so a client that reconnects with that id gets exactly the events after it; a replay starts at
 * the event after the client's id. See docs/events.md for the rules as clients see them.
 */
import type { Principal } from '../kernel/principal.js';
import type { BusEvent, EventBus, SnapshotView } from './bus.js';
import { busEventFrame, encodeFrame, SseQueue, type Frame, type SseQueueOptions, type SseSink } from './sse.js';

/** Timer functions, injectable so tests drive keep-alives without waiting. */
export interface KeepaliveTimers {
  setInterval(fn: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

export interface EventStreamOptions extends SseQueueOptions {
  /** Milliseconds between `: keepalive` comments. CONTRACT §5: 15,000. Zero or less: none. */
  keepaliveMs?: number;
  /** The reconnection delay sent as `retry:` in the first frame. CONTRACT §5: 3,000. */
  retryMs?: number;
  /** Default: the global timers, unref'd so an open stream never keeps a stopping process alive. */
  timers?: KeepaliveTimers;
}

export const DEFAULT_KEEPALIVE_MS = 15_000;
export const DEFAULT_RETRY_MS = 3_000;

const realTimers: KeepaliveTimers = {
  setInterval(fn, ms) {
    const t = setInterval(fn, ms);
    t.unref();
    return t;
  },
  clearInterval(handle) { clearInterval(handle as ReturnType<typeof setInterval>); },
};

/** Why a stream opened with a `reset` rather than a replay (the `reason` field of the reset frame). */
export type ResetReason = 'malformed_id' | 'other_epoch' | 'expired' | 'future_id';

/** How a stream opens, decided from the client's `Last-Event-ID` (absent or empty: fresh). */
export type Opening =
  | { kind: 'snapshot' }
  | { kind: 'replay'; events: readonly BusEvent[] }
  | { kind: 'reset'; reason: ResetReason };

export function decideOpening(bus: EventBus, lastEventId: string | undefined): Opening {
  if (lastEventId === undefined || lastEventId === '') return { kind: 'snapshot' };
  const events = bus.replaySince(lastEventId);
  if (events) return { kind: 'replay', events };
  const m = /^(\d+)-(\d+)$/.exec(lastEventId);
  if (!m) return { kind: 'reset', reason: 'malformed_id' };
  if (m[1] !== bus.epoch) return { kind: 'reset', reason: 'other_epoch' };
  return { kind: 'reset', reason: Number(m[2]) > bus.lastSeq ? 'future_id' : 'expired' };
}

export interface OpenEventStream {
  bus: EventBus;
  principal: Principal;
  /** The `Last-Event-ID` the client sent, if any. */
  lastEventId?: string;
  sink: SseSink;
  /** Aborted when the client leaves or the server stops waiting for it. */
  signal: AbortSignal;
  options?: EventStreamOptions;
  now?: () => Date;
}

/** Why a stream finished: `ended` after `shutdown`, `dropped` as a slow client, `closed` by the client/server. */
export type StreamEnd = 'ended' | 'dropped' | 'closed';

/**
 * Runs one stream until it ends. Resolves (never rejects) once the bus subscription, the keep-alive timer
 * and the response are all released.
 */
export function runEventStream(o: OpenEventStream): Promise<StreamEnd> {
  const { bus, principal, sink, signal } = o;
  const options = o.options ?? {};
  const timers = options.timers ?? realTimers;
  const keepaliveMs = options.keepaliveMs ?? DEFAULT_KEEPALIVE_MS;
  const retryMs = options.retryMs ?? DEFAULT_RETRY_MS;
  const now = o.now ?? (() => new Date());

  const view: SnapshotView = { canSeeTarget: (target) => principal.can('mgmt.read', target) };
  const visible = (e: BusEvent): boolean => e.target === undefined || view.canSeeTarget(e.target);

  return new Promise<StreamEnd>((resolve) => {
    let unsubscribe = (): void => {};
    let timer: unknown;
    const onAbort = (): void => { queue.close(); };
    const queue = new SseQueue(sink, {
      ...options,
      onClosed(reason) {
        unsubscribe();
        if (timer !== undefined) timers.clearInterval(timer);
        signal.removeEventListener('abort', onAbort);
        resolve(reason);
      },
    });
    if (signal.aborted) { queue.close(); return; }
    signal.addEventListener('abort', onAbort, { once: true });

    // From here to `subscribe` nothing yields: the opening frame and the live subscription see the bus
    // at the same `lastSeq`.
    const opening = decideOpening(bus, o.lastEventId);
    const stateFrame = (kind: 'snapshot' | 'reset', extra: Record<string, unknown>): Frame =>
      encodeFrame({
        retryMs,
        id: bus.lastId,
        event: kind,
        data: { ...bus.snapshot(view), ...extra, v: 1, seq: bus.lastSeq, ts: now().toISOString(), kind },
      });
    if (opening.kind === 'snapshot') queue.writeFirst(stateFrame('snapshot', {}));
    else if (opening.kind === 'reset') queue.writeFirst(stateFrame('reset', { reason: opening.reason }));
    else {
      // A replay has no frame of its own to carry `retry:`; an empty block does (it dispatches nothing).
      queue.writeFirst(encodeFrame({ retryMs }));
      queue.setBacklog(opening.events.filter(visible).map(busEventFrame));
    }
    if (queue.state === 'closed') return;

    unsubscribe = bus.subscribe((event) => {
      if (!visible(event)) return;
      queue.push(busEventFrame(event));
      if (event.kind === 'shutdown') queue.endAfterFlush();
    });
    if (keepaliveMs > 0) timer = timers.setInterval(() => queue.keepalive(), keepaliveMs);
  });
}
