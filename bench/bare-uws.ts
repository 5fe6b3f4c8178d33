// The baseline of the HTTP benchmark (bench/http.ts): a bare uWebSockets.js server that
// answers POST /api/search with a fixed body, after reading the request's body, and
// GET /api/version with another fixed body, and nothing else — no routing table,
// validation, authentication, request id, logging, metrics, search or JSON.
//
//   node --import tsx bench/bare-uws.ts SEARCH_BODY_FILE [VERSION_BODY_FILE]
//
// SEARCH_BODY_FILE holds the answer to POST /api/search (trawl's own answer to the
// benchmark query), VERSION_BODY_FILE the answer to GET /api/version (trawl's own), so both
// servers send the same bytes; both with trawl's Content-Type (application/json;
// charset=utf-8). Without VERSION_BODY_FILE, GET /api/version is a 404 like any other path.
// Listens on 127.0.0.1, a free port, and prints `bare-uws: listening on
// http://127.0.0.1:PORT` on stderr; stops on SIGTERM or SIGINT.
// Same native module (daemon/http/uws.ts) and process model (Node + tsx) as `trawl serve`.

import { readFileSync } from 'node:fs';
import type { HttpRequest, HttpResponse, us_listen_socket } from 'uWebSockets.js';
import { loadUws } from '../daemon/http/uws.ts';

const CONTENT_TYPE = 'application/json; charset=utf-8'; // trawl's JSON_TYPE (daemon/http/respond.ts)

const [searchFile, versionFile] = process.argv.slice(2);
if (!searchFile) {
  process.stderr.write('usage: node --import tsx bench/bare-uws.ts SEARCH_BODY_FILE [VERSION_BODY_FILE]\n');
  process.exit(2);
}
const searchBody = readFileSync(searchFile);
const versionBody = versionFile ? readFileSync(versionFile) : undefined;
const uws = loadUws();
const app = uws.App();

app.post('/api/search', (res: HttpResponse, _req: HttpRequest) => {
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  const parts: Buffer[] = [];
  res.onData((chunk, isLast) => {
    // uWS reuses the chunk's memory after the callback: copy it, as trawl does.
    parts.push(Buffer.from(new Uint8Array(chunk)));
    if (!isLast || aborted) return;
    void Buffer.concat(parts); // the whole body, as trawl reads it before parsing
    res.cork(() => {
      res.writeStatus('200 OK');
      res.writeHeader('Content-Type', CONTENT_TYPE);
      res.end(searchBody);
    });
  });
});

if (versionBody) {
  // Answered synchronously, inside the handler (uWS corks the response there).
  app.get('/api/version', (res: HttpResponse, _req: HttpRequest) => {
    res.writeStatus('200 OK');
    res.writeHeader('Content-Type', CONTENT_TYPE);
    res.end(versionBody);
  });
}

app.any('/*', (res: HttpResponse) => {
  res.writeStatus('404 Not Found').end();
});

app.listen('127.0.0.1', 0, (socket: us_listen_socket | false) => {
  if (!socket) {
    process.stderr.write('bare-uws: cannot listen on 127.0.0.1\n');
    process.exit(1);
  }
  const port = uws.us_socket_local_port(socket as never);
  process.stderr.write(`bare-uws: listening on http://127.0.0.1:${port}\n`);
  const stop = () => {
    uws.us_listen_socket_close(socket);
    (app as unknown as { close?: () => void }).close?.();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
});
