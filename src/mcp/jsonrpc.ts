/**
 * JSON-RPC 2.0 as MCP uses it: the error codes (the standard ones and MCP's reserved -32020…-32022), the
 * error a handler throws to answer with one (`RpcError`, carrying the HTTP status it travels with), and
 * the shape checks of one incoming message. Quarry's own failures (`QuarryError`) are mapped by the
 * handler: capability problems become HTTP 401/403, everything else a tool result with `isError`.
 */

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
/** 2026-07-28: `Mcp-Method`/`Mcp-Name` missing or not matching the body. */
export const HEADER_MISMATCH = -32020;
/** 2026-07-28: the request needs a client capability the client did not declare. */
export const MISSING_CLIENT_CAPABILITY = -32021;
/** 2026-07-28: the protocol version is not one this server speaks. */
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;
/** 2025-11-25 and earlier: a resource that does not exist (2026-07-28 uses -32602). */
export const RESOURCE_NOT_FOUND_LEGACY = -32002;
/**
 * Application errors live outside the reserved range (-32768…-32000): a refused capability travels as
 * HTTP 401/403 with this code in the body, so clients that only read JSON see it too.
 */
export const UNAUTHORIZED = -31001;
export const FORBIDDEN = -31003;
export const RATE_LIMITED = -31029;
export const UNAVAILABLE = -31503;

export type RpcId = string | number | null;

export class RpcError extends Error {
  readonly code: number;
  readonly data?: unknown;
  /** HTTP status the error response travels with (200 for ordinary JSON-RPC errors). */
  readonly status: number;
  /** Extra response headers (WWW-Authenticate, Retry-After). */
  readonly headers: Record<string, string>;

  constructor(code: number, message: string, options: { data?: unknown; status?: number; headers?: Record<string, string> } = {}) {
    super(message);
    this.code = code;
    if (options.data !== undefined) this.data = options.data;
    this.status = options.status ?? 200;
    this.headers = options.headers ?? {};
  }
}

/** One incoming JSON-RPC message, checked for shape only. */
export type Incoming =
  | { kind: 'request'; id: string | number; method: string; params: Record<string, unknown> }
  | { kind: 'notification'; method: string; params: Record<string, unknown> }
  | { kind: 'response' };

/** Largest id kept as is: ids are echoed, so one must not be a way to make the answer huge. */
const MAX_ID_LENGTH = 256;

/** The message, or RpcError(-32600) naming what is wrong with it (with the id when it could be read). */
export function parseMessage(value: unknown): Incoming {
  if (Array.isArray(value)) throw new RpcError(INVALID_REQUEST, 'Batches are not supported: send one JSON-RPC message per request.', { status: 400 });
  if (typeof value !== 'object' || value === null) throw new RpcError(INVALID_REQUEST, 'The body must be one JSON-RPC message (an object).', { status: 400 });
  const m = value as Record<string, unknown>;
  if (m.jsonrpc !== '2.0') throw new RpcError(INVALID_REQUEST, 'jsonrpc must be "2.0".', { status: 400 });
  const hasId = 'id' in m;
  if (!('method' in m)) {
    if (hasId && ('result' in m || 'error' in m)) return { kind: 'response' };
    throw new RpcError(INVALID_REQUEST, 'The message has no method.', { status: 400 });
  }
  if (typeof m.method !== 'string' || m.method === '') throw new RpcError(INVALID_REQUEST, 'method must be a non-empty string.', { status: 400 });
  if (m.params !== undefined && (typeof m.params !== 'object' || m.params === null || Array.isArray(m.params))) {
    throw new RpcError(INVALID_REQUEST, 'params must be an object.', { status: 400 });
  }
  const params = (m.params ?? {}) as Record<string, unknown>;
  if (!hasId) return { kind: 'notification', method: m.method, params };
  const id = m.id;
  if (typeof id === 'string' ? id.length > MAX_ID_LENGTH : !(typeof id === 'number' && Number.isSafeInteger(id))) {
    throw new RpcError(INVALID_REQUEST, `id must be a string of at most ${MAX_ID_LENGTH} characters or a safe integer.`, { status: 400 });
  }
  return { kind: 'request', id: id as string | number, method: m.method, params };
}

/** The id of a message when it is one we may echo (for errors found before the message was accepted). */
export function echoableId(value: unknown): RpcId {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const id = (value as Record<string, unknown>).id;
  if (typeof id === 'string' && id.length <= MAX_ID_LENGTH) return id;
  if (typeof id === 'number' && Number.isSafeInteger(id)) return id;
  return null;
}

export function errorMessage(id: RpcId, err: RpcError): Record<string, unknown> {
  const error: Record<string, unknown> = { code: err.code, message: err.message };
  if (err.data !== undefined) error.data = err.data;
  return { jsonrpc: '2.0', id, error };
}

export function resultMessage(id: string | number, result: Record<string, unknown>): Record<string, unknown> {
  return { jsonrpc: '2.0', id, result };
}
