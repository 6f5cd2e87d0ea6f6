/**
 * The published contract of the binary RPC: the FileDescriptorSet `contract/quarry.v1.binpb` (imports and
 * comments included, made by `npm run contract:generate` from `contract/quarry/v1/*.proto`), its sha256,
 * and `GET /api/rpc.contract` in three formats — the set as binary (`application/x-protobuf`, default),
 * the `.proto` sources (`?format=proto`) and the set as proto-JSON (`?format=json`). Each format has a
 * strong ETag derived from the one hash, honoured by `If-None-Match` (304).
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { fromBinary, toJsonString } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import type { BytesReply, RequestContext, Route } from '../http/route.js';
import { BadRequestError } from '../kernel/errors.js';
import { requirePublic } from '../kernel/principal.js';

const CONTRACT_DIR = fileURLToPath(new URL('../../contract/', import.meta.url));

export interface Contract {
  /** The FileDescriptorSet, binary. */
  readonly descriptorSet: Buffer;
  /** `sha256:<hex>` of `descriptorSet`: the `Rpc-Contract` header of every RPC response. */
  readonly hash: string;
  /** The `.proto` sources, each preceded by a comment naming its file. */
  readonly sources: string;
  /** The set as canonical proto-JSON. */
  readonly json: string;
}

/** Reads the contract from `dir` (default: the repository's `contract/`). */
export function loadContract(dir = CONTRACT_DIR): Contract {
  const descriptorSet = readFileSync(`${dir}/quarry.v1.binpb`);
  const hash = `sha256:${createHash('sha256').update(descriptorSet).digest('hex')}`;
  const protoDir = `${dir}/quarry/v1`;
  const sources = readdirSync(protoDir).filter((f) => f.endsWith('.proto')).sort()
    .map((f) => `// ===== quarry/v1/${f} =====\n${readFileSync(`${protoDir}/${f}`, 'utf8')}`).join('\n');
  const json = toJsonString(FileDescriptorSetSchema, fromBinary(FileDescriptorSetSchema, descriptorSet));
  return { descriptorSet, hash, sources, json };
}

const FORMATS = {
  binary: { contentType: 'application/x-protobuf', body: (c: Contract) => c.descriptorSet },
  proto: { contentType: 'text/plain; charset=utf-8', body: (c: Contract) => c.sources },
  json: { contentType: 'application/json', body: (c: Contract) => c.json },
} as const;

/** The ETag of one format: the descriptor set's hash, suffixed for the derived formats. */
function contractEtag(contract: Contract, format: keyof typeof FORMATS): string {
  return `"${contract.hash}${format === 'binary' ? '' : `+${format}`}"`;
}

function matches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch.split(',').some((t) => {
    const tag = t.trim().replace(/^W\//, '');
    return tag === '*' || tag === etag;
  });
}

export function contractRoute(contract: Contract): Route {
  return {
    method: 'GET', pattern: '/api/rpc.contract',
    handler: async (ctx: RequestContext): Promise<BytesReply> => {
      requirePublic(ctx.principal);
      const requested = ctx.query.get('format') ?? 'binary';
      if (!Object.hasOwn(FORMATS, requested)) throw new BadRequestError('format must be proto, json, or absent for the binary descriptor set.', 'format');
      const format = requested as keyof typeof FORMATS;
      const etag = contractEtag(contract, format);
      const headers = { etag, 'cache-control': 'no-cache', 'rpc-contract': contract.hash };
      const inm = ctx.headers['if-none-match'];
      if (matches(Array.isArray(inm) ? inm.join(',') : inm, etag)) {
        return { status: 304, headers, body: '', contentType: FORMATS[format].contentType };
      }
      return { headers, body: FORMATS[format].body(contract), contentType: FORMATS[format].contentType };
    },
    operation: {
      operationId: 'getRpcContract', tags: ['rpc'],
      summary: 'The binary RPC contract (protobuf package quarry.v1): FileDescriptorSet, .proto sources or proto-JSON.',
      parameters: [
        { name: 'format', in: 'query', required: false, description: 'Absent: the FileDescriptorSet with imports (binary); `proto`: the .proto sources; `json`: the set as proto-JSON.', schema: { type: 'string', enum: ['proto', 'json'] } },
        { name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' } },
      ],
      responses: {
        '200': {
          description: 'The contract. `ETag` is its sha256; `Rpc-Contract` the same hash as on every RPC response.',
          content: {
            'application/x-protobuf': { schema: { type: 'string', format: 'binary' } },
            'text/plain': { schema: { type: 'string' } },
            'application/json': { schema: { type: 'object' } },
          },
        },
        '304': { description: 'Not modified (If-None-Match names the current ETag).' },
      },
    },
  };
}
