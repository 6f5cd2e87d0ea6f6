/**
 * The one table from a `QuarryError` code to its wire form: the HTTP status every face answers with and
 * the Connect code of the binary RPC. A face never maps codes on its own; it calls here, so a caller's
 * mistake reads the same everywhere. (The agent surface reports a failed tool as a result carrying the
 * CONTRACT §1 error body, and names the few HTTP-level refusals it has by JSON-RPC codes of its own, in
 * src/mcp/jsonrpc.ts: the specification reserves the range a per-code column would use.) Also builds the CONTRACT §1 error body and the headers some
 * codes require (`Allow`, `Retry-After`, `WWW-Authenticate`).
 *
 * Anything that is not a `QuarryError` is a bug: it becomes 500 `internal` with a generic message (the
 * original message may hold paths or secrets, so it is logged by the caller, never sent).
 */
import { QuarryError, MethodNotAllowedError, RateLimitedError, UnavailableError, type ErrorCode } from '../kernel/errors.js';

/** Connect protocol codes (connectrpc.com/docs/protocol#error-codes) used by Quarry. */
export type ConnectCode =
  | 'invalid_argument' | 'unauthenticated' | 'permission_denied' | 'not_found' | 'aborted'
  | 'resource_exhausted' | 'unimplemented' | 'internal' | 'unavailable' | 'deadline_exceeded';

export interface WireCodes {
  /** HTTP status of CONTRACT §1. */
  readonly status: number;
  readonly connect: ConnectCode;
}

export const WIRE_CODES: Readonly<Record<ErrorCode, WireCodes>> = {
  bad_query: { status: 400, connect: 'invalid_argument' },
  bad_scope: { status: 400, connect: 'invalid_argument' },
  bad_page: { status: 400, connect: 'invalid_argument' },
  bad_cid: { status: 400, connect: 'invalid_argument' },
  bad_request: { status: 400, connect: 'invalid_argument' },
  unauthenticated: { status: 401, connect: 'unauthenticated' },
  forbidden: { status: 403, connect: 'permission_denied' },
  not_found: { status: 404, connect: 'not_found' },
  unknown_target: { status: 404, connect: 'not_found' },
  method_not_allowed: { status: 405, connect: 'unimplemented' },
  conflict: { status: 409, connect: 'aborted' },
  payload_too_large: { status: 413, connect: 'resource_exhausted' },
  unsupported_media_type: { status: 415, connect: 'invalid_argument' },
  rate_limited: { status: 429, connect: 'resource_exhausted' },
  internal: { status: 500, connect: 'internal' },
  not_implemented: { status: 501, connect: 'unimplemented' },
  unavailable: { status: 503, connect: 'unavailable' },
  deadline_exceeded: { status: 504, connect: 'deadline_exceeded' },
};

export const ERROR_CODES = Object.keys(WIRE_CODES) as ErrorCode[];

/** CONTRACT §1 error body. */
export interface ErrorBody {
  v: 1;
  error: { code: ErrorCode; message: string; param?: string };
}

export interface HttpError {
  status: number;
  headers: Record<string, string>;
  body: ErrorBody;
  /** True when the error was not a QuarryError (or was `internal`): the caller logs its stack. */
  internal: boolean;
}

const INTERNAL_MESSAGE = 'An internal error occurred; it has been logged.';

/** The QuarryError for any thrown value: itself, or `internal` for anything else. */
export function asQuarryError(err: unknown): QuarryError {
  if (QuarryError.is(err)) return err;
  return new QuarryError('internal', INTERNAL_MESSAGE, { cause: err });
}

export function errorBody(err: QuarryError): ErrorBody {
  const message = err.code === 'internal' ? INTERNAL_MESSAGE : err.message;
  const error: ErrorBody['error'] = { code: err.code, message };
  if (err.param !== undefined && err.code !== 'internal') error.param = err.param;
  return { v: 1, error };
}

/** The HTTP response for a thrown value, with the headers CONTRACT §1 requires for its code. */
export function httpError(thrown: unknown): HttpError {
  const err = asQuarryError(thrown);
  const wire = WIRE_CODES[err.code] ?? WIRE_CODES.internal;
  const headers: Record<string, string> = {};
  if (err instanceof MethodNotAllowedError || err.code === 'method_not_allowed') {
    const allow = (err as MethodNotAllowedError).allow;
    if (Array.isArray(allow)) headers['allow'] = allow.join(', ');
  }
  if (err.code === 'rate_limited' || err.code === 'unavailable') {
    const seconds = (err as RateLimitedError | UnavailableError).retryAfterSeconds;
    headers['retry-after'] = String(Number.isFinite(seconds) && seconds >= 1 ? Math.ceil(seconds) : 1);
  }
  if (err.code === 'unauthenticated') headers['www-authenticate'] = 'Bearer realm="quarry"';
  return { status: wire.status, headers, body: errorBody(err), internal: err.code === 'internal' };
}

/** The Connect protocol's error body (connectrpc.com/docs/protocol#error-end-stream), before details. */
export interface ConnectErrorWire {
  /** The CONTRACT §1 status of the error's code (for most codes also Connect's own status of `code`). */
  status: number;
  headers: Record<string, string>;
  code: ConnectCode;
  message: string;
  /** The catalogue error (for the face's own details: Quarry's code, the parameter at fault). */
  error: QuarryError;
  internal: boolean;
}

/** The Connect wire form of a thrown value: the same table, message and headers as `httpError`. */
export function connectError(thrown: unknown): ConnectErrorWire {
  const err = asQuarryError(thrown);
  const e = httpError(err);
  return { status: e.status, headers: e.headers, code: (WIRE_CODES[err.code] ?? WIRE_CODES.internal).connect, message: e.body.error.message, error: err, internal: e.internal };
}
