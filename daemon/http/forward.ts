// Browsing through any node of a cluster (docs/deployment.md). A route that reads a
// repository's source (browse.ts, history.ts) is wrapped here: in a cluster, a node that
// cannot read that source itself (local-source.ts) has a node that can run the request
// (cluster/forward.ts carries its method, path, body and the caller as this node
// authenticated them) and answers with that node's answer. The repository is found here
// first, so an unknown or unseen one is the same 404 as on one node without a hop.
//
// The request was counted against the caller's daily limit here, once; the node that runs
// it does not count it again (forward-endpoint.ts). A request that came forwarded is never
// forwarded again: a node sent one that it cannot read either answers 503.

import { identityRef } from '../auth/identity.ts';
import type { ForwardedReply, ForwardRequest } from '../cluster/forward.ts';
import { ERROR_CODES, ServiceError, type ErrorCode } from '../errors.ts';
import { readsHere, type Reads } from './local-source.ts';
import { RawJson } from './respond.ts';
import type { Route, RouteContext, RouteResult } from './route.ts';
import type { Services } from './services.ts';

/** `route`, run by a node that can read the repository `repoName` names (`reads`: what the route reads of it). */
export function readingRepository(s: Services, reads: Reads, repoName: (ctx: RouteContext) => string, route: Route): Route {
  return {
    ...route,
    forwardable: true,
    async handle(ctx) {
      const node = s.cluster?.();
      if (!node) return route.handle(ctx);
      const repo = s.catalog.find(repoName(ctx), ctx.identity);
      if (await readsHere(s.catalog, s.dataDir, repo, reads)) return route.handle(ctx);
      if (ctx.forwardedFrom !== undefined) {
        throw new ServiceError(
          'SERVICE_UNAVAILABLE',
          `${repo.name} cannot be read on this node either (node ${ctx.forwardedFrom} forwarded the request here); retry later`,
        );
      }
      return answer(await node.forward(repo, repo.kind === 'directory', request(route, ctx), ctx.signal));
    },
  };
}

/** The request as the route received it: its validated input (the same for an HTTP caller and the tool server's). */
function request(route: Route, ctx: RouteContext): ForwardRequest {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries((ctx.query ?? {}) as Record<string, unknown>)) if (v !== undefined) query.set(k, String(v));
  const qs = query.toString();
  const r: ForwardRequest = {
    method: route.method === 'POST' ? 'POST' : 'GET',
    target: qs ? `${route.path}?${qs}` : route.path,
    identity: identityRef(ctx.identity),
    requestId: ctx.id,
  };
  if (route.method === 'POST' && ctx.body !== undefined) {
    r.body = Buffer.from(JSON.stringify(ctx.body));
    r.contentType = 'application/json';
  }
  return r;
}

/**
 * The other node's answer as this route's: an error object becomes the same ServiceError
 * (rendered here as every error is: Retry-After, WWW-Authenticate), anything else its JSON
 * as sent, with the headers the route set there. Forwarded routes answer JSON only.
 */
function answer(reply: ForwardedReply): RouteResult {
  const headers = reply.headers.filter(([k]) => k.toLowerCase() !== 'content-type');
  if (reply.status >= 400) {
    const e = errorObject(reply.body);
    if (e) throw new ServiceError(e.errorCode in ERROR_CODES ? (e.errorCode as ErrorCode) : 'UNEXPECTED_ERROR', e.message, reply.status, headers);
  }
  return { status: reply.status, body: new RawJson(reply.body), headers };
}

function errorObject(body: Buffer): { errorCode: string; message: string } | undefined {
  try {
    const e = JSON.parse(body.toString('utf8')) as { errorCode?: unknown; message?: unknown };
    return typeof e.errorCode === 'string' && typeof e.message === 'string' ? { errorCode: e.errorCode, message: e.message } : undefined;
  } catch {
    return undefined;
  }
}
