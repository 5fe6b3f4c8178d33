// POST /_cluster/forward (cluster/forward.ts has its wire format): runs, for another node of
// the cluster, an API request that node could not serve because it cannot read the
// repository's source (forward.ts). Only routes that read a repository's source run here
// (Route.forwardable). The request goes through the route as it would through the HTTP
// server, in the same order: the caller (read again from the shared store: a key revoked or
// a user suspended since is refused here too), the query string and body checked against
// the route's schemas, the handler. Not the daily limit: the forwarding node counted the
// request. The route's answer, error objects included, goes back inside a 200 (forward.ts
// sendForwarded); an error of the forwarding itself (not signed, not a forwarded request,
// no such route) is this endpoint's own status.

import type { Authenticator, Identity } from '../auth/identity.ts';
import { FORWARD_PATH, parseForward, sendForwarded } from '../cluster/forward.ts';
import type { InternalRoute } from '../cluster/internal-route.ts';
import { NODE_HEADER } from '../cluster/peer-auth.ts';
import { answerFor, ServiceError } from '../errors.ts';
import { parseJsonBody, parseQuery } from './body.ts';
import type { HttpLogger } from './logging.ts';
import { JSON_TYPE, RawJson, type Reply } from './respond.ts';
import type { Route, RouteContext } from './route.ts';
import type { Validate, Validators } from './validate.ts';

export interface ForwardEndpointOptions {
  routes: Route[];
  validators: Validators;
  authenticator: Authenticator;
  logger: HttpLogger;
}

export function forwardEndpoint(o: ForwardEndpointOptions): InternalRoute {
  const table = new Map<string, { route: Route; query?: Validate<unknown>; body?: Validate<unknown> }>();
  for (const route of o.routes) {
    if (!route.forwardable) continue;
    table.set(`${route.method} ${route.path}`, {
      route,
      ...(route.query ? { query: o.validators.forQuery(route.query) } : {}),
      ...(route.body ? { body: o.validators.forBody(route.body) } : {}),
    });
  }
  const resume = async (ref: Parameters<NonNullable<Authenticator['resume']>>[0]): Promise<Identity> => {
    if (!o.authenticator.resume) throw new ServiceError('NOT_AUTHENTICATED', 'this node cannot act for a caller another node authenticated');
    return o.authenticator.resume(ref);
  };
  return {
    method: 'POST',
    path: FORWARD_PATH,
    async handle({ query, headers, body, reply, signal }) {
      const r = parseForward(query, body);
      const at = r.target.indexOf('?');
      const path = at < 0 ? r.target : r.target.slice(0, at);
      const rawQuery = at < 0 ? '' : r.target.slice(at + 1);
      const entry = table.get(`${r.method} ${path}`);
      if (!entry) throw new ServiceError('NOT_FOUND', `${r.method} ${path} is not a route another node may forward`);
      // The sender, as its signature (checked before this handler) names it.
      const from = (headers[NODE_HEADER] ?? '').split(':')[0] ?? '';
      const id = r.requestId ?? 'forwarded';
      const log = o.logger.child({ reqId: id, forwardedFrom: from });
      try {
        const ctx: RouteContext = {
          id,
          identity: await resume(r.identity),
          body: undefined,
          query: undefined,
          rawQuery,
          params: {},
          headers: {},
          // The client's address was the forwarding node's business.
          clientAddress: '',
          reply: NO_REPLY,
          signal,
          log,
          forwardedFrom: from,
        };
        if (entry.query) ctx.query = entry.query(parseQuery(rawQuery));
        if (entry.body) ctx.body = entry.body(parseJsonBody(r.body ?? Buffer.alloc(0), r.contentType ?? ''));
        const result = await entry.route.handle(ctx);
        if (result === undefined) throw new Error(`${r.method} ${path} wrote its own response; it cannot be forwarded`);
        const out = result.body instanceof RawJson ? result.body.bytes : JSON.stringify(result.body);
        sendForwarded(reply, result.status ?? entry.route.response.status, JSON_TYPE, out, result.headers ?? []);
      } catch (err) {
        const { error: e, unexpected, diskFull } = answerFor(err, id);
        if (unexpected || diskFull)
          log.error(
            { err: (err as Error).message, method: r.method, url: path },
            diskFull ? 'a write failed: the disk of the data directory is full' : 'forwarded request failed',
          );
        sendForwarded(reply, e.statusCode, JSON_TYPE, JSON.stringify(e.toJSON()), e.headers);
      }
    },
  };
}

/** Forwarded routes answer by returning their JSON (Route.forwardable); none writes to the reply. */
const NO_REPLY = new Proxy({} as Reply, {
  get(_target, prop) {
    throw new Error(`a forwarded route touched the HTTP reply (${String(prop)})`);
  },
});
