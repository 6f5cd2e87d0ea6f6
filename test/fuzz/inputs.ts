/**
 * The kinds of input the fuzz suite generates, each a function from a seeded `Random` to one request (or
 * connection) and its outcome. `KINDS` is the registry the runner draws from, by weight: a new face adds a
 * kind here and nothing else changes (the binary RPC's and the agent surface's are the last two).
 */
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { attenuateOffline } from '../../src/auth/capability.js';
import { rawTar, gzipBomb } from '../control/tarball.js';
import type { Random } from './random.js';
import { checkAnswer, h1Raw, rawConnection, type H2Pool, type HttpAnswer, type Outcome, type Server } from './transport.js';

/** What the kinds know about the server under test. */
export interface FuzzTarget extends Server {
  h2: H2Pool;
  /** A capability holding every right (so bodies reach the handlers, not only the rights check). */
  cap: string;
  /** GET paths from the server's OpenAPI document, `{param}` templates left in (long-lived ones removed). */
  getPaths: string[];
  /** POST paths from the OpenAPI document, with the property names of their JSON request bodies. */
  postPaths: { path: string; properties: string[] }[];
  /** Names from the allowlist, and some that are not. */
  targets: string[];
  deadlineMs: number;
}

export interface Kind {
  name: string;
  weight: number;
  run(r: Random, t: FuzzTarget): Promise<Outcome>;
}

const MiB = 1024 * 1024;

function outcomeOf(answers: (HttpAnswer | { reset: number } | { refused: string })[], method: string): Outcome {
  const out: Outcome = { statuses: [], problems: [] };
  for (const a of answers) {
    if ('status' in a) {
      out.statuses.push(a.status);
      out.problems.push(...checkAnswer(a, method));
    } else if ('reset' in a) {
      out.statuses.push(0);
    } else {
      out.statuses.push(-2);
    }
  }
  return out;
}

function authHeaders(r: Random, t: FuzzTarget): Record<string, string> {
  return r.chance(0.8) ? { authorization: `Bearer ${t.cap}` } : {};
}

/** Percent-encodes the UTF-8 of `s` (lone surrogates become U+FFFD, as any client would send them). */
function pct(s: string): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9_.~-]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** A query-string value: hostile text, percent-encoded or (sometimes) left raw where that is legal. */
function param(r: Random): string {
  const v = r.weighted<() => string>([
    [4, () => r.text(6)], [2, () => r.pick(['0', '1', '19', '499', '500', '-1', '1e3', '0x10', '٣', '9223372036854775807', '9223372036854775808', '00'])],
    [1, () => String(r.int(2 ** 31))], [1, () => 'a'.repeat(r.size(3000))],
  ])();
  return pct(v).replace(/%20/g, r.chance(0.5) ? '+' : '%20');
}

/** Search, suggest and doc with hostile `q`, `scope`, `page`, `cid`: the query language's parser. */
const queryLanguage: Kind = {
  name: 'query',
  weight: 30,
  async run(r, t) {
    const path = r.pick(['/api/search', '/api/search', '/api/suggest', '/api/doc']);
    const parts: string[] = [];
    if (path === '/api/doc') parts.push(`cid=${param(r)}`);
    else if (r.chance(0.95)) parts.push(`q=${r.chance(0.7) ? pct(queryText(r)) : param(r)}`);
    if (r.chance(0.4)) parts.push(`scope=${r.chance(0.7) ? r.pick(['own', 'web', 'trusted', '', 'WEB']) : param(r)}`);
    if (r.chance(0.3)) parts.push(`page=${r.chance(0.5) ? String(r.int(600)) : param(r)}`);
    if (r.chance(0.1)) parts.push(`${r.token()}=${param(r)}`);
    if (r.chance(0.05)) parts.push(...parts);
    const method = r.chance(0.9) ? 'GET' : 'HEAD';
    return outcomeOf([await t.h2.request(method, `${path}?${parts.join('&')}`, {}, undefined, t.deadlineMs)], method);
  },
};

/** Text shaped like the query language: operators, phrases, `site:`, stray quotes, many clauses. */
function queryText(r: Random): string {
  const n = r.size(80);
  const clauses: string[] = [];
  for (let i = 0; i < n; i++) {
    const prefix = r.pick(['', '', '+', '-', '++', '+-']);
    const body = r.weighted<() => string>([
      [5, () => r.pick(['granite', 'elephant', 'elephnt', 'quick', 'brown', 'fox', 'the', 'a', r.text(1)])],
      [2, () => `"${r.text(3)}${r.chance(0.8) ? '"' : ''}`],
      [2, () => `site:${r.pick(['example.com', 'docs.example.com', '.com', '', 'xn--', r.text(1)])}`],
      [1, () => r.text(2)],
    ])();
    clauses.push(prefix + body);
  }
  return clauses.join(r.pick([' ', '  ', '\t', '\u3000', '']));
}

/** GET endpoints from the OpenAPI document with hostile path parameters, query strings, methods and headers. */
const endpoints: Kind = {
  name: 'endpoint',
  weight: 12,
  async run(r, t) {
    let path = r.pick(t.getPaths).replace(/\{[^}]+\}/g, () => (r.chance(0.5) ? pct(r.text(2)) || 'x' : r.token()));
    if (r.chance(0.3)) path += `?${param(r)}=${param(r)}&page=${param(r)}&target=${pct(r.pick(t.targets))}`;
    if (r.chance(0.1)) path = r.pick(['//', '/./', '/../', '/%2e%2e/', '/api/%ZZ', '/api//', '/API/']) + path.slice(1);
    const method = r.weighted([[8, 'GET'], [1, 'HEAD'], [1, 'DELETE'], [1, 'PUT'], [1, 'OPTIONS'], [1, 'PATCH'], [1, r.token(8).toUpperCase()]] as const);
    const headers: Record<string, string> = authHeaders(r, t);
    if (r.chance(0.3)) headers['last-event-id'] = r.text(2);
    if (r.chance(0.2)) headers['accept'] = r.text(3);
    if (r.chance(0.2)) headers[`x-${r.token(8).toLowerCase()}`] = r.text(4);
    const body = method === 'GET' || method === 'HEAD' ? undefined : r.chance(0.5) ? r.bytes(r.size(2000)) : undefined;
    return outcomeOf([await t.h2.request(method, path, headers, body, t.deadlineMs)], method);
  },
};

/** JSON (and not-quite-JSON) bodies for every POST endpoint, with the right capability most of the time. */
const jsonBodies: Kind = {
  name: 'json-body',
  weight: 25,
  async run(r, t) {
    const { path, properties } = r.pick(t.postPaths);
    let value: unknown;
    if (r.chance(0.6) && properties.length > 0) {
      const o: Record<string, unknown> = {};
      for (const p of properties) if (r.chance(0.6)) o[p] = fieldValue(r, p, t);
      if (r.chance(0.2)) o[r.pick([...properties, '__proto__', 'constructor', r.text(1)])] = r.json(2);
      value = o;
    } else {
      value = r.json(4);
    }
    let body: Buffer = Buffer.from(JSON.stringify(value) ?? 'null');
    if (r.chance(0.1)) body = r.mutate(body);
    if (r.chance(0.03)) body = Buffer.from(`[${'['.repeat(r.size(5000))}`);
    if (r.chance(0.02)) body = Buffer.alloc(r.size(2 * MiB), 0x20);
    const headers: Record<string, string> = {
      ...authHeaders(r, t),
      'content-type': r.weighted([[10, 'application/json'], [1, 'application/json; charset=latin1'], [1, 'text/plain'], [1, 'application/x+json'], [1, r.text(2)]] as const),
    };
    if (r.chance(0.05)) delete headers['content-type'];
    if (r.chance(0.05)) headers['idempotency-key'] = r.text(3);
    const query = path === '/api/upload' && r.chance(0.3) ? `?target=${pct(r.pick(t.targets))}` : '';
    return outcomeOf([await t.h2.request('POST', path + query, headers, body, t.deadlineMs)], 'POST');
  },
};

/** A value for a known body field: usually of a plausible type, never a real operation on a real target. */
function fieldValue(r: Random, name: string, t: FuzzTarget): unknown {
  switch (name) {
    case 'target': return r.chance(0.6) ? r.pick(t.targets.filter((x) => !ALLOWLISTED.has(x))) : r.json(1);
    case 'rights': return r.chance(0.6) ? Array.from({ length: r.size(6) }, () => r.pick(['search', 'mgmt.read', 'auth.admin', 'mgmt.deploy', 'nope', ''])) : r.json(1);
    case 'targets': return r.chance(0.6) ? Array.from({ length: r.size(4) }, () => r.pick(t.targets)) : r.json(1);
    case 'ttl_s': case 'expected_generation': case 'page': return r.pick([0, -1, 1, 60, 1e12, 1.5, '60', null]);
    case 'dry_run': return r.pick([true, false, 'yes', 1, null]);
    case 'cap_id': return r.pick(['cap_000000000000000000000000', `cap_${r.bytes(12).toString('hex')}.abcd`, r.text(2)]);
    default: return r.chance(0.5) ? r.text(3) : r.json(1);
  }
}

/** Names of real targets: bodies never name them, so no fuzz input builds, deploys or restarts anything. */
const ALLOWLISTED = new Set<string>();
export function setAllowlisted(names: readonly string[]): void { for (const n of names) ALLOWLISTED.add(n); }

/** Capability headers: mutated, truncated, re-caveated, doubled, in other schemes. */
const capabilities: Kind = {
  name: 'capability',
  weight: 12,
  async run(r, t) {
    const cap = (): string => r.weighted<() => string>([
      [3, () => r.mutate(Buffer.from(t.cap)).toString('latin1')],
      [2, () => t.cap.slice(0, r.int(t.cap.length))],
      [3, () => {
        const caveats = Array.from({ length: 1 + r.int(3) }, () => r.weighted<() => string>([
          [2, () => `rights = ${r.pick(['search', 'mgmt.read', 'auth.admin,search', '', 'x', r.text(1)])}`],
          [2, () => `cap-id = ${r.pick(['cap_000000000000000000000000', r.text(1)])}`],
          [1, () => `expires < ${r.pick(['2000-01-01T00:00:00Z', '2999-01-01T00:00:00Z', r.text(1)])}`],
          [1, () => `targets = ${r.text(1)}`],
          [1, () => r.text(3)],
        ])());
        return attenuateOffline(t.cap, caveats);
      }],
      [1, () => Buffer.from(r.bytes(r.size(200))).toString('base64url')],
      [1, () => r.text(3)],
      [1, () => t.cap],
    ])();
    const headers: Record<string, string> = {};
    const where = r.int(4);
    if (where === 0 || where === 2) headers['authorization'] = `${r.weighted([[8, 'Bearer'], [1, 'bearer'], [1, 'Basic'], [1, r.token(6)]] as const)}${r.pick([' ', '  ', '\t'])}${cap()}`;
    if (where === 1 || where === 2) headers['x-service-cap'] = cap();
    if (where === 3) headers['authorization'] = r.text(3);
    const path = r.pick(['/api/auth/whoami', '/api/caps', '/api/search?q=granite', '/api/deploy_status', '/api/inventory']);
    return outcomeOf([await t.h2.request('GET', path, headers, undefined, t.deadlineMs)], 'GET');
  },
};

/** Uploads: garbage, gzip of garbage, mutated and hostile tarballs, small bombs; right or wrong digest. */
const uploads: Kind = {
  name: 'upload',
  weight: 3,
  async run(r, t) {
    const good = rawTar([{ path: 'index.html', body: '<p>ok</p>' }]);
    const body = r.weighted<() => Buffer>([
      [2, () => r.bytes(r.size(20_000))],
      [2, () => gzipSync(r.bytes(r.size(20_000)))],
      [3, () => r.mutate(good, 1 + r.int(20))],
      [2, () => gzipSync(r.mutate(good, 1 + r.int(5)))],
      [2, () => rawTar([{ path: r.pick(['../x', '/etc/x', 'a/../../x', 'ok.txt', r.text(1) || 'y']), type: r.pick(['0', '1', '2', '3', '5', '6'] as const), linkpath: r.pick(['/etc/passwd', '../..', 'ok.txt', '']), body: r.bytes(r.size(2000)) }])],
      [1, () => gzipBomb(r.pick([64 * MiB, 3 * 1024 * MiB, 1024]), r.pick([MiB, 8 * MiB, 32 * MiB]))],
    ])();
    const digest = r.chance(0.8) ? `sha256:${createHash('sha256').update(body).digest('hex')}` : r.pick(['sha256:00', 'md5:x', r.text(1)]);
    const target = r.pick(t.targets);
    const path = `/api/upload?target=${pct(target)}&digest=${pct(digest)}`;
    const headers = { ...authHeaders(r, t), 'content-type': r.pick(['application/octet-stream', 'application/gzip', 'application/x-tar', 'application/json']) };
    return outcomeOf([await t.h2.request('POST', path, headers, body, t.deadlineMs)], 'POST');
  },
};

/** Raw HTTP/1.1: request lines, headers and bodies node's own client would never send. */
const http1: Kind = {
  name: 'http1-raw',
  weight: 8,
  async run(r, t) {
    const requests = 1 + (r.chance(0.2) ? r.int(3) : 0);
    let bytes: Buffer = Buffer.alloc(0);
    const methods: string[] = [];
    for (let i = 0; i < requests; i++) {
      const req = h1Request(r, t);
      methods.push(req.method);
      bytes = Buffer.concat([bytes, req.bytes]);
    }
    if (r.chance(0.3)) bytes = r.mutate(bytes, 1 + r.int(6));
    const answers = await h1Raw(t, bytes, methods, t.deadlineMs);
    const out: Outcome = { statuses: [], problems: [] };
    for (const a of answers) {
      out.statuses.push(a.status);
      if (a.status === -1) out.problems.push(`not an HTTP/1.1 response: ${JSON.stringify(a.body.toString('latin1'))}`);
      else out.problems.push(...checkAnswer(a, a.method ?? 'GET'));
    }
    return out;
  },
};

function h1Request(r: Random, t: FuzzTarget): { method: string; bytes: Buffer } {
  const method = r.weighted([[6, 'GET'], [3, 'POST'], [1, 'HEAD'], [1, 'CONNECT'], [1, 'TRACE'], [1, 'OPTIONS'], [1, 'PRI'], [1, r.token(10)], [1, r.text(1)]] as const);
  const target = method === 'CONNECT' && r.chance(0.7) ? r.pick(['host:22', '127.0.0.1:443', 'x']) : r.weighted<() => string>([
    [4, () => `/api/search?q=${param(r)}`], [2, () => r.pick(t.getPaths).replace(/\{[^}]+\}/g, 'x')], [2, () => r.pick(t.postPaths).path],
    [1, () => '*'], [1, () => `https://localhost${r.pick(t.getPaths)}`], [1, () => r.text(2)], [1, () => `/${'a/'.repeat(r.size(4000))}`],
  ])();
  const version = r.weighted([[12, 'HTTP/1.1'], [2, 'HTTP/1.0'], [1, 'HTTP/2.0'], [1, 'HTTP/1.1 x'], [1, 'HTTP/1'], [1, r.token(8)], [1, '']] as const);
  const lines = [`${method} ${target} ${version}`];
  if (r.chance(0.9)) lines.push(`Host: ${r.chance(0.9) ? 'localhost' : r.text(2)}`);
  let body = Buffer.alloc(0);
  const framing = r.weighted([[4, 'none'], [3, 'length'], [3, 'chunked'], [1, 'both'], [1, 'bad-length']] as const);
  const payload = Buffer.from(r.chance(0.6) ? JSON.stringify(r.json(2)) ?? '' : r.text(4));
  if (framing !== 'none') lines.push(`Content-Type: ${r.pick(['application/json', 'text/plain', r.text(1)])}`);
  if (framing === 'length' || framing === 'both') lines.push(`Content-Length: ${r.chance(0.8) ? payload.length : r.pick([payload.length + 10, 0, -1, 2 ** 53])}`);
  if (framing === 'bad-length') lines.push(`Content-Length: ${r.pick(['abc', '1, 2', '+5', ' 5 ', '0x10', '99999999999999999999'])}`);
  if (framing === 'chunked' || framing === 'both') lines.push(`Transfer-Encoding: ${r.pick(['chunked', 'chunked', 'gzip, chunked', 'identity', 'chunked, chunked', r.text(1)])}`);
  if (framing === 'length' || framing === 'both' || framing === 'bad-length') body = payload;
  if (framing === 'chunked') {
    const size = r.weighted([[6, payload.length.toString(16)], [1, 'zz'], [1, '-1'], [1, 'ffffffffffffffff'], [1, `${payload.length.toString(16)};ext=${r.text(1)}`], [1, '']] as const);
    body = Buffer.concat([Buffer.from(`${size}\r\n`), payload, Buffer.from(r.chance(0.8) ? '\r\n0\r\n\r\n' : '\r\n')]);
  }
  const extra = r.size(6);
  for (let i = 0; i < extra; i++) {
    lines.push(r.weighted<() => string>([
      [3, () => `X-${r.token()}: ${r.text(3)}`], [1, () => `${r.text(1)}: x`], [1, () => ` folded: ${r.text(1)}`],
      [1, () => `Authorization: Bearer ${r.chance(0.5) ? t.cap : r.token(40)}`], [1, () => `X-Service-Cap: ${t.cap}`],
      [1, () => `X-Big: ${'b'.repeat(r.size(40_000))}`], [1, () => 'Connection: keep-alive'], [1, () => `Expect: ${r.pick(['100-continue', 'x'])}`],
      [1, () => `Upgrade: ${r.pick(['h2c', 'websocket', r.token()])}`], [1, () => 'Content-Length: 3'], [1, () => `Host: ${r.token()}`],
    ])());
  }
  const eol = r.chance(0.95) ? '\r\n' : r.pick(['\n', '\r', '\n\r']);
  return { method, bytes: Buffer.concat([Buffer.from(lines.join(eol) + eol + eol, 'utf8'), body]) };
}

/** Raw HTTP/2 frames after the connection preface (sometimes a broken one): nghttp2's parser. */
const http2Frames: Kind = {
  name: 'http2-frames',
  weight: 3,
  async run(r, t) {
    const parts: Buffer[] = [Buffer.from(r.chance(0.9) ? 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n' : r.text(2))];
    parts.push(frame(4, 0, 0, r.chance(0.8) ? Buffer.alloc(0) : r.bytes(6 * r.int(4))));
    const n = 1 + r.int(6);
    for (let i = 0; i < n; i++) {
      const type = r.weighted([[3, 1], [2, 0], [1, 2], [1, 3], [1, 4], [1, 5], [1, 6], [1, 7], [1, 8], [2, 9], [1, r.int(256)]] as const);
      const stream = r.pick([0, 1, 1, 3, 2, 2 ** 31 - 1, r.int(2 ** 31)]);
      const payload = type === 1 && r.chance(0.6) ? headerBlock(r) : r.bytes(r.size(r.chance(0.05) ? 70_000 : 300));
      parts.push(frame(type, r.int(256), stream, payload));
    }
    let bytes: Buffer = Buffer.concat(parts);
    if (r.chance(0.2)) bytes = r.mutate(bytes);
    await rawConnection(t, bytes, { tls: true, alpn: ['h2'] });
    return { statuses: [], problems: [] };
  },
};

function frame(type: number, flags: number, stream: number, payload: Buffer): Buffer {
  const h = Buffer.alloc(9);
  h.writeUIntBE(Math.min(payload.length, 0xffffff), 0, 3);
  h[3] = type;
  h[4] = flags;
  h.writeUInt32BE(stream >>> 0, 5);
  return Buffer.concat([h, payload]);
}

/** An HPACK block of literal fields (no indexing, no Huffman): a plausible request, or not. */
function headerBlock(r: Random): Buffer {
  const fields: [string, string][] = [[':method', r.pick(['GET', 'POST', 'CONNECT', ''])], [':path', r.pick(['/api/search?q=a', '', '*', r.text(1)])], [':scheme', 'https'], [':authority', 'localhost']];
  if (r.chance(0.3)) fields.push([r.pick([':status', ':path', 'connection', 'te', 'Upper', r.text(1)]), r.text(2)]);
  if (r.chance(0.1)) fields.push(['x-big', 'z'.repeat(r.size(200_000))]);
  const parts: Buffer[] = [];
  for (const [name, value] of fields) {
    const n = Buffer.from(name);
    const v = Buffer.from(value);
    parts.push(Buffer.of(0), hpackInt(n.length, 7), n, hpackInt(v.length, 7), v);
  }
  return Buffer.concat(parts);
}

function hpackInt(value: number, prefixBits: number): Buffer {
  const max = (1 << prefixBits) - 1;
  if (value < max) return Buffer.of(value);
  const out = [max];
  let v = value - max;
  while (v >= 128) { out.push((v % 128) + 128); v = Math.floor(v / 128); }
  out.push(v);
  return Buffer.from(out);
}

/** Raw TLS: garbage on the port, old protocol versions, odd ALPN, garbage after the handshake. */
const tlsRaw: Kind = {
  name: 'tls-raw',
  weight: 2,
  async run(r, t) {
    const choice = r.int(4);
    if (choice === 0) {
      // Not TLS at all, or a record header with garbage behind it.
      const bytes = r.chance(0.5) ? r.bytes(r.size(3000)) : Buffer.concat([Buffer.of(0x16, 0x03, r.int(5), r.int(256), r.int(256)), r.bytes(r.size(600))]);
      await rawConnection(t, bytes, { tls: false });
    } else if (choice === 1) {
      // TLS 1.2 and older are refused at the handshake.
      await rawConnection(t, Buffer.from('GET / HTTP/1.1\r\n\r\n'), { tls: true, maxVersion: 'TLSv1.2' });
    } else {
      // A good handshake with odd ALPN, then garbage or a truncated request.
      const alpn = r.pick([['h2'], ['http/1.1'], ['h3', 'spdy/3'], [r.token(10)], ['h2', 'http/1.1']]);
      const bytes = r.chance(0.5) ? r.bytes(r.size(2000)) : Buffer.from(`GET /api/search?q=${param(r)} HTTP/1.1\r\nHost: x`.slice(0, r.int(60)));
      await rawConnection(t, bytes, { tls: true, alpn });
    }
    return { statuses: [], problems: [] };
  },
};

/** Procedures of quarry.v1 (as written on the Connect path), and some that are not. */
const PROCEDURES = [
  'quarry.v1.SearchService/Search', 'quarry.v1.SearchService/GetDoc', 'quarry.v1.SearchService/Suggest',
  'quarry.v1.ControlService/GetDeployStatus', 'quarry.v1.ControlService/GetInventory', 'quarry.v1.ControlService/GetOperation',
  'quarry.v1.ControlService/Build', 'quarry.v1.ControlService/Reconcile', 'quarry.v1.TrustedService/List', 'quarry.v1.AuthService/Attenuate',
  'quarry.v1.SearchService/Nope', 'quarry.v1.Nope/Search', 'Search', '', 'quarry.v1.SearchService/Search/x',
];

/** Protobuf wire bytes: a field tag, a varint, a length-delimited field. */
const pbVarint = (n: number): Buffer => {
  const out: number[] = [];
  while (n >= 0x80) { out.push((n & 0x7f) | 0x80); n = Math.floor(n / 128); }
  out.push(n);
  return Buffer.from(out);
};
const pbField = (field: number, bytes: Buffer): Buffer => Buffer.concat([pbVarint((field << 3) | 2), pbVarint(bytes.length), bytes]);

/**
 * The binary RPC: `Call` envelopes and Connect paths with valid, truncated, mutated and garbage messages
 * (wrong wire types, huge length prefixes, nested garbage), in both codecs and wrong content types, and
 * the Connect GET form. Every answer must be a Connect error or a message, never a 5xx.
 */
const rpc: Kind = {
  name: 'rpc',
  weight: 6,
  async run(r, t) {
    const procedure = r.weighted<() => string>([[6, () => r.pick(PROCEDURES)], [1, () => r.text(2)]])();
    const message = r.weighted<() => Buffer>([
      [3, () => pbField(1, Buffer.from(queryText(r)))],
      [2, () => Buffer.concat([pbField(1, Buffer.from(r.pick(t.targets))), Buffer.from([0x10, r.int(5)])])],
      [2, () => r.bytes(r.size(300))],
      [1, () => Buffer.concat([Buffer.from([0x0a]), pbVarint(r.pick([2 ** 28, 2 ** 31 - 1, 1 << 20])), r.bytes(r.size(20))])],
      [1, () => Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01])],
      [1, () => Buffer.alloc(0)],
    ])();
    const proto = r.chance(0.7);
    let path: string;
    let body: Buffer;
    if (r.chance(0.5)) {
      path = '/api/rpc';
      const call = Buffer.concat([pbField(1, Buffer.from(procedure)), pbField(2, message)]);
      body = proto ? call : Buffer.from(JSON.stringify(r.chance(0.7)
        ? { procedure, message: r.chance(0.5) ? message.toString('base64') : { q: queryText(r), scope: r.pick(['SCOPE_WEB', 'SCOPE_OWN', 7, 'x', null]) } }
        : r.pick([[], null, 'x', { procedure: 1 }, { procedure, message: [1, 2] }])));
    } else {
      path = `/api/rpc/${procedure}`;
      body = proto ? message : Buffer.from(r.chance(0.6) ? JSON.stringify({ q: queryText(r), target: r.pick(t.targets), page: r.pick([0, 1, -1, 2 ** 40, '3', null]) }) : r.text(4));
    }
    if (r.chance(0.15)) body = r.mutate(body, 1 + r.int(6));
    const headers: Record<string, string> = {
      ...authHeaders(r, t),
      'content-type': r.weighted([[8, proto ? 'application/proto' : 'application/json'], [1, 'application/grpc'], [1, 'text/plain'], [1, 'application/json; charset=latin1']] as const),
    };
    if (r.chance(0.1)) headers['connect-protocol-version'] = r.pick(['1', '2', '']);
    if (r.chance(0.1)) headers['connect-timeout-ms'] = r.pick(['0', '1', '99999999999', '-5', 'x']);
    if (r.chance(0.05)) headers['content-encoding'] = r.pick(['gzip', 'br', 'identity']);
    if (r.chance(0.15)) {
      const get = `/api/rpc/${pct(procedure).replace(/%2F/g, '/')}?encoding=${r.pick(['proto', 'json', 'x'])}&base64=${r.pick(['1', '0', 'x'])}&message=${pct(message.toString('base64url'))}`;
      return outcomeOf([await t.h2.request('GET', get, authHeaders(r, t), undefined, t.deadlineMs)], 'GET');
    }
    return outcomeOf([await t.h2.request('POST', path, headers, body, t.deadlineMs)], 'POST');
  },
};

/** JSON-RPC 2.0 messages of MCP's methods, with arguments right and wrong, to `POST /mcp`. */
const mcp: Kind = {
  name: 'mcp',
  weight: 6,
  async run(r, t) {
    const tool = r.pick(['service_search', 'service_doc', 'service_ecosystem_maturity_rollup', 'service_mgmt', 'nope', '']);
    const params = r.weighted<() => unknown>([
      [3, () => ({ name: tool, arguments: r.pick([{ q: queryText(r) }, { q: queryText(r), scope: r.pick(['web', 'trusted', 'x']) }, { cid: r.pick(['1', '-1', 'x', 2 ** 70]) }, { action: r.pick(['status', 'build', 'x']), target: r.pick(t.targets) }, {}, null, [], 'x']) })],
      [2, () => ({ protocolVersion: r.pick(['2025-06-18', '2025-03-26', '2024-11-05', '1999-01-01', 3]), capabilities: r.pick([{}, null, 'x']), clientInfo: { name: r.text(1), version: '1' } })],
      [1, () => ({ uri: r.pick(['quarry://inventory', 'quarry://doc/web/1', `quarry://${r.text(1)}`, '']) })],
      [1, () => ({ name: r.pick(['research', 'deployment', 'x']), arguments: { question: r.text(2), target: r.pick(t.targets) } })],
      [1, () => r.pick([null, [], 'x', 7])],
    ])();
    const message = (): unknown => ({
      jsonrpc: r.weighted([[9, '2.0'], [1, '1.0']] as const),
      ...(r.chance(0.9) ? { id: r.pick([1, 'a', null, 2 ** 60, {}]) } : {}),
      method: r.pick(['initialize', 'tools/list', 'tools/call', 'resources/list', 'resources/read', 'resources/templates/list', 'prompts/list', 'prompts/get', 'ping', 'notifications/initialized', 'nope', '']),
      ...(r.chance(0.9) ? { params } : {}),
    });
    let body: Buffer = Buffer.from(r.weighted<() => string>([
      [8, () => JSON.stringify(message())],
      [1, () => JSON.stringify([message(), message()])],
      [1, () => r.text(4)],
    ])());
    if (r.chance(0.1)) body = r.mutate(body, 1 + r.int(6));
    const headers: Record<string, string> = {
      ...authHeaders(r, t),
      'content-type': r.weighted([[9, 'application/json'], [1, 'text/plain']] as const),
      accept: r.weighted([[6, 'application/json, text/event-stream'], [2, 'application/json'], [1, 'text/html']] as const),
    };
    if (r.chance(0.5)) headers['mcp-protocol-version'] = r.pick(['2025-06-18', '2025-03-26', 'x']);
    return outcomeOf([await t.h2.request('POST', '/mcp', headers, body, t.deadlineMs)], 'POST');
  },
};

export const KINDS: Kind[] = [queryLanguage, endpoints, jsonBodies, capabilities, uploads, http1, http2Frames, tlsRaw, rpc, mcp];
