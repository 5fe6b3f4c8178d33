// Requests to other nodes' node-to-node HTTP endpoints (peer-routes.ts: shard files being
// copied, forwarded browsing requests; searches go over links, peer-link.ts): HTTP/1.1 with
// keep-alive connections, signed with the cluster's credential (peer-auth.ts).

import { Agent, request, type IncomingMessage } from 'node:http';
import type { PeerAuth } from './peer-auth.ts';

/** A node did not answer as it should: unreachable, refused, or an error status. */
export class PeerError extends Error {
  constructor(
    message: string,
    /** The HTTP status, when the node answered. */
    readonly status?: number,
    /** The node did not start answering within the request's time limit (it may be running it still). */
    readonly timedOut = false,
  ) {
    super(message);
    this.name = 'PeerError';
  }
}

export interface PeerRequest {
  method: 'GET' | 'POST';
  /** Path and query string. */
  target: string;
  body?: Uint8Array;
  signal?: AbortSignal;
  /** Give up when the node has not started answering within this long. */
  timeoutMs?: number;
}

export class PeerClient {
  readonly #agent = new Agent({ keepAlive: true, keepAliveMsecs: 10_000, maxSockets: 256, maxFreeSockets: 32, scheduling: 'lifo' });

  constructor(private readonly auth: PeerAuth) {}

  /**
   * The response of `node` (its base URL), status 200, its body to be read by the caller.
   * Rejects with PeerError when the node cannot be reached, answers with another status
   * (the message its error body gives), or does not start answering in time.
   */
  send(node: string, r: PeerRequest): Promise<IncomingMessage> {
    const url = new URL(r.target, node);
    return new Promise<IncomingMessage>((resolve, reject) => {
      const req = request(
        url,
        {
          method: r.method,
          agent: this.#agent,
          headers: {
            'x-trawl-node': this.auth.header(r.method, r.target),
            ...(r.body ? { 'content-type': 'application/x-msgpack', 'content-length': String(r.body.length) } : {}),
          },
          ...(r.signal ? { signal: r.signal } : {}),
        },
        (res) => {
          clearTimeout(timer);
          if (res.statusCode === 200) return resolve(res);
          const parts: Buffer[] = [];
          res.on('data', (b: Buffer) => parts.push(b));
          res.on('error', () => reject(new PeerError(`${node} answered ${res.statusCode}`, res.statusCode)));
          res.on('end', () => {
            const text = Buffer.concat(parts).toString('utf8');
            let why = text.slice(0, 300);
            try {
              why = (JSON.parse(text) as { message?: string }).message ?? why;
            } catch {
              // not the API's error object: the text as it is
            }
            reject(new PeerError(`${node} answered ${res.statusCode}: ${why}`, res.statusCode));
          });
        },
      );
      const timer =
        r.timeoutMs === undefined
          ? undefined
          : setTimeout(() => req.destroy(new PeerError(`${node} did not answer within ${r.timeoutMs} ms`, undefined, true)), r.timeoutMs);
      req.on('error', (err) => {
        clearTimeout(timer);
        reject(err instanceof PeerError ? err : new PeerError(`${node} cannot be reached: ${(err as Error).message}`));
      });
      req.end(r.body);
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}
