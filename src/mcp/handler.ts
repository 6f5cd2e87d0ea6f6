/**
 * The MCP protocol over one HTTP request (Streamable HTTP, no sessions): origin and host checks, one
 * JSON-RPC message per body, the era of the request (`protocol.ts`), the caller (capabilities from the
 * headers and the body, resolved by the one policy), then the method over the merged catalogs.
 *
 * Answers are `application/json`, except a tool call that reports progress or logs while it runs (a long
 * `service_mgmt` operation with a progress token): that one answers as a request-scoped event stream of
 * notifications followed by the result. Notifications and client responses get 202 with no body.
 *
 * Failures: a malformed message or protocol violation is a JSON-RPC error (with the HTTP status the
 * specification pins, else 200); a missing or invalid capability is HTTP 401 with `WWW-Authenticate`, one
 * that does not grant the operation 403, too many requests 429 — each with a JSON-RPC error body echoing
 * the request id; a tool's validation or business failure is a result with `isError: true`. The
 * capability itself is never logged nor echoed: it is removed from `params` before anything else reads them.
 */
import { randomUUID } from 'node:crypto';
import { QuarryError } from '../kernel/errors.js';
import { toJson } from '../kernel/json.js';
import { requirePublic, type Policy, type Principal } from '../kernel/principal.js';
import { asQuarryError, errorBody, httpError } from '../http/errors.js';
import type { Catalog, CompletionRef, InputRequired, ResourceContents, RetryInput, Tool, ToolResult } from './catalog.js';
import {
  FORBIDDEN, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, MISSING_CLIENT_CAPABILITY, PARSE_ERROR,
  RATE_LIMITED, RESOURCE_NOT_FOUND_LEGACY, RpcError, UNAUTHORIZED, UNAVAILABLE, echoableId, errorMessage, parseMessage,
  resultMessage, type RpcId,
} from './jsonrpc.js';
import { CAP_META_KEY, LEGACY_VERSIONS, META, SUPPORTED_VERSIONS, chooseLane, header, type Lane } from './protocol.js';

type Headers = Readonly<Record<string, string | string[] | undefined>>;

export interface McpRequest {
  headers: Headers;
  /** Reads the body (bounded by the route's limit: PayloadTooLargeError past it). */
  body(): Promise<Buffer>;
  /** The caller as the server resolved it from the headers alone. */
  principal: Principal;
  /** Charges the rate limit of a caller found in the body (the headers' caller was charged already). */
  chargeRate(principal: Principal): void;
  signal: AbortSignal;
}

export type McpResponse =
  | { status: number; headers: Record<string, string>; json?: Record<string, unknown> }
  | { status: number; headers: Record<string, string>; stream(write: (message: Record<string, unknown>) => void): Promise<void> };

export interface McpOptions {
  catalogs: Catalog[];
  policy: Policy;
  serverInfo: { name: string; version: string; title?: string };
  instructions: string;
  /** Host names (no port) a request's `Host`/`:authority` and `Origin` may name. */
  allowedHosts: readonly string[];
  /** Further exact origins (`https://app.example.com`) allowed in `Origin`. */
  allowedOrigins?: readonly string[];
  /** Items per page of a list. Default 100. */
  pageSize?: number;
  /** Logs a bug (never a capability). */
  logError?(message: string, err: unknown): void;
}

/** How long a client may cache a list or a read (ms); reads of live figures are not cached. */
const TTL_MS = 60_000;
const MAX_COMPLETIONS = 100;
const CLIENT_ANSWER_MS = 30_000;

const NO_STORE = { 'cache-control': 'no-store' };
/** Methods that only describe the server: answered to every caller. */
const OPEN_METHODS = new Set(['initialize', 'ping', 'server/discover']);

export class McpHandler {
  readonly #o: McpOptions;
  readonly #hosts: Set<string>;
  readonly #origins: Set<string>;
  readonly #pageSize: number;
  /** Requests this server sent to clients on event streams, by id, waiting for the client's answer. */
  readonly #pending = new Map<string, { resolve(result: Record<string, unknown>): void; reject(err: Error): void }>();

  constructor(options: McpOptions) {
    this.#o = options;
    this.#hosts = new Set(options.allowedHosts.map((h) => h.toLowerCase()));
    this.#origins = new Set((options.allowedOrigins ?? []).map((o) => o.toLowerCase().replace(/\/$/, '')));
    this.#pageSize = options.pageSize ?? 100;
  }

  capabilities(lane: Lane): Record<string, unknown> {
    const caps: Record<string, unknown> = {
      tools: { listChanged: false },
      resources: { subscribe: false, listChanged: false },
      prompts: { listChanged: false },
      completions: {},
    };
    if (lane.era === 'legacy') caps.logging = {};
    return caps;
  }

  async handle(req: McpRequest): Promise<McpResponse> {
    let id: RpcId = null;
    let lane: Lane | undefined;
    try {
      this.#checkOrigin(req.headers);
      const type = String(header(req.headers, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      if (type !== 'application/json') throw new RpcError(INVALID_REQUEST, 'Content-Type must be application/json.', { status: 415 });
      const body = await req.body();
      let value: unknown;
      try {
        value = JSON.parse(body.toString('utf8'));
      } catch {
        throw new RpcError(PARSE_ERROR, 'The body is not valid JSON.', { status: 400 });
      }
      id = echoableId(value);
      const msg = parseMessage(value);
      if (msg.kind === 'response') this.#answered(value as Record<string, unknown>);
      if (msg.kind !== 'request') return { status: 202, headers: {} };
      lane = chooseLane(req.headers, msg.method, msg.params);
      const principal = this.#principal(req, msg.params);
      // With anonymous access off, a caller without a capability may only learn what the server is.
      if (!OPEN_METHODS.has(msg.method)) requirePublic(principal);
      return await this.#dispatch(msg.id, msg.method, msg.params, lane, principal, req);
    } catch (err) {
      return this.#error(id, err, lane);
    }
  }

  /** A client's answer to a request sent on an event stream: settles the waiting tool call. */
  #answered(message: Record<string, unknown>): void {
    const waiting = typeof message.id === 'string' ? this.#pending.get(message.id) : undefined;
    if (!waiting) return;
    this.#pending.delete(message.id as string);
    if (typeof message.result === 'object' && message.result !== null) waiting.resolve(message.result as Record<string, unknown>);
    else waiting.reject(new Error(`The client answered with an error: ${JSON.stringify(message.error ?? null).slice(0, 200)}`));
  }

  /** Sends a request to the client on a stream; its id is unguessable, as no session ties the answer to it. */
  #ask(write: (m: Record<string, unknown>) => void, signal: AbortSignal, method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const id = randomUUID();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => { this.#pending.delete(id); reject(new Error('The client did not answer within 30 s.')); }, CLIENT_ANSWER_MS);
      const done = () => { clearTimeout(timer); signal.removeEventListener('abort', onAbort); };
      const onAbort = () => { done(); this.#pending.delete(id); reject(new Error('The request ended.')); };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#pending.set(id, {
        resolve: (r) => { done(); resolve(r); },
        reject: (e) => { done(); reject(e); },
      });
      write({ jsonrpc: '2.0', id, method, params });
    });
  }

  // ───────────────────────────── transport checks ─────────────────────────────

  /** `Host` (or `:authority`) must name an allowed host; `Origin`, when present, too (403 otherwise). */
  #checkOrigin(headers: Headers): void {
    const authority = header(headers, ':authority') ?? header(headers, 'host');
    if (authority === undefined || !this.#hosts.has(hostOf(authority))) {
      throw new RpcError(INVALID_REQUEST, 'The Host header names a host this server does not answer for.', { status: 403 });
    }
    const origin = header(headers, 'origin');
    if (origin === undefined) return;
    let host: string;
    try {
      host = new URL(origin).hostname.replace(/^\[|\]$/g, '').toLowerCase();
    } catch {
      throw new RpcError(INVALID_REQUEST, 'The Origin header is not allowed.', { status: 403 });
    }
    if (!this.#hosts.has(host) && !this.#origins.has(origin.toLowerCase().replace(/\/$/, ''))) {
      throw new RpcError(INVALID_REQUEST, 'The Origin header is not allowed.', { status: 403 });
    }
  }

  /**
   * The caller: the headers' principal, or — when the body carries a capability (`params._cap`, the
   * `_meta` key) — the policy's answer for headers and body together (two different ones → 400). The body
   * capabilities are removed from `params` here, so nothing later can echo them.
   */
  #principal(req: McpRequest, params: Record<string, unknown>): Principal {
    const found: string[] = [];
    if ('_cap' in params) {
      if (typeof params._cap !== 'string') throw new RpcError(INVALID_PARAMS, 'params._cap must be a string.', { status: 400 });
      found.push(params._cap);
      delete params._cap;
    }
    const meta = params._meta;
    if (typeof meta === 'object' && meta !== null && CAP_META_KEY in meta) {
      const m = meta as Record<string, unknown>;
      if (typeof m[CAP_META_KEY] !== 'string') throw new RpcError(INVALID_PARAMS, `_meta["${CAP_META_KEY}"] must be a string.`, { status: 400 });
      found.push(m[CAP_META_KEY] as string);
      delete m[CAP_META_KEY];
    }
    if (found.length === 0) return req.principal;
    const principal = this.#o.policy.resolve(req.headers, found);
    req.chargeRate(principal);
    return principal;
  }

  // ───────────────────────────── dispatch ─────────────────────────────

  async #dispatch(id: string | number, method: string, params: Record<string, unknown>, lane: Lane, principal: Principal, req: McpRequest): Promise<McpResponse> {
    const modern = lane.era === 'modern';
    const ok = (result: Record<string, unknown>, cache?: 'public' | 'private', ttlMs = TTL_MS): McpResponse =>
      ({ status: 200, headers: NO_STORE, json: resultMessage(id, this.#decorate(result, lane, cache, ttlMs)) });
    switch (method) {
      case 'initialize': {
        if (modern) break;
        const asked = typeof params.protocolVersion === 'string' ? params.protocolVersion : undefined;
        const version = asked !== undefined && (LEGACY_VERSIONS as readonly string[]).includes(asked) ? asked : LEGACY_VERSIONS[0];
        return ok({ protocolVersion: version, capabilities: this.capabilities(lane), serverInfo: this.#o.serverInfo, instructions: this.#o.instructions });
      }
      case 'ping':
      case 'logging/setLevel':
        if (modern) break;
        return ok({});
      case 'server/discover':
        return ok({
          supportedVersions: [...SUPPORTED_VERSIONS],
          capabilities: this.capabilities({ ...lane, era: 'modern' }),
          instructions: this.#o.instructions,
          ...(modern ? {} : { serverInfo: this.#o.serverInfo }),
        }, 'public');
      case 'tools/list': {
        const tools = this.#tools().filter((t) => t.visible?.(principal) ?? true).map((t) => t.definition);
        const { page, nextCursor } = this.#paginate('tools', tools, params.cursor);
        return ok({ tools: page, ...(nextCursor ? { nextCursor } : {}) }, 'private');
      }
      case 'tools/call':
        return this.#callTool(id, params, lane, principal, req);
      case 'resources/list': {
        const all = this.#o.catalogs.flatMap((c) => c.resources(principal));
        const { page, nextCursor } = this.#paginate('resources', all, params.cursor);
        return ok({ resources: page, ...(nextCursor ? { nextCursor } : {}) }, 'private');
      }
      case 'resources/templates/list': {
        const all = this.#o.catalogs.flatMap((c) => c.templates);
        const { page, nextCursor } = this.#paginate('templates', all, params.cursor);
        return ok({ resourceTemplates: page, ...(nextCursor ? { nextCursor } : {}) }, 'public');
      }
      case 'resources/read': {
        const uri = params.uri;
        if (typeof uri !== 'string' || uri === '') throw new RpcError(INVALID_PARAMS, 'params.uri must be a non-empty string.');
        return ok({ contents: await this.#read(uri, principal, lane) }, 'private', uri.startsWith('quarry://maturity/') ? 0 : TTL_MS);
      }
      case 'prompts/list': {
        const all = this.#o.catalogs.flatMap((c) => c.prompts.map((p) => p.definition));
        const { page, nextCursor } = this.#paginate('prompts', all, params.cursor);
        return ok({ prompts: page, ...(nextCursor ? { nextCursor } : {}) }, 'public');
      }
      case 'prompts/get':
        return ok(this.#getPrompt(params, principal));
      case 'completion/complete':
        return ok({ completion: await this.#complete(params, principal) });
      default: {
        const extra = this.#o.catalogs.find((c) => c.methods?.[method])?.methods?.[method];
        if (extra && !modern) return ok(extra(params));
        break;
      }
    }
    throw new RpcError(METHOD_NOT_FOUND, `Method not found: ${method.slice(0, 100)}`, { status: modern ? 404 : 200 });
  }

  /** 2026-07-28 results: `resultType`, the server's identity, and cache hints on lists and reads. */
  #decorate(result: Record<string, unknown>, lane: Lane, cache: 'public' | 'private' | undefined, ttlMs: number): Record<string, unknown> {
    if (lane.era !== 'modern') return result;
    const out: Record<string, unknown> = { resultType: 'complete', ...result };
    if (cache !== undefined) {
      out.ttlMs = ttlMs;
      out.cacheScope = cache;
    }
    out._meta = { [META.serverInfo]: this.#o.serverInfo };
    return out;
  }

  #tools(): Tool[] {
    return this.#o.catalogs.flatMap((c) => c.tools);
  }

  async #callTool(id: string | number, params: Record<string, unknown>, lane: Lane, principal: Principal, req: McpRequest): Promise<McpResponse> {
    const name = params.name;
    if (typeof name !== 'string') throw new RpcError(INVALID_PARAMS, 'params.name must be a string.');
    const tool = this.#tools().find((t) => t.definition.name === name);
    if (!tool) throw new RpcError(INVALID_PARAMS, `Unknown tool: ${name.slice(0, 128)}`);
    if (lane.era === 'modern' && tool.requires) {
      const missing = tool.requires.filter((c) => !(c in lane.clientCapabilities));
      if (missing.length > 0) {
        throw new RpcError(MISSING_CLIENT_CAPABILITY, `This tool needs the client capabilities ${missing.join(', ')}.`, {
          status: 400, data: { requiredCapabilities: Object.fromEntries(missing.map((c) => [c, {}])) },
        });
      }
    }
    const rawArgs = params.arguments ?? {};
    const meta = params._meta as Record<string, unknown> | undefined;
    const token = meta?.progressToken;
    const progressToken = typeof token === 'string' || (typeof token === 'number' && Number.isFinite(token)) ? token : undefined;
    if (typeof rawArgs !== 'object' || rawArgs === null || Array.isArray(rawArgs)) {
      return { status: 200, headers: NO_STORE, json: resultMessage(id, this.#decorate({ ...errorResult('arguments must be an object.') }, lane, undefined, 0)) };
    }
    const args = rawArgs as Record<string, unknown>;
    const accept = String(header(req.headers, 'accept') ?? '');
    const streams = (tool.streams?.(args, { progressToken, lane }) ?? false) && accept.includes('text/event-stream');
    const run = async (write?: (m: Record<string, unknown>) => void): Promise<ToolResult | InputRequired> => {
      const notify = (m: string, p: Record<string, unknown>) => write?.({ jsonrpc: '2.0', method: m, params: p });
      const request = write && lane.era === 'legacy'
        ? (m: string, p: Record<string, unknown>) => this.#ask(write, req.signal, m, p) : undefined;
      try {
        return await tool.call(args, { principal, lane, signal: req.signal, progressToken, notify, ...(request ? { request } : {}), meta: meta ?? {}, retry: retryInput(params) });
      } catch (err) {
        if (isRefusal(err) || err instanceof RpcError) throw err;
        const e = asQuarryError(err);
        if (e.code === 'internal') this.#o.logError?.(`quarry: internal error in MCP tool ${name}`, err);
        return errorResult(toJson(errorBody(e)));
      }
    };
    if (!streams) {
      const result = await run();
      return { status: 200, headers: NO_STORE, json: resultMessage(id, this.#decorate({ ...result }, lane, undefined, 0)) };
    }
    return {
      status: 200,
      headers: { 'cache-control': 'no-cache', 'x-accel-buffering': 'no' },
      stream: async (write) => {
        let message: Record<string, unknown>;
        try {
          const result = await run(write);
          message = resultMessage(id, this.#decorate({ ...result }, lane, undefined, 0));
        } catch (err) {
          message = errorMessage(id, this.#toRpc(err, lane));
        }
        write(message);
      },
    };
  }

  async #read(uri: string, principal: Principal, lane: Lane): Promise<ResourceContents[]> {
    for (const c of this.#o.catalogs) {
      let contents: ResourceContents[] | undefined;
      try {
        contents = await c.read(uri, principal);
      } catch (err) {
        if (isRefusal(err) || !QuarryError.is(err)) throw err;
        if (err.code === 'not_found') break;
        throw new RpcError(INVALID_PARAMS, err.message, { data: { uri } });
      }
      if (contents !== undefined && contents.length > 0) return contents;
    }
    throw new RpcError(lane.era === 'modern' ? INVALID_PARAMS : RESOURCE_NOT_FOUND_LEGACY, `Resource not found: ${uri.slice(0, 200)}`, { data: { uri } });
  }

  #getPrompt(params: Record<string, unknown>, principal: Principal): Record<string, unknown> {
    const name = params.name;
    if (typeof name !== 'string') throw new RpcError(INVALID_PARAMS, 'params.name must be a string.');
    const prompt = this.#o.catalogs.flatMap((c) => c.prompts).find((p) => p.definition.name === name);
    if (!prompt) throw new RpcError(INVALID_PARAMS, `Unknown prompt: ${name.slice(0, 128)}`);
    const args = stringMap(params.arguments, 'arguments');
    for (const a of prompt.definition.arguments ?? []) {
      if (a.required && (args[a.name] === undefined || args[a.name] === '')) throw new RpcError(INVALID_PARAMS, `The argument ${a.name} is required.`);
    }
    try {
      return { ...prompt.get(args, principal, retryInput(params)) };
    } catch (err) {
      if (isRefusal(err) || !QuarryError.is(err)) throw err;
      throw new RpcError(INVALID_PARAMS, err.message);
    }
  }

  async #complete(params: Record<string, unknown>, principal: Principal): Promise<Record<string, unknown>> {
    const ref = params.ref as Record<string, unknown> | undefined;
    const arg = params.argument as Record<string, unknown> | undefined;
    if (typeof ref !== 'object' || ref === null || typeof arg !== 'object' || arg === null || typeof arg.name !== 'string' || typeof arg.value !== 'string') {
      throw new RpcError(INVALID_PARAMS, 'params.ref and params.argument {name, value} are required.');
    }
    let r: CompletionRef;
    if (ref.type === 'ref/prompt' && typeof ref.name === 'string') r = { type: 'ref/prompt', name: ref.name };
    else if (ref.type === 'ref/resource' && typeof ref.uri === 'string') r = { type: 'ref/resource', uri: ref.uri };
    else throw new RpcError(INVALID_PARAMS, 'params.ref must be {type: "ref/prompt", name} or {type: "ref/resource", uri}.');
    const context = stringMap((params.context as Record<string, unknown> | undefined)?.arguments, 'context.arguments');
    for (const c of this.#o.catalogs) {
      const values = await c.complete?.(r, { name: arg.name, value: arg.value }, context, principal);
      if (values !== undefined) {
        return { values: values.slice(0, MAX_COMPLETIONS), total: values.length, hasMore: values.length > MAX_COMPLETIONS };
      }
    }
    throw new RpcError(INVALID_PARAMS, r.type === 'ref/prompt' ? `Unknown prompt: ${r.name.slice(0, 128)}` : `Unknown resource template: ${r.uri.slice(0, 200)}`);
  }

  /** One page of `items` from an opaque cursor (base64url JSON naming the list and the offset). */
  #paginate<T>(list: string, items: T[], cursor: unknown): { page: T[]; nextCursor?: string } {
    let offset = 0;
    if (cursor !== undefined) {
      let parsed: unknown;
      try {
        parsed = typeof cursor === 'string' ? JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) : undefined;
      } catch { parsed = undefined; }
      const p = parsed as { l?: unknown; o?: unknown } | undefined;
      if (!p || p.l !== list || typeof p.o !== 'number' || !Number.isSafeInteger(p.o) || p.o < 0) {
        throw new RpcError(INVALID_PARAMS, 'Invalid cursor.');
      }
      offset = p.o;
    }
    const page = items.slice(offset, offset + this.#pageSize);
    const next = offset + this.#pageSize;
    return next < items.length ? { page, nextCursor: Buffer.from(JSON.stringify({ l: list, o: next })).toString('base64url') } : { page };
  }

  // ───────────────────────────── errors ─────────────────────────────

  #error(id: RpcId, err: unknown, lane: Lane | undefined): McpResponse {
    const rpc = this.#toRpc(err, lane);
    return { status: rpc.status, headers: { ...NO_STORE, ...rpc.headers }, json: errorMessage(id, rpc) };
  }

  #toRpc(err: unknown, lane: Lane | undefined): RpcError {
    if (err instanceof RpcError) return err;
    const e = asQuarryError(err);
    const { status, headers } = httpError(e);
    switch (e.code) {
      case 'unauthenticated':
        return new RpcError(UNAUTHORIZED, e.message, { status, headers: { 'www-authenticate': 'Bearer realm="quarry", error="invalid_token"' } });
      case 'forbidden':
        // No challenge: this is not an OAuth resource server, and a client cannot step up a capability.
        return new RpcError(FORBIDDEN, e.message, { status });
      case 'rate_limited':
        return new RpcError(RATE_LIMITED, e.message, { status, headers });
      case 'unavailable':
        return new RpcError(UNAVAILABLE, e.message, { status, headers });
      case 'payload_too_large':
      case 'unsupported_media_type':
      case 'method_not_allowed':
        return new RpcError(INVALID_REQUEST, e.message, { status, headers });
      case 'bad_request':
        // The policy's "two different capabilities" and malformed bodies: the request as a whole is refused.
        return new RpcError(INVALID_REQUEST, e.message, { status: 400 });
      case 'internal':
        this.#o.logError?.(`quarry: internal error on POST /mcp (${lane?.era ?? 'no'} era)`, err);
        return new RpcError(INTERNAL_ERROR, errorBody(e).error.message, { status: 500 });
      default:
        return new RpcError(INVALID_PARAMS, e.message);
    }
  }
}

/** Errors that refuse the caller rather than the input: they travel as HTTP statuses, not tool results. */
function isRefusal(err: unknown): boolean {
  return QuarryError.is(err) && (err.code === 'unauthenticated' || err.code === 'forbidden' || err.code === 'rate_limited');
}

/** The multi-round fields of a retried request (2026-07-28), when well-formed. */
function retryInput(params: Record<string, unknown>): RetryInput {
  const out: RetryInput = {};
  const r = params.inputResponses;
  if (typeof r === 'object' && r !== null && !Array.isArray(r)) out.inputResponses = r as Record<string, unknown>;
  if (typeof params.requestState === 'string') out.requestState = params.requestState;
  return out;
}

function errorResult(text: string): ToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

function stringMap(value: unknown, where: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new RpcError(INVALID_PARAMS, `${where} must be an object of strings.`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string') throw new RpcError(INVALID_PARAMS, `${where}.${k.slice(0, 64)} must be a string.`);
    out[k] = v;
  }
  return out;
}

/** The host name of a `Host`/`:authority` value, lower-cased, without port or IPv6 brackets. */
function hostOf(authority: string): string {
  const a = authority.trim().toLowerCase();
  if (a.startsWith('[')) return a.slice(1, a.indexOf(']') < 0 ? undefined : a.indexOf(']'));
  const colon = a.lastIndexOf(':');
  return colon < 0 ? a : a.slice(0, colon);
}
