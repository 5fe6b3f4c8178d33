// The transport on uWebSockets.js (transport.ts), used where its native build loads for
// this Node. The package's own entry point falls back to a pure-JS server (about 10x
// slower) with only a console warning when the binary does not load; a daemon that quietly
// ran on that fallback would be worse than one on node:http, so the binary is required
// directly here and a failure says why.

import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as Uws from 'uWebSockets.js';
import type { HttpResponse, us_listen_socket } from 'uWebSockets.js';
import type { LinkSession } from '../cluster/internal-route.ts';
import type { Incoming, LinkEndpoint, Listening, Transport, Wire } from './transport.ts';

const require = createRequire(import.meta.url);

export type UwsModule = typeof Uws;

let loaded: UwsModule | undefined;

/** uWS's native binary for this platform and Node, or an error saying why there is none. */
export function loadUws(): UwsModule {
  loaded ??= loadUwsBinary(`uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);
  return loaded;
}

/** Loads one of the package's binaries by file name, or throws why it cannot. */
export function loadUwsBinary(name: string): UwsModule {
  let binary: string;
  try {
    binary = join(dirname(require.resolve('uWebSockets.js/package.json')), 'binaries', name);
  } catch {
    throw new Error('uWebSockets.js is not installed: run ./scripts/setup.sh');
  }
  let mod: UwsModule;
  try {
    mod = require(binary) as UwsModule;
  } catch (err) {
    throw new Error(
      `uWebSockets.js has no working native build ${name} for this machine (${(err as Error).message.split('\n')[0]}); its slow JavaScript fallback is never used`,
    );
  }
  if (typeof mod.App !== 'function' || typeof mod.us_listen_socket_close !== 'function') {
    throw new Error(`uWebSockets.js binary ${name} lacks App/us_listen_socket_close`);
  }
  return mod;
}

/** What uWS's WebSocket.send answers for a message it dropped (0: buffered, 1: sent). */
const LINK_DROPPED = 2;

class UwsWire implements Wire {
  /** Where the body of an offered response starts in uWS's count of bytes written. */
  #base = 0;

  constructor(private readonly res: HttpResponse) {}

  cork(write: () => void): void {
    this.res.cork(write);
  }

  head(status: number, statusText: string, headers: ReadonlyArray<readonly [string, string]>): void {
    this.res.writeStatus(`${status} ${statusText}`);
    for (const [k, v] of headers) this.res.writeHeader(k, v);
    this.#base = -1;
  }

  write(chunk: Uint8Array): boolean {
    return this.res.write(chunk);
  }

  offer(body: Uint8Array, at: number): { at: number; done: boolean } {
    // The response may not be touched once tryEnd has sent it all: read the offset first.
    if (this.#base < 0) this.#base = this.res.getWriteOffset();
    else at = this.res.getWriteOffset() - this.#base;
    const [, done] = this.res.tryEnd(at === 0 ? body : body.subarray(at), body.byteLength);
    return { at: done ? body.byteLength : this.res.getWriteOffset() - this.#base, done };
  }

  end(last: string | Uint8Array, closeConnection: boolean): void {
    this.res.end(last, closeConnection);
  }

  onWritable(ready: () => void): void {
    // uWS does not run the microtasks queued in an onWritable callback when it returns (it
    // does after a request's and onData's): a writer resumed by a promise there would wait
    // for some other event to come along. The next turn of Node's loop runs it.
    this.res.onWritable(() => {
      setImmediate(ready);
      return true;
    });
  }

  close(): void {
    this.res.close();
  }

  sent(): Promise<void> {
    return Promise.resolve();
  }
}

/** What a link's WebSocket carries besides uWS's own (uWS keeps it with the socket). */
interface LinkData {
  session?: LinkSession;
  closed: boolean;
}

export function uwsTransport(uws: UwsModule = loadUws()): Transport {
  return {
    name: 'uws',
    listen({ host, port, handle, links }): Promise<Listening> {
      const app = uws.App();
      if (links) serveLinks(uws, app, links);
      app.any('/*', (res, req) => {
        // HttpRequest is only valid in this tick: everything is copied now.
        const headers: Record<string, string> = {};
        req.forEach((k, v) => {
          headers[k] = k in headers ? `${headers[k]}, ${v}` : v;
        });
        const incoming: Incoming = {
          method: req.getMethod().toUpperCase(),
          url: req.getUrl(),
          rawQuery: req.getQuery() ?? '',
          headers,
          remoteAddress: Buffer.from(res.getRemoteAddressAsText()).toString(),
          wire: new UwsWire(res),
          onAborted: (gone) => res.onAborted(gone),
          // uWS reuses the chunk's memory after the callback: the listener copies what it keeps.
          onData: (take) => res.onData((chunk, last) => take(new Uint8Array(chunk), last)),
        };
        handle(incoming);
      });
      return new Promise((resolve, reject) => {
        app.listen(host, port, (socket: us_listen_socket | false) => {
          if (!socket) {
            reject(new Error(`cannot listen on ${host}:${port} (address in use or not available)`));
            return;
          }
          resolve({
            port: uws.us_socket_local_port(socket as never),
            closeListener: () => uws.us_listen_socket_close(socket),
            // uWS sends what sockets have not taken yet before it closes them; idle keep-alive
            // connections, which it keeps open without holding the process, go too.
            closeConnections: () => (app as unknown as { close?: () => void }).close?.(),
          });
        });
      });
    },
  };
}

/**
 * The cluster's links: GET of the link's path, admitted, upgrades to a WebSocket whose
 * binary messages go to the link's session. uWS pings an idle link and closes one that
 * stops answering; what would pass the backpressure limit it drops, and the link goes then
 * (the peer would wait for it forever; its parts are asked of other nodes).
 */
function serveLinks(uws: UwsModule, app: Uws.TemplatedApp, links: LinkEndpoint): void {
  app.ws<LinkData>(links.path, {
    compression: uws.DISABLED,
    maxPayloadLength: links.maxMessageBytes,
    idleTimeout: 60,
    sendPingsAutomatically: true,
    // A link's replies are its shards' files: bounded by what the searches ask, never dropped quietly.
    maxBackpressure: links.maxMessageBytes,
    closeOnBackpressureLimit: 0,
    upgrade: (res, req, context) => {
      const headers: Record<string, string> = {};
      req.forEach((k, v) => (headers[k] = v));
      const refused = links.admit(headers);
      if (refused) {
        res.cork(() => {
          res.writeStatus(`${refused.status} ${refused.statusText}`);
          res.writeHeader('Content-Type', 'application/json; charset=utf-8');
          res.end(refused.body, true);
        });
        return;
      }
      res.upgrade<LinkData>(
        { closed: false },
        headers['sec-websocket-key'] ?? '',
        headers['sec-websocket-protocol'] ?? '',
        headers['sec-websocket-extensions'] ?? '',
        context,
      );
    },
    open: (ws) => {
      const data = ws.getUserData();
      data.session = links.open({
        send(frames) {
          if (data.closed) return;
          let dropped = false;
          // uWS copies each message into its socket's buffers.
          ws.cork(() => {
            for (const f of frames) if (!dropped) dropped = ws.send(f, true) === LINK_DROPPED;
          });
          if (dropped) {
            data.closed = true;
            ws.end(1011, 'link backpressure limit reached');
          }
        },
        close(why) {
          if (data.closed) return;
          ws.end(1008, why.slice(0, 120));
        },
      });
    },
    message: (ws, message) => {
      // uWS lends the message for this call only.
      ws.getUserData().session?.message(new Uint8Array(message.slice(0)));
    },
    close: (ws) => {
      const data = ws.getUserData();
      data.closed = true;
      data.session?.closed();
    },
  });
}
