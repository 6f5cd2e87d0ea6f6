/**
 * The Connect protocol's unary semantics (connectrpc.com/docs/protocol), as much as Quarry serves:
 * the two codecs (`application/proto`, `application/json` with canonical proto-JSON), the GET form of
 * side-effect-free methods, `Connect-Protocol-Version`, `Connect-Timeout-Ms`, identity compression only,
 * and the error model — a non-200 status with the JSON body `{code, message, details}`, the status and
 * code from the one table in src/http/errors.ts, and a `quarry.v1.ErrorDetail` carrying Quarry's own
 * code. Every malformed input is a `QuarryError` (a 4xx), never an exception of the decoder.
 */
import { fromBinary, fromJson, toBinary, toJsonString, type DescMessage, type JsonValue, type MessageShape } from '@bufbuild/protobuf';
import type { IncomingHttpHeaders } from 'node:http';
import { connectError } from '../http/errors.js';
import type { BytesReply } from '../http/route.js';
import { BadRequestError, DeadlineExceededError, NotImplementedError, QuarryError, RateLimitedError, UnavailableError, UnsupportedMediaTypeError } from '../kernel/errors.js';
import { ErrorDetailSchema } from './gen/quarry/v1/call_pb.js';

export type Codec = 'proto' | 'json';

const CONTENT_TYPES: Readonly<Record<Codec, string>> = { proto: 'application/proto', json: 'application/json' };

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The codec of a unary request's `Content-Type` (415 `unsupported_media_type` for anything else). */
export function codecOf(headers: IncomingHttpHeaders): Codec {
  const raw = header(headers, 'content-type') ?? '';
  if (raw === 'application/proto') return 'proto';
  const [type = '', ...params] = raw.split(';').map((s) => s.trim().toLowerCase());
  const charsetOk = params.every((p) => !p.startsWith('charset=') || p === 'charset=utf-8');
  if (type === 'application/proto' && params.length === 0) return 'proto';
  if (type === 'application/json' && charsetOk) return 'json';
  throw new UnsupportedMediaTypeError(raw || undefined, 'application/proto or application/json');
}

/** The Connect headers every request may carry: protocol version and compression. */
export function checkConnectHeaders(headers: IncomingHttpHeaders): void {
  const version = header(headers, 'connect-protocol-version');
  if (version !== undefined && version !== '1') throw new BadRequestError(`Connect-Protocol-Version must be 1; got ${JSON.stringify(version)}.`, 'Connect-Protocol-Version');
  for (const name of ['content-encoding', 'connect-content-encoding']) {
    const enc = header(headers, name);
    if (enc !== undefined && enc.trim().toLowerCase() !== 'identity') throw new NotImplementedError(`${name} ${JSON.stringify(enc)} is not supported; send the message uncompressed.`);
  }
}

/** `Connect-Timeout-Ms`: 1 to 10 ASCII digits, or absent (no deadline but the server's own). */
export function timeoutOf(headers: IncomingHttpHeaders): number | undefined {
  const raw = header(headers, 'connect-timeout-ms');
  if (raw === undefined) return undefined;
  if (!/^[0-9]{1,10}$/.test(raw)) throw new BadRequestError('Connect-Timeout-Ms must be 1 to 10 decimal digits.', 'Connect-Timeout-Ms');
  return Number(raw);
}

/**
 * Runs `fn` under the caller's deadline, which it is given (epoch ms; undefined without one):
 * `deadline_exceeded` when the deadline has passed before the call starts (a timeout of 0), when it passes
 * while the call waits, when the answer is ready only after it, or when the call gave up because of it (a
 * search cut at its budget says `unavailable`, but the budget was the caller's).
 */
export async function withDeadline<T>(timeoutMs: number | undefined, fn: (deadline: number | undefined) => Promise<T>): Promise<T> {
  if (timeoutMs === undefined) return fn(undefined);
  if (timeoutMs === 0) throw new DeadlineExceededError(0);
  const deadline = Date.now() + timeoutMs;
  let timer: NodeJS.Timeout | undefined;
  try {
    const result = await Promise.race([
      fn(deadline),
      new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new DeadlineExceededError(timeoutMs)), timeoutMs); }),
    ]);
    if (Date.now() > deadline) throw new DeadlineExceededError(timeoutMs);
    return result;
  } catch (err) {
    if (QuarryError.is(err) && err.code === 'unavailable' && Date.now() >= deadline) throw new DeadlineExceededError(timeoutMs);
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** Decodes a request message; any decoder failure is `bad_request` naming the message type. */
export function decodeMessage<D extends DescMessage>(desc: D, bytes: Uint8Array, codec: Codec, param = 'message'): MessageShape<D> {
  try {
    if (codec === 'proto') return fromBinary(desc, bytes);
    return fromJson(desc, JSON.parse(Buffer.from(bytes).toString('utf8')) as JsonValue, { ignoreUnknownFields: true });
  } catch (err) {
    throw invalidMessage(desc, err, param);
  }
}

/** Decodes a request message already parsed from JSON (the object form of `Call.message`). */
export function decodeJsonValue<D extends DescMessage>(desc: D, value: JsonValue, param = 'message'): MessageShape<D> {
  try {
    return fromJson(desc, value, { ignoreUnknownFields: true });
  } catch (err) {
    throw invalidMessage(desc, err, param);
  }
}

function invalidMessage(desc: DescMessage, err: unknown, param: string): BadRequestError {
  const why = err instanceof Error ? err.message.replace(/\s+/g, ' ').slice(0, 200) : 'undecodable';
  return new BadRequestError(`The ${param} is not a valid ${desc.typeName}: ${why}`, param);
}

export function encodeMessage<D extends DescMessage>(desc: D, message: MessageShape<D>, codec: Codec): Buffer {
  if (codec === 'proto') return Buffer.from(toBinary(desc, message));
  return Buffer.from(toJsonString(desc, message, { alwaysEmitImplicit: true }));
}

/** A successful unary answer in `codec`. */
export function messageReply(body: Buffer, codec: Codec, headers: Record<string, string>): BytesReply {
  return { status: 200, headers, body, contentType: CONTENT_TYPES[codec] };
}

/** The Connect error reply for a thrown value, with `extra` headers (`Rpc-Contract`). */
export function errorReply(thrown: unknown, extra: Record<string, string>): BytesReply {
  const e = connectError(thrown);
  const retry = e.error instanceof RateLimitedError || e.error instanceof UnavailableError ? Number(e.headers['retry-after'] ?? 0) : 0;
  const detail = toBinary(ErrorDetailSchema, { $typeName: 'quarry.v1.ErrorDetail', code: e.error.code, param: e.internal ? '' : e.error.param ?? '', retryAfterSeconds: retry });
  const body = {
    code: e.code,
    message: e.message,
    details: [{ type: ErrorDetailSchema.typeName, value: Buffer.from(detail).toString('base64').replace(/=+$/, '') }],
  };
  return { status: e.status, headers: { ...e.headers, ...extra }, body: JSON.stringify(body), contentType: 'application/json' };
}
