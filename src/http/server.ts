/**
 * The HTTPS server: one `node:http2` secure server speaking HTTP/2 and HTTP/1.1 (ALPN) on one port,
 * TLS 1.3 only (CONTRACT §1). It turns each request into a `RequestContext`, runs the matched route's
 * handler and writes its `Reply`; every failure becomes a CONTRACT §1 error body through the one table in
 * `errors.ts`. The limits of `limits.ts` are enforced here, once, for every route group.
 *
 * Per request, in order: draining? (503) → header size (431) → caller (`policy.resolve`, once) → rate
 * limit (429, keyed by capability id else IP) → route (404/405) → right (401/403) → declared body size
 * (413) → handler under the request timeout.
 *
 * Life cycle: `listening → draining → closed`. `drain()` stops accepting connections, sends HTTP/2
 * GOAWAY, closes idle HTTP/1.1 connections, aborts long-lived responses (SSE), lets in-flight requests
 * finish until `drainTimeoutMs`, then destroys what is left. `drain()` is idempotent: later callers wait
 * on the same promise. `setTls` swaps the certificate for new connections only (SIGHUP), so open ones
 * keep working.
 */
import http2 from 'node:http2';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { AddressInfo, Socket } from 'node:net';
import type { Policy, Principal } from '../kernel/principal.js';
import {
  BadRequestError, ForbiddenError, MethodNotAllowedError, PayloadTooLargeError, QuarryError, RateLimitedError, UnauthenticatedError,
  UnavailableError, UnsupportedMediaTypeError,
} from '../kernel/errors.js';
import { toJson } from '../kernel/json.js';
import { httpError } from './errors.js';
import { resolveLimits, type ResolvedLimits, type ServerLimits } from './limits.js';
import { RateLimiter } from './rate-limiter.js';
import type { Method, Reply, RequestContext, Route, RouteGroup } from './route.js';
import { Router, type Match } from './router.js';

export interface Logger {
  info(message: string): void;
  error(message: string, err?: unknown): void;
}

export const consoleLogger: Logger = {
  info: (m) => console.error(m),
  error: (m, err) => console.error(m, err instanceof Error ? err.stack : err ?? ''),
};

export interface ServerOptions {
  groups: readonly RouteGroup[];
  tls: { cert: Buffer | string; key: Buffer | string };
  /** Resolves `ctx.principal` once per request. */
  policy: Policy;
  limits?: ServerLimits;
  log?: Logger;
}

type Req = IncomingMessage | http2.Http2ServerRequest;
type Res = ServerResponse | http2.Http2ServerResponse;

export type ServerState = 'idle' | 'listening' | 'draining' | 'closed';

/** Status and code for a request header block over `headerBytes` (no CONTRACT code fits better). */
const HEADERS_TOO_LARGE_STATUS = 431;

export class QuarryServer {
  readonly limits: ResolvedLimits;
  readonly router: Router;
  readonly #server: http2.Http2SecureServer;
  readonly #policy: Policy;
  readonly #log: Logger;
  readonly #rate: RateLimiter;
  #state: ServerState = 'idle';
  #drained: Promise<void> | undefined;
  /** Requests whose response has not closed yet. */
  #inFlight = 0;
  #quietWaiters: (() => void)[] = [];
  readonly #sessions = new Set<http2.ServerHttp2Session>();
  /** HTTP/1.1 sockets → requests in flight on each. */
  readonly #h1Sockets = new Map<TLSSocket, number>();
  /** HTTP/1.1 sockets waiting for a request head → the timer that closes them if it does not come. */
  readonly #headerDeadlines = new WeakMap<TLSSocket, NodeJS.Timeout>();
  /** Abort controllers of long-lived requests, ended first when draining. */
  readonly #longLived = new Set<RequestAbort>();
  /**
   * Every TCP connection, from its accept to its close, whatever became of it (mid-handshake, HTTP/1.1,
   * HTTP/2): the listener's close waits for all of them, so a drain ends by destroying what is left.
   */
  readonly #connections = new Set<Socket>();

  constructor(options: ServerOptions) {
    this.limits = resolveLimits(options.limits);
    this.router = new Router(options.groups);
    this.#policy = options.policy;
    this.#log = options.log ?? consoleLogger;
    this.#rate = new RateLimiter({ ratePerSecond: this.limits.ratePerSecond, burst: this.limits.rateBurst });
    const limits = this.limits;
    this.#server = http2.createSecureServer({
      cert: options.tls.cert,
      key: options.tls.key,
      minVersion: 'TLSv1.3',
      allowHTTP1: true,
      handshakeTimeout: limits.idleTimeoutMs > 0 ? limits.idleTimeoutMs : 120_000,
      // nghttp2 resets streams past this; our own check answers 431 with a body below it.
      settings: { maxHeaderListSize: limits.headerBytes * 4 },
      maxHeaderListPairs: 512,
    });
    if (limits.maxConnections > 0) this.#server.maxConnections = limits.maxConnections;
    // The HTTP/1.1 fallback's parser reads this field (0 = Node's default of 16 KiB).
    (this.#server as unknown as { maxHeaderSize: number }).maxHeaderSize = limits.headerBytes;
    this.#server.on('request', (req: Req, res: Res) => { void this.#handle(req, res); });
    this.#server.on('connection', (socket: Socket) => {
      this.#connections.add(socket);
      socket.once('close', () => this.#connections.delete(socket));
    });
    this.#server.on('session', (session) => this.#onSession(session));
    this.#server.on('secureConnection', (socket: TLSSocket) => this.#onSecureConnection(socket));
    this.#server.on('clientError', (err: NodeJS.ErrnoException, socket: TLSSocket) => this.#onClientError(err, socket));
    // HTTP/1.1: node destroys a socket whose timeout fires unless someone listens for 'timeout' on the
    // request, the response or the server; the idle timeout set in #onSecureConnection decides instead,
    // so a stalled request body is answered by the request timeout (503) rather than dropped.
    this.#server.on('timeout', () => { /* see #onSecureConnection */ });
    this.#server.on('connect', (req: IncomingMessage, socket: TLSSocket) => this.#onConnect(req, socket));
    // An `Expect` other than 100-continue: node would answer a bare 417; the request is served as if the
    // field were absent instead (RFC 9110 §10.1.1 allows either), so every answer keeps the contract's shape.
    this.#server.on('checkExpectation', (req: Req, res: Res) => { void this.#handle(req, res); });
    // `Expect: 100-continue`: the interim 100 goes out only on a response that is its connection's current
    // one. Node queues the 100 of a pipelined HTTP/1.1 request behind the answers before it and then puts
    // the final answer's head in front of it (head, 100, body: a corrupt stream); a client that pipelined
    // the request has sent its body already and needs no 100.
    this.#server.on('checkContinue', (req: Req, res: Res) => {
      if (req.httpVersionMajor === 2 || (res as ServerResponse).socket) res.writeContinue();
      void this.#handle(req, res);
    });
    this.#server.on('tlsClientError', () => { /* refused handshakes (TLS 1.2, bad SNI) are the client's problem */ });
    this.#server.on('sessionError', () => { /* a broken HTTP/2 session only affects its own client */ });
  }

  get state(): ServerState { return this.#state; }
  get inFlight(): number { return this.#inFlight; }

  listen(port: number, host = '127.0.0.1'): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      this.#server.once('error', onError);
      this.#server.listen(port, host, () => {
        this.#server.off('error', onError);
        this.#state = 'listening';
        resolve(this.#server.address() as AddressInfo);
      });
    });
  }

  address(): AddressInfo { return this.#server.address() as AddressInfo; }

  /** New connections use this certificate and key; open connections keep theirs. */
  setTls(tls: { cert: Buffer | string; key: Buffer | string }): void {
    this.#server.setSecureContext({ cert: tls.cert, key: tls.key, minVersion: 'TLSv1.3' });
  }

  /** Graceful shutdown (see the file comment). Idempotent. */
  drain(timeoutMs = this.limits.drainTimeoutMs): Promise<void> {
    this.#drained ??= this.#drain(timeoutMs);
    return this.#drained;
  }

  async #drain(timeoutMs: number): Promise<void> {
    const wasListening = this.#state === 'listening';
    this.#state = 'draining';
    const closed = new Promise<void>((resolve) => {
      if (!wasListening) return resolve();
      this.#server.close(() => resolve());
    });
    for (const ac of this.#longLived) ac.abort(new UnavailableError('The server is shutting down.'));
    for (const session of this.#sessions) {
      try { session.close(); } catch { /* already closing */ }
    }
    for (const [socket, n] of this.#h1Sockets) if (n === 0) socket.destroy();
    if (this.#inFlight > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        new Promise<void>((resolve) => this.#quietWaiters.push(resolve)),
        new Promise<void>((resolve) => { timer = setTimeout(resolve, timeoutMs); }),
      ]);
      clearTimeout(timer);
    }
    for (const session of this.#sessions) session.destroy();
    for (const socket of this.#h1Sockets.keys()) socket.destroy();
    // Connections neither list holds (a handshake under way, a connection whose session or socket is gone
    // but whose TCP side is not, seen after long load runs) would keep the listener's close waiting.
    for (const socket of this.#connections) socket.destroy();
    await closed;
    this.#state = 'closed';
  }

  #onSession(session: http2.ServerHttp2Session): void {
    this.#sessions.add(session);
    session.on('close', () => this.#sessions.delete(session));
    if (this.#state === 'draining') session.close();
    if (this.limits.idleTimeoutMs > 0) {
      session.setTimeout(this.limits.idleTimeoutMs, () => {
        // Only idle sessions are closed: a slow handler on an open stream is the request timeout's business.
        if (activeStreams(session) === 0) session.close();
      });
    }
  }

  #onSecureConnection(socket: TLSSocket): void {
    if (socket.alpnProtocol === 'h2') return;
    this.#h1Sockets.set(socket, 0);
    socket.on('close', () => {
      this.#h1Sockets.delete(socket);
      // A pending header deadline holds the socket, and with it the TLS session's native buffers, until it
      // fires: released with the connection, not a request timeout later.
      this.#clearHeaderDeadline(socket);
    });
    if (this.limits.idleTimeoutMs > 0) {
      socket.setTimeout(this.limits.idleTimeoutMs, () => {
        if ((this.#h1Sockets.get(socket) ?? 0) === 0) socket.destroy();
      });
    }
    this.#armHeaderDeadline(socket);
  }

  /**
   * HTTP/1.1 only: the next request's head must have arrived within `requestTimeoutMs` of the connection
   * or of the previous response. The idle timeout alone would let a client trickle one header byte at a
   * time forever (slowloris); HTTP/2 frames are bounded by nghttp2 instead.
   */
  #armHeaderDeadline(socket: TLSSocket): void {
    this.#clearHeaderDeadline(socket);
    if (this.limits.requestTimeoutMs <= 0 || socket.destroyed) return;
    const timer = setTimeout(() => {
      if ((this.#h1Sockets.get(socket) ?? 0) === 0) socket.destroy();
    }, this.limits.requestTimeoutMs);
    timer.unref();
    this.#headerDeadlines.set(socket, timer);
  }

  #clearHeaderDeadline(socket: TLSSocket): void {
    clearTimeout(this.#headerDeadlines.get(socket));
    this.#headerDeadlines.delete(socket);
  }

  /**
   * HTTP/1.1 input node's parser refuses: answered 400 (431 for an oversized head) in the contract's
   * shape, then the connection is closed. The parser may fail after it dispatched the request (a chunk
   * size that is not hex): then the answer goes through that request's response, so the handler's own
   * answer later finds it sent and does nothing, unless the response has already begun.
   */
  #onClientError(err: NodeJS.ErrnoException, socket: TLSSocket): void {
    const pending = (socket as unknown as { _httpMessage?: ServerResponse })._httpMessage;
    if (!socket.writable || pending?.headersSent) {
      socket.destroy();
      return;
    }
    const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
    const status = tooLarge ? HEADERS_TOO_LARGE_STATUS : 400;
    const body = tooLarge
      ? headersTooLargeBody(this.limits.headerBytes)
      : httpError(new BadRequestError('The request could not be parsed as HTTP/1.1.')).body;
    if (pending) {
      const json = Buffer.from(JSON.stringify(body));
      pending.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': String(json.length), connection: 'close' });
      pending.end(json);
      return;
    }
    writeRawResponse(socket, status, {}, body);
  }

  /** HTTP/1.1 `CONNECT` (node hands it over as a raw socket): no route serves it. */
  #onConnect(req: IncomingMessage, socket: TLSSocket): void {
    const allow = this.router.methods();
    const e = httpError(new MethodNotAllowedError('CONNECT', req.url ?? '', allow));
    writeRawResponse(socket, e.status, e.headers, e.body);
  }

  async #handle(req: Req, res: Res): Promise<void> {
    this.#inFlight++;
    const h1Socket = req.httpVersionMajor === 2 ? undefined : (req.socket as TLSSocket);
    if (h1Socket) {
      // Counted only while the connection is open: an entry made after its close would never be removed.
      const open = this.#h1Sockets.get(h1Socket);
      if (open !== undefined) this.#h1Sockets.set(h1Socket, open + 1);
      this.#clearHeaderDeadline(h1Socket);
    }
    const ac = new RequestAbort();
    let settled = false;
    res.on('close', () => {
      // An HTTP/2 stream reset by the client reports its response as finished (the compat layer ends it on
      // close), so `writableFinished` alone misses it; `req.aborted` says the client went away first.
      // Also when the body is incomplete: nothing the handler does can be answered any more (node's parser
      // may have answered a broken body itself), and a handler waiting for the rest is woken.
      if (!res.writableFinished || req.aborted || !req.complete) ac.abort(new Error('The client went away.'));
      this.#longLived.delete(ac);
      if (h1Socket) {
        const n = (this.#h1Sockets.get(h1Socket) ?? 1) - 1;
        if (this.#h1Sockets.has(h1Socket)) this.#h1Sockets.set(h1Socket, n);
        if (this.#state === 'draining' && n === 0) h1Socket.destroy();
        else if (n === 0) this.#armHeaderDeadline(h1Socket);
      }
      if (--this.#inFlight === 0) {
        const waiters = this.#quietWaiters;
        this.#quietWaiters = [];
        for (const w of waiters) w();
      }
    });
    let timer: NodeJS.Timeout | undefined;
    let route: Route | undefined;
    try {
      if (this.#state === 'draining' || this.#state === 'closed') {
        throw new UnavailableError('The server is shutting down; retry shortly.', 1);
      }
      if (headerBytes(req) > this.limits.headerBytes) {
        this.#send(req, res, { status: HEADERS_TOO_LARGE_STATUS, json: headersTooLargeBody(this.limits.headerBytes) });
        return;
      }
      const remoteAddress = normalizeAddress(req.socket?.remoteAddress);
      let principal: Principal | undefined;
      let principalError: unknown;
      try {
        principal = this.#policy.resolve(credentialHeaders(req));
      } catch (err) {
        principalError = err;
      }
      // The client is the root capability: each attenuation gets a new id but must not get a new bucket.
      const client = principal?.rootCapId ?? principal?.capId;
      const charged = client !== undefined ? `cap:${client}` : `ip:${remoteAddress}`;
      const retryAfter = this.#rate.take(charged);
      if (retryAfter > 0) throw new RateLimitedError(retryAfter);
      if (principalError !== undefined) throw principalError;

      const rawUrl = req.url ?? '/';
      const q = rawUrl.indexOf('?');
      const rawPath = q < 0 ? rawUrl : rawUrl.slice(0, q);
      if (!rawPath.startsWith('/')) throw new BadRequestError('The request target must be an absolute path.');
      const method = (req.method ?? 'GET').toUpperCase();
      const match = this.router.match(method, rawPath);
      const matched = match.route;
      route = matched;
      if (route.right !== undefined && !principal!.can(route.right)) {
        if (principal!.kind === 'anonymous') throw new UnauthenticatedError(`This request needs a capability with the right ${route.right}.`);
        throw new ForbiddenError(`The capability does not grant the right ${route.right}.`);
      }
      const bodyLimit = route.bodyLimit ?? this.limits.bodyBytes;
      const declared = Number(req.headers['content-length']);
      if (Number.isFinite(declared) && declared > bodyLimit) throw new PayloadTooLargeError(bodyLimit);

      const exempt = route.streamBody === true || route.longLived === true;
      if (route.longLived) this.#longLived.add(ac);
      const chargeRate = (p: Principal) => {
        const id = p.rootCapId ?? p.capId;
        if (id === undefined || `cap:${id}` === charged) return;
        const wait = this.#rate.take(`cap:${id}`);
        if (wait > 0) throw new RateLimitedError(wait);
      };
      const timed = !exempt && this.limits.requestTimeoutMs > 0;
      const deadline = timed ? Date.now() + this.limits.requestTimeoutMs : undefined;
      const ctx = new HttpRequestContext(req, match, method as Method, principal!, remoteAddress, ac, deadline, bodyLimit, route, chargeRate);
      let reply: Reply;
      if (timed) {
        const limit = this.limits.requestTimeoutMs;
        reply = await new Promise<Reply>((resolve, reject) => {
          timer = setTimeout(() => {
            const err = new UnavailableError(`The request did not complete within ${limit} ms.`, 1);
            ac.abort(err);
            reject(err);
          }, limit);
          matched.handler(ctx).then(resolve, reject);
        });
      } else {
        reply = await route.handler(ctx);
      }
      clearTimeout(timer);
      settled = true;
      await this.#send(req, res, reply);
    } catch (err) {
      clearTimeout(timer);
      // A client that went away explains any failure to write to it.
      const clientGone = req.aborted || res.destroyed || req.socket?.destroyed === true;
      if (settled && res.headersSent) {
        if (!clientGone) this.#log.error('quarry: error while streaming a response', err);
        if (!res.writableEnded) res.destroy();
        return;
      }
      const e = httpError(err);
      if (e.internal) this.#log.error(`quarry: internal error on ${req.method} ${(req.url ?? '').split('?')[0]}`, err);
      if (res.headersSent) {
        if (!res.writableEnded) res.destroy();
        return;
      }
      const closeAfter = err instanceof PayloadTooLargeError || (QuarryError.is(err) && err.code === 'payload_too_large');
      // A face with its own error form (Connect) gets it even for errors raised before its handler ran.
      route ??= this.#routeOf(req);
      const reply: Reply = route?.errorReply?.(err) ?? { status: e.status, headers: e.headers, json: e.body as unknown as Record<string, unknown> };
      await this.#send(req, res, reply, closeAfter);
    }
  }

  /**
   * The route a request would reach, or, for a method the path does not allow, a route of that path
   * (its group's error form applies to the 405); undefined when no route has the path.
   */
  #routeOf(req: Req): Route | undefined {
    const path = (req.url ?? '/').split('?')[0]!;
    try {
      return this.router.match((req.method ?? 'GET').toUpperCase(), path).route;
    } catch (err) {
      if (!(err instanceof MethodNotAllowedError) || err.allow.length === 0) return undefined;
      try { return this.router.match(err.allow[0]!, path).route; } catch { return undefined; }
    }
  }

  async #send(req: Req, res: Res, reply: Reply, closeConnection = false): Promise<void> {
    if (res.headersSent || res.writableEnded || res.destroyed) return;
    const head = req.method === 'HEAD';
    const h1 = req.httpVersionMajor !== 2;
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(reply.headers ?? {})) headers[k.toLowerCase()] = v;
    // An HTTP/1.1 body the handler did not read would be drained after the response, for as long as the
    // client keeps sending; closing the connection instead bounds what an unread body can cost.
    const unreadBody = h1 && !(req as IncomingMessage).complete && !readInFull.has(req);
    if (h1 && (closeConnection || unreadBody || this.#state === 'draining')) headers['connection'] = 'close';
    if (!h1) delete headers['connection'];
    const status = reply.status ?? 200;
    if ('json' in reply || 'jsonBytes' in reply) {
      const body = 'json' in reply
        ? Buffer.from(toJson({ v: 1, ...reply.json }))
        : Buffer.from(reply.jsonBytes.buffer, reply.jsonBytes.byteOffset, reply.jsonBytes.byteLength);
      headers['content-type'] = JSON_TYPE;
      headers['content-length'] = String(body.length);
      res.writeHead(status, headers);
      if (head) (res as ServerResponse).end(); else (res as ServerResponse).end(body);
      return;
    }
    if ('body' in reply) {
      const body = typeof reply.body === 'string' ? Buffer.from(reply.body) : reply.body;
      if (reply.contentType !== undefined) headers['content-type'] = reply.contentType;
      headers['content-length'] = String(body.length);
      res.writeHead(status, headers);
      if (head) (res as ServerResponse).end(); else (res as ServerResponse).end(body);
      return;
    }
    headers['content-type'] = reply.contentType;
    res.writeHead(status, headers);
    if (head) {
      res.end();
      return;
    }
    (res as ServerResponse).flushHeaders?.();
    const w = res as unknown as { write(c: string | Buffer): boolean; end(): void; once(e: string, f: () => void): void; destroy(): void };
    let ended = false;
    const sink = {
      write: (chunk: string | Buffer) => (ended || res.destroyed ? false : w.write(chunk)),
      onDrain: (fn: () => void) => { w.once('drain', fn); },
      end: () => { if (!ended) { ended = true; w.end(); } },
      /** Tears the response down without a clean end (a reader too slow to keep up). */
      destroy: () => { ended = true; w.destroy(); },
    };
    await reply.stream(sink);
    sink.end();
  }
}

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * A request's abort signal, made when first asked for: most requests (searches) never read it, and an
 * AbortController with its signal and event target was about 1 KB of the serving thread's garbage per
 * request. An abort before anyone asked is kept: the signal, when made, starts aborted with its reason.
 */
class RequestAbort {
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}

const REASONS: Record<number, string> = { 400: 'Bad Request', 405: 'Method Not Allowed', 431: 'Request Header Fields Too Large' };

/** A whole HTTP/1.1 response with a JSON body written on a socket node no longer parses; then closes it. */
function writeRawResponse(socket: TLSSocket, status: number, headers: Record<string, string>, body: unknown): void {
  const json = JSON.stringify(body);
  let head = `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\ncontent-type: ${JSON_TYPE}\r\n`;
  for (const [k, v] of Object.entries(headers)) head += `${k.toLowerCase()}: ${v}\r\n`;
  socket.end(`${head}content-length: ${Buffer.byteLength(json)}\r\nconnection: close\r\n\r\n${json}`);
}

function activeStreams(session: http2.ServerHttp2Session): number {
  // `state.streamCount` is not typed in @types/node 20 but present at run time.
  const s = session.state as unknown as { streamCount?: number } | undefined;
  return s?.streamCount ?? 0;
}

function headersTooLargeBody(limit: number): Record<string, unknown> {
  return { v: 1, error: { code: 'bad_request', message: `The request headers exceed the limit of ${limit} bytes.` } };
}

/** Header block size as HPACK counts it: name + value + 32 per field. */
function headerBytes(req: Req): number {
  const raw = req.rawHeaders;
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) n += raw[i]!.length + (raw[i + 1]?.length ?? 0) + 32;
  return n;
}

/** Headers that may carry a capability; every occurrence of them is passed on. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'x-service-cap']);

/**
 * `req.headers` with each credential header as every field the client sent under that name, from
 * `rawHeaders` (a string when there is one, a list when there are several): node keeps only the first
 * `Authorization` and joins repeated unknown headers with ", " (HTTP/1.1 and HTTP/2 alike), which would
 * hide a second capability from the policy.
 */
function credentialHeaders(req: Req): Record<string, string | string[] | undefined> {
  const out: Record<string, string | string[] | undefined> = { ...req.headers };
  const raw = req.rawHeaders;
  for (const name of CREDENTIAL_HEADERS) {
    const values: string[] = [];
    for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) values.push(raw[i + 1]!);
    if (values.length > 0) out[name] = values.length === 1 ? values[0] : values;
  }
  return out;
}

function normalizeAddress(a: string | undefined): string {
  if (!a) return 'unknown';
  return a.startsWith('::ffff:') ? a.slice(7) : a;
}


/**
 * What a handler sees of its request. A class, so that its `signal` getter is defined once, on the
 * prototype: V8 makes the accessor pair of a getter defined on an object in the old generation, and one
 * per request (a getter in an object literal) held a fresh closure reaching the whole request, so every
 * request survived each scavenge until the next full collection; the serving thread's promotions then
 * set the pace of its full collections, which every request in flight waits out (docs/benchmarks.md).
 */
class HttpRequestContext implements RequestContext {
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  readonly path: string;
  readonly params: Readonly<Record<string, string>>;
  readonly deadline?: number;
  readonly #req: Req;
  readonly #abort: RequestAbort;
  readonly #bodyLimit: number;
  readonly #route: Route;
  #consumed = false;
  #buffered: Promise<Buffer> | undefined;

  constructor(
    req: Req, match: Match, readonly method: Method, readonly principal: Principal, readonly remoteAddress: string,
    abort: RequestAbort, deadline: number | undefined, bodyLimit: number, route: Route,
    readonly chargeRate: (p: Principal) => void,
  ) {
    const rawUrl = req.url ?? '/';
    const q = rawUrl.indexOf('?');
    this.query = firstWins(new URLSearchParams(q < 0 ? '' : rawUrl.slice(q + 1)));
    this.headers = req.headers;
    this.path = match.path;
    this.params = match.params;
    if (deadline !== undefined) this.deadline = deadline;
    this.#req = req;
    this.#abort = abort;
    this.#bodyLimit = bodyLimit;
    this.#route = route;
  }

  get signal(): AbortSignal { return this.#abort.signal; }

  body(): Promise<Buffer> {
    if (this.#buffered) return this.#buffered;
    if (this.#consumed) return Promise.reject(new BadRequestError('The request body was already read.'));
    this.#consumed = true;
    this.#buffered = readWhole(this.#req, this.#bodyLimit, this.#abort.signal);
    return this.#buffered;
  }

  async json(): Promise<unknown> {
    const type = String(this.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json' && !type.endsWith('+json')) throw new UnsupportedMediaTypeError(type || undefined, 'application/json');
    const buf = await this.body();
    try {
      return JSON.parse(buf.toString('utf8')) as unknown;
    } catch {
      throw new BadRequestError('The request body is not valid JSON.', 'body');
    }
  }

  bodyStream(): AsyncIterable<Buffer> {
    if (!this.#route.streamBody) throw new BadRequestError('This route does not stream its body.');
    return this.#chunks();
  }

  async *#chunks(): AsyncIterable<Buffer> {
    if (this.#consumed) throw new BadRequestError('The request body was already read.');
    this.#consumed = true;
    let total = 0;
    const signal = this.#abort.signal;
    const chunks = (this.#req as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    const ended = new Promise<never>((_, reject) => {
      if (signal.aborted) reject(signal.reason);
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    });
    ended.catch(() => { /* raced below */ });
    let finished = false;
    try {
      for (;;) {
        let next: IteratorResult<Buffer>;
        try {
          next = await Promise.race([chunks.next(), ended]);
        } catch (err) {
          if (err === signal.reason && QuarryError.is(err)) throw err;
          // The client closed the connection or reset the stream mid-body, or broke its framing: its
          // doing, never a bug (the answer, if it can still be sent, is a 400).
          throw bodyCutShort();
        }
        if (next.done) {
          finished = true;
          return;
        }
        total += next.value.length;
        if (total > this.#bodyLimit) throw new PayloadTooLargeError(this.#bodyLimit);
        yield next.value;
      }
    } finally {
      // Stopping early (over the limit, or the reader gave up) releases the body as `for await` would.
      if (!finished) chunks.return?.().catch(() => { /* already torn down */ });
    }
  }
}

/**
 * Requests whose body `readWhole` took in full by its declared length. Node marks a request complete only
 * after the parser has moved past the body, which can be after a fast handler has answered: such a request
 * is not one with an unread body, and its connection stays open.
 */
const readInFull = new WeakSet<Req>();

/** The client left, reset the stream or broke its framing mid-body: its doing, answered 400 if still possible. */
const bodyCutShort = () => new BadRequestError('The request body ended before it was complete.', 'body');

/**
 * A request body read whole, the buffered counterpart of the streaming reader of `HttpRequestContext` with the
 * same outcomes: over `limit` → 413 and the client leaving or breaking its framing mid-body → 400, the
 * request destroyed as an abandoned stream is; the request's own abort (its timeout) → that error.
 *
 * A handler runs while node's HTTP/1.1 parser is still inside the network read that held the request's
 * head; a small body in the same read is parsed right after, before any promise job runs. So after one
 * such job the body is often already buffered in full, and it is taken at once, with no listener at all.
 * Otherwise plain listeners collect it rather than an async iterator: most POST bodies arrive in one
 * chunk, and the iterator's machinery would cost more than the read.
 */
async function readWhole(req: Req, limit: number, signal: AbortSignal): Promise<Buffer> {
  // With a declared length the body is whole once that many bytes arrived (the HTTP parser frames it
  // by that length), so the answer need not wait for 'end' a few ticks later.
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > 0 && declared <= limit) {
    await undefined;
    if (!signal.aborted && req.readableLength === declared) {
      const whole = req.read() as Buffer | null;
      if (whole !== null && whole.length === declared) {
        readInFull.add(req);
        return whole;
      }
      // read() takes what is buffered, all of it: anything else is a stream this path does not know
      if (whole !== null) req.unshift(whole);
    }
  }
  return collectBody(req, limit, signal, declared);
}

function collectBody(req: Req, limit: number, signal: AbortSignal, declared: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    const cleanup = () => {
      settled = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onBroken);
      req.off('close', onBroken);
      req.off('aborted', onBroken);
      signal.removeEventListener('abort', onAbort);
    };
    const fail = (err: unknown, destroy = true) => {
      if (settled) return;
      cleanup();
      if (destroy) req.destroy();
      reject(err);
    };
    function onData(chunk: Buffer): void {
      total += chunk.length;
      if (total > limit) fail(new PayloadTooLargeError(limit));
      else {
        chunks.push(chunk);
        if (total === declared) {
          readInFull.add(req);
          onEnd();
        }
      }
    }
    function onEnd(): void {
      if (settled) return;
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total));
    }
    // 'close' also follows a complete body, after 'end'; before it, the body was cut short.
    function onBroken(): void { fail(bodyCutShort()); }
    // The request's abort is answered by the server (its timeout's 503, with `Connection: close` for the
    // unread rest), so the request must stay writable.
    function onAbort(): void { fail(QuarryError.is(signal.reason) ? signal.reason : bodyCutShort(), false); }
    if (signal.aborted) {
      onAbort();
      return;
    }
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onBroken);
    req.on('close', onBroken);
    req.on('aborted', onBroken);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * URLSearchParams already returns the first value from `get`; this keeps the object as is and exists to
 * document CONTRACT §1 "repeated parameters: the first wins" at the one place queries are parsed.
 */
function firstWins(q: URLSearchParams): URLSearchParams {
  return q;
}
