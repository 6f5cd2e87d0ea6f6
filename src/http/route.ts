/**
 * The handler contract every route group implements. A route is `METHOD /path/{param}`; the router
 * (src/http/router.ts) parses the table at start-up, refuses duplicates, answers 405 with `Allow` when
 * the path exists under another method, and maps thrown `QuarryError`s to CONTRACT §1 bodies.
 *
 * A handler reads what it needs from the context and returns a `Reply`; it never writes to the socket
 * itself unless it returns a `StreamReply` (SSE, large downloads), and it must not touch the context
 * after its promise settles.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Principal, Right } from '../kernel/principal.js';

export type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE' | 'PATCH' | 'OPTIONS';

export interface RequestContext {
  readonly method: Method;
  /** Path without the query string, percent-decoded per segment. */
  readonly path: string;
  /** The query string; for repeated parameters the first wins (CONTRACT §1): use `query.get`. */
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  /** `{name}` segments of the route pattern. */
  readonly params: Readonly<Record<string, string>>;
  readonly remoteAddress: string;
  /** Who is calling: resolved once per request from the capability headers (anonymous when none). */
  readonly principal: Principal;
  /**
   * Charges `principal`'s rate-limit bucket too, when it is not the one this request was charged to: for
   * a face that finds the caller's capability in the body (`/mcp`), so such a caller is limited as the
   * same capability in a header would be. Throws RateLimitedError when the bucket is empty.
   */
  chargeRate(principal: Principal): void;
  /** Aborted when the client goes away, the request times out, or the server drains. */
  readonly signal: AbortSignal;
  /** When the request times out (epoch ms, as `Date.now()`); undefined when it cannot (streaming routes, no limit). */
  readonly deadline?: number;
  /** The whole body, bounded by the route's `bodyLimit` (PayloadTooLargeError past it). */
  body(): Promise<Buffer>;
  /** The body parsed as JSON (requires `application/json`); BadRequestError on malformed input. */
  json(): Promise<unknown>;
  /** The body as a stream, for routes with `streamBody: true` (uploads); bounded by `bodyLimit`. */
  bodyStream(): AsyncIterable<Buffer>;
}

export interface JsonReply {
  status?: number;
  headers?: Record<string, string>;
  /** Serialized as JSON; `v: 1` is added when absent. */
  json: Record<string, unknown>;
}
/** A JSON body already serialized: the bytes `json` would give, `v: 1` included (a search worker makes them). */
export interface JsonBytesReply {
  status?: number;
  headers?: Record<string, string>;
  jsonBytes: Uint8Array;
}
export interface BytesReply {
  status?: number;
  headers?: Record<string, string>;
  body: Buffer | string;
  /** Absent only for an answer with no content (an empty body of a type, e.g. an empty protobuf message, keeps its type). */
  contentType?: string;
}
/** The handler takes over the response (SSE): `write` frames, resolve when done; `signal` ends it. */
export interface StreamReply {
  status?: number;
  headers?: Record<string, string>;
  contentType: string;
  stream(sink: { write(chunk: string | Buffer): boolean; onDrain(fn: () => void): void; end(): void }): Promise<void>;
}
export type Reply = JsonReply | JsonBytesReply | BytesReply | StreamReply;

export type Handler = (ctx: RequestContext) => Promise<Reply>;

export interface Route {
  method: Method;
  /** e.g. `/api/ops/{op_id}`; literal segments and whole-segment `{name}` parameters only. */
  pattern: string;
  handler: Handler;
  /** Body size limit in bytes; default from server limits (1 MiB). */
  bodyLimit?: number;
  /** Stream the body instead of buffering it (uploads). Also exempts the route from the request timeout. */
  streamBody?: boolean;
  /** Long-lived response (SSE): exempt from the request timeout. */
  longLived?: boolean;
  /**
   * The right a caller must hold (checked by the router before the handler runs: 401 `unauthenticated`
   * for an anonymous caller, 403 `forbidden` for a capability without it). Omitted: no right needed, or
   * the handler checks itself (e.g. target-scoped `mgmt.*` rights).
   */
  right?: Right;
  /**
   * The wire form of an error on this route, for faces with their own error model (the binary RPC's
   * Connect errors); used for every failure of the request, including those the server raises before
   * the handler runs (rate limit, body size, rights). Omitted: the CONTRACT §1 JSON error body.
   */
  errorReply?: (err: unknown) => Reply;
  /**
   * This route's OpenAPI 3.1 Operation Object, merged into `GET /api/openapi.json` under
   * `paths[pattern][method]` (see src/http/openapi.ts). Omitted: the route is not described (only for
   * non-REST faces such as `/mcp`, which have their own contract).
   */
  operation?: Record<string, unknown>;
}

/**
 * What a route-group factory returns (`searchRoutes(...)`, `eventRoutes(...)`, the auth and control-plane
 * groups): its routes, plus OpenAPI parts that do not belong to one route (shared component schemas,
 * tags). The server's router and the OpenAPI document are both built from the list of groups.
 */
export interface RouteGroup {
  /** Short name used in start-up errors (e.g. two groups registering overlapping patterns). */
  name: string;
  routes: Route[];
  openapi?: {
    /** Merged into `components` (schemas, responses, parameters, …); a name clash stops start-up. */
    components?: Record<string, Record<string, unknown>>;
    tags?: { name: string; description?: string }[];
  };
}
