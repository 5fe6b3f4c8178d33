// Git over smart HTTP for tests: `git http-backend` behind a small CGI server on loopback,
// serving the repositories under a directory, with basic auth. The remote of the mirror
// tests, and what a fake code host's clone URLs point at in the sync tests.

import { spawn } from 'node:child_process';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

export interface GitServer {
  url: string;
  /** Requests so far, answered or refused. */
  requests: number;
  close(): Promise<void>;
}

export interface GitServerOptions {
  /** The basic-auth credentials it accepts (anything else: 401); without a user name, any user with that password (as Gitea and GitLab take a token). */
  credentials: { username?: string; password: string };
  tls?: { key: string; cert: string };
}

/** Serves the repositories under `root` (`<url>/org/repo.git` is `<root>/org/repo.git`). */
export async function startGitServer(root: string, options: GitServerOptions): Promise<GitServer> {
  const { credentials, tls } = options;
  const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    state.requests++;
    const user = acceptedUser(req.headers.authorization, credentials);
    if (user === undefined) {
      req.resume();
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"', 'Content-Type': 'text/plain' }).end('no\n');
      return;
    }
    const u = new URL(req.url ?? '/', 'http://localhost');
    const env: NodeJS.ProcessEnv = {
      // A clean environment: the developer's git configuration must not leak in.
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: root,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: '1',
      PATH_INFO: decodeURIComponent(u.pathname),
      QUERY_STRING: u.search.slice(1),
      REQUEST_METHOD: req.method ?? 'GET',
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      REMOTE_USER: user,
      REMOTE_ADDR: '127.0.0.1',
    };
    if (req.headers['content-length'] !== undefined) env.CONTENT_LENGTH = req.headers['content-length'];
    if (req.headers['content-encoding'] !== undefined) env.HTTP_CONTENT_ENCODING = req.headers['content-encoding'];
    if (req.headers['git-protocol'] !== undefined) env.GIT_PROTOCOL = String(req.headers['git-protocol']);
    const cgi = spawn('git', ['http-backend'], { env, stdio: ['pipe', 'pipe', 'ignore'] });
    req.pipe(cgi.stdin);
    cgi.stdin.on('error', () => {});
    // CGI output: header lines, a blank line, then the body.
    let head = Buffer.alloc(0);
    let headerDone = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (headerDone) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const text = head.toString('latin1');
      const m = /\r?\n\r?\n/.exec(text);
      if (m === null) return;
      headerDone = true;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of text.slice(0, m.index).split(/\r?\n/)) {
        const colon = line.indexOf(':');
        const key = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (key.toLowerCase() === 'status') status = Number.parseInt(value, 10);
        else headers[key] = value;
      }
      res.writeHead(status, headers);
      res.write(head.subarray(m.index + m[0].length));
    });
    cgi.stdout.on('end', () => {
      if (!headerDone) res.writeHead(502);
      res.end();
    });
  };
  const server = tls === undefined ? http.createServer(handler) : https.createServer(tls, handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const state: GitServer = {
    url: `${tls === undefined ? 'http' : 'https'}://127.0.0.1:${port}`,
    requests: 0,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  return state;
}

/** The user name of an accepted `Authorization: Basic` header, else undefined. */
function acceptedUser(header: string | undefined, expected: GitServerOptions['credentials']): string | undefined {
  const m = /^Basic (.+)$/.exec(header ?? '');
  if (m === null) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString();
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  const user = decoded.slice(0, colon);
  const ok = decoded.slice(colon + 1) === expected.password && (expected.username === undefined || user === expected.username);
  return ok ? user : undefined;
}
