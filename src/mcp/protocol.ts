/**
 * The protocol revisions this server speaks and how a request picks one (the specification's
 * versioning section, "Backward Compatibility with Initialization-Based Versions"):
 *
 *   - `MCP-Protocol-Version: 2026-07-28` → the stateless era: every request carries `_meta` with the
 *     version and the client's capabilities, `Mcp-Method` (and `Mcp-Name` for tools/call, resources/read,
 *     prompts/get) must match the body, `initialize`/`ping`/`logging/setLevel`/`resources/subscribe`
 *     are unknown methods;
 *   - a handshake-era version in the header (2025-11-25 back to 2025-03-26), or no header at all (then
 *     2025-03-26 is assumed, as the 2025-06-18 transport says) → the handshake era: `initialize`
 *     answers with the client's version when it is one of ours, else our newest handshake-era one;
 *   - any other header value → 400 with UnsupportedProtocolVersion (-32022) listing what we speak.
 */
import {
  HEADER_MISMATCH, INVALID_PARAMS, RpcError, UNSUPPORTED_PROTOCOL_VERSION,
} from './jsonrpc.js';

export const MODERN_VERSION = '2026-07-28';
export const LEGACY_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;
export const SUPPORTED_VERSIONS: readonly string[] = [MODERN_VERSION, ...LEGACY_VERSIONS];

export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  logLevel: 'io.modelcontextprotocol/logLevel',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
} as const;

/** The canonical body place of a Quarry capability: a prefixed `_meta` key (`params._cap` is its alias). */
export const CAP_META_KEY = 'dev.quarry/cap';

export type Era = 'modern' | 'legacy';

export interface Lane {
  era: Era;
  /** The revision the request speaks. */
  version: string;
  /** The client's declared capabilities (modern: from `_meta`; legacy: unknown, so empty). */
  clientCapabilities: Record<string, unknown>;
}

type Headers = Readonly<Record<string, string | string[] | undefined>>;

export function header(headers: Headers, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function unsupported(requested: string): RpcError {
  return new RpcError(UNSUPPORTED_PROTOCOL_VERSION, `Protocol version ${JSON.stringify(requested.slice(0, 64))} is not supported.`, {
    status: 400, data: { supported: [...SUPPORTED_VERSIONS], requested },
  });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The lane of one request (see the file comment), or the RpcError that refuses it. */
export function chooseLane(headers: Headers, method: string, params: Record<string, unknown>): Lane {
  const hv = header(headers, 'mcp-protocol-version')?.trim();
  const meta = params._meta;
  const mv = isObject(meta) ? meta[META.protocolVersion] : undefined;
  if (hv === MODERN_VERSION || (hv === undefined && mv !== undefined && method !== 'initialize')) {
    if (hv === undefined) throw new RpcError(HEADER_MISMATCH, 'MCP-Protocol-Version is required and must match _meta.', { status: 400 });
    return modernLane(headers, method, params, hv);
  }
  if (hv === undefined) return { era: 'legacy', version: '2025-03-26', clientCapabilities: {} };
  if ((LEGACY_VERSIONS as readonly string[]).includes(hv)) return { era: 'legacy', version: hv, clientCapabilities: {} };
  throw unsupported(hv);
}

function modernLane(headers: Headers, method: string, params: Record<string, unknown>, hv: string): Lane {
  const meta = params._meta;
  if (!isObject(meta)) throw new RpcError(INVALID_PARAMS, 'params._meta is required in protocol version 2026-07-28.', { status: 400 });
  const mv = meta[META.protocolVersion];
  if (typeof mv !== 'string') throw new RpcError(INVALID_PARAMS, `_meta["${META.protocolVersion}"] is required.`, { status: 400 });
  const caps = meta[META.clientCapabilities];
  if (!isObject(caps)) throw new RpcError(INVALID_PARAMS, `_meta["${META.clientCapabilities}"] is required and must be an object.`, { status: 400 });
  if (mv !== hv) throw new RpcError(HEADER_MISMATCH, 'MCP-Protocol-Version does not match _meta.', { status: 400 });
  const mh = header(headers, 'mcp-method');
  if (mh === undefined || mh !== method) throw new RpcError(HEADER_MISMATCH, 'The Mcp-Method header is missing or does not match the body.', { status: 400 });
  const nameField = method === 'tools/call' || method === 'prompts/get' ? 'name' : method === 'resources/read' ? 'uri' : undefined;
  if (nameField !== undefined) {
    const raw = header(headers, 'mcp-name');
    const name = raw === undefined ? undefined : decodeHeaderValue(raw);
    if (name === undefined || name !== params[nameField]) {
      throw new RpcError(HEADER_MISMATCH, `The Mcp-Name header is missing or does not match params.${nameField}.`, { status: 400 });
    }
  }
  return { era: 'modern', version: hv, clientCapabilities: caps };
}

/** A header value, with the `=?base64?…?=` form (non-ASCII names) decoded; undefined when malformed. */
export function decodeHeaderValue(raw: string): string | undefined {
  const m = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/.exec(raw.trim());
  if (!m) return raw.trim();
  const text = Buffer.from(m[1]!, 'base64').toString('utf8');
  return text.includes('\uFFFD') ? undefined : text;
}
