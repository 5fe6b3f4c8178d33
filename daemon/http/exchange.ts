// One request's way through the HTTP server (server.ts), from the transport's Incoming to
// its answer:
//   route lookup (404 NOT_FOUND, 405 METHOD_NOT_ALLOWED with Allow)
//   -> authentication and rate limit (auth.ts; system endpoints skip both)
//   -> body (413, 415, 400) and query string (400), validated by the route's schemas
//   -> handler -> JSON or a stream; errors rendered as the error object, never a stack.
// Each request gets an id (X-Request-Id: the client's when it is sane, else a new one),
// one log line when it ends, and its count and latency in the metrics.

import { randomUUID } from 'node:crypto';
import type { Authenticator } from '../auth/identity.ts';
import { INTERNAL_PREFIX, type InternalLink, type InternalRoute } from '../cluster/internal-route.ts';
import { answerFor, ServiceError } from '../errors.ts';
import type { RateLimiter } from '../ratelimit/limiter.ts';
import { API_KEY_HEADERS, credentialSent, readCredentials } from './auth.ts';
import { parseJsonBody, parseQuery, readBody } from './body.ts';
import type { ClientAddresses } from './client-address.ts';
import type { HttpLogger } from './logging.ts';
import type { Metrics } from './metrics.ts';
import { Reply } from './respond.ts';
import type { RouteContext } from './route.ts';
import { match, type CompiledRoute, type Found, type RouteTable } from './route-table.ts';
import type { Incoming } from './transport.ts';

export interface RequestOptions {
  /** Routes outside /api served as they are (GET /metrics); `handle` checks its own access (401/403 thrown as ServiceError). */
  extra?: Array<{
    method: 'GET';
    path: string;
    handle(headers: Readonly<Record<string, string>>): Promise<{ status?: number; contentType: string; body: string }>;
  }>;
  /**
   * The web UI (daemon/web/): GET and HEAD of a path outside /api/ that no route claims.
   * Answers with a page or asset, or undefined for a 404.
   */
  web?: (url: string, headers: Record<string, string>) => Promise<WebResponse | undefined>;
  authenticator: Authenticator;
  rateLimiter: RateLimiter;
  logger: HttpLogger;
  metrics?: Metrics;
  maxBodyBytes: number;
  /** The WWW-Authenticate value of a 401 at `path` (RFC 9110 section 11.6.1: every 401 carries one). */
  challenge?: (path: string, credentialSent: boolean) => Promise<string>;
  /**
   * A cluster's node-to-node endpoints (cluster/), under INTERNAL_PREFIX: never in the API's
   * document, never reachable with a user's credentials (`authenticate` checks the
   * cluster's own), never rate limited.
   */
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

/** A request under way: what the server's shutdown waits for, and aborts at its deadline. */
export interface InFlight {
  reply: Reply;
  controller: AbortController;
}

/** What every request of one server shares. */
export interface ServerState {
  readonly options: RequestOptions;
  readonly table: RouteTable;
  readonly inFlight: Set<InFlight>;
  /** Set when the server starts shutting down. */
  draining: boolean;
  readonly addresses: ClientAddresses;
}

/** On every response of a CORS route (route.ts `cors`), errors included. */
const CORS_HEADERS: Array<[string, string]> = [
  ['Access-Control-Allow-Origin', '*'],
  [
    'Access-Control-Expose-Headers',
    'Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate, X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After',
  ],
];
const CORS_REQUEST_HEADERS = [
  'Authorization',
  'Content-Type',
  'Accept',
  'Mcp-Session-Id',
  'Mcp-Protocol-Version',
  'Last-Event-ID',
  ...API_KEY_HEADERS,
  'X-Request-Id',
].join(', ');

export class Exchange {
  readonly #state: ServerState;
  readonly #request: Incoming;
  readonly #started = process.hrtime.bigint();
  readonly #reply: Reply;
  readonly #controller = new AbortController();
  readonly #flight: InFlight;
  readonly #id: string;
  readonly #clientAddress: string;
  /** GET for a HEAD (HEAD is GET without a body, errors included). */
  readonly #lookup: string;
  readonly #internal: InternalRoute | undefined;
  readonly #found: Found | undefined;
  readonly #forMethod: CompiledRoute | undefined;
  #bodyPromise: Promise<Buffer> | undefined;
  #abortBody: (() => void) | undefined;
  /** The request's logger, made when something logs (most requests log one line only). */
  #child: HttpLogger | undefined;
  #routeLabel = 'unmatched';

  constructor(state: ServerState, request: Incoming) {
    this.#state = state;
    this.#request = request;
    const { headers, method, url } = request;
    this.#clientAddress = state.addresses.of(request.remoteAddress, headers['x-forwarded-for']);
    this.#reply = new Reply(request.wire);
    this.#reply.closeAfter = state.draining;
    this.#flight = { reply: this.#reply, controller: this.#controller };
    const clientId = headers['x-request-id'];
    this.#id = clientId && /^[\w.:-]{1,128}$/.test(clientId) ? clientId : randomUUID();
    this.#reply.headers.push(['X-Request-Id', this.#id]);
    this.#lookup = method === 'HEAD' ? 'GET' : method;
    if (method === 'HEAD') this.#reply.headOnly = true;
    this.#internal = url.startsWith(INTERNAL_PREFIX) ? state.options.internal?.routes.find((r) => r.path === url && r.method === this.#lookup) : undefined;
    this.#found = this.#internal ? undefined : match(state.table, url);
    this.#forMethod = this.#found?.routes.byMethod.get(this.#lookup);
  }

  /** Runs in the tick the request arrived in: the abort and body listeners are attached now (the transport's rule). */
  start(): void {
    const { method, headers } = this.#request;
    this.#state.inFlight.add(this.#flight);
    this.#request.onAborted(() => {
      this.#reply.abort();
      this.#controller.abort();
      this.#abortBody?.();
    });
    const c = this.#forMethod;
    const wantsBody = ((c?.body || c?.route.rawBody) && (method === 'POST' || method === 'PUT' || method === 'PATCH')) || (this.#internal && method === 'POST');
    if (wantsBody) {
      this.#bodyPromise = readBody(this.#request, headers['content-length'] ?? '', this.#state.options.maxBodyBytes, (abort) => (this.#abortBody = abort));
      this.#bodyPromise.catch(() => {}); // handled where it is awaited; never an unhandled rejection
    }
    // In flight until the answer has left for the socket, not only until it was handed over:
    // a shutdown waits for it (server.ts close), and the log line's time includes it.
    this.#run()
      .catch((err: unknown) => this.#fail(err))
      .then(() => this.#reply.sent())
      .finally(() => this.#finish());
  }

  #log(): HttpLogger {
    this.#child ??= this.#state.options.logger.child({ reqId: this.#id });
    return this.#child;
  }

  async #run(): Promise<void> {
    const { url, rawQuery, headers, method } = this.#request;
    const options = this.#state.options;
    const reply = this.#reply;
    if (this.#internal) {
      this.#routeLabel = url;
      // Before the draining check: a node that is leaving still serves its shards to the
      // others while they copy them.
      options.internal!.authenticate(method, rawQuery ? `${url}?${rawQuery}` : url, headers);
      await this.#internal.handle({
        query: rawQuery,
        headers,
        body: this.#bodyPromise ? await this.#bodyPromise : undefined,
        reply,
        signal: this.#controller.signal,
      });
      return;
    }
    if (this.#state.draining && !this.#forMethod?.route.answersWhileDraining)
      throw new ServiceError('SERVICE_UNAVAILABLE', 'the server is shutting down; retry against another instance');
    const extra = this.#lookup === 'GET' ? options.extra?.find((e) => e.path === url) : undefined;
    if (extra) {
      this.#routeLabel = url;
      const out = await extra.handle(headers);
      reply.send(out.status ?? 200, out.body, [['Content-Type', out.contentType]]);
      return;
    }
    if (!this.#found && options.web && this.#lookup === 'GET' && !url.startsWith('/api/')) {
      const page = await options.web(url, headers);
      if (page) {
        this.#routeLabel = 'web';
        reply.send(page.status, page.body, page.headers);
        return;
      }
    }
    if (!this.#found) throw new ServiceError('NOT_FOUND', `no endpoint ${url}${url.startsWith('/api/') ? '' : ' (the API is under /api/)'}`);
    await this.#serveRoute(this.#found);
  }

  /** A route of the API: CORS, 405, authentication and rate limit, query and body, the handler. */
  async #serveRoute(found: Found): Promise<void> {
    const { url, rawQuery, headers, method } = this.#request;
    const options = this.#state.options;
    const reply = this.#reply;
    const { routes } = found;
    this.#routeLabel = routes.label;
    const cors = routes.cors;
    if (cors) reply.headers.push(...CORS_HEADERS);
    if (cors && method === 'OPTIONS') {
      // A CORS preflight: which methods and request headers a script may use here.
      reply.send(204, '', [
        ['Access-Control-Allow-Methods', routes.methods],
        ['Access-Control-Allow-Headers', CORS_REQUEST_HEADERS],
        ['Access-Control-Max-Age', '86400'],
      ]);
      return;
    }
    const c = this.#forMethod;
    if (!c) {
      reply.headers.push(['Allow', routes.allow]);
      throw new ServiceError('METHOD_NOT_ALLOWED', `${url} does not accept ${method}; use ${routes.allow}`);
    }
    const route = c.route;
    const ctx = this.#context(found.params);
    if (route.authenticated) {
      // A CORS route ignores the session cookie (auth.ts readCredentials): bearer credentials only.
      // From the client's address: a refusal is counted there (audit/auth-failures.ts).
      ctx.identity = await options.authenticator.authenticate({ ...readCredentials(headers, cors), from: this.#clientAddress });
      if (route.rateLimited) {
        const state = await options.rateLimiter.take(ctx.identity);
        if (state)
          reply.headers.push(
            ['X-RateLimit-Limit', String(state.limit)],
            ['X-RateLimit-Remaining', String(state.remaining)],
            ['X-RateLimit-Reset', String(state.reset)],
          );
      }
    }
    // A route without query parameters ignores a query string (cache busters and the like).
    if (c.query) ctx.query = c.query(parseQuery(rawQuery));
    if (c.body && this.#bodyPromise) ctx.body = c.body(parseJsonBody(await this.#bodyPromise, headers['content-type'] ?? ''));
    else if (route.rawBody && this.#bodyPromise) ctx.rawBody = await this.#bodyPromise;
    const result = await route.handle(ctx);
    if (result === undefined) return; // the handler wrote the response
    if (result.status === 204) reply.send(204, '', result.headers ?? []);
    else await reply.json(result.status ?? route.response.status, result.body, result.headers ?? []);
  }

  #context(params: Record<string, string>): RouteContext {
    const exchange = this;
    return {
      id: this.#id,
      identity: { kind: 'anonymous', canSee: () => false },
      body: undefined,
      query: undefined,
      rawQuery: this.#request.rawQuery,
      params,
      headers: this.#request.headers,
      clientAddress: this.#clientAddress,
      reply: this.#reply,
      // A getter: an AbortSignal is made only for a handler that reads it.
      get signal() {
        return exchange.#controller.signal;
      },
      get log() {
        return exchange.#log();
      },
    };
  }

  /** The error object for what went wrong; a stream already started is ended instead. */
  async #fail(err: unknown): Promise<void> {
    const { method, url, headers } = this.#request;
    const reply = this.#reply;
    // A write that hit a full disk is the operator's to fix, not a bug: 503, logged as such.
    const { error: e, unexpected, diskFull } = answerFor(err, this.#id);
    if (diskFull) this.#log().error({ err: (err as Error).message, method, url }, 'a write failed: the disk of the data directory is full');
    else if (unexpected && !reply.aborted) this.#log().error({ err: errorFields(err), method, url }, 'request failed');
    const out: Array<[string, string]> = [...e.headers];
    if (e.errorCode === 'SERVICE_UNAVAILABLE' && !out.some(([k]) => k.toLowerCase() === 'retry-after')) out.push(['Retry-After', '1']);
    const challenge = this.#state.options.challenge;
    if (e.statusCode === 401 && challenge) out.push(['WWW-Authenticate', await challenge(url, credentialSent(headers))]);
    // After a 413 the rest of the body is still on the wire: close the connection.
    if (reply.started && !reply.finished) reply.end();
    else reply.error(e, out, e.errorCode === 'REQUEST_TOO_LARGE' || this.#state.draining);
  }

  /** Its count and latency in the metrics, and its one log line. */
  #finish(): void {
    const { method, url } = this.#request;
    const reply = this.#reply;
    this.#state.inFlight.delete(this.#flight);
    const seconds = Number(process.hrtime.bigint() - this.#started) / 1e9;
    const status = reply.aborted && reply.status === 0 ? 499 : reply.status;
    this.#state.options.metrics?.request(method, this.#routeLabel, status, seconds);
    const child = this.#child;
    // Through the parent with reqId first: the same line as the child's, without making one.
    (child ?? this.#state.options.logger).info(
      {
        ...(child ? {} : { reqId: this.#id }),
        method,
        url,
        route: this.#routeLabel,
        status,
        ms: Math.round(seconds * 1e4) / 10,
        bytes: reply.bytes,
        aborted: reply.aborted || undefined,
      },
      'request',
    );
  }
}

function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof Error) return { type: err.name, message: err.message, stack: err.stack };
  return { value: String(err) };
}
