// The HTTP server, over whichever transport serves the sockets (transport.ts). Every
// request takes the same path:
//   route lookup (404 NOT_FOUND, 405 METHOD_NOT_ALLOWED with Allow)
//   -> authentication and rate limit (auth.ts; system endpoints skip both)
//   -> body (413, 415, 400) and query string (400), validated by the route's schemas
//   -> handler -> JSON or a stream; errors rendered as the error object, never a stack.
// Each request gets an id (X-Request-Id: the client's when it is sane, else a new one),
// one log line when it ends, and its count and latency in the metrics.

import { randomUUID } from 'node:crypto';
import { answerFor, ServiceError } from '../errors.ts';
import { API_KEY_HEADERS, credentialSent, readCredentials } from './auth.ts';
import type { Authenticator } from '../auth/identity.ts';
import type { RateLimiter } from '../ratelimit/limiter.ts';
import { parseJsonBody, parseQuery, readBody } from './body.ts';
import { ClientAddresses } from './client-address.ts';
import type { HttpLogger } from './logging.ts';
import type { Metrics } from './metrics.ts';
import { Reply, statusText } from './respond.ts';
import { INTERNAL_PREFIX, LINK_MAX_MESSAGE_BYTES, LINK_PATH, type InternalLink, type InternalRoute } from '../cluster/internal-route.ts';

export { INTERNAL_PREFIX, type InternalRoute } from '../cluster/internal-route.ts';
import type { Route, RouteContext } from './route.ts';
import { chooseTransport } from './choose-transport.ts';
import type { Incoming, LinkEndpoint, Refusal, Transport, Unparsed } from './transport.ts';
import type { Validate, Validators } from './validate.ts';

export interface HttpServerOptions {
  host: string;
  /** 0: any free port. */
  port: number;
  routes: Route[];
  /** Routes outside /api served as they are (GET /metrics); `handle` checks its own access (401/403 thrown as ServiceError). */
  extra?: Array<{ method: 'GET'; path: string; handle(headers: Readonly<Record<string, string>>): Promise<{ status?: number; contentType: string; body: string }> }>;
  /**
   * The web UI (daemon/web/): GET and HEAD of a path outside /api/ that no route claims.
   * Answers with a page or asset, or undefined for a 404.
   */
  web?: (url: string, headers: Record<string, string>) => Promise<WebResponse | undefined>;
  validators: Validators;
  authenticator: Authenticator;
  rateLimiter: RateLimiter;
  logger: HttpLogger;
  metrics?: Metrics;
  maxBodyBytes: number;
  /** Tells the client's address from the peer's (trusted proxies); default: the peer is the client. */
  clientAddresses?: ClientAddresses;
  /** The WWW-Authenticate value of a 401 at `path` (RFC 9110 section 11.6.1: every 401 carries one). */
  challenge?: (path: string, credentialSent: boolean) => Promise<string>;
  /**
   * A cluster's node-to-node endpoints (cluster/), under INTERNAL_PREFIX: never in the API's
   * document, never reachable with a user's credentials (`authenticate` checks the
   * cluster's own), never rate limited.
   */
  /** What serves the sockets; default: chooseTransport() (uWS where it loads, else node:http). */
  transport?: Transport;
  internal?: {
    routes: InternalRoute[];
    authenticate(method: string, target: string, headers: Readonly<Record<string, string>>): void;
    /** The link endpoint (WebSocket), once the node serves it; undefined: upgrades answer 503. */
    link(): InternalLink | undefined;
  };
}

export interface WebResponse {
  status: number;
  body: string | Uint8Array;
  headers: Array<[string, string]>;
}

export interface HttpServer {
  port: number;
  /** Which transport serves it ('uws' or 'node'). */
  transport: string;
  /**
   * Drains: new requests get 503 SERVICE_UNAVAILABLE (health answers that it is shutting
   * down) on connections that then close; requests in flight may finish for `graceMs`.
   * Then those still running are aborted with that 503 as the signal's reason (a stream
   * ends with it as its final error event), and what has not ended WIND_DOWN_MS later is
   * cut. The listen socket closes last, so that a client that connects during the drain
   * is told to go elsewhere instead of being refused.
   */
  close(graceMs: number): Promise<void>;
}

/**
 * After the shutdown deadline, how long aborted requests get to send their last words;
 * and after the listen socket closes, how long responses get to leave before the
 * remaining connections are closed.
 */
const WIND_DOWN_MS = 1000;

/** On every response of a CORS route (route.ts `cors`), errors included. */
const CORS_HEADERS: Array<[string, string]> = [
  ['Access-Control-Allow-Origin', '*'],
  ['Access-Control-Expose-Headers', 'Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After'],
];
const CORS_REQUEST_HEADERS = ['Authorization', 'Content-Type', 'Accept', 'Mcp-Session-Id', 'Mcp-Protocol-Version', 'Last-Event-ID', ...API_KEY_HEADERS, 'X-Request-Id'].join(', ');

interface CompiledRoute {
  route: Route;
  segments: string[];
  body?: Validate<unknown>;
  query?: Validate<unknown>;
}

/**
 * The routes of one path, by method, with what every request to it needs computed once
 * (the metrics label, whether it is a CORS route, the Allow list) rather than per request.
 */
interface PathRoutes {
  byMethod: Map<string, CompiledRoute>;
  label: string;
  cors: boolean;
  /** The methods, for a CORS preflight; and for a 405's Allow (HEAD added with GET). */
  methods: string;
  allow: string;
}

interface Found {
  routes: PathRoutes;
  params: Record<string, string>;
}

const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

interface InFlight {
  reply: Reply;
  controller: AbortController;
}

export async function startHttpServer(options: HttpServerOptions): Promise<HttpServer> {
  const compiled: CompiledRoute[] = options.routes.map((route) => {
    const c: CompiledRoute = { route, segments: route.path.split('/') };
    if (route.body) c.body = options.validators.forBody(route.body);
    if (route.query) c.query = options.validators.forQuery(route.query);
    return c;
  });
  const table = routeTable(compiled);
  const inFlight = new Set<InFlight>();
  let draining = false;
  const addresses = options.clientAddresses ?? new ClientAddresses([]);

  const handle = (request: Incoming): void => {
    // The request's fields are the transport's copies; the body listener is attached below, in this tick.
    const started = process.hrtime.bigint();
    const { method, url, rawQuery, headers } = request;
    const clientAddress = addresses.of(request.remoteAddress, headers['x-forwarded-for']);
    const reply = new Reply(request.wire);
    reply.closeAfter = draining;
    const controller = new AbortController();
    const flight: InFlight = { reply, controller };
    inFlight.add(flight);
    const clientId = headers['x-request-id'];
    const id = clientId && /^[\w.:-]{1,128}$/.test(clientId) ? clientId : randomUUID();
    reply.headers.push(['X-Request-Id', id]);
    // The request's logger is made when something logs (most requests log one line only).
    let child: HttpLogger | undefined;
    const requestLog = (): HttpLogger => (child ??= options.logger.child({ reqId: id }));
    let routeLabel = 'unmatched';
    let abortBody: (() => void) | undefined;
    request.onAborted(() => {
      reply.abort();
      controller.abort();
      abortBody?.();
    });
    // HEAD is GET without a body (errors included).
    const lookup = method === 'HEAD' ? 'GET' : method;
    if (method === 'HEAD') reply.headOnly = true;
    // The body is subscribed to in this tick (the transport's rule).
    const internal = url.startsWith(INTERNAL_PREFIX) ? options.internal?.routes.find((r) => r.path === url && r.method === lookup) : undefined;
    const found = internal ? undefined : match(table, url);
    const forMethod = found?.routes.byMethod.get(lookup);
    const bodyPromise = ((forMethod?.body || forMethod?.route.rawBody) && (method === 'POST' || method === 'PATCH')) || (internal && method === 'POST') ? readBody(request, headers['content-length'] ?? '', options.maxBodyBytes, (abort) => (abortBody = abort)) : undefined;
    bodyPromise?.catch(() => {}); // handled below; never an unhandled rejection

    const run = async (): Promise<void> => {
      if (internal) {
        routeLabel = url;
        // Before the draining check: a node that is leaving still serves its shards to the
        // others while they copy them.
        options.internal!.authenticate(method, rawQuery ? `${url}?${rawQuery}` : url, headers);
        await internal.handle({ query: rawQuery, headers, body: bodyPromise ? await bodyPromise : undefined, reply, signal: controller.signal });
        return;
      }
      if (draining && !forMethod?.route.answersWhileDraining) throw new ServiceError('SERVICE_UNAVAILABLE', 'the server is shutting down; retry against another instance');
      const extra = lookup === 'GET' ? options.extra?.find((e) => e.path === url) : undefined;
      if (extra) {
        routeLabel = url;
        const out = await extra.handle(headers);
        reply.send(out.status ?? 200, out.body, [['Content-Type', out.contentType]]);
        return;
      }
      if (!found && options.web && lookup === 'GET' && !url.startsWith('/api/')) {
        const page = await options.web(url, headers);
        if (page) {
          routeLabel = 'web';
          reply.send(page.status, page.body, page.headers);
          return;
        }
      }
      if (!found) throw new ServiceError('NOT_FOUND', `no endpoint ${url}${url.startsWith('/api/') ? '' : ' (the API is under /api/)'}`);
      const { routes } = found;
      routeLabel = routes.label;
      const c = forMethod;
      const cors = routes.cors;
      if (cors) reply.headers.push(...CORS_HEADERS);
      if (cors && method === 'OPTIONS') {
        // A CORS preflight: which methods and request headers a script may use here.
        reply.send(204, '', [['Access-Control-Allow-Methods', routes.methods], ['Access-Control-Allow-Headers', CORS_REQUEST_HEADERS], ['Access-Control-Max-Age', '86400']]);
        return;
      }
      if (!c) {
        reply.headers.push(['Allow', routes.allow]);
        throw new ServiceError('METHOD_NOT_ALLOWED', `${url} does not accept ${method}; use ${routes.allow}`);
      }
      const route = c.route;
      const ctx: RouteContext = {
        id,
        identity: { kind: 'anonymous', canSee: () => false },
        body: undefined,
        query: undefined,
        rawQuery,
        params: found.params,
        headers,
        clientAddress,
        reply,
        // A getter: an AbortSignal is made only for a handler that reads it.
        get signal() {
          return controller.signal;
        },
        get log() {
          return requestLog();
        },
      };
      if (route.authenticated) {
        // A CORS route ignores the session cookie (auth.ts readCredentials): bearer credentials only.
        // From the client's address: a refusal is counted there (audit/auth-failures.ts).
        ctx.identity = await options.authenticator.authenticate({ ...readCredentials(headers, cors), from: clientAddress });
        if (route.rateLimited) {
          const state = await options.rateLimiter.take(ctx.identity);
          if (state) {
            reply.headers.push(['X-RateLimit-Limit', String(state.limit)], ['X-RateLimit-Remaining', String(state.remaining)], ['X-RateLimit-Reset', String(state.reset)]);
          }
        }
      }
      // A route without query parameters ignores a query string (cache busters and the like).
      if (c.query) ctx.query = c.query(parseQuery(rawQuery));
      if (c.body && bodyPromise) {
        const raw = await bodyPromise;
        ctx.body = c.body(parseJsonBody(raw, headers['content-type'] ?? ''));
      } else if (route.rawBody && bodyPromise) {
        ctx.rawBody = await bodyPromise;
      }
      const result = await route.handle(ctx);
      if (result === undefined) return; // the handler wrote the response
      if (result.status === 204) reply.send(204, '', result.headers ?? []);
      else await reply.json(result.status ?? route.response.status, result.body, result.headers ?? []);
    };

    run()
      .catch(async (err: unknown) => {
        // A write that hit a full disk is the operator's to fix, not a bug: 503, logged as such.
        const { error: e, unexpected, diskFull } = answerFor(err, id);
        if (diskFull) requestLog().error({ err: (err as Error).message, method, url }, 'a write failed: the disk of the data directory is full');
        else if (unexpected && !reply.aborted) requestLog().error({ err: errorFields(err), method, url }, 'request failed');
        const out: Array<[string, string]> = [...e.headers];
        if (e.errorCode === 'SERVICE_UNAVAILABLE' && !out.some(([k]) => k.toLowerCase() === 'retry-after')) out.push(['Retry-After', '1']);
        if (e.statusCode === 401 && options.challenge) {
          out.push(['WWW-Authenticate', await options.challenge(url, credentialSent(headers))]);
        }
        // After a 413 the rest of the body is still on the wire: close the connection.
        if (reply.started && !reply.finished) reply.end();
        else reply.error(e, out, e.errorCode === 'REQUEST_TOO_LARGE' || draining);
      })
      .finally(() => {
        inFlight.delete(flight);
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        const status = reply.aborted && reply.status === 0 ? 499 : reply.status;
        options.metrics?.request(method, routeLabel, status, seconds);
        // Through the parent with reqId first: the same line as the child's, without making one.
        (child ?? options.logger).info({ ...(child ? {} : { reqId: id }), method, url, route: routeLabel, status, ms: Math.round(seconds * 1e4) / 10, bytes: reply.bytes, aborted: reply.aborted || undefined }, 'request');
      });
  };

  const transport = options.transport ?? chooseTransport();
  const listening = await transport.listen({
    host: options.host,
    port: options.port,
    handle,
    ...(options.internal ? { links: linkEndpoint(options.internal) } : {}),
    refuse: (what) => refusal(UNPARSED[what]),
  });
  let closing: Promise<void> | undefined;
  return {
    port: listening.port,
    transport: transport.name,
    close(graceMs: number): Promise<void> {
      closing ??= (async () => {
        draining = true;
        for (const f of inFlight) f.reply.closeAfter = true;
        const settled = async (until: number) => {
          while (inFlight.size > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
        };
        await settled(Date.now() + graceMs);
        if (inFlight.size > 0) {
          const reason = new ServiceError('SERVICE_UNAVAILABLE', `the server is shutting down and stopped this request at its shutdown deadline (${graceMs} ms); retry against another instance`);
          for (const f of inFlight) f.controller.abort(reason);
          await settled(Date.now() + WIND_DOWN_MS);
          for (const f of inFlight) f.reply.close();
        }
        listening.closeListener();
        // Responses just ended may still be on their way out: closing every connection now
        // would cut them. Idle keep-alive connections and links go a moment later.
        setTimeout(() => listening.closeConnections(), WIND_DOWN_MS).unref();
      })();
      return closing;
    },
  };
}

/** The answers to what a transport's parser refused (transport.ts Unparsed): what the routes would have answered. */
const UNPARSED: Record<Unparsed, ServiceError> = {
  path: new ServiceError('NOT_FOUND', 'no endpoint at this path (it is not valid text: bytes above 0x7f must be percent-encoded)'),
  query: new ServiceError('INVALID_QUERY_PARAMS', 'the query string has invalid percent-encoding or UTF-8'),
  length: new ServiceError('REQUEST_TOO_LARGE', 'the request body is larger than the limit (its Content-Length is not even a safe integer)'),
};

function refusal(e: ServiceError): Refusal {
  return { status: e.statusCode, statusText: statusText(e.statusCode), body: JSON.stringify(e.toJSON()) };
}

/**
 * A cluster's links (cluster/link-frames.ts) as the transport serves them: GET of the
 * link's path with the cluster's credential upgrades to a WebSocket whose binary messages
 * go to the node's link session; anything else gets the API's error object (401 without
 * the credential, 503 before the node has joined). Links stay up while the server drains:
 * the others still search this node's shards while it leaves.
 */
function linkEndpoint(internal: NonNullable<HttpServerOptions['internal']>): LinkEndpoint {
  return {
    path: LINK_PATH,
    maxMessageBytes: LINK_MAX_MESSAGE_BYTES,
    admit(headers) {
      try {
        internal.authenticate('GET', LINK_PATH, headers);
        if (!internal.link()) throw new ServiceError('SERVICE_UNAVAILABLE', 'this node is still joining the cluster');
        return undefined;
      } catch (err) {
        return refusal(answerFor(err, 'link').error);
      }
    },
    open: (peer) => internal.link()!.open(peer),
  };
}

/**
 * The routes by path: a path without parameters is found with one map lookup; those with
 * `{name}` segments (few) are tried in order. The first route of a path names it in the
 * metrics; a path's routes are merged by method, the first of a method winning.
 */
function routeTable(compiled: CompiledRoute[]): { fixed: Map<string, PathRoutes>; templated: Array<{ segments: string[]; routes: PathRoutes }> } {
  const byPath = new Map<string, { segments: string[]; list: CompiledRoute[] }>();
  for (const c of compiled) {
    // Paths that differ only in their parameters' names match the same URLs: one entry.
    const shape = c.segments.map((s) => (isParam(s) ? '{}' : s)).join('/');
    const entry = byPath.get(shape) ?? { segments: c.segments, list: [] };
    entry.list.push(c);
    byPath.set(shape, entry);
  }
  const fixed = new Map<string, PathRoutes>();
  const templated: Array<{ segments: string[]; routes: PathRoutes }> = [];
  for (const { segments, list } of byPath.values()) {
    const byMethod = new Map<string, CompiledRoute>();
    for (const c of list) if (!byMethod.has(c.route.method)) byMethod.set(c.route.method, c);
    const methods = [...byMethod.keys()];
    const allow = methods.includes('GET') ? [...methods, 'HEAD'] : methods;
    const routes: PathRoutes = { byMethod, label: list[0]!.route.path, cors: list.some((c) => c.route.cors), methods: methods.join(', '), allow: allow.join(', ') };
    if (segments.some(isParam)) templated.push({ segments, routes });
    else fixed.set(segments.join('/'), routes);
  }
  // A fixed path that a templated one also matches would have two sets of methods: refuse it.
  for (const path of fixed.keys()) {
    const parts = path.split('/');
    const other = templated.find((t) => t.segments.length === parts.length && t.segments.every((s, i) => isParam(s) || s === parts[i]));
    if (other) throw new Error(`route ${path} overlaps ${other.routes.label}`);
  }
  return { fixed, templated };
}

function isParam(segment: string): boolean {
  return segment.startsWith('{') && segment.endsWith('}');
}

function match(table: ReturnType<typeof routeTable>, url: string): Found | undefined {
  const routes = table.fixed.get(url);
  if (routes) return { routes, params: NO_PARAMS };
  const parts = url.split('/');
  for (const t of table.templated) {
    if (t.segments.length !== parts.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    for (let i = 0; i < parts.length && ok; i++) {
      const s = t.segments[i]!;
      if (isParam(s)) {
        if (parts[i] === '') ok = false;
        else params[s.slice(1, -1)] = safeDecode(parts[i]!);
      } else if (s !== parts[i]) ok = false;
    }
    if (ok) return { routes: t.routes, params };
  }
  return undefined;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof Error) return { type: err.name, message: err.message, stack: err.stack };
  return { value: String(err) };
}
