/**
 * A `fetch` for the `eventsource` v4 client (its `fetch` option) that talks to the test server over real
 * TLS, trusting only the server's self-signed certificate, over HTTP/2 or HTTP/1.1 as asked. Node 20's
 * global fetch cannot take a CA without undici's Agent, and the tests also need what a browser never
 * offers: adding a capability header, recording each request's `Last-Event-ID`, and cutting the
 * connection from the client side in the middle of a stream (`cut()`), which the EventSource sees as a
 * network error and answers by reconnecting with the last id it received.
 */
import https from 'node:https';
import http2 from 'node:http2';
import { Readable } from 'node:stream';

export interface TlsFetchOptions {
  ca: Buffer | string;
  protocol: 'h1' | 'h2';
  /** Headers added to every request (e.g. `authorization`). */
  headers?: Record<string, string>;
}

export interface TlsFetch {
  fetch: typeof globalThis.fetch;
  /** The `Last-Event-ID` sent with each request so far (`null` when none). */
  readonly requests: (string | null)[];
  /** Destroys the current response's connection as a network failure would. */
  cut(): void;
  /** Closes whatever is still open (end of test). */
  close(): void;
}

function responseHeaders(raw: Record<string, string | string[] | number | undefined>): Headers {
  const h = new Headers();
  for (const [k, v] of Object.entries(raw)) {
    if (k.startsWith(':') || v === undefined) continue;
    h.set(k, Array.isArray(v) ? v.join(', ') : String(v));
  }
  return h;
}

export function tlsFetch(options: TlsFetchOptions): TlsFetch {
  const requests: (string | null)[] = [];
  let current: { destroy(err: Error): void } | undefined;
  const open = new Set<{ destroy(err?: Error): void }>();

  const fetchImpl = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    const headers: Record<string, string> = { ...options.headers };
    new Headers(init.headers).forEach((v, k) => { headers[k] = v; });
    requests.push(headers['last-event-id'] ?? null);
    return new Promise<Response>((resolve, reject) => {
      const fail = (err: Error): void => reject(err);
      if (options.protocol === 'h1') {
        const req = https.request(url, { method: 'GET', headers, ca: options.ca, agent: false, ALPNProtocols: ['http/1.1'] } as https.RequestOptions);
        open.add(req);
        init.signal?.addEventListener('abort', () => req.destroy(Object.assign(new Error('aborted'), { name: 'AbortError' })));
        req.on('error', fail);
        req.on('response', (res) => {
          current = res;
          res.on('close', () => open.delete(req));
          resolve(new Response(Readable.toWeb(res) as ReadableStream<Uint8Array>, { status: res.statusCode ?? 0, headers: responseHeaders(res.headers) }));
        });
        req.end();
        return;
      }
      const session = http2.connect(url.origin, { ca: options.ca });
      open.add(session);
      session.on('error', fail);
      session.on('close', () => open.delete(session));
      const stream = session.request({ ':method': 'GET', ':path': url.pathname + url.search, ...headers });
      init.signal?.addEventListener('abort', () => { stream.destroy(); session.destroy(); });
      stream.on('error', fail);
      stream.on('close', () => session.close());
      stream.on('response', (h) => {
        current = stream;
        resolve(new Response(Readable.toWeb(stream) as ReadableStream<Uint8Array>, {
          status: Number(h[':status']),
          headers: responseHeaders(h as Record<string, string | string[] | number | undefined>),
        }));
      });
      stream.end();
    });
  };

  return {
    fetch: fetchImpl as typeof globalThis.fetch,
    requests,
    cut() {
      current?.destroy(new Error('connection cut by the test'));
      current = undefined;
    },
    close() {
      for (const o of open) o.destroy();
      open.clear();
    },
  };
}
