// The loopback relay every http(s) fetch of a mirror goes through (mirror.ts), so that a
// stalled server can be cut off. Why, and how each protocol passes, below.

import http from 'node:http';
import net from 'node:net';
import { errorText } from '../errors.ts';

/**
 * libgit2 waits on its sockets with no timeout (its server-timeout option is not exposed
 * by nodegit), and git_remote_stop only sets a flag it checks between reads: a server
 * that stops answering would hang the fetch, and one of nodegit's few threads, forever.
 * So http(s) traffic goes through this loopback relay, which owns the sockets: it sees
 * every byte (progress for the watchdog) and can close them all, which makes libgit2's
 * read fail at once. It serves one fetch, and only the remote's host.
 *
 * https: libgit2 is given the relay as its proxy and opens a CONNECT tunnel through it;
 * the bytes in the tunnel are TLS between libgit2 and the server, so the certificate is
 * checked as without the relay. Plain http: libgit2 1.9 ignores the proxy for http URLs
 * (it connects to the server itself and only formats the request for a proxy), so it is
 * given the relay's address as the server instead, and the relay forwards each request
 * to the real server with the real Host header (a reverse proxy).
 */
export interface Relay {
  /** The proxy URL for libgit2. */
  proxyUrl: string;
  /** The URL libgit2 fetches from: the remote's, or for http the relay's own address in its place. */
  source: string;
  /** "http://127.0.0.1:<port>" and the remote's origin, to translate libgit2's messages. */
  localOrigin: string;
  remoteOrigin: string;
  /** Why the relay could not reach the server, when that is what failed. */
  upstreamError?: string;
  abort(): void;
  close(): Promise<void>;
}

// Not forwarded: they describe one connection (or the proxy), not the request.
const HOP_BY_HOP = new Set([
  'connection',
  'expect',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

function endToEnd(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const out: http.OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  return out;
}

function bareHost(host: string): string {
  return (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host).toLowerCase();
}

export async function startRelay(remote: URL, onBytes: () => void): Promise<Relay> {
  const allowed = bareHost(remote.hostname);
  const sockets = new Set<net.Socket>();
  const agent = new http.Agent({ keepAlive: true });
  const track = (s: net.Socket): void => {
    if (aborted) {
      s.destroy();
      return;
    }
    if (sockets.has(s)) return; // a kept-alive socket, reused
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  };
  // Once aborted the relay stays shut: libgit2 may try to reconnect, and must fail.
  let aborted = false;
  const relay: Relay = {
    proxyUrl: '',
    source: remote.href,
    localOrigin: '',
    remoteOrigin: remote.origin,
    abort(): void {
      aborted = true;
      for (const s of sockets) s.destroy();
      agent.destroy();
    },
    async close(): Promise<void> {
      relay.abort();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
  const refuse = (where: string): void => {
    relay.upstreamError ??= `the server redirected to ${where}, another host, which is not followed`;
  };
  const upstreamFailed = (err: unknown, where: string): void => {
    relay.upstreamError ??= `cannot reach ${where} (${networkErrorText(err)})`;
  };

  const server = http.createServer((req, res) => {
    if (aborted) {
      res.destroy();
      return;
    }
    let target: URL;
    try {
      // Origin-form ("/org/repo.git/info/refs?...") or, as libgit2 formats requests when
      // it has a proxy, absolute-form naming the relay; both mean the remote's server.
      target = new URL(req.url ?? '/', relay.localOrigin);
      if (target.origin === relay.localOrigin) {
        if (remote.protocol !== 'http:') throw new Error('https is tunnelled, not forwarded');
        target = new URL(target.pathname + target.search, remote.origin);
      }
    } catch {
      res.writeHead(400).end();
      return;
    }
    if (target.protocol !== 'http:' || bareHost(target.hostname) !== allowed) {
      refuse(target.origin);
      res.writeHead(403).end();
      return;
    }
    req.on('data', onBytes);
    const headers = endToEnd(req.headers);
    headers.host = target.host;
    const up = http.request(
      {
        host: bareHost(target.hostname),
        port: target.port === '' ? 80 : Number(target.port),
        method: req.method,
        path: target.pathname + target.search,
        headers,
        agent,
      },
      (upRes) => {
        const back = endToEnd(upRes.headers);
        // A redirect within the server stays on the relay.
        const location = upRes.headers.location;
        if (location?.startsWith(`${remote.origin}/`)) {
          back.location = relay.localOrigin + location.slice(remote.origin.length);
        }
        res.writeHead(upRes.statusCode ?? 502, upRes.statusMessage, back);
        upRes.on('data', onBytes);
        upRes.on('error', () => res.destroy());
        upRes.pipe(res);
      },
    );
    up.on('socket', track);
    up.on('error', (err) => {
      upstreamFailed(err, target.host);
      res.destroy();
    });
    req.pipe(up);
  });
  server.on('connection', track);
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    track(client);
    if (aborted) return;
    const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(req.url ?? '');
    if (m === null || bareHost(m[1]!) !== allowed) {
      refuse(req.url ?? '?');
      client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    const up = net.connect(Number(m[2]), bareHost(m[1]!));
    track(up);
    up.on('connect', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) up.write(head);
      up.pipe(client);
      client.pipe(up);
    });
    up.on('data', onBytes);
    client.on('data', onBytes);
    up.on('error', (err) => {
      upstreamFailed(err, req.url ?? '?');
      client.destroy();
    });
    client.on('error', () => up.destroy());
  });
  server.on('clientError', (_err, socket) => socket.destroy());

  await new Promise<void>((listening, failed) => {
    server.once('error', failed);
    server.listen(0, '127.0.0.1', () => listening());
  });
  const { port } = server.address() as net.AddressInfo;
  relay.localOrigin = `http://127.0.0.1:${port}`;
  relay.proxyUrl = relay.localOrigin;
  if (remote.protocol === 'http:') {
    const local = new URL(remote.href); // keeps user info, path and query
    local.hostname = '127.0.0.1';
    local.port = String(port);
    relay.source = local.href;
  }
  return relay;
}

function networkErrorText(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found';
    case 'ETIMEDOUT':
      return 'connection timed out';
    case 'ECONNRESET':
      return 'connection reset';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'network unreachable';
    default:
      return errorText(err);
  }
}
