// The HTTP server, over whichever transport serves the sockets (transport.ts): the routes
// compiled into a table (route-table.ts), each request's way through them (exchange.ts),
// the cluster's links, and shutting down with a drain.

import { LINK_MAX_MESSAGE_BYTES, LINK_PATH } from '../cluster/internal-route.ts';
import { answerFor, ServiceError } from '../errors.ts';
import { chooseTransport } from './choose-transport.ts';
import { ClientAddresses } from './client-address.ts';
import { Exchange, type InFlight, type RequestOptions, type ServerState } from './exchange.ts';
import { statusText } from './respond.ts';
import type { Route } from './route.ts';
import { routeTable, type CompiledRoute } from './route-table.ts';
import type { Incoming, LinkEndpoint, Refusal, Transport, Unparsed } from './transport.ts';
import type { Validators } from './validate.ts';

export { INTERNAL_PREFIX, type InternalRoute } from '../cluster/internal-route.ts';
export type { WebResponse } from './exchange.ts';

export interface HttpServerOptions extends RequestOptions {
  host: string;
  /** 0: any free port. */
  port: number;
  routes: Route[];
  validators: Validators;
  /** Tells the client's address from the peer's (trusted proxies); default: the peer is the client. */
  clientAddresses?: ClientAddresses;
  /** What serves the sockets; default: chooseTransport() (uWS where it loads, else node:http). */
  transport?: Transport;
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

export async function startHttpServer(options: HttpServerOptions): Promise<HttpServer> {
  const compiled: CompiledRoute[] = options.routes.map((route) => {
    const c: CompiledRoute = { route, segments: route.path.split('/') };
    if (route.body) c.body = options.validators.forBody(route.body);
    if (route.query) c.query = options.validators.forQuery(route.query);
    return c;
  });
  const state: ServerState = {
    options,
    table: routeTable(compiled),
    inFlight: new Set<InFlight>(),
    draining: false,
    addresses: options.clientAddresses ?? new ClientAddresses([]),
  };
  const handle = (request: Incoming): void => new Exchange(state, request).start();
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
        state.draining = true;
        for (const f of state.inFlight) f.reply.closeAfter = true;
        const settled = async (until: number) => {
          while (state.inFlight.size > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
        };
        await settled(Date.now() + graceMs);
        if (state.inFlight.size > 0) {
          const reason = new ServiceError(
            'SERVICE_UNAVAILABLE',
            `the server is shutting down and stopped this request at its shutdown deadline (${graceMs} ms); retry against another instance`,
          );
          for (const f of state.inFlight) f.controller.abort(reason);
          await settled(Date.now() + WIND_DOWN_MS);
          for (const f of state.inFlight) f.reply.close();
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
