// The tool server's endpoint: /api/mcp, the Model Context Protocol over Streamable HTTP
// (POST messages, GET a server-to-client event stream: the notifications not answering a
// request, such as a subscribed watch's changes, mcp/watch-resources.ts; DELETE the session). Authenticated
// like every API route; not rate limited as a route: tool calls are counted one by one
// (mcp/call.ts). The protocol itself is the SDK's (mcp/sessions.ts, mcp/bridge.ts).

import { sendWebResponse, toWebRequest } from './bridge.ts';
import type { McpSessions } from './sessions.ts';
import type { Route, RouteContext } from '../http/route.ts';
import type { Services } from '../http/services.ts';

const DESCRIPTION =
  'The Model Context Protocol (Streamable HTTP transport). Open a session with an `initialize` request ' +
  '(POST, no Mcp-Session-Id; the answer carries one), then send JSON-RPC messages with `Mcp-Session-Id`; ' +
  'DELETE ends the session. Tools: search_code, read_file, list_repos, list_tree, glob, find_symbol_definitions, ' +
  'find_symbol_references, list_commits, get_diff, blame, create_watch, list_watches, get_watch_changes, delete_watch. ' +
  'Resources: your watches, trawl://watches/{id}; resources/subscribe to one and each change is sent as ' +
  "notifications/resources/updated on the session's GET event stream. Each tool call counts one request against the daily limit.";

export function mcpRoutes(s: Services, sessions: McpSessions): Route[] {
  const route = (method: Route['method'], summary: string): Route => ({
    method,
    path: '/api/mcp',
    operationId: `mcp${method[0]}${method.slice(1).toLowerCase()}`,
    summary,
    description: DESCRIPTION,
    tag: 'Tool server',
    ...(method === 'POST' ? { rawBody: true } : {}),
    response: { status: 200, description: 'A JSON-RPC answer (application/json) or an event stream (text/event-stream), as MCP specifies.' },
    errors: [],
    rateLimited: false,
    authenticated: true,
    cors: true,
    async handle(ctx: RouteContext) {
      const request = toWebRequest(ctx, method, `${s.baseUrl}/api/mcp`);
      // Anonymous callers' sessions are capped per address (mcp/sessions.ts).
      await sendWebResponse(ctx, await sessions.handle(request, ctx.identity, ctx.clientAddress));
      return undefined;
    },
  });
  return [route('POST', 'Send MCP messages'), route('GET', 'Open the server-to-client MCP event stream'), route('DELETE', 'End an MCP session')];
}
