/**
 * The REST face of the event stream: `GET /api/events` (CONTRACT §5), a `text/event-stream` response
 * that stays open until the client leaves, the client falls too far behind, or the server shuts down.
 * Who may read and what each reader sees is the events service's; this module reads the resume point
 * from the request, hands the service a sink, and describes the route for OpenAPI.
 */
import type { EventsService } from '../events/service.js';
import { DEFAULT_MAX_QUEUED_BYTES, DEFAULT_MAX_QUEUED_EVENTS } from '../events/sse.js';
import type { RequestContext, Route, RouteGroup, StreamReply } from '../http/route.js';

/** Raised after the response started, only to make the server drop the connection of a slow reader. */
export class SlowClientDroppedError extends Error {
  constructor(maxEvents: number, maxBytes: number) {
    super(`dropped an event-stream client that fell more than ${maxEvents} events or ${maxBytes} bytes behind`);
    this.name = 'SlowClientDroppedError';
  }
}

/**
 * The client's resume point. The header wins over `?last_event_id=`: a browser's EventSource cannot set
 * headers on its first request, so a page passes the id in the URL once; on every automatic reconnect the
 * browser sends the newer id in the header while the URL still holds the stale one.
 */
export function lastEventIdOf(ctx: Pick<RequestContext, 'headers' | 'query'>): string | undefined {
  const header = ctx.headers['last-event-id'];
  const fromHeader = Array.isArray(header) ? header[0] : header;
  if (fromHeader !== undefined && fromHeader.trim() !== '') return fromHeader.trim();
  const fromQuery = ctx.query.get('last_event_id');
  if (fromQuery !== null && fromQuery.trim() !== '') return fromQuery.trim();
  return undefined;
}

const EVENT_DATA_SCHEMA = {
  type: 'object',
  description:
    'The JSON of one `data:` line. Every event carries `v`, `seq`, `ts` and `kind`; the other fields ' +
    'depend on the kind (docs/events.md lists them).',
  required: ['v', 'seq', 'ts', 'kind'],
  properties: {
    v: { type: 'integer', const: 1 },
    seq: { type: 'integer', minimum: 0 },
    ts: { type: 'string', format: 'date-time' },
    kind: { type: 'string' },
    target: { type: 'string', description: 'For events about a managed target: its name.' },
  },
  additionalProperties: true,
};

const OPERATION = {
  operationId: 'streamEvents',
  tags: ['events'],
  summary: 'Server-sent status events',
  description:
    'A `text/event-stream` of status events. Each event has `id: <epoch>-<seq>`, `event: <kind>` and one ' +
    '`data:` line of JSON. A new connection starts with a `snapshot` event; with `Last-Event-ID` (header, ' +
    'or the `last_event_id` query parameter) the server replays the events after that id, or sends a ' +
    '`reset` event with a fresh snapshot when it cannot. A `: keepalive` comment comes every 15 s. ' +
    'Requires the right `events.read`; events about targets are limited to the targets the caller may read.',
  parameters: [
    {
      name: 'Last-Event-ID',
      in: 'header',
      required: false,
      description: 'The id of the last event the client received; wins over `last_event_id`.',
      schema: { type: 'string', pattern: '^[0-9]+-[0-9]+$' },
    },
    {
      name: 'last_event_id',
      in: 'query',
      required: false,
      description: 'The same as the `Last-Event-ID` header, for clients that cannot set headers.',
      schema: { type: 'string' },
    },
  ],
  responses: {
    '200': {
      description: 'The event stream; it stays open.',
      content: {
        'text/event-stream': {
          schema: { type: 'string', description: 'Frames of `id:`, `event:`, `data:` lines (`retry:` on the first).' },
          'x-event-data': EVENT_DATA_SCHEMA,
        },
      },
    },
  },
};

export function eventRoutes(events: EventsService): RouteGroup {
  const streamOptions = events.options;

  async function streamEvents(ctx: RequestContext): Promise<StreamReply> {
    const subscription = events.open(ctx.principal, { lastEventId: lastEventIdOf(ctx) });
    return {
      status: 200,
      contentType: 'text/event-stream; charset=utf-8',
      headers: {
        'cache-control': 'no-store',
        // Tells nginx-style proxies not to buffer the stream.
        'x-accel-buffering': 'no',
      },
      async stream(sink) {
        const end = await subscription.run(sink, ctx.signal);
        // A dropped client is not reading, so ending its response cleanly would wait on it forever. When
        // the sink cannot be destroyed directly, failing the stream makes the server tear the response
        // down (src/http/server.ts destroys a response whose stream rejects after the headers went out).
        if (end === 'dropped' && typeof (sink as { destroy?: unknown }).destroy !== 'function') {
          throw new SlowClientDroppedError(streamOptions.maxQueuedEvents ?? DEFAULT_MAX_QUEUED_EVENTS, streamOptions.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES);
        }
      },
    };
  }

  const route: Route = {
    method: 'GET',
    pattern: '/api/events',
    handler: streamEvents,
    longLived: true,
    right: 'events.read',
    operation: OPERATION,
  };
  return {
    name: 'events',
    routes: [route],
    openapi: { tags: [{ name: 'events', description: 'Server-sent status events (CONTRACT §5).' }] },
  };
}
