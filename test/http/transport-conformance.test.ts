// The transport seam's conformance suite (daemon/http/transport.ts): every transport that
// loads on this Node serves the same requests the same way, through a bare handler (no
// routes, no daemon). uWebSockets.js has native builds for some Node versions only; where
// it has none its half is skipped with the reason (node:http then serves the daemon).
// With `TRAWL_HTTP_TRANSPORT` unset, running this file under an older Node on which uWS
// loads checks the uWS half: `node --import tsx --test test/http/transport-conformance.test.ts`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import WebSocket from 'ws';
import { nodeTransport } from '../../daemon/http/transport-node.ts';
import { loadUws, uwsTransport } from '../../daemon/http/transport-uws.ts';
import type { Incoming, LinkEndpoint, Listening, Transport } from '../../daemon/http/transport.ts';
import { Reply } from '../../daemon/http/respond.ts';
import type { LinkPeer } from '../../daemon/cluster/internal-route.ts';

const transports: Array<{ name: string; make?: () => Transport; skip: string | false }> = [{ name: 'node:http', make: nodeTransport, skip: false }];
try {
  const uws = loadUws();
  transports.push({ name: 'uWebSockets.js', make: () => uwsTransport(uws), skip: false });
} catch (err) {
  transports.push({ name: 'uWebSockets.js', skip: (err as Error).message });
}

/** A raw HTTP/1.1 exchange: writes `request`, reads until the server closes or `until` matches what came. */
function exchange(
  port: number,
  request: string | Buffer,
  until?: (got: Buffer) => boolean,
  onSocket?: (s: Socket) => void,
): Promise<{ text: string; bytes: Buffer; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    onSocket?.(socket);
    let got = Buffer.alloc(0);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer; got ${JSON.stringify(got.toString('latin1').slice(0, 300))}`));
    }, 15_000);
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ text: got.toString('latin1'), bytes: got, closed });
    };
    socket.on('data', (c: Buffer) => {
      got = Buffer.concat([got, c]);
      if (until?.(got)) finish(false);
    });
    socket.on('end', () => finish(true));
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.write(request);
  });
}

/** The body of a response with Content-Length or chunked encoding, once `got` holds it all. */
function bodyOf(got: Buffer): Buffer | undefined {
  const end = got.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const head = got.subarray(0, end).toString('latin1').toLowerCase();
  let rest = got.subarray(end + 4);
  const length = /content-length: (\d+)/.exec(head);
  if (length) return rest.length >= Number(length[1]) ? rest.subarray(0, Number(length[1])) : undefined;
  if (!head.includes('transfer-encoding: chunked')) return undefined;
  const parts: Buffer[] = [];
  for (;;) {
    const line = rest.indexOf('\r\n');
    if (line < 0) return undefined;
    const size = parseInt(rest.subarray(0, line).toString('latin1'), 16);
    if (rest.length < line + 2 + size + 2) return undefined;
    if (size === 0) return Buffer.concat(parts);
    parts.push(rest.subarray(line + 2, line + 2 + size));
    rest = rest.subarray(line + 2 + size + 2);
  }
}

const complete = (got: Buffer) => bodyOf(got) !== undefined;

/** Serves `handle`, which (as the server does) learns of a client leaving: uWS requires that of every request not answered in its own tick. */
async function serve(make: () => Transport, handle: (r: Incoming) => void, links?: LinkEndpoint): Promise<Listening> {
  return make().listen({
    host: '127.0.0.1',
    port: 0,
    handle: (r) => {
      r.onAborted(() => {});
      handle(r);
    },
    ...(links ? { links } : {}),
    refuse: (what) => ({ status: 400, statusText: 'Bad Request', body: JSON.stringify({ refused: what }) }),
  });
}

function close(l: Listening): void {
  l.closeListener();
  l.closeConnections();
}

for (const t of transports) {
  test(`transport conformance: ${t.name}`, { skip: t.skip }, async (s) => {
    const make = t.make!;

    await s.test('the request: method, path, query, headers (repeats joined), peer; the head and body as written', async () => {
      let seen: Incoming | undefined;
      const l = await serve(make, (r) => {
        seen = r;
        r.wire.cork(() => {
          r.wire.head(201, 'Created', [
            ['X-One', 'a'],
            ['Content-Type', 'text/plain'],
          ]);
          r.wire.end('made', false);
        });
      });
      try {
        const out = await exchange(l.port, 'GET /a/b%20c?x=1&y=%C3%A9 HTTP/1.1\r\nHost: h\r\nX-Twice: 1\r\nX-TWICE: 2\r\n\r\n', complete);
        assert.match(out.text, /^HTTP\/1\.1 201 Created\r\n/);
        assert.match(out.text, /\r\nx-one: a\r\n/i);
        assert.equal(bodyOf(out.bytes)!.toString(), 'made');
        assert.equal(seen!.method, 'GET');
        assert.equal(seen!.url, '/a/b%20c');
        assert.equal(seen!.rawQuery, 'x=1&y=%C3%A9');
        assert.equal(seen!.headers['x-twice'], '1, 2');
        assert.equal(seen!.headers.host, 'h');
        assert.match(seen!.remoteAddress, /127\.0\.0\.1/);
      } finally {
        close(l);
      }
    });

    await s.test('a body arrives in chunks, the last one marked; an empty body is one empty last chunk', async () => {
      const bodies: string[] = [];
      const l = await serve(make, (r) => {
        const parts: Buffer[] = [];
        r.onData((chunk, last) => {
          parts.push(Buffer.from(chunk));
          if (!last) return;
          bodies.push(Buffer.concat(parts).toString());
          r.wire.cork(() => {
            r.wire.head(200, 'OK', []);
            r.wire.end(String(Buffer.concat(parts).length), false);
          });
        });
      });
      try {
        const big = 'x'.repeat(300_000);
        const out = await exchange(l.port, `POST / HTTP/1.1\r\nHost: h\r\nContent-Length: ${big.length}\r\n\r\n${big}`, complete);
        assert.equal(bodyOf(out.bytes)!.toString(), String(big.length));
        const empty = await exchange(l.port, 'POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n', complete);
        assert.equal(bodyOf(empty.bytes)!.toString(), '0');
        assert.deepEqual(bodies, [big, '']);
      } finally {
        close(l);
      }
    });

    await s.test('a large body offered to a slow reader arrives whole, with its length, through Reply', async () => {
      const body = Buffer.alloc(8 << 20);
      for (let i = 0; i < body.length; i += 4096) body.writeUInt32LE(i, i);
      let done: Promise<void> | undefined;
      const l = await serve(make, (r) => {
        done = new Reply(r.wire).sendLarge(200, body, [['Content-Type', 'application/octet-stream']]);
      });
      try {
        const out = await exchange(l.port, 'GET / HTTP/1.1\r\nHost: h\r\n\r\n', complete, (socket) => {
          // Read slowly at first, so that the socket refuses part of the body.
          socket.pause();
          setTimeout(() => socket.resume(), 300);
        });
        assert.match(out.text, new RegExp(`content-length: ${body.length}\\r\\n`, 'i'));
        assert.ok(bodyOf(out.bytes)!.equals(body));
        await done;
      } finally {
        close(l);
      }
    });

    await s.test('a streamed body: pieces in order, backpressure reported and lifted, a piece reusable once written', async () => {
      let refused = 0;
      const l = await serve(make, (r) => {
        const piece = Buffer.alloc(64 * 1024);
        void (async () => {
          r.wire.cork(() => r.wire.head(200, 'OK', [['Content-Type', 'text/plain']]));
          for (let i = 0; i < 200; i++) {
            piece.fill(65 + (i % 26));
            let ok = true;
            r.wire.cork(() => (ok = r.wire.write(piece)));
            if (!ok) {
              refused++;
              await new Promise<void>((resolve) => r.wire.onWritable(resolve));
            }
          }
          r.wire.cork(() => r.wire.end('', false));
        })();
      });
      try {
        const out = await exchange(l.port, 'GET / HTTP/1.1\r\nHost: h\r\n\r\n', complete, (socket) => {
          socket.pause();
          setTimeout(() => socket.resume(), 300);
        });
        const got = bodyOf(out.bytes)!;
        assert.equal(got.length, 200 * 64 * 1024);
        for (let i = 0; i < 200; i++) assert.equal(got[i * 64 * 1024 + 100], 65 + (i % 26), `piece ${i}`);
        assert.ok(refused > 0, 'the socket refused some pieces');
      } finally {
        close(l);
      }
    });

    await s.test('a response that closes its connection closes it; one that does not keeps it for the next request', async () => {
      const l = await serve(make, (r) => {
        r.wire.cork(() => {
          r.wire.head(200, 'OK', []);
          r.wire.end(r.url, r.url === '/close');
        });
      });
      try {
        const closing = await exchange(l.port, 'GET /close HTTP/1.1\r\nHost: h\r\n\r\n');
        assert.equal(closing.closed, true);
        assert.equal(bodyOf(closing.bytes)!.toString(), '/close');
        // Pipelined requests answered at once come back in order on the open connection.
        const both = await exchange(l.port, 'GET /one HTTP/1.1\r\nHost: h\r\n\r\nGET /two HTTP/1.1\r\nHost: h\r\n\r\n', (got) =>
          got.toString().includes('/two'),
        );
        assert.equal(both.closed, false);
        assert.ok(both.text.indexOf('/one') < both.text.indexOf('/two'));
      } finally {
        close(l);
      }
    });

    await s.test('a client that leaves before the end is reported once, and the response is left alone', async () => {
      let aborted = 0;
      let gone!: () => void;
      const left = new Promise<void>((resolve) => (gone = resolve));
      const l = await serve(make, (r) => {
        r.onAborted(() => {
          aborted++;
          gone();
        });
        r.wire.cork(() => r.wire.head(200, 'OK', []));
        r.wire.cork(() => r.wire.write(Buffer.from('first')));
      });
      try {
        const socket = connect(l.port, '127.0.0.1');
        socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
        await new Promise<void>((resolve) => socket.once('data', () => resolve()));
        socket.destroy();
        await left;
        await new Promise((r) => setTimeout(r, 50));
        assert.equal(aborted, 1);
      } finally {
        close(l);
      }
    });

    await s.test('cut: close() ends the connection at once', async () => {
      const l = await serve(make, (r) => {
        r.wire.cork(() => r.wire.head(200, 'OK', []));
        r.wire.cork(() => r.wire.write(Buffer.from('partial')));
        setTimeout(() => r.wire.close(), 20);
      });
      try {
        const out = await exchange(l.port, 'GET / HTTP/1.1\r\nHost: h\r\n\r\n');
        assert.equal(out.closed, true);
        assert.equal(bodyOf(out.bytes), undefined, 'the body never completed');
      } finally {
        close(l);
      }
    });

    await s.test('closing: the listener stops taking connections; then the idle ones are closed', async () => {
      const l = await serve(make, (r) => {
        r.wire.cork(() => {
          r.wire.head(200, 'OK', []);
          r.wire.end('ok', false);
        });
      });
      const idle = connect(l.port, '127.0.0.1');
      const idleClosed = new Promise<void>((resolve) => idle.on('close', () => resolve()));
      idle.on('error', () => {});
      idle.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
      await new Promise<void>((resolve) => idle.once('data', () => resolve()));
      l.closeListener();
      await assert.rejects(exchange(l.port, 'GET / HTTP/1.1\r\nHost: h\r\n\r\n'), /ECONNREFUSED/);
      l.closeConnections();
      await idleClosed;
    });

    await s.test('links: an admitted upgrade carries binary messages both ways; a refused one gets its answer', async () => {
      const received: Uint8Array[] = [];
      let peer: LinkPeer | undefined;
      let closedSessions = 0;
      const links: LinkEndpoint = {
        path: '/_link',
        maxMessageBytes: 1 << 20,
        admit: (headers) =>
          headers.authorization === 'Bearer ok' ? undefined : { status: 401, statusText: 'Unauthorized', body: '{"errorCode":"NOT_AUTHENTICATED"}' },
        open(p) {
          peer = p;
          return {
            message: (bytes) => {
              received.push(bytes);
              p.send([bytes, Uint8Array.of(bytes.length)]);
            },
            closed: () => closedSessions++,
          };
        },
      };
      const l = await serve(
        make,
        (r) => {
          r.wire.cork(() => {
            r.wire.head(200, 'OK', []);
            r.wire.end('plain', false);
          });
        },
        links,
      );
      try {
        const refused = await exchange(
          l.port,
          'GET /_link HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
          complete,
        );
        assert.match(refused.text, /^HTTP\/1\.1 401 Unauthorized\r\n/);
        assert.equal(bodyOf(refused.bytes)!.toString(), '{"errorCode":"NOT_AUTHENTICATED"}');

        const ws = new WebSocket(`ws://127.0.0.1:${l.port}/_link`, { headers: { authorization: 'Bearer ok' } });
        const replies: Buffer[] = [];
        await new Promise<void>((resolve, reject) => {
          ws.on('open', () => ws.send(Buffer.from('hello')));
          ws.on('message', (data: Buffer) => {
            replies.push(Buffer.from(data));
            if (replies.length === 2) resolve();
          });
          ws.on('error', reject);
        });
        assert.deepEqual(
          replies.map((r) => [...r]),
          [[...Buffer.from('hello')], [5]],
        );
        assert.equal(Buffer.from(received[0]!).toString(), 'hello');
        // The server side closes, saying why.
        const closed = new Promise<[number, string]>((resolve) => ws.on('close', (code, why) => resolve([code, why.toString()])));
        peer!.close('protocol broken');
        assert.deepEqual(await closed, [1008, 'protocol broken']);
        // Bounded by time (10 s), not by a second of polls a loaded machine can outlast.
        const deadline = Date.now() + 10_000;
        while (closedSessions === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
        assert.equal(closedSessions, 1, 'the session was closed once');
      } finally {
        close(l);
      }
    });
  });
}
