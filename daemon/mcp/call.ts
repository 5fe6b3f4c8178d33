// Tool calls and the daily limit (docs/http-api.md 8.5): each tool call counts one
// request; initialize, listing tools and ping do not. The count is taken in the session
// layer (sessions.ts), before the SDK sees the message, because the SDK turns whatever a
// tool callback throws into an ordinary tool result: only there can an over-limit call be
// refused with a JSON-RPC error, code MCP_RATE_LIMIT_EXCEEDED, carrying the HTTP 429's
// message and, in its data, the REST error code and the seconds until the reset. Counting
// there also counts calls whose arguments the SDK then rejects, as the spec asks.
//
// In the tool callbacks, preparer() only finds the caller: the identity the HTTP request
// authenticated, handed over as the SDK's authInfo.

import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { ServiceError } from '../errors.ts';
import type { Identity } from '../auth/identity.ts';
import type { HttpLogger } from '../http/logging.ts';
import type { PrepareCall } from './tools.ts';

/** The JSON-RPC error code of a tool call over the daily limit (server-defined range). */
export const MCP_RATE_LIMIT_EXCEEDED = -32029;

export function preparer(log: HttpLogger): PrepareCall {
  return async (extra) => {
    const { identity, clientAddress } = (extra.authInfo?.extra ?? {}) as { identity?: Identity; clientAddress?: string };
    // Unreachable through /api/mcp, which authenticates every request first.
    if (!identity) throw new McpError(ErrorCode.InvalidRequest, 'not authenticated');
    return { identity, clientAddress: clientAddress ?? '', signal: extra.signal, log };
  };
}

type JsonRpcId = string | number | null;

/** The ids of the tools/call requests in a POST body (one message or a batch); [] when none or not JSON. */
export function toolCallIds(body: unknown): JsonRpcId[] {
  const messages = Array.isArray(body) ? body : [body];
  const ids: JsonRpcId[] = [];
  for (const m of messages) {
    if (m && typeof m === 'object' && (m as { method?: unknown }).method === 'tools/call') ids.push((m as { id?: JsonRpcId }).id ?? null);
  }
  return ids;
}

/** The JSON-RPC answer refusing these tool calls: the error's message as REST would give it. */
export function refuseToolCalls(ids: JsonRpcId[], err: ServiceError, batch: boolean): Response {
  const retryAfter = err.headers.find(([k]) => k.toLowerCase() === 'retry-after')?.[1];
  const code = err.errorCode === 'API_RATE_LIMIT_EXCEEDED' ? MCP_RATE_LIMIT_EXCEEDED : ErrorCode.InternalError;
  const data = { errorCode: err.errorCode, ...(retryAfter ? { retryAfterSeconds: Number(retryAfter) } : {}) };
  const answers = ids.map((id) => ({ jsonrpc: '2.0', id, error: { code, message: err.message, data } }));
  return new Response(JSON.stringify(batch ? answers : answers[0]), {
    status: 200,
    headers: { 'content-type': 'application/json', ...Object.fromEntries(err.headers) },
  });
}
