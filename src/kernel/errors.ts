/**
 * The error catalogue: every failure Quarry reports to a caller is a `QuarryError` with a stable `code`
 * from CONTRACT §1. Libraries (engine, control, auth) throw these; each face maps `code` to its own wire
 * form in one table (`src/http/errors.ts` for HTTP status, JSON-RPC and RPC codes). Messages are one human
 * sentence naming the offending input; `param` names the request parameter at fault when there is one.
 */

/** Stable identifiers of CONTRACT §1, plus the engine-internal ones that never come from input alone. */
export type ErrorCode =
  | 'bad_query'
  | 'bad_scope'
  | 'bad_page'
  | 'bad_cid'
  | 'bad_request'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'unknown_target'
  | 'method_not_allowed'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'internal'
  | 'not_implemented'
  | 'unavailable'
  | 'deadline_exceeded';

const BRAND = Symbol.for('quarry.error');

export class QuarryError extends Error {
  readonly code: ErrorCode;
  /** The request parameter (or body field) at fault, when exactly one is. */
  readonly param?: string;

  constructor(code: ErrorCode, message: string, options?: { param?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    if (options?.param !== undefined) this.param = options.param;
    this.name = new.target.name;
    (this as unknown as Record<symbol, boolean>)[BRAND] = true;
  }

  /** True for a QuarryError from any copy of this module (tests load modules more than once). */
  static is(err: unknown): err is QuarryError {
    return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[BRAND] === true;
  }
}

export class BadQueryError extends QuarryError {
  constructor(message: string, param = 'q') { super('bad_query', message, { param }); }
}
export class BadScopeError extends QuarryError {
  constructor(message: string, param = 'scope') { super('bad_scope', message, { param }); }
}
export class BadPageError extends QuarryError {
  constructor(message: string, param = 'page') { super('bad_page', message, { param }); }
}
export class BadCidError extends QuarryError {
  constructor(message: string, param = 'cid') { super('bad_cid', message, { param }); }
}
export class BadRequestError extends QuarryError {
  constructor(message: string, param?: string) { super('bad_request', message, param === undefined ? undefined : { param }); }
}
export class UnauthenticatedError extends QuarryError {
  constructor(message = 'A valid capability is required for this request.') { super('unauthenticated', message); }
}
export class ForbiddenError extends QuarryError {
  constructor(message: string) { super('forbidden', message); }
}
export class NotFoundError extends QuarryError {
  constructor(message: string, param?: string) { super('not_found', message, param === undefined ? undefined : { param }); }
}
export class UnknownTargetError extends QuarryError {
  readonly target: string;
  constructor(target: string) {
    super('unknown_target', `Target ${JSON.stringify(target)} is not in the allowlist.`, { param: 'target' });
    this.target = target;
  }
}
export class MethodNotAllowedError extends QuarryError {
  readonly allow: readonly string[];
  constructor(method: string, path: string, allow: readonly string[]) {
    super('method_not_allowed', `${method} is not allowed on ${path}; allowed: ${allow.join(', ')}.`);
    this.allow = allow;
  }
}
export class ConflictError extends QuarryError {
  constructor(message: string) { super('conflict', message); }
}
export class PayloadTooLargeError extends QuarryError {
  readonly limit: number;
  constructor(limit: number) {
    super('payload_too_large', `The request body exceeds the limit of ${limit} bytes.`);
    this.limit = limit;
  }
}
export class UnsupportedMediaTypeError extends QuarryError {
  constructor(got: string | undefined, expected: string) {
    super('unsupported_media_type', `Content-Type ${got ? JSON.stringify(got) : '(none)'} is not accepted; expected ${expected}.`);
  }
}
export class RateLimitedError extends QuarryError {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super('rate_limited', `Too many requests; retry after ${retryAfterSeconds} s.`);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}
export class UnavailableError extends QuarryError {
  readonly retryAfterSeconds: number;
  constructor(message: string, retryAfterSeconds = 1) {
    super('unavailable', message);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}
/** An operation the contract names but this server does not provide yet. */
export class NotImplementedError extends QuarryError {
  constructor(message: string) { super('not_implemented', message); }
}
/** The caller's own deadline (e.g. `Connect-Timeout-Ms`) passed before the answer was ready. */
export class DeadlineExceededError extends QuarryError {
  readonly timeoutMs: number;
  constructor(timeoutMs: number) {
    super('deadline_exceeded', `The request did not complete within the caller's deadline of ${timeoutMs} ms.`);
    this.timeoutMs = timeoutMs;
  }
}
/** A broken invariant: a bug or on-disk corruption, never caused by input alone. */
export class InternalError extends QuarryError {
  constructor(message: string, options?: { cause?: unknown }) { super('internal', message, options); }
}

/**
 * A `QuarryError` as data, for crossing a thread boundary (structured clone keeps neither the class nor
 * the extra fields). What a face needs of it survives: the code, the message, the parameter at fault, the
 * retry hint and a payload limit.
 */
export interface WireError {
  code: ErrorCode;
  message: string;
  param?: string;
  retryAfterSeconds?: number;
  limit?: number;
  /** Where a bug was thrown (anything but a `QuarryError`), so the log on the other side shows it. */
  stack?: string;
}

/** `err` as data; anything but a `QuarryError` becomes `internal` with its message and stack. */
export function errorToWire(err: unknown): WireError {
  if (!QuarryError.is(err)) {
    if (!(err instanceof Error)) return { code: 'internal', message: String(err) };
    return err.stack === undefined ? { code: 'internal', message: err.message } : { code: 'internal', message: err.message, stack: err.stack };
  }
  const wire: WireError = { code: err.code, message: err.message };
  if (err.param !== undefined) wire.param = err.param;
  const { retryAfterSeconds, limit } = err as { retryAfterSeconds?: unknown; limit?: unknown };
  if (typeof retryAfterSeconds === 'number') wire.retryAfterSeconds = retryAfterSeconds;
  if (typeof limit === 'number') wire.limit = limit;
  return wire;
}

/** The error `errorToWire` described, as the same kind of `QuarryError` where the kind carries fields. */
export function errorFromWire(e: WireError): QuarryError {
  switch (e.code) {
    case 'unavailable': return new UnavailableError(e.message, e.retryAfterSeconds);
    case 'rate_limited': if (e.retryAfterSeconds !== undefined) return new RateLimitedError(e.retryAfterSeconds); break;
    case 'payload_too_large': if (e.limit !== undefined) return new PayloadTooLargeError(e.limit); break;
    case 'internal': {
      const err = new InternalError(e.message);
      if (e.stack !== undefined) err.stack = e.stack;
      return err;
    }
    default: break;
  }
  return new QuarryError(e.code, e.message, e.param === undefined ? undefined : { param: e.param });
}
