/**
 * The binary RPC's routes (CONTRACT §8): `GET /api/rpc.contract`, `POST /api/rpc` with a `Call`
 * envelope, and the Connect paths `POST|GET /api/rpc/quarry.v1.<Service>/<Method>`. All of them answer
 * errors in the Connect model (also those the server raises before a handler runs: rate limit, body
 * size, method) and carry `Rpc-Contract: sha256:…` on every response. Rights are the services' to check
 * (the request's principal comes from the policy, as on every route); rate limits and the 1 MiB body
 * limit are the server's.
 */
import type { DescMessage, JsonValue, MessageShape } from '@bufbuild/protobuf';
import { ERROR_CODES, WIRE_CODES } from '../http/errors.js';
import type { BytesReply, RequestContext, Route, RouteGroup } from '../http/route.js';
import { BadRequestError, MethodNotAllowedError, NotFoundError } from '../kernel/errors.js';
import { contractRoute, type Contract } from './contract.js';
import { CallSchema } from './gen/quarry/v1/call_pb.js';
import { decodeCall } from './search-wire.js';
import { procedures, type CallContext, type Procedure, type Services } from './methods.js';
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

  /** The request message of `p` from `bytes`: its dedicated reader first, where it has one. */
  function decodeInput(p: Procedure, bytes: Uint8Array, codec: Codec): MessageShape<DescMessage> {
    return (codec === 'proto' ? p.decodeBinary?.(bytes) : undefined) ?? decodeMessage(p.method.input, bytes, codec);
  }

  /** Decodes, runs under the caller's deadline, encodes: the part every form shares. */
  async function run(ctx: RequestContext, p: Procedure, decode: () => MessageShape<DescMessage>, codec: Codec): Promise<BytesReply> {
    const timeout = timeoutOf(ctx.headers);
    const request = decode();
    const response = await withDeadline(timeout, (callerDeadline) => {
      const deadline = ctx.deadline === undefined ? callerDeadline : Math.min(ctx.deadline, callerDeadline ?? Infinity);
      const call: CallContext = { principal: ctx.principal, headers: ctx.headers, remoteAddress: ctx.remoteAddress, ...(deadline !== undefined ? { deadline } : {}) };
      return p.call(call, request);
    });
    const body = codec === 'proto' && p.encodeBinary ? p.encodeBinary(response) : encodeMessage(p.method.output, response, codec);
    return messageReply(body, codec, headers);
  }

  async function envelope(ctx: RequestContext): Promise<BytesReply> {
    checkConnectHeaders(ctx.headers);
    const codec = codecOf(ctx.headers);
    const body = await ctx.body();
    if (codec === 'proto') {
      const call = decodeCall(body) ?? decodeMessage(CallSchema, body, 'proto', 'body');
      const p = lookup(call.procedure);
      return run(ctx, p, () => decodeInput(p, call.message, 'proto'), codec);
    }
    let json: unknown;
    try { json = JSON.parse(body.toString('utf8')); } catch { throw new BadRequestError('The body is not valid JSON.', 'body'); }
    if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new BadRequestError('The body must be a JSON object {"procedure", "message"}.', 'body');
    const { procedure, message } = json as { procedure?: unknown; message?: unknown };
    if (typeof procedure !== 'string') throw new BadRequestError('procedure must be a string, e.g. "quarry.v1.SearchService/Search".', 'procedure');
    const p = lookup(procedure);
    return run(ctx, p, () => {
      if (message === undefined || message === null) return decodeInput(p, new Uint8Array(), 'proto');
      // Canonical proto-JSON writes `bytes` as base64: the binary request. An object is the request as proto-JSON.
      if (typeof message === 'string') return decodeInput(p, Buffer.from(message, 'base64'), 'proto');
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
    return run(ctx, p, () => decodeInput(p, body, codec), codec);
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
    return run(ctx, p, () => decodeInput(p, bytes, encoding), encoding);
  }

  const procedureParams = [
    { name: 'service', in: 'path', required: true, description: 'e.g. `quarry.v1.SearchService`.', schema: { type: 'string' } },
    { name: 'method', in: 'path', required: true, description: 'e.g. `Search`.', schema: { type: 'string' } },
  ];
  const messageBody = (what: string) => ({
    required: true,
    content: {
      'application/proto': { schema: { type: 'string', format: 'binary', description: `${what}, binary.` } },
      'application/json': { schema: { type: 'object', description: `${what}, canonical proto-JSON.` } },
    },
  });
  const routes: Route[] = [
    contractRoute(contract),
    {
      method: 'POST', pattern: '/api/rpc', handler: envelope, errorReply: onError,
      operation: rpcOperation('rpcCall', 'Call one method of quarry.v1 with a `Call {procedure, message}` envelope; the answer is the method\'s response message in the same codec.', { requestBody: messageBody('A `quarry.v1.Call`') }),
    },
    {
      method: 'POST', pattern: '/api/rpc/{service}/{method}', handler: connectPost, errorReply: onError,
      operation: rpcOperation('rpcConnect', 'Call one method of quarry.v1 with Connect unary semantics (the body is the request message).', { parameters: procedureParams, requestBody: messageBody('The request message') }),
    },
    {
      method: 'GET', pattern: '/api/rpc/{service}/{method}', handler: connectGet, errorReply: onError,
      operation: rpcOperation('rpcConnectGet', 'The Connect GET form of a side-effect-free method (`?encoding=proto|json&message=…&base64=1`).', {
        parameters: [...procedureParams, ...['encoding', 'message', 'base64', 'connect', 'compression'].map((name) => ({ name, in: 'query', required: name === 'encoding', schema: { type: 'string' } }))],
      }),
    },
  ];
  return {
    name: 'rpc', routes,
    openapi: {
      tags: [{ name: 'rpc', description: 'The binary RPC (CONTRACT §8): its methods and messages are described by the protobuf contract at GET /api/rpc.contract (docs/rpc.md).' }],
      components: { schemas: { ConnectError: CONNECT_ERROR_SCHEMA } },
    },
  };
}

const CONNECT_ERROR_SCHEMA = {
  type: 'object', required: ['code', 'message'],
  description: 'A Connect error (connectrpc.com/docs/protocol). `details[0]` is a `quarry.v1.ErrorDetail` naming the CONTRACT §1 code.',
  properties: {
    code: { type: 'string', enum: [...new Set(ERROR_CODES.map((c) => WIRE_CODES[c].connect))] },
    message: { type: 'string' },
    details: { type: 'array', items: { type: 'object', required: ['type', 'value'], properties: { type: { type: 'string' }, value: { type: 'string', description: 'base64 of the binary detail message' } } } },
  },
};

/** An OpenAPI operation of an RPC route: the message answer, and every error status as a Connect error. */
function rpcOperation(operationId: string, summary: string, extra: Record<string, unknown>): Record<string, unknown> {
  const responses: Record<string, unknown> = {
    '200': {
      description: 'The method\'s response message, in the codec of the request. `Rpc-Contract` names the contract\'s sha256.',
      content: { 'application/proto': { schema: { type: 'string', format: 'binary' } }, 'application/json': { schema: { type: 'object' } } },
    },
  };
  const byStatus = new Map<number, string[]>();
  for (const code of ERROR_CODES) byStatus.set(WIRE_CODES[code].status, [...(byStatus.get(WIRE_CODES[code].status) ?? []), code]);
  for (const [status, codes] of byStatus) {
    const connect = [...new Set(codes.map((c) => WIRE_CODES[c as keyof typeof WIRE_CODES].connect))];
    responses[String(status)] = {
      description: `Connect error ${connect.map((c) => `\`${c}\``).join(', ')} (${codes.map((c) => `\`${c}\``).join(', ')}).`,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ConnectError' } } },
    };
  }
  return { operationId, tags: ['rpc'], summary, ...extra, responses };
}
