/**
 * An HTTPS client for tests that trusts exactly the test server's certificate and checks every response
 * it receives against the server's own OpenAPI document (CONTRACT §9), with ajv (JSON Schema 2020-12).
 *
 *   import { connect } from '../support/client.js';
 *   const api = connect(srv);                         // srv from startServer(): { url, ca }
 *   const r = await api.get('/api/search?q=x');       // HTTP/2 by default; { protocol: 'h1' } for HTTP/1.1
 *   r.status; r.headers['retry-after']; r.json; r.text; r.body (Buffer)
 *   await api.post('/api/build', { target: 'sites' }, { headers: { authorization: `Bearer ${cap}` } });
 *   await api.request('DELETE', '/api/trusted?cid=1');
 *   api.close();                                      // closes the HTTP/2 session
 *
 * Validation: the response must be described in the document — path, method and status (the `default`
 * response counts) — and a JSON body must match its schema; a response to a path or method the document
 * does not list (404, 405) must match the shared `Error` schema. Every JSON body must carry `v: 1`
 * except the OpenAPI document itself. A mismatch fails the test with the ajv errors. Pass
 * `{ validate: false }` to a call (or to `connect`) for the rare test that sends deliberate garbage the
 * document cannot describe. The document is fetched once per server URL from `/api/openapi.json`.
 *
 * Also exported: `rawRequest(target, method, path, body, { headers, protocol, session })` — one request,
 * no validation, the path sent verbatim (for malformed input); `OpenApiResponseValidator` — the checker
 * itself, for a document you already hold (`new OpenApiResponseValidator(doc).check(method, path, res)`).
 */
import http2 from 'node:http2';
import https from 'node:https';
import assert from 'node:assert/strict';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS with a default export; under ESM interop it may arrive wrapped.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (a: Ajv2020) => Ajv2020;

export type Protocol = 'h1' | 'h2';

export interface RequestOptions {
  headers?: Record<string, string>;
  protocol?: Protocol;
  /** Check this response against the OpenAPI document (default: the client's setting, true). */
  validate?: boolean;
  /** Abort the request (e.g. a stream) after this many ms; rejects with the abort error. */
  timeoutMs?: number;
}

export interface TestResponse {
  status: number;
  /** Lower-case names; HTTP/2 pseudo-headers removed. */
  headers: Record<string, string>;
  body: Buffer;
  text: string;
  /** The parsed body when the content type is JSON, else undefined. */
  json: any;
  protocol: Protocol;
}

export interface TestClient {
  request(method: string, path: string, body?: unknown, options?: RequestOptions): Promise<TestResponse>;
  get(path: string, options?: RequestOptions): Promise<TestResponse>;
  post(path: string, body?: unknown, options?: RequestOptions): Promise<TestResponse>;
  /** The server's OpenAPI document (fetched and cached). */
  openapi(): Promise<Record<string, any>>;
  close(): void;
}

export interface ConnectOptions {
  protocol?: Protocol;
  validate?: boolean;
  headers?: Record<string, string>;
}

/** Raw request without validation: Buffer or string bodies go as is; objects are sent as JSON. */
export async function rawRequest(
  target: { url: string; ca: Buffer | string },
  method: string,
  path: string,
  body: unknown,
  options: { headers?: Record<string, string>; protocol?: Protocol; session?: http2.ClientHttp2Session; timeoutMs?: number } = {},
): Promise<TestResponse> {
  const headers: Record<string, string> = { ...options.headers };
  let payload: Buffer | undefined;
  if (body !== undefined) {
    if (Buffer.isBuffer(body) || typeof body === 'string') payload = Buffer.from(body);
    else {
      payload = Buffer.from(JSON.stringify(body));
      headers['content-type'] ??= 'application/json';
    }
  }
  const protocol = options.protocol ?? 'h2';
  const signal = options.timeoutMs ? AbortSignal.timeout(options.timeoutMs) : undefined;
  if (protocol === 'h1') {
    const base = new URL(target.url);
    return new Promise((resolve, reject) => {
      // hostname/port/path rather than a URL, so a path such as `//x` goes out exactly as written.
      const req = https.request({
        hostname: base.hostname, port: base.port, path, servername: base.hostname === '127.0.0.1' ? undefined : base.hostname,
        method, ca: target.ca, headers: { ...headers, ...(payload ? { 'content-length': String(payload.length) } : {}) },
        agent: false, ALPNProtocols: ['http/1.1'], signal,
      } as https.RequestOptions, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => resolve(finish(res.statusCode ?? 0, res.headers as Record<string, unknown>, Buffer.concat(chunks), 'h1')));
      });
      req.on('error', reject);
      req.end(payload);
    });
  }
  const own = options.session === undefined;
  const session = options.session ?? http2.connect(target.url, { ca: target.ca });
  try {
    return await new Promise<TestResponse>((resolve, reject) => {
      session.once('error', reject);
      const stream = session.request({ ':method': method, ':path': path, ...headers }, { endStream: payload === undefined, signal } as http2.ClientSessionRequestOptions);
      let status = 0;
      let resHeaders: Record<string, unknown> = {};
      const chunks: Buffer[] = [];
      stream.on('response', (h) => { status = Number(h[':status']); resHeaders = h as Record<string, unknown>; });
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('error', reject);
      stream.on('end', () => {
        session.off('error', reject);
        resolve(finish(status, resHeaders, Buffer.concat(chunks), 'h2'));
      });
      if (payload !== undefined) stream.end(payload);
    });
  } finally {
    if (own) session.close();
  }
}

function finish(status: number, raw: Record<string, unknown>, body: Buffer, protocol: Protocol): TestResponse {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (k.startsWith(':') || v === undefined) continue;
    headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v);
  }
  const text = body.toString('utf8');
  let json: unknown;
  if (/^application\/([a-z.+-]*\+)?json/i.test(headers['content-type'] ?? '')) {
    try { json = JSON.parse(text); } catch { json = undefined; }
  }
  return { status, headers, body, text, json, protocol };
}

/** Compiles response validators from an OpenAPI 3.1 document. */
export class OpenApiResponseValidator {
  readonly #ajv: Ajv2020;
  readonly #doc: Record<string, any>;
  readonly #paths: { re: RegExp; template: string }[];
  readonly #cache = new Map<string, ValidateFunction>();

  constructor(doc: Record<string, any>) {
    this.#doc = doc;
    this.#ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(this.#ajv);
    this.#ajv.addSchema(doc, 'openapi.json');
    this.#paths = Object.keys(doc.paths ?? {}).map((template) => ({
      template,
      re: new RegExp('^' + template.split('/').map((s) => (/^\{.+\}$/.test(s) ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/') + '$'),
    }));
  }

  /** The validator of the schema at this JSON pointer of the document (throws on a dangling $ref). */
  compile(pointer: string): ValidateFunction {
    return this.#validator(pointer);
  }

  #validator(pointer: string): ValidateFunction {
    let v = this.#cache.get(pointer);
    if (!v) {
      v = this.#ajv.compile({ $ref: `openapi.json#${pointer}` });
      this.#cache.set(pointer, v);
    }
    return v;
  }

  /** Throws an AssertionError describing how the response departs from the document. */
  check(method: string, path: string, res: TestResponse): void {
    const where = `${method} ${path} → ${res.status}`;
    const pathOnly = path.split('?')[0]!;
    const isJson = res.json !== undefined;
    if (isJson && pathOnly !== '/api/openapi.json') {
      assert.equal(res.json?.v, 1, `${where}: JSON body lacks "v": 1: ${res.text.slice(0, 300)}`);
    }
    if (method === 'HEAD') return;
    const entry = this.#paths.find((p) => p.re.test(pathOnly));
    const op = entry ? this.#doc.paths[entry.template]?.[method.toLowerCase()] : undefined;
    if (!op) {
      assert.ok([400, 401, 404, 405, 429, 431, 503].includes(res.status),
        `${where}: the OpenAPI document does not describe ${method} ${pathOnly}`);
      this.#checkBody(where, '/components/schemas/Error', res);
      return;
    }
    const esc = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
    const statusKey = op.responses?.[String(res.status)] ? String(res.status) : op.responses?.default ? 'default' : undefined;
    assert.ok(statusKey, `${where}: status ${res.status} is not documented for ${method} ${entry!.template}`);
    let response = op.responses[statusKey!];
    let base = `/paths/${esc(entry!.template)}/${method.toLowerCase()}/responses/${statusKey}`;
    if (response.$ref) {
      base = String(response.$ref).replace(/^#/, '');
      response = base.split('/').slice(1).reduce((o: any, k) => o?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], this.#doc);
    }
    const content = response?.content as Record<string, any> | undefined;
    if (!content) {
      assert.ok(res.body.length === 0 || !isJson, `${where}: a body was sent where the document describes none`);
      return;
    }
    const type = (res.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    const mediaKey = Object.keys(content).find((k) => k.toLowerCase() === type)
      ?? Object.keys(content).find((k) => k.endsWith('/*') && type.startsWith(k.slice(0, -1)))
      ?? Object.keys(content).find((k) => k === '*/*');
    assert.ok(mediaKey, `${where}: content type ${type} is not documented (documented: ${Object.keys(content).join(', ')})`);
    if (isJson && content[mediaKey!].schema) this.#checkBody(where, `${base}/content/${esc(mediaKey!)}/schema`, res);
  }

  #checkBody(where: string, pointer: string, res: TestResponse): void {
    if (res.json === undefined) {
      assert.fail(`${where}: expected a JSON body, got ${res.headers['content-type']}: ${res.text.slice(0, 200)}`);
    }
    const v = this.#validator(pointer);
    if (!v(res.json)) {
      assert.fail(`${where}: body does not match ${pointer}: ${this.#ajv.errorsText(v.errors)}\n${res.text.slice(0, 500)}`);
    }
  }
}

/** Validators per server URL, so many clients of one server compile the document once. */
const validators = new Map<string, Promise<OpenApiResponseValidator>>();

export function connect(target: { url: string; ca: Buffer | string }, options: ConnectOptions = {}): TestClient {
  let session: http2.ClientHttp2Session | undefined;
  const h2 = () => {
    if (!session || session.closed || session.destroyed) {
      session = http2.connect(target.url, { ca: target.ca });
      session.on('error', () => { /* surfaced on the request */ });
    }
    return session;
  };
  const validator = (): Promise<OpenApiResponseValidator> => {
    let v = validators.get(target.url);
    if (!v) {
      v = rawRequest(target, 'GET', '/api/openapi.json', undefined).then((r) => {
        assert.equal(r.status, 200, `GET /api/openapi.json → ${r.status}`);
        return new OpenApiResponseValidator(r.json as Record<string, any>);
      });
      validators.set(target.url, v);
      v.catch(() => validators.delete(target.url));
    }
    return v;
  };

  async function request(method: string, path: string, body?: unknown, o: RequestOptions = {}): Promise<TestResponse> {
    const protocol = o.protocol ?? options.protocol ?? 'h2';
    const res = await rawRequest(target, method, path, body, {
      headers: { ...options.headers, ...o.headers }, protocol,
      ...(protocol === 'h2' ? { session: h2() } : {}),
      ...(o.timeoutMs ? { timeoutMs: o.timeoutMs } : {}),
    });
    if (o.validate ?? options.validate ?? true) (await validator()).check(method, path, res);
    return res;
  }

  return {
    request,
    get: (path, o) => request('GET', path, undefined, o),
    post: (path, body, o) => request('POST', path, body, o),
    openapi: async () => {
      const r = await rawRequest(target, 'GET', '/api/openapi.json', undefined);
      return r.json as Record<string, any>;
    },
    close: () => { session?.close(); },
  };
}
