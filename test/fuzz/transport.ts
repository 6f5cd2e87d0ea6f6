/**
 * How the fuzz suite talks to the server, and what every answer must look like. Three ways in: HTTP/2
 * requests through node's client (a small pool of sessions, replaced when one dies), raw bytes on an
 * HTTP/1.1 TLS connection (its answers parsed here, so malformed requests reach the server as written),
 * and raw bytes on a TCP or TLS connection (for malformed TLS and HTTP/2 frames, where only "no crash,
 * no hang" can be judged). Each call ends within `deadlineMs` or reports a hang.
 */
import http2 from 'node:http2';
import net from 'node:net';
import tls from 'node:tls';

export interface Server { url: string; port: number; ca: Buffer }

export interface HttpAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** HTTP/1.1 raw only: the method of the request this answers, as far as the order tells. */
  method?: string;
}

/** What one input produced: the answers it got and any broken promise (a failure of the run). */
export interface Outcome { statuses: number[]; problems: string[] }

/** CONTRACT §1's identifiers (written out: the contract, not the code, is what is checked). */
const CODES = new Set<string>([
  'bad_query', 'bad_scope', 'bad_page', 'bad_cid', 'bad_request', 'unauthenticated', 'forbidden', 'not_found', 'unknown_target',
  'method_not_allowed', 'conflict', 'payload_too_large', 'unsupported_media_type', 'rate_limited', 'internal', 'unavailable',
  'not_implemented', 'deadline_exceeded',
]);

/** The Connect protocol's error codes: the binary RPC's errors (CONTRACT §8) carry one of these. */
const CONNECT_CODES = new Set<string>([
  'canceled', 'unknown', 'invalid_argument', 'deadline_exceeded', 'not_found', 'already_exists', 'permission_denied',
  'resource_exhausted', 'failed_precondition', 'aborted', 'out_of_range', 'unimplemented', 'internal', 'unavailable',
  'data_loss', 'unauthenticated',
]);

/**
 * The two 5xx that are the Connect protocol's own answers to what the caller asked (CONTRACT §1, §8):
 * `unimplemented` (501) for a compression the server does not speak, `deadline_exceeded` (504) when the
 * caller's own Connect-Timeout-Ms passed. Any other 5xx is a failure.
 */
function connectAnswerToCaller(a: HttpAnswer): boolean {
  if (a.headers['rpc-contract'] === undefined || (a.status !== 501 && a.status !== 504)) return false;
  let code: unknown;
  try { code = (JSON.parse(a.body.toString('utf8')) as { code?: unknown }).code; } catch { return false; }
  return (a.status === 501 && code === 'unimplemented') || (a.status === 504 && code === 'deadline_exceeded');
}

/**
 * The checks on one HTTP answer: no 5xx; then, by the face that answered, errors in its contract's shape —
 * the binary RPC's Connect errors, the agent surface's JSON-RPC errors, else CONTRACT §1 (JSON with `v: 1`).
 */
export function checkAnswer(a: HttpAnswer, method: string): string[] {
  const problems: string[] = [];
  if (a.status >= 500 && !connectAnswerToCaller(a)) problems.push(`status ${a.status}: ${a.body.toString('utf8').slice(0, 300)}`);
  const type = a.headers['content-type'] ?? '';
  const isJson = /^application\/json/.test(type);
  if (method === 'HEAD' || a.status === 204 || a.status === 304) return problems;
  if (a.status >= 400 && !isJson) problems.push(`status ${a.status} without a JSON error body (content-type ${type || 'none'})`);
  if (!isJson) return problems;
  let body: any;
  try { body = JSON.parse(a.body.toString('utf8')); } catch {
    problems.push(`status ${a.status}: the JSON body does not parse: ${JSON.stringify(a.body.toString('utf8').slice(0, 120))} (${JSON.stringify(a.headers)})`);
    return problems;
  }
  // The binary RPC answers every error in the Connect error model (CONTRACT §8): `{code, message}`, and
  // every RPC answer names the contract it speaks in `Rpc-Contract`.
  if (a.headers['rpc-contract'] !== undefined) {
    if (a.status >= 400 && (typeof body?.code !== 'string' || !CONNECT_CODES.has(body.code) || typeof body?.message !== 'string')) {
      problems.push(`status ${a.status}: RPC error not in the Connect shape: ${a.body.toString('utf8').slice(0, 200)}`);
    }
    return problems;
  }
  // The agent surface answers JSON-RPC 2.0 (CONTRACT §7): an error is `{jsonrpc, id, error: {code, message}}`.
  if (body?.jsonrpc === '2.0') {
    if (body.error !== undefined && (!Number.isInteger(body.error?.code) || typeof body.error?.message !== 'string')) {
      problems.push(`status ${a.status}: JSON-RPC error not in its shape: ${a.body.toString('utf8').slice(0, 200)}`);
    }
    return problems;
  }
  // The OpenAPI document is the one JSON answer that is not an envelope (CONTRACT §9).
  if (body?.v !== 1 && !(a.status === 200 && typeof body?.openapi === 'string')) problems.push(`status ${a.status}: JSON body without "v": 1`);
  if (a.status >= 400) {
    const e = body?.error;
    if (typeof e !== 'object' || e === null || typeof e.code !== 'string' || typeof e.message !== 'string' || e.message === '') {
      problems.push(`status ${a.status}: error body not in the contract's shape: ${a.body.toString('utf8').slice(0, 200)}`);
    } else if (!CODES.has(e.code)) {
      problems.push(`status ${a.status}: unknown error code ${JSON.stringify(e.code)}`);
    } else if (e.param !== undefined && typeof e.param !== 'string') {
      problems.push(`status ${a.status}: error.param is not a string`);
    }
  }
  return problems;
}

/** Races `p` against the per-input deadline; a miss is a hang. */
export function withDeadline<T>(p: Promise<T>, ms: number, what: string, onTimeout: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => { onTimeout(); reject(new HangError(`no answer within ${ms} ms: ${what}`)); }, ms);
    }),
  ]);
}

export class HangError extends Error {}

/** HTTP/2 sessions shared by the requests of a run. */
export class H2Pool {
  readonly #server: Server;
  readonly #sessions: (http2.ClientHttp2Session | undefined)[];
  #next = 0;

  constructor(server: Server, size: number) {
    this.#server = server;
    this.#sessions = new Array(size).fill(undefined);
  }

  #session(): http2.ClientHttp2Session {
    const i = this.#next++ % this.#sessions.length;
    let s = this.#sessions[i];
    if (s === undefined || s.closed || s.destroyed) {
      s = http2.connect(this.#server.url, { ca: this.#server.ca, maxSendHeaderBlockLength: 1 << 20, peerMaxConcurrentStreams: 1000 });
      s.on('error', () => { /* a session the fuzz broke is replaced on next use */ });
      s.on('goaway', () => { if (this.#sessions[i] === s) this.#sessions[i] = undefined; });
      this.#sessions[i] = s;
    }
    return s;
  }

  /**
   * One request. Resolves with the answer, or `reset` when the stream was reset (an answer the
   * protocol allows), or `refused` when node's client would not send it (then nothing was tested).
   */
  request(method: string, path: string, headers: Record<string, string>, body: Buffer | undefined, deadlineMs: number):
    Promise<HttpAnswer | { reset: number } | { refused: string }> {
    let stream: http2.ClientHttp2Stream;
    try {
      stream = this.#session().request({ ':method': method, ':path': path, ...headers }, { endStream: body === undefined });
    } catch (err) {
      return Promise.resolve({ refused: (err as Error).message });
    }
    const done = new Promise<HttpAnswer | { reset: number }>((resolve) => {
      let status = 0;
      let head: Record<string, string> = {};
      const chunks: Buffer[] = [];
      stream.on('response', (h) => {
        status = Number(h[':status']);
        head = {};
        for (const [k, v] of Object.entries(h)) if (!k.startsWith(':')) head[k] = String(v);
      });
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('error', () => { /* reported through close */ });
      // The answer is complete at the end of the server's side, even while ours is still open. One cut
      // short (its session torn down meanwhile, e.g. by another input's GOAWAY) is a reset, not a body.
      const settle = (): void => {
        const body = Buffer.concat(chunks);
        const declared = method === 'HEAD' ? 0 : Number(head['content-length'] ?? body.length);
        resolve(status > 0 && body.length >= declared ? { status, headers: head, body } : { reset: stream.rstCode ?? -1 });
      };
      stream.on('end', settle);
      stream.on('close', settle);
    });
    if (body !== undefined) stream.end(body);
    return withDeadline(done, deadlineMs, `HTTP/2 ${method} ${path.slice(0, 120)}`, () => stream.close(http2.constants.NGHTTP2_CANCEL))
      .finally(() => { if (!stream.closed) stream.close(http2.constants.NGHTTP2_CANCEL); });
  }

  close(): void { for (const s of this.#sessions) s?.destroy(); }
}

/**
 * Writes `bytes` on a fresh HTTP/1.1 TLS connection, half-closes it, and collects every response the
 * server sends before closing (several when the input pipelines requests).
 */
export function h1Raw(server: Server, bytes: Buffer, methods: readonly string[], deadlineMs: number): Promise<HttpAnswer[]> {
  const socket = tls.connect({ host: '127.0.0.1', port: server.port, ca: server.ca, servername: 'localhost', ALPNProtocols: ['http/1.1'] });
  const chunks: Buffer[] = [];
  const done = new Promise<HttpAnswer[]>((resolve) => {
    socket.on('secureConnect', () => { socket.end(bytes); });
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => { /* a reset is an answer too; what arrived is judged */ });
    socket.on('close', () => resolve(parseResponses(Buffer.concat(chunks), methods)));
  });
  return withDeadline(done, deadlineMs, `HTTP/1.1 raw ${JSON.stringify(bytes.subarray(0, 80).toString('latin1'))}`, () => socket.destroy());
}

/**
 * Sequential HTTP/1.1 responses with content-length bodies (none for interim 1xx ones, nor for answers
 * to HEAD: `methods` are the requests' methods in order); stops at anything else.
 */
export function parseResponses(data: Buffer, methods: readonly string[] = []): HttpAnswer[] {
  const out: HttpAnswer[] = [];
  let at = 0;
  let final = 0;
  while (at < data.length) {
    const end = data.indexOf('\r\n\r\n', at);
    if (end < 0) break;
    const head = data.subarray(at, end).toString('latin1').split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? '');
    if (!m) { out.push({ status: -1, headers: {}, body: data.subarray(at, at + 200) }); break; }
    const headers: Record<string, string> = {};
    for (const line of head.slice(1)) {
      const c = line.indexOf(':');
      if (c > 0) headers[line.slice(0, c).trim().toLowerCase()] = line.slice(c + 1).trim();
    }
    const status = Number(m[1]);
    const bodiless = status < 200 || methods[final] === 'HEAD';
    if (status >= 200) final++;
    const len = bodiless ? 0 : Number(headers['content-length'] ?? 0);
    // An answer cut short by the connection's close (the server may drop a connection whose next request
    // is garbage before the previous answer is flushed) is a reset, not a body to judge.
    if (end + 4 + len > data.length) break;
    out.push({ status, headers, body: data.subarray(end + 4, end + 4 + len), method: methods[status >= 200 ? final - 1 : final] ?? 'GET' });
    at = end + 4 + len;
    if (headers['transfer-encoding']) break;
  }
  return out;
}

/**
 * Raw bytes on a TCP connection to the TLS port (`tls: false`) or inside a TLS connection with the given
 * ALPN protocols, then a half-close. Resolves when the server closes the connection or after a short
 * settling time: a connection whose frames were valid enough may stay open until the idle timeout, which
 * is the server's promise, not a hang (the run's liveness and RSS checks judge what it cost).
 */
export function rawConnection(server: Server, bytes: Buffer, options: { tls: boolean; alpn?: string[]; maxVersion?: tls.SecureVersion }, settleMs = 300): Promise<void> {
  const socket = options.tls
    ? tls.connect({
      host: '127.0.0.1', port: server.port, ca: server.ca, servername: 'localhost',
      ...(options.alpn ? { ALPNProtocols: options.alpn } : {}), ...(options.maxVersion ? { maxVersion: options.maxVersion } : {}),
    })
    : net.connect({ host: '127.0.0.1', port: server.port });
  return new Promise<void>((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    socket.on(options.tls ? 'secureConnect' : 'connect', () => {
      socket.end(bytes);
      timer = setTimeout(() => socket.destroy(), settleMs);
    });
    socket.on('data', () => { /* whatever the server says to garbage is its business */ });
    socket.on('error', () => { /* refused handshakes and resets are expected */ });
    socket.on('close', () => { clearTimeout(timer); resolve(); });
  });
}
