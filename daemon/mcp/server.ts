// One tool server (an McpServer with trawl's tools) per MCP session: the SDK binds a server
// to one transport, and a transport to one session.

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { WatchServices } from '../watches/watch-runtime.ts';
import type { Invoke } from './invoke.ts';
import { registerTools, type PrepareCall } from './tools.ts';
import { registerWatchResources } from './watch-resources.ts';

/** A session unused for this long is closed (clients reconnect with a new initialize). */
export const MCP_SESSION_IDLE_MS = 30 * 60_000;
/** Open sessions at most, of everyone (mcp/sessions.ts says how room is made). */
export const MCP_MAX_SESSIONS = 1000;
/** Open sessions at most per user (anonymous callers: per address); beyond, the user's own least recently used is closed. */
export const MCP_MAX_SESSIONS_PER_USER = 32;

const INSTRUCTIONS =
  'trawl searches the code of every indexed repository. Start with search_code (the query language: ' +
  'terms are ANDed, `or`, `-term`, `repo:`, `file:`, `lang:`, `sym:`, `branch:`, `regex:"..."`), then read_file ' +
  'for context. list_repos, list_tree and glob explore; find_symbol_definitions/references follow symbols; ' +
  'list_commits, get_diff and blame read history. Outputs are truncated with a hint saying how to get more. ' +
  'create_watch saves a query whose new and removed matches are recorded after each re-index: read them with ' +
  'get_watch_changes, or subscribe to the resource trawl://watches/{id} to be notified of each change.';

/**
 * `watches`: the daemon's watches (absent while a node of a cluster is still joining it);
 * with them, the session's user's watches are resources it can subscribe to (watch-resources.ts).
 */
export function createToolServer(invoke: Invoke, prepare: PrepareCall, version: string, watches?: WatchServices): McpServer {
  const capabilities = watches ? { tools: {}, resources: { subscribe: true, listChanged: true } } : { tools: {} };
  const server = new McpServer({ name: 'trawl', version }, { capabilities, instructions: INSTRUCTIONS });
  registerTools(server, invoke, prepare, { watchResources: watches !== undefined });
  if (watches) registerWatchResources(server, invoke, prepare, watches);
  return server;
}
