/**
 * Every limit and timeout of the HTTP server, as named options with CONTRACT §1 defaults (STYLE §10).
 * `ServerLimits` is what an operator or test passes; `ResolvedLimits` has every default applied. For each
 * field the comment says its default and what 0 means.
 */

export interface ServerLimits {
  /** Largest request body in bytes for routes without their own `bodyLimit`. Default 1 MiB. 0: no body accepted. */
  bodyBytes?: number;
  /**
   * Largest request header block in bytes (names + values, plus 32 bytes per header as HPACK counts
   * them). Default 16 KiB. Over it: 431 with code `bad_request`. Must be > 0.
   */
  headerBytes?: number;
  /** Milliseconds a connection with no request in flight may stay silent before it is closed. Default 30 s. 0: never. */
  idleTimeoutMs?: number;
  /**
   * Milliseconds a request may take from arrival to the end of its response, body upload included
   * (streaming routes excepted). Default 60 s. 0: no limit. Past it: 503 `unavailable` if nothing was sent.
   */
  requestTimeoutMs?: number;
  /** Requests per second per client (capability id, else IP address). Default 100. 0: no rate limit. */
  ratePerSecond?: number;
  /** Requests a client may make at once before the rate applies (token-bucket size). Default 200; at least 1. */
  rateBurst?: number;
  /**
   * Connections open at once, both protocols. Default 1,024. 0: no limit. Past it a new connection is
   * closed as it arrives, before the TLS handshake: each open one holds a TLS session and, over HTTP/2,
   * nghttp2's state (tens of KiB outside the JS heap), so this bounds what idle connections can cost.
   */
  maxConnections?: number;
  /** Milliseconds a graceful shutdown waits for in-flight requests before closing them. Default 10 s. 0: close at once. */
  drainTimeoutMs?: number;
}

export type ResolvedLimits = Required<ServerLimits>;

export const DEFAULT_LIMITS: ResolvedLimits = {
  bodyBytes: 1024 * 1024,
  headerBytes: 16 * 1024,
  idleTimeoutMs: 30_000,
  requestTimeoutMs: 60_000,
  ratePerSecond: 100,
  rateBurst: 200,
  maxConnections: 1024,
  drainTimeoutMs: 10_000,
};

export function resolveLimits(limits: ServerLimits = {}): ResolvedLimits {
  const out = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(DEFAULT_LIMITS) as (keyof ResolvedLimits)[]) {
    const v = limits[key];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) {
      throw new RangeError(`Limit ${key} must be a finite number ≥ 0, got ${String(v)}.`);
    }
    out[key] = v;
  }
  if (out.headerBytes <= 0) throw new RangeError('Limit headerBytes must be > 0.');
  out.rateBurst = Math.max(1, out.rateBurst);
  return out;
}
