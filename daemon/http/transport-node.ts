// The transport on Node's own node:http (transport.ts), for a Node for which no native
// build of uWebSockets.js loads; the cluster's links are WebSockets of the `ws` package
// (the same one cluster/peer-link.ts dials with). Node keeps a reference to what a
// response writes until the socket took it, where uWS copies; the seam promises callers
// that a streamed piece may be reused once write() returns, so pieces are copied here.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Incoming, LinkEndpoint, Listening, Refusal, Transport, Unparsed, Wire } from './transport.ts';

/** How long an idle keep-alive connection stays open (uWS's own figure, so both behave alike). */
const KEEP_ALIVE_MS = 10_000;

/**
 * The most a request's line and headers may hold (node:http's default is 16 KiB): long
 * query strings (many filters, a long path) are answered by the routes, as uWS answers
 * them, rather than refused with a bare 431.
 */
const MAX_HEAD_BYTES = 64 * 1024;

/** How often an idle link is pinged; one that has not answered the previous ping by then is cut. */
const LINK_PING_MS = 30_000;

const EMPTY = new Uint8Array(0);

/** Statuses whose responses carry no body and no Content-Length. */
const NO_BODY = new Set([204, 304]);

class NodeWire implements Wire {
  #status = 200;
  #text = 'OK';
  #headers: string[] = [];

  constructor(private readonly res: ServerResponse) {}

  /**
   * Just runs `write`: node:http sends the head with the first body bytes anyway, and a
   * corked response whose write was refused never emits 'drain' after the uncork (Node 24),
   * which would leave a streaming writer waiting for good.
   */
  cork(write: () => void): void {
    write();
  }

  head(status: number, statusText: string, headers: ReadonlyArray<readonly [string, string]>): void {
    this.#status = status;
    this.#text = statusText;
    const flat: string[] = [];
    for (const [k, v] of headers) flat.push(k, v);
    this.#headers = flat;
  }

  write(chunk: Uint8Array): boolean {
    this.#flushHead(undefined, false);
    return this.res.write(Buffer.from(chunk));
  }

  offer(body: Uint8Array, at: number): { at: number; done: boolean } {
    // The body is the caller's and stays as it is until the response is out: Node holds it
    // by reference while the socket takes it, as uWS holds its place in it.
    this.#flushHead(body.byteLength - at, false);
    this.res.end(at === 0 ? body : body.subarray(at));
    return { at: body.byteLength, done: true };
  }

  end(last: string | Uint8Array, closeConnection: boolean): void {
    if (this.res.headersSent) {
      if (closeConnection) this.res.once('finish', () => this.res.socket?.end());
      this.res.end(last);
      return;
    }
    const bytes = typeof last === 'string' ? Buffer.from(last) : last;
    this.#flushHead(bytes.byteLength, closeConnection);
    this.res.end(bytes);
  }

  onWritable(ready: () => void): void {
    this.res.once('drain', ready);
  }

  close(): void {
    this.res.socket?.destroy();
  }

  sent(): Promise<void> {
    if (this.res.writableFinished || this.res.destroyed) return Promise.resolve();
    return new Promise((resolve) => {
      this.res.once('finish', resolve);
      this.res.once('close', resolve);
    });
  }

  /** Sends the status and headers if they have not left: with the body's length when it is known, else chunked. */
  #flushHead(length: number | undefined, closeConnection: boolean): void {
    if (this.res.headersSent) return;
    const headers = this.#headers;
    if (length !== undefined && !NO_BODY.has(this.#status)) headers.push('Content-Length', String(length));
    if (closeConnection) headers.push('Connection', 'close');
    this.res.writeHead(this.#status, this.#text, headers);
  }
}

/** The request's headers as uWS gives them: lower-case names, a repeated one's values joined (node:http drops some repeats). */
function headersOf(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const k = raw[i]!.toLowerCase();
    const v = raw[i + 1]!;
    out[k] = k in out ? `${out[k]}, ${v}` : v;
  }
  return out;
}

function incoming(req: IncomingMessage, res: ServerResponse): Incoming {
  const target = req.url ?? '/';
  const q = target.indexOf('?');
  // A client that leaves mid-body makes the request emit an error: onAborted tells the server.
  req.on('error', () => {});
  return {
    method: (req.method ?? 'GET').toUpperCase(),
    url: q < 0 ? target : target.slice(0, q),
    rawQuery: q < 0 ? '' : target.slice(q + 1),
    headers: headersOf(req),
    remoteAddress: req.socket.remoteAddress ?? '',
    wire: new NodeWire(res),
    onAborted(gone) {
      res.once('close', () => {
        if (!res.writableEnded) gone();
      });
    },
    onData(take) {
      req.on('data', (chunk: Buffer) => take(chunk, false));
      req.on('end', () => take(EMPTY, true));
    },
  };
}

/** A raw HTTP/1.1 response on a socket that node:http handed over (an upgrade, a request it could not parse). */
function answerRaw(socket: Socket, refusal: Refusal): void {
  const body = Buffer.from(refusal.body);
  socket.end(
    `HTTP/1.1 ${refusal.status} ${refusal.statusText}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${body.byteLength}\r\nConnection: close\r\n\r\n${refusal.body}`,
  );
}

/** What of a refused request the server can answer for (transport.ts Unparsed), from the parser's error and the bytes it read. */
function unparsed(err: NodeJS.ErrnoException & { rawPacket?: Buffer }): Unparsed | undefined {
  const raw = err.rawPacket?.toString('latin1') ?? '';
  if (err.code === 'HPE_INVALID_URL') {
    const target = raw.slice(0, raw.indexOf('\r\n') >>> 0).split(' ')[1] ?? '';
    const q = target.indexOf('?');
    // Bytes outside printable ASCII are what llhttp refuses in a target.
    const bad = /[^\x21-\x7e]/;
    if (bad.test(q < 0 ? target : target.slice(0, q))) return 'path';
    return 'query';
  }
  if (err.code === 'HPE_INVALID_CONTENT_LENGTH' && /\r\ncontent-length:[ \t]*\d+[ \t]*\r\n/i.test(raw)) return 'length';
  return undefined;
}

export function nodeTransport(): Transport {
  return {
    name: 'node',
    listen({ host, port, handle, links, refuse }): Promise<Listening> {
      const server = createServer({ keepAliveTimeout: KEEP_ALIVE_MS, noDelay: true, maxHeaderSize: MAX_HEAD_BYTES }, (req, res) => handle(incoming(req, res)));
      // A request node:http's parser refused never reaches the routes. Where uWS would have
      // passed it on (bytes above 0x7f in the target, a Content-Length past 2^53) the
      // server's answer says what is wrong; too many header bytes get a bare 431; anything
      // else is not HTTP this server speaks, and the connection closes unanswered, as uWS
      // closes it.
      server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Socket) => {
        if (!socket.writable) return void socket.destroy();
        const what = unparsed(err);
        if (what) answerRaw(socket, refuse(what));
        else if (err.code === 'HPE_HEADER_OVERFLOW')
          socket.end('HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
        else socket.destroy();
      });
      const linkServer = links ? serveLinks(server, links) : undefined;
      return new Promise((resolve, reject) => {
        server.once('error', (err: NodeJS.ErrnoException) =>
          reject(new Error(`cannot listen on ${host}:${port} (${err.code === 'EADDRINUSE' ? 'address in use' : err.message})`)),
        );
        server.listen(port, host, () => {
          const address = server.address();
          resolve({
            port: typeof address === 'object' && address ? address.port : port,
            closeListener: () => {
              server.close();
              server.closeIdleConnections();
            },
            closeConnections: () => {
              server.closeAllConnections();
              linkServer?.close();
            },
          });
        });
      });
    },
  };
}

/**
 * The cluster's links: an upgrade at the link's path, admitted, becomes a WebSocket whose
 * binary messages go to the link's session. An idle link is pinged and cut when it stops
 * answering; a link with more waiting to be sent than the message limit is closed (the
 * peer's parts are asked of other nodes), as uWS's backpressure limit does.
 */
function serveLinks(server: ReturnType<typeof createServer>, links: LinkEndpoint): { close(): void } {
  const wss = new WebSocketServer({ noServer: true, maxPayload: links.maxMessageBytes, perMessageDeflate: false });
  const alive = new WeakMap<WebSocket, boolean>();
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    socket.on('error', () => {});
    const path = (req.url ?? '').split('?')[0];
    if (path !== links.path) {
      answerRaw(socket, {
        status: 404,
        statusText: 'Not Found',
        body: JSON.stringify({ statusCode: 404, errorCode: 'NOT_FOUND', message: `no WebSocket endpoint ${path}` }),
      });
      return;
    }
    const refused = links.admit(headersOf(req));
    if (refused) {
      answerRaw(socket, refused);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      let closed = false;
      alive.set(ws, true);
      ws.on('pong', () => alive.set(ws, true));
      ws.on('error', () => {});
      const session = links.open({
        send(frames) {
          if (closed) return;
          for (const f of frames) ws.send(Buffer.from(f), { binary: true });
          if (ws.bufferedAmount > links.maxMessageBytes) {
            closed = true;
            ws.close(1011, 'link backpressure limit reached');
          }
        },
        close(why) {
          if (closed) return;
          closed = true;
          ws.close(1008, why.slice(0, 120));
        },
      });
      ws.on('message', (data: Buffer, isBinary: boolean) => {
        if (isBinary) session.message(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
      });
      ws.on('close', () => {
        closed = true;
        session.closed();
      });
    });
  });
  const pings = setInterval(() => {
    for (const ws of wss.clients) {
      if (!alive.get(ws)) {
        ws.terminate();
        continue;
      }
      alive.set(ws, false);
      ws.ping();
    }
  }, LINK_PING_MS);
  pings.unref();
  return {
    close() {
      clearInterval(pings);
      for (const ws of wss.clients) ws.terminate();
      wss.close();
    },
  };
}
