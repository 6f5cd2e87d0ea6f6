/**
 * MCP `outputSchema`s from the services' JSON Schemas (the ones OpenAPI publishes): a component's schema
 * with every `#/components/schemas/X` reference rewritten to `#/$defs/X` and the referenced components
 * carried along, so one self-contained schema describes what the REST body holds.
 */

type Schema = Record<string, unknown>;

/** The CONTRACT §1 error object (OpenAPI's `Error` component lives with the REST face). */
const ERROR: Schema = {
  type: 'object',
  properties: {
    error: {
      type: 'object', required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' }, param: { type: 'string' } },
    },
  },
};

function rewrite(value: unknown, used: Set<string>): unknown {
  if (Array.isArray(value)) return value.map((v) => rewrite(v, used));
  if (typeof value !== 'object' || value === null) return value;
  const out: Schema = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === '$ref' && typeof v === 'string' && v.startsWith('#/components/schemas/')) {
      const rest = v.slice('#/components/schemas/'.length);
      used.add(rest.split('/')[0]!);
      out[k] = `#/$defs/${rest}`;
    } else {
      out[k] = rewrite(v, used);
    }
  }
  return out;
}

/**
 * One component (an object schema) or several (`oneOf`, under an object root, which MCP's 2025-11-25
 * revision requires of an `outputSchema`), self-contained.
 */
export function jsonSchemaFrom(components: Record<string, Schema>, names: string | string[]): Schema {
  const all: Record<string, Schema> = { Error: ERROR, ...components };
  const used = new Set<string>();
  const root: Schema = typeof names === 'string'
    ? rewrite(all[names], used) as Schema
    : { type: 'object', oneOf: names.map((n) => { used.add(n); return { $ref: `#/$defs/${n}` }; }) };
  const defs: Record<string, unknown> = {};
  const queue = [...used];
  while (queue.length > 0) {
    const name = queue.pop()!;
    if (name in defs) continue;
    const more = new Set<string>();
    defs[name] = rewrite(all[name], more);
    for (const m of more) if (!(m in defs)) queue.push(m);
  }
  return Object.keys(defs).length > 0 ? { ...root, $defs: defs } : root;
}
