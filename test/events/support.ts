/**
 * Helpers for the event-stream tests: a recording SSE sink (the handler-level stand-in for a socket, like
 * Go's httptest.ResponseRecorder), a principal with chosen rights, and frame parsing with the
 * `eventsource-parser` package that the `eventsource` client itself uses, so framing is checked by a real
 * third-party parser rather than by our own.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { Principal, Right } from '../../src/kernel/principal.js';

export interface ParsedStream {
  events: EventSourceMessage[];
  comments: string[];
  retries: number[];
}

export function parseStream(text: string): ParsedStream {
  const out: ParsedStream = { events: [], comments: [], retries: [] };
  const parser = createParser({
    onEvent: (e) => out.events.push(e),
    onComment: (c) => out.comments.push(c),
    onRetry: (r) => out.retries.push(r),
    onError: (err) => { throw err; },
  });
  parser.feed(text);
  return out;
}

/**
 * A sink that records what is written. `accept` decides whether a write leaves the transport willing to
 * take more (false: blocked until `drain()` is called), modelling a socket whose buffer fills.
 */
export class RecordingSink {
  chunks: string[] = [];
  ended = false;
  destroyed = false;
  blocked = false;
  #drainers: (() => void)[] = [];
  accept: (chunk: string, sink: RecordingSink) => boolean = () => true;

  get text(): string { return this.chunks.join(''); }

  write(chunk: string): boolean {
    if (this.ended || this.destroyed) throw new Error('write after end');
    this.chunks.push(chunk);
    const ok = this.accept(chunk, this);
    if (!ok) this.blocked = true;
    return ok;
  }
  onDrain(fn: () => void): void { this.#drainers.push(fn); }
  end(): void { this.ended = true; }
  destroy(): void { this.destroyed = true; }

  /** The transport emptied its buffer: wake whoever waits (each `onDrain` registration fires once). */
  drain(): void {
    this.blocked = false;
    const fns = this.#drainers;
    this.#drainers = [];
    for (const fn of fns) fn();
  }
}

export function principalWith(rights: Right[], options: { kind?: 'anonymous' | 'capability'; targets?: string[] } = {}): Principal {
  const set = new Set<Right>(rights);
  return {
    kind: options.kind ?? 'capability',
    ...(options.kind === 'anonymous' ? {} : { capId: 'test-cap' }),
    rights: set,
    can(right: Right, target?: string): boolean {
      if (!set.has(right)) return false;
      if (target !== undefined && right.startsWith('mgmt.') && options.targets) return options.targets.includes(target);
      return true;
    },
  };
}

/** A timer set the test fires by hand: keep-alives without waiting 15 s or asserting on timing. */
export class ManualTimers {
  #next = 1;
  readonly #fns = new Map<number, () => void>();
  setInterval(fn: () => void, _ms: number): unknown {
    const id = this.#next++;
    this.#fns.set(id, fn);
    return id;
  }
  clearInterval(handle: unknown): void { this.#fns.delete(handle as number); }
  get active(): number { return this.#fns.size; }
  tick(): void { for (const fn of [...this.#fns.values()]) fn(); }
}
