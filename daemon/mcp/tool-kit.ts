// What each tool is registered with (tools.ts registers them, watch-tools.ts the watches'):
// its own file, so that the tools' files import it rather than each other.

import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Invoke, RouteAnswer, ToolCaller } from './invoke.ts';
import type { Rendered } from './render-search.ts';

/** What each tool is registered with: the server, and the REST routes it answers through as its caller. */
export interface ToolKit {
  server: McpServer;
  /**
   * A tool's callback: authenticates the caller and counts the call (PrepareCall), then
   * runs `run` and makes its rendering the tool result (respond).
   */
  call<A>(
    run: (args: A, caller: ToolCaller, signal: AbortSignal) => Promise<Rendered | ArgumentError>,
  ): (args: A, extra: { signal: AbortSignal; authInfo?: AuthInfo }) => Promise<CallToolResult>;
  /** The REST answer of `route` for `input` (absent arguments left out), as the caller; `params`: its path parameters. */
  rest(caller: ToolCaller, route: Parameters<Invoke>[0], input: Record<string, unknown>, params?: Record<string, string>): Promise<RouteAnswer>;
  /** Every file path of a repository at a ref (POST /api/files). */
  fileList(caller: ToolCaller, repoName: string, revisionName: string | undefined): Promise<Array<{ path: string }>>;
  /** Tells the client that the list of resources changed, when the watches are resources of this server. */
  watchesChanged(): void;
}

/** A failure of the tool's own arguments (one the REST API cannot see). */
export class ArgumentError {
  constructor(readonly text: string) {}
}
