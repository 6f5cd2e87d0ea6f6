/**
 * The agent surface (interface §4.4–4.5, CONTRACT §7): MCP at `POST /mcp`. `createMcpFace` builds the
 * handler over the application services and returns its route group; the composition root mounts it.
 *
 * Configuration (the `mcp` section of the configuration file, docs/configuration.md):
 *   - `allowedHosts`: host names a request's `Host` and `Origin` may name, besides `localhost`,
 *     `127.0.0.1`, `::1` and the address the server listens on (DNS-rebinding protection; others → 403);
 *   - `allowedOrigins`: further exact origins (`https://console.example.com`) a browser client may send.
 * The conformance suite's fixture tools (`fixtures.ts`) are added only when the environment variable
 * `QUARRY_MCP_TEST_FIXTURES` is `1` — a test flag, never set by default.
 */
import type { Policy } from '../kernel/principal.js';
import type { RouteGroup } from '../http/route.js';
import type { RollupService } from '../rollup/service.js';
import type { SearchService } from '../search/service.js';
import type { Catalog } from './catalog.js';
import { McpHandler } from './handler.js';
import { quarryCatalog, type MgmtPort, type RpcContract } from './quarry.js';
import { mcpRoutes } from './routes.js';

export type { MgmtPort } from './quarry.js';

export interface McpFaceOptions {
  /** The `mcp` section of the configuration file. */
  config?: Record<string, unknown>;
  /** The address the server listens on (allowed as a host name unless it is a wildcard). */
  listenHost: string;
  policy: Policy;
  search: SearchService;
  rollup: RollupService;
  mgmt?: MgmtPort;
  openapi(): Record<string, unknown>;
  /** The binary RPC's contract (its `.proto` sources, as `GET /api/rpc.contract?format=proto`). */
  rpcContract?: RpcContract;
  serverVersion: string;
  logError?(message: string, err: unknown): void;
}

const INSTRUCTIONS = [
  'Quarry is a full-text search engine over three corpora: the service\'s own documentation (default), the crawled open web (scope "web") and references clients flagged as trusted (scope "trusted").',
  'Search with service_search (terms are ORed; +required, -excluded, "phrases", site:host), read a hit with service_doc by its cid (a decimal string), and cite documents by cid.',
  'service_ecosystem_maturity_rollup grades a domain from live figures. service_mgmt (admin capabilities only) drives the deployment control plane: run status first and a dry run before any deploy.',
].join(' ');

export async function createMcpFace(o: McpFaceOptions): Promise<RouteGroup> {
  const list = (name: string) => {
    const v = o.config?.[name];
    if (v === undefined) return [];
    if (!Array.isArray(v) || !v.every((s) => typeof s === 'string')) throw new Error(`mcp.${name} must be an array of strings.`);
    return v as string[];
  };
  const hosts = ['localhost', '127.0.0.1', '::1', ...list('allowedHosts')];
  const listen = o.listenHost.replace(/^\[|\]$/g, '');
  if (listen !== '0.0.0.0' && listen !== '::') hosts.push(listen);
  const catalogs: Catalog[] = [quarryCatalog({
    search: o.search, rollup: o.rollup, ...(o.mgmt ? { mgmt: o.mgmt } : {}), openapi: o.openapi, rpcContract: () => o.rpcContract,
  })];
  // The test fixtures' module is not even loaded without the flag.
  if (process.env.QUARRY_MCP_TEST_FIXTURES === '1') catalogs.push((await import('./fixtures.js')).fixtureCatalog());
  const handler = new McpHandler({
    catalogs, policy: o.policy, instructions: INSTRUCTIONS,
    serverInfo: { name: 'quarry', title: 'Quarry', version: o.serverVersion },
    allowedHosts: hosts, allowedOrigins: list('allowedOrigins'),
    ...(o.logError ? { logError: o.logError } : {}),
  });
  return mcpRoutes(handler);
}
