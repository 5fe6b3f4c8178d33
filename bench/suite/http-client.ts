// One client's requests to the daemon, each timed from its first byte written to the last
// byte of its answer read, on a keep-alive connection (node:http: no fetch machinery in
// the figure). The phases that time requests one at a time use it (phase-http-queries.ts,
// distinct-latency.ts).

import http from 'node:http';

export interface Answer {
  status: number;
  /** First byte sent to last byte read. */
  ms: number;
  /** The body, when asked for (`keepBody`). */
  text?: string;
}

/** One keep-alive connection: requests sent through it go one after the other. */
export function oneConnection(): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets: 1 });
}

/**
 * Sends one request and reads its answer to the end. Sent on a kept connection that the
 * server closed as it was idle (the close and the request crossed: "socket hang up"), it
 * is sent once more on a new one, timed from there: it never reached the server.
 */
export function send(agent: http.Agent, url: URL, method: 'GET' | 'POST', body?: string, keepBody = false): Promise<Answer> {
  return attempt(agent, url, { method, body, keepBody }, true);
}

function attempt(agent: http.Agent, url: URL, r: { method: 'GET' | 'POST'; body: string | undefined; keepBody: boolean }, again: boolean): Promise<Answer> {
  const { method, body, keepBody } = r;
  return new Promise((resolve, reject) => {
    const headers = body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    const started = process.hrtime.bigint();
    const req = http.request(url, { method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', keepBody ? (c: Buffer) => chunks.push(c) : () => {});
      res.on('end', () => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        resolve({ status: res.statusCode ?? 0, ms, ...(keepBody ? { text: Buffer.concat(chunks).toString('utf8') } : {}) });
      });
      res.on('error', reject);
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (again && req.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) resolve(attempt(agent, url, r, false));
      else reject(err);
    });
    req.end(body);
  });
}

/** POST a JSON body. */
export function post(agent: http.Agent, url: URL, body: string, keepBody = false): Promise<Answer> {
  return send(agent, url, 'POST', body, keepBody);
}
