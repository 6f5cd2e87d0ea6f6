/**
 * The binary RPC's routes (CONTRACT §8): `GET /api/rpc.contract`, `POST /api/rpc` with a `Call`
 * envelope, and the Connect paths `POST|GET /api/rpc/quarry.v1.<Service>/<Method>`. All of them answer
 * errors in the Connect model (also those the server raises before a handler runs: rate limit, body
 * size, method) and carry `Rpc-Contract: sha256:…` on every response. Rights are the services' to check
 * (the request's principal comes from the policy, as on every route); rate limits and the 1 MiB body
 * limit are the server's.
 */
import type { JsonValue } from '@bufbuild/protobuf';
import type { BytesReply, RequestContext, Route, RouteGroup } from '../http/route.js';
import { BadRequestError, MethodNotAllowedError, NotFoundError } from '../kernel/errors.js';
import { contractRoute, type Contract } from './contract.js';
import { CallSchema } from './gen/quarry/v1/call_pb.js';
import { procedures, type Procedure, type Services } from './methods.js';
import {
  checkConnectHeaders, codecOf, decodeJsonValue, decodeMessage, encodeMessage, errorReply, messageReply, timeoutOf, withDeadline,
  type Codec,
} from './protocol.js';

export function rpcRoutes(contract: Contract, services: Services): RouteGroup {
  const table = procedures(services);
  const headers = { 'rpc-contract': contract.hash };
  const onError = (err: unknown): BytesReply => errorReply(err, headers);

  function lookup(name: string): Procedure {
    const p = table.get(name);
    if (p) return p;
    const shown = name.length > 200 ? `${JSON.stringify(name.slice(0, 200))}…` : JSON.stringify(name);
    throw new NotFoundError(`No procedure ${shown} in the contract; procedures are written quarry.v1.<Service>/<Method> (GET /api/rpc.contract lists them).`, 'procedure');
  }

  /** Decodes, runs under the caller's deadline, encodes: the part every form shares. */
  async function run(ctx: RequestContext, p: Procedure, decode: () => ReturnType<Procedure['call']> extends Promise<infer M> ? M : never, codec: Codec): Promise<BytesReply> {
    const timeout = timeoutOf(ctx.headers);
    const request = decode();
    const response = await withDeadline(timeout, () => p.call({ principal: ctx.principal, headers: ctx.headers, remoteAddress: ctx.remoteAddress }, request));
    return messageReply(encodeMessage(p.method.output, response, codec), codec, headers);
  }

  async function envelope(ctx: RequestContext): Promise<BytesReply> {
    checkConnectHeaders(ctx.headers);
    const codec = codecOf(ctx.headers);
    const body = await ctx.body();
    if (codec === 'proto') {
      const call = decodeMessage(CallSchema, body, 'proto', 'body');
      const p = lookup(call.procedure);
      return run(ctx, p, () => decodeMessage(p.method.input, call.message, 'proto'), codec);
    }
    let json: unknown;
    try { json = JSON.parse(body.toString('utf8')); } catch { throw new BadRequestError('The body is not valid JSON.', 'body'); }
    if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new BadRequestError('The body must be a JSON object {"procedure", "message"}.', 'body');
    const { procedure, message } = json as { procedure?: unknown; message?: unknown };
    if (typeof procedure !== 'string') throw new BadRequestError('procedure must be a string, e.g. "quarry.v1.SearchService/Search".', 'procedure');
    const p = lookup(procedure);
    return run(ctx, p, () => {
      if (message === undefined || message === null) return decodeMessage(p.method.input, new Uint8Array(), 'proto');
      // Canonical proto-JSON writes `bytes` as base64: the binary request. An object is the request as proto-JSON.
      if (typeof message === 'string') return decodeMessage(p.method.input, Buffer.from(message, 'base64'), 'proto');
      return decodeJsonValue(p.method.input, message as JsonValue);
    }, codec);
  }

  function connectProcedure(ctx: RequestContext): Procedure {
    return lookup(`${ctx.params.service}/${ctx.params.method}`);
  }

  async function connectPost(ctx: RequestContext): Promise<BytesReply> {
    checkConnectHeaders(ctx.headers);
    const p = connectProcedure(ctx);
    const codec = codecOf(ctx.headers);
    const body = await ctx.body();
    return run(ctx, p, () => decodeMessage(p.method.input, body, codec), codec);
  }

  async function connectGet(ctx: RequestContext): Promise<BytesReply> {
    checkConnectHeaders(ctx.headers);
    const p = connectProcedure(ctx);
    if (!p.sideEffectFree) throw new MethodNotAllowedError('GET', ctx.path, ['POST']);
    const q = ctx.query;
    const connect = q.get('connect');
    if (connect !== null && connect !== 'v1') throw new BadRequestError('connect must be v1.', 'connect');
    const compression = q.get('compression');
    if (compression !== null && compression !== 'identity') throw new BadRequestError('compression must be identity.', 'compression');
    const encoding = q.get('encoding');
    if (encoding !== 'proto' && encoding !== 'json') throw new BadRequestError('encoding must be proto or json.', 'encoding');
    const raw = q.get('message') ?? '';
    const base64 = q.get('base64');
    if (base64 !== null && base64 !== '1' && base64 !== '0') throw new BadRequestError('base64 must be 1 or absent.', 'base64');
    const bytes = base64 === '1' ? Buffer.from(raw, 'base64url') : Buffer.from(raw, 'utf8');
    return run(ctx, p, () => decodeMessage(p.method.input, bytes, encoding), encoding);
  }

  const routes: Route[] = [
    contractRoute(contract),
    { method: 'POST', pattern: '/api/rpc', handler: envelope, errorReply: onError },
    { method: 'POST', pattern: '/api/rpc/{service}/{method}', handler: connectPost, errorReply: onError },
    { method: 'GET', pattern: '/api/rpc/{service}/{method}', handler: connectGet, errorReply: onError },
  ];
  return { name: 'rpc', routes, openapi: { tags: [{ name: 'rpc', description: 'The binary RPC contract (CONTRACT §8; the RPC itself is described by its protobuf contract, docs/rpc.md).' }] } };
}
