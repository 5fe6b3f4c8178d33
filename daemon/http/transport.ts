// The seam between the HTTP server (server.ts, which routes, authenticates and answers)
// and the code that owns the sockets. Two transports serve it: uWebSockets.js, where its
// native build loads for this Node (transport-uws.ts), and Node's own node:http with the
// `ws` package for the cluster's links (transport-node.ts). Both pass one conformance suite
// (test/http/transport-conformance.test.ts); everything above this file is the same code
// whichever serves.
//
// The contract, in the terms uWS imposes (the stricter of the two): a request's fields and
// its body listener are taken in the tick the request arrives in; a response is written
// as head, then body pieces, then an end, and is not touched after the client went away.

import type { LinkSession, LinkPeer } from '../cluster/internal-route.ts';

/** The response side of one request. */
export interface Wire {
  /** Runs `write` with the writes it makes gathered into one send (uWS's cork). */
  cork(write: () => void): void;
  /** The status line and headers; they leave with the first body bytes or the end. */
  head(status: number, statusText: string, headers: ReadonlyArray<readonly [string, string]>): void;
  /** Part of a streamed body. False: the socket did not take all of it yet; wait for onWritable before the next. */
  write(chunk: Uint8Array): boolean;
  /**
   * Part of a body whose total length is known (the response's Content-Length), from
   * byte `at` of `body`. Answers how far the socket has taken it and whether the response
   * is complete; when it is not, the rest is offered again after onWritable. Not used
   * with write() in the same response.
   */
  offer(body: Uint8Array, at: number): { at: number; done: boolean };
  /** Ends the response with its last bytes; with `closeConnection` the connection closes after them. */
  end(last: string | Uint8Array, closeConnection: boolean): void;
  /** Calls `ready` once, when the socket can take more. */
  onWritable(ready: () => void): void;
  /** Cuts the connection at once. */
  close(): void;
  /**
   * Resolves once the ended response has left for the socket, or the connection closed.
   * uWS copies what the socket refuses into its own buffer, so there a response is out when
   * it ends; node:http holds what it was given until the socket takes it, and a process
   * that exits before then cuts the response short.
   */
  sent(): Promise<void>;
}

/** One request, as read in the tick it arrived in. */
export interface Incoming {
  /** Upper case. */
  readonly method: string;
  /** The path, without the query string. */
  readonly url: string;
  /** The query string as sent, without "?"; '' when there is none. */
  readonly rawQuery: string;
  /** Lower-case names; a repeated header's values joined with ", ". */
  readonly headers: Record<string, string>;
  /** The peer's address as text. */
  readonly remoteAddress: string;
  readonly wire: Wire;
  /** Called once if the client goes away before the response ended. Attached in the arrival tick unless the response ends in it (uWS's rule). */
  onAborted(gone: () => void): void;
  /** The body, chunk by chunk; the last call has `last` true (an empty chunk when the body is empty). Only in the arrival tick. */
  onData(take: (chunk: Uint8Array, last: boolean) => void): void;
}

/** A refusal of an upgrade to a link, answered as the API's error object. */
export interface Refusal {
  status: number;
  statusText: string;
  body: string;
}

/** How the transport serves the cluster's links (a WebSocket at one path). */
export interface LinkEndpoint {
  path: string;
  /** The largest message either way, and the most a link may have waiting to be sent before it is closed. */
  maxMessageBytes: number;
  /** Checks an upgrade's request headers: undefined to accept, else the answer. */
  admit(headers: Record<string, string>): Refusal | undefined;
  /** A link was opened: the session its messages go to. */
  open(peer: LinkPeer): LinkSession;
}

export interface Listening {
  port: number;
  /** Stops accepting connections; responses under way go on. */
  closeListener(): void;
  /** Closes every connection left, idle or not. */
  closeConnections(): void;
}

/**
 * What a transport's own parser refused before any request existed, for a transport that
 * refuses more than the routes would (node:http's parser refuses bytes above 0x7f in a
 * request target, which uWS passes on): a path no route can have, a query string that is
 * not text, a Content-Length too large to be a number.
 */
export type Unparsed = 'path' | 'query' | 'length';

export interface ListenOptions {
  host: string;
  /** 0: any free port. */
  port: number;
  handle(request: Incoming): void;
  links?: LinkEndpoint;
  /** The answer to a request the transport's parser refused (the connection closes after it). */
  refuse(what: Unparsed): Refusal;
}

export interface Transport {
  /** 'uws' or 'node', for logs and metrics. */
  readonly name: string;
  listen(options: ListenOptions): Promise<Listening>;
}
