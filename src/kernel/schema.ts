/**
 * Request-body schemas: one JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1) per body, used both
 * to validate what a caller sent and to describe it in the published contracts (OpenAPI, MCP
 * `inputSchema`). A service validates its input with the schema itself, so every face rejects the same
 * bodies with the same `bad_request` and `param`.
 *
 * Validation is compiled on first use (Ajv), so start-up pays nothing for bodies nobody sends.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import { BadRequestError } from './errors.js';

export type JsonSchema = Readonly<Record<string, unknown>>;

export interface BodySchema<T> {
  /** The component name under which the contracts publish it (`#/components/schemas/<name>`). */
  readonly name: string;
  readonly schema: JsonSchema;
  /** The value typed as T, or BadRequestError naming the first field at fault. */
  parse(value: unknown): T;
}

let ajv: Ajv2020 | undefined;
function compiler(): Ajv2020 {
  // strict mode rejects the OpenAPI-only keywords we do not use; allErrors off: the first error is reported.
  ajv ??= new Ajv2020({ strict: true, allErrors: false, allowUnionTypes: true, validateFormats: false });
  return ajv;
}

/** `schema` must describe a JSON object; its validator is compiled once, on the first `parse`. */
export function bodySchema<T>(name: string, schema: JsonSchema): BodySchema<T> {
  let validate: ValidateFunction | undefined;
  return {
    name,
    schema,
    parse(value: unknown): T {
      validate ??= compiler().compile(schema as Record<string, unknown>);
      if (validate(value)) return value as T;
      throw badRequestFrom(validate.errors?.[0], value);
    },
  };
}

function badRequestFrom(e: ErrorObject | null | undefined, value: unknown): BadRequestError {
  if (!e) return new BadRequestError('The request body is not valid.', 'body');
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return new BadRequestError('The body must be a JSON object.', 'body');
  // The field at fault: the first segment of the instance path, or the property the keyword names.
  const segment = e.instancePath.split('/')[1];
  const named = e.keyword === 'required' ? (e.params as { missingProperty: string }).missingProperty
    : e.keyword === 'additionalProperties' ? (e.params as { additionalProperty: string }).additionalProperty
      : undefined;
  const param = segment !== undefined && segment !== '' ? decodePointer(segment) : named ?? 'body';
  const message = e.keyword === 'required' ? `${param} is required.`
    : e.keyword === 'additionalProperties' ? `${param} is not a field of this body.`
      : `${param}${e.instancePath.split('/').length > 2 ? e.instancePath.slice(segment!.length + 1) : ''} ${e.message ?? 'is not valid'}.`;
  return new BadRequestError(message, param);
}

function decodePointer(s: string): string { return s.replace(/~1/g, '/').replace(/~0/g, '~'); }
