/**
 * The MCP face's route group: `POST /mcp` (Streamable HTTP, no sessions). GET and DELETE are answered
 * 405 by the router (the path exists under POST only): there is no standalone event stream and no session
 * to end. The handler's answer becomes a JSON reply, an empty 202, or a request-scoped event stream.
 */
import { toJson } from '../kernel/json.js';
import type { Reply, RouteGroup } from '../http/route.js';
import type { McpHandler } from './handler.js';

export function mcpRoutes(mcp: McpHandler): RouteGroup {
  return {
    name: 'mcp',
    routes: [{
      method: 'POST', pattern: '/mcp',
      async handler(ctx): Promise<Reply> {
        const res = await mcp.handle({ headers: ctx.headers, body: () => ctx.body(), principal: ctx.principal, chargeRate: (p) => ctx.chargeRate(p), signal: ctx.signal });
        if ('stream' in res) {
          return {
            status: res.status, headers: res.headers, contentType: 'text/event-stream',
            stream: (sink) => res.stream((message) => { sink.write(`event: message\ndata: ${toJson(message)}\n\n`); }),
          };
        }
        // No content (a notification's or a response's 202), so no type: JSON on nothing would not parse.
        if (res.json === undefined) return { status: res.status, headers: res.headers, body: '' };
        return { status: res.status, headers: res.headers, body: toJson(res.json), contentType: 'application/json' };
      },
    }],
  };
}
