/**
 * The REST face of the maturity rollup (CONTRACT §7): `GET /api/maturity` lists the known domains, most
 * documents first; `GET /api/maturity?domain=example.com` measures one domain with its subdomains. Both
 * are computed at call time by the rollup service, the one the MCP tool calls.
 */
import type { RouteGroup } from '../http/route.js';
import { rollupSchema, type RollupService } from '../rollup/service.js';
import { errorResponses } from './openapi.js';

export function maturityRoutes(rollup: RollupService): RouteGroup {
  return {
    name: 'maturity',
    routes: [{
      method: 'GET', pattern: '/api/maturity', right: 'search',
      handler: async (ctx) => ({ json: { ...rollup.rollup(ctx.principal, { domain: ctx.query.get('domain') }) } }),
      operation: {
        operationId: 'maturityRollup', tags: ['maturity'],
        summary: 'Measured maturity grades (A–F) per domain, with the raw figures the rubric read (docs/maturity.md).',
        parameters: [{
          name: 'domain', in: 'query', required: false,
          description: `A host name; the domain counts itself and its subdomains. Absent: every known domain, most documents first (at most ${rollup.limit}).`,
          schema: { type: 'string', maxLength: 253 },
        }],
        responses: {
          '200': { description: 'The rollup.', content: { 'application/json': { schema: { $ref: '#/components/schemas/MaturityRollup' } } } },
          ...errorResponses('bad_request'),
        },
      },
    }],
    openapi: {
      tags: [{ name: 'maturity', description: 'The ecosystem maturity rollup: measured per-domain grades.' }],
      components: { schemas: { MaturityRollup: rollupSchema() } },
    },
  };
}
