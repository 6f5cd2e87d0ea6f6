/**
 * One HTTP GET, bounded every way a hostile or broken server can stretch it: the address is resolved
 * here (the configuration's `resolve` map or the caller's hook first, then DNS) and refused when it is
 * private, loopback or link-local unless allowed; the connection undici opens goes to exactly that checked
 * address (no second lookup a DNS rebinding could answer differently); the body is read as a stream and
 * cut off past `maxBodyBytes` (received or decoded), past `maxDecompressionRatio` decoded bytes per
 * received byte (a gzip bomb stops after a few MiB, not 10 GB), on a stall, and at the overall time limit.
 * Redirects are not followed here: the crawler queues the target, so every hop is checked and polite.
 *
 * The result keeps the body as received (still content-encoded) for the WARC, and its decoded form for
 * parsing. One undici Agent per crawler with one connection per origin.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { STATUS_CODES } from 'node:http';
import { createBrotliDecompress, createGunzip, createInflate, constants as zc } from 'node:zlib';
import type { Transform } from 'node:stream';
import { Agent, request } from 'undici';
import type { CrawlConfig } from './config.js';

/** Maps a host name to an address before DNS is asked; undefined falls through to DNS. */
export type ResolveHook = (hostname: string) => string | undefined | Promise<string | undefined>;

/** Why a body was cut short, as WARC's `WARC-Truncated` names it. */
export type Truncation = 'length' | 'time' | 'disconnect' | 'unspecified';

export interface FetchResult {
  url: string;
  /** 0 when no response came (see `error`). */
  status: number;
  /** Response headers, names lower-cased, repeated ones joined with ", ". */
  headers: Record<string, string>;
  /** The response head as text (status line and header lines), for the WARC. */
  responseHead: string;
  /** The request head as sent, for the WARC. */
  requestHead: string;
  /** The body as received (content-encoded), at most `maxBodyBytes`. */
  raw: Buffer;
  /** The decoded body; absent when the content type was not wanted or decoding failed. */
  body?: Buffer;
  truncated?: Truncation;
  /** Why the body was cut, in words (`decompression ratio over 100`). */
  truncatedReason?: string;
  /** The address connected to. */
  ip?: string;
  /** Time from the request to the end of the body, ms. */
  ms: number;
  /** A network-level failure (no response). */
  error?: string;
  /** The address was refused by the SSRF guard (`error` says which). */
  refused?: boolean;
}

const PRIVATE = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) PRIVATE.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8]] as const) PRIVATE.addSubnet(net, prefix, 'ipv6');

/** Whether `address` is private, loopback, link-local, multicast or otherwise not a public unicast address. */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return PRIVATE.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  return PRIVATE.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** A content type's media type, lower case, without parameters. */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

export interface FetchOptions {
  /** Extra request headers (conditional ones). */
  headers?: Record<string, string>;
  /** Whether a 2xx body of this media type is wanted; when not, the body is not read. Default: all. */
  wants?: (mediaType: string) => boolean;
}

/** A checked address is used this long before the name is resolved (and checked) again, ms. */
const ADDRESS_TTL_MS = 60_000;

/** Received bytes decoded before the decompression ratio is judged: small pages may compress very well. */
const RATIO_GRACE_BYTES = 64 * 1024;

export class Fetcher {
  readonly #config: CrawlConfig;
  readonly #hook: ResolveHook | undefined;
  readonly #agent: Agent;
  /** Host name → the checked address its connections go to, and when it was resolved. */
  readonly #pinned = new Map<string, { address: string; at: number }>();

  constructor(config: CrawlConfig, hook?: ResolveHook) {
    this.#config = config;
    this.#hook = hook;
    this.#agent = new Agent({
      connections: 1,
      pipelining: 1,
      keepAliveTimeout: 4000,
      connect: {
        timeout: config.stallTimeoutMs,
        // net.connect asks for one address or, with autoSelectFamily, for all of them.
        lookup: (hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
          const address = this.#pinned.get(hostname)?.address;
          if (address === undefined) { callback(new Error(`no checked address for ${hostname}`)); return; }
          const family = isIP(address);
          if (options?.all) callback(null, [{ address, family }]);
          else callback(null, address, family);
        },
      } as never,
    });
  }

  /** The checked address for `hostname`; throws with `refused` set when the SSRF guard refuses it. */
  async #resolve(hostname: string): Promise<string> {
    const bare = hostname.replace(/^\[|\]$/g, '');
    const known = this.#pinned.get(bare);
    if (known && Date.now() - known.at < ADDRESS_TTL_MS) return known.address;
    let address: string | undefined = isIP(bare) ? bare : this.#config.resolve[bare] ?? (await this.#hook?.(bare));
    if (address === undefined) {
      const all = await dnsLookup(bare, { all: true, verbatim: true });
      // Every address must pass, not only the first: the connection could go to any of them.
      const bad = all.find((a) => !this.#config.allowPrivateNetworks && isPrivateAddress(a.address));
      if (bad) throw Object.assign(new Error(`${bare} resolves to ${bad.address}, a private, loopback or link-local address`), { refused: true });
      address = all[0]?.address;
      if (address === undefined) throw new Error(`${bare} has no address`);
    }
    if (!this.#config.allowPrivateNetworks && isPrivateAddress(address)) {
      throw Object.assign(new Error(`${bare} is ${address}, a private, loopback or link-local address`), { refused: true });
    }
    this.#pinned.set(bare, { address, at: Date.now() });
    return address;
  }

  /** The address `hostname` resolves to, checked by the SSRF guard (throws when refused or unresolvable). */
  address(hostname: string): Promise<string> {
    return this.#resolve(hostname);
  }

  async fetch(url: string, options: FetchOptions = {}): Promise<FetchResult> {
    const started = performance.now();
    const u = new URL(url);
    const reqHeaders: Record<string, string> = {
      'user-agent': this.#config.userAgent,
      accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5',
      'accept-encoding': 'gzip, deflate, br',
      ...options.headers,
    };
    const requestHead = `GET ${u.pathname}${u.search} HTTP/1.1\r\nhost: ${u.host}\r\n`
      + Object.entries(reqHeaders).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    const base = { url, headers: {}, responseHead: '', requestHead, raw: Buffer.alloc(0) };
    let ip: string;
    try {
      ip = await this.#resolve(u.hostname);
    } catch (err) {
      return { ...base, status: 0, ms: performance.now() - started, error: (err as Error).message, ...((err as { refused?: boolean }).refused ? { refused: true } : {}) };
    }
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(new Error(`no complete response in ${this.#config.timeoutMs} ms`)), this.#config.timeoutMs);
    try {
      let res;
      try {
        res = await request(url, {
          method: 'GET', headers: reqHeaders, dispatcher: this.#agent, signal: abort.signal,
          headersTimeout: this.#config.stallTimeoutMs, bodyTimeout: this.#config.stallTimeoutMs,
        });
      } catch (err) {
        return { ...base, ip, status: 0, ms: performance.now() - started, error: errorText(err) };
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
      const responseHead = `HTTP/1.1 ${res.statusCode} ${STATUS_CODES[res.statusCode] ?? ''}\r\n`
        + Object.entries(res.headers).flatMap(([k, v]) => (k === 'transfer-encoding' || v === undefined ? [] : (Array.isArray(v) ? v : [v]).map((x) => `${k}: ${x}\r\n`))).join('');
      const type = mediaType(headers['content-type']);
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      if (!ok || (options.wants && !options.wants(type))) {
        // Error pages, redirects and unwanted types are recorded without their bodies.
        await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
        return { ...base, ip, status: res.statusCode, headers, responseHead, ms: performance.now() - started, ...(ok ? { truncated: 'unspecified' as const, truncatedReason: `content type ${type || '(none)'} not wanted` } : {}) };
      }
      const read = await this.#readBody(res.body, headers['content-encoding'], abort.signal);
      return { ...base, ip, status: res.statusCode, headers, responseHead, ms: performance.now() - started, ...read };
    } finally {
      clearTimeout(timer);
    }
  }

  async #readBody(stream: AsyncIterable<Buffer> & { destroy(): void }, encoding: string | undefined, signal: AbortSignal): Promise<Pick<FetchResult, 'raw' | 'body' | 'truncated' | 'truncatedReason'>> {
    const max = this.#config.maxBodyBytes;
    const ratio = this.#config.maxDecompressionRatio;
    const rawParts: Buffer[] = [];
    const decodedParts: Buffer[] = [];
    let rawBytes = 0;
    let decodedBytes = 0;
    let cut: { truncated: Truncation; reason: string } | undefined;
    const decoder = decoderFor(encoding);
    let decodeFailed = false;
    if (decoder) {
      decoder.on('data', (c: Buffer) => {
        if (cut) return;
        decodedBytes += c.length;
        if (decodedBytes > max) { cut = { truncated: 'length', reason: `decoded body over ${max} bytes` }; return; }
        if (decodedBytes > RATIO_GRACE_BYTES && decodedBytes > rawBytes * ratio) {
          cut = { truncated: 'length', reason: `decompression ratio over ${ratio} (${decodedBytes} bytes from ${rawBytes})` };
          return;
        }
        decodedParts.push(c);
      });
      decoder.on('error', () => { decodeFailed = true; });
    }
    try {
      for await (const chunk of stream) {
        if (rawBytes + chunk.length > max) {
          rawParts.push(chunk.subarray(0, max - rawBytes));
          rawBytes = max;
          cut = { truncated: 'length', reason: `body over ${max} bytes` };
          break;
        }
        rawParts.push(chunk);
        rawBytes += chunk.length;
        if (decoder && !decodeFailed) {
          if (!decoder.write(chunk)) await new Promise<void>((r) => { decoder.once('drain', r); decoder.once('error', r); decoder.once('close', r); });
        }
        if (cut) break;
      }
    } catch (err) {
      cut ??= signal.aborted ? { truncated: 'time', reason: errorText(signal.reason) } : { truncated: 'disconnect', reason: errorText(err) };
    }
    if (cut) { (stream as unknown as NodeJS.EventEmitter).on('error', () => undefined); stream.destroy(); }
    if (decoder) {
      if (!cut && !decodeFailed) {
        await new Promise<void>((r) => { decoder.once('end', r); decoder.once('error', r); decoder.end(); decoder.resume(); });
      } else {
        // A body cut short is decoded as far as it went (what was flushed so far); never waited on further.
        decoder.destroy();
      }
    }
    const raw = Buffer.concat(rawParts, rawBytes);
    const out: Pick<FetchResult, 'raw' | 'body' | 'truncated' | 'truncatedReason'> = { raw };
    if (!decoder) out.body = raw;
    else if (!decodeFailed || decodedParts.length > 0) out.body = Buffer.concat(decodedParts);
    if (cut) { out.truncated = cut.truncated; out.truncatedReason = cut.reason; }
    return out;
  }

  /** Closes the connections. */
  async close(): Promise<void> {
    await this.#agent.close().catch(() => undefined);
  }
}

function decoderFor(encoding: string | undefined): Transform | undefined {
  const e = (encoding ?? '').trim().toLowerCase();
  const flush = { finishFlush: zc.Z_SYNC_FLUSH };
  if (e === 'gzip' || e === 'x-gzip') return createGunzip(flush);
  if (e === 'deflate') return createInflate(flush);
  if (e === 'br') return createBrotliDecompress();
  return undefined;
}

function errorText(err: unknown): string {
  const e = err as { message?: string; code?: string; cause?: { message?: string; code?: string } };
  const cause = e?.cause?.message ? ` (${e.cause.code ?? e.cause.message})` : '';
  return `${e?.code ? `${e.code}: ` : ''}${e?.message ?? String(err)}${cause}`;
}
