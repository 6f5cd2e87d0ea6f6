/**
 * The events application service (CONTRACT §5): who may read the status stream (right `events.read`) and
 * what each reader sees (events about targets only for targets its capability may read). A face asks for
 * a stream with the caller's principal before it answers, so a refusal is an ordinary 401/403; the stream
 * itself (`stream.ts`) runs once the face has a sink to write frames to.
 */
import { requireRight, type Principal } from '../kernel/principal.js';
import type { EventBus } from './bus.js';
import type { SseSink } from './sse.js';
import { runEventStream, type EventStreamOptions, type StreamEnd } from './stream.js';

/** A stream the caller may read, not yet started. */
export interface EventSubscription {
  /** Writes frames to `sink` until the client leaves (`signal`), falls too far behind, or the server stops. */
  run(sink: SseSink, signal: AbortSignal): Promise<StreamEnd>;
}

export class EventsService {
  readonly #bus: EventBus;
  readonly options: EventStreamOptions;

  constructor(bus: EventBus, options: EventStreamOptions = {}) {
    this.#bus = bus;
    this.options = options;
  }

  /** Throws Unauthenticated/Forbidden unless `principal` holds `events.read`. */
  open(principal: Principal, input: { lastEventId?: string | undefined }): EventSubscription {
    requireRight(principal, 'events.read');
    return {
      run: (sink, signal) => runEventStream({ bus: this.#bus, principal, lastEventId: input.lastEventId, sink, signal, options: this.options }),
    };
  }
}
