// How a tool of the tool server (MCP) answers: by running the REST route that answers the
// same question, through the same validation, with the caller's identity. A tool can
// therefore never see more than the REST API shows the same credential (scoped tokens
// included), and its results are the REST answers by construction; only the presentation
// for a language model (tools.ts) is the tool's own.

import type { Identity } from '../auth/identity.ts';
import type { HttpLogger } from '../http/logging.ts';
import { RawJson, type Reply } from '../http/respond.ts';
import type { Route } from '../http/route.ts';
import type { Validators } from '../http/validate.ts';

/**
 * `METHOD /api/path` of a route that answers with JSON (not the streaming search), its
 * path parameters as the route declares them: `GET /api/watches/{id}`.
 */
export type RouteKey = `${'GET' | 'POST' | 'DELETE'} /api/${string}`;

export interface ToolCaller {
  identity: Identity;
  /** The address of the client whose tool server request this is (http/client-address.ts). */
  clientAddress: string;
  /** Aborted when the MCP request is cancelled or its HTTP client goes away. */
  signal: AbortSignal;
  log: HttpLogger;
}

/** The answer of a route: its JSON body and the headers it set (paging: X-Total-Count). */
export interface RouteAnswer {
  body: unknown;
  headers: Array<[string, string]>;
}

/** `params`: the route's path parameters (`{ id: '7' }` for `{id}`), given as the path would carry them. */
export type Invoke = (route: RouteKey, input: Record<string, unknown>, caller: ToolCaller, params?: Record<string, string>) => Promise<RouteAnswer>;

/**
 * An Invoke over the daemon's route table. `input` is the JSON body of a POST route, or the
 * query parameters of a GET route (given as values and validated, with defaults and type
 * coercion, exactly as a query string would be); a DELETE route takes neither. Errors are
 * the routes' ServiceErrors.
 */
export function routeInvoker(routes: Route[], validators: Validators): Invoke {
  const table = new Map<string, { route: Route; validate?: (v: unknown) => unknown }>();
  for (const route of routes) {
    if (route.method !== 'GET' && route.method !== 'POST' && route.method !== 'DELETE') continue;
    const validate = route.body ? validators.forBody(route.body) : route.query ? validators.forQuery(route.query) : undefined;
    table.set(`${route.method} ${route.path}`, { route, ...(validate ? { validate } : {}) });
  }
  return async (key, input, caller, params = {}) => {
    const entry = table.get(key);
    if (!entry) throw new Error(`no route ${key}`);
    const { route, validate } = entry;
    let value: unknown;
    if (validate) {
      if (route.method === 'GET') {
        // As a query string carries them: strings, undefined left out.
        const query: Record<string, string> = {};
        for (const [k, v] of Object.entries(input)) if (v !== undefined) query[k] = String(v);
        value = validate(query);
      } else {
        value = validate(structuredClone(input));
      }
    }
    const result = await route.handle({
      id: `mcp-${route.operationId}`,
      identity: caller.identity,
      body: route.method === 'POST' ? value : undefined,
      query: route.method === 'GET' ? value : undefined,
      rawQuery: '',
      params,
      headers: {},
      // The tool server's own request was the network one: its client is the caller.
      clientAddress: caller.clientAddress,
      // JSON routes answer by returning; only the streaming search writes to the reply,
      // and no tool calls it.
      reply: NO_REPLY,
      signal: caller.signal,
      log: caller.log,
    });
    if (result === undefined) throw new Error(`${key} wrote its own response; a tool cannot use it`);
    // A search answers with its JSON already written (search/wire.ts): a tool reads the object.
    return { body: result.body instanceof RawJson ? result.body.value() : result.body, headers: result.headers ?? [] };
  };
}

const NO_REPLY = new Proxy({} as Reply, {
  get(_target, prop) {
    throw new Error(`a route called by a tool touched the HTTP reply (${String(prop)})`);
  },
});
