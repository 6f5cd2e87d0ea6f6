/**
 * The REST face of crawl control (right `crawl.admin`): `POST /api/crawl/start` (seeds in the body),
 * `POST /api/crawl/pause`, `POST /api/crawl/resume`, `POST /api/crawl/stop`, `GET /api/crawl` (status).
 * It only translates; the crawl service checks the right, validates and audits.
 */
import { CrawlStartRequest, crawlSchemas, type CrawlService } from '../crawl/index.js';
import type { JsonReply, RequestContext, Route, RouteGroup } from '../http/route.js';
import { errorResponses } from './openapi.js';

const TAGS = ['crawl'];
const STATUS = { description: 'The crawl status after the change.', content: { 'application/json': { schema: { $ref: '#/components/schemas/CrawlStatus' } } } };

export function crawlRoutes(service: CrawlService): RouteGroup {
  const control = (method: 'pause' | 'resume' | 'stop', summary: string): Route => ({
    method: 'POST', pattern: `/api/crawl/${method}`, right: 'crawl.admin',
    handler: async (ctx: RequestContext): Promise<JsonReply> => ({ json: { ...service[method](ctx.principal) } }),
    operation: { operationId: `crawl${method[0]!.toUpperCase()}${method.slice(1)}`, tags: TAGS, summary, responses: { '200': STATUS } },
  });
  return {
    name: 'crawl',
    routes: [
      {
        method: 'GET', pattern: '/api/crawl', right: 'crawl.admin',
        handler: async (ctx) => ({ json: { ...service.status(ctx.principal) } }),
        operation: {
          operationId: 'crawlStatus', tags: TAGS, summary: 'The crawl: state, counters of the current run, frontier size, per-host figures.',
          responses: { '200': { ...STATUS, description: 'The crawl status.' } },
        },
      },
      {
        method: 'POST', pattern: '/api/crawl/start', right: 'crawl.admin',
        handler: async (ctx) => ({ status: 202, json: { ...service.start(ctx.principal, await ctx.json()) } }),
        operation: {
          operationId: 'crawlStart', tags: TAGS,
          summary: 'Adds seed URLs to the frontier and starts a run (or resumes a paused one); the run goes on in the background until no URL is due.',
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${CrawlStartRequest.name}` } } } },
          responses: {
            '202': { description: 'The run is going; seeds the crawler refused are listed with the reason.', content: { 'application/json': { schema: { $ref: '#/components/schemas/CrawlStarted' } } } },
            ...errorResponses('bad_request'),
          },
        },
      },
      control('pause', 'Pauses the run: no new fetch starts (those in flight finish). Flagged URLs wait too.'),
      control('resume', 'Resumes a paused run.'),
      control('stop', 'Ends the run: fetches in flight finish and are recorded in the background (state `stopping`, then `idle`). The frontier is kept.'),
    ],
    openapi: {
      tags: [{ name: 'crawl', description: 'Control of the server\'s crawler (right `crawl.admin`); see docs/crawling.md.' }],
      components: { schemas: crawlSchemas() },
    },
  };
}
