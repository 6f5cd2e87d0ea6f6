/**
 * Clients of the binary RPC for tests. `connectClient` is a connect-es client (`@connectrpc/connect`
 * over `@connectrpc/connect-node`) generated from the contract, trusting exactly the test server's
 * certificate, talking to the Connect paths under `/api/rpc`; `binary` picks the codec, `get` the Connect
 * GET form for side-effect-free methods, `cap` the capability it presents.
 */
import { createClient, type Client, type Interceptor } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import type { DescService } from '@bufbuild/protobuf';
import type { TestServer } from '../support/server.js';

export interface ClientOptions {
  binary?: boolean;
  get?: boolean;
  cap?: string;
  http1?: boolean;
}

export function connectClient<S extends DescService>(srv: Pick<TestServer, 'url' | 'ca'>, service: S, o: ClientOptions = {}): Client<S> {
  const auth: Interceptor = (next) => async (req) => {
    if (o.cap) req.header.set('authorization', `Bearer ${o.cap}`);
    return next(req);
  };
  const common = { baseUrl: `${srv.url}/api/rpc`, useBinaryFormat: o.binary ?? true, useHttpGet: o.get ?? false, interceptors: [auth] };
  const transport = o.http1
    ? createConnectTransport({ ...common, httpVersion: '1.1', nodeOptions: { ca: srv.ca } })
    : createConnectTransport({ ...common, httpVersion: '2', nodeOptions: { ca: srv.ca } });
  return createClient(service, transport);
}
