// How nodes prove to each other that they are of the cluster: a request to a node-to-node
// endpoint (http/server.ts INTERNAL_PREFIX) carries
//
//   X-Trawl-Node: <node id>:<ms since the epoch>:<HMAC-SHA256(secret, "<id>:<ms>:<METHOD> <path>"), base64url>
//
// under the cluster's secret, which every node reads from the shared store (one secret,
// made by the first node that asked: store.sharedSecret('cluster')). The secret itself
// never travels; a header is good for one method and path, within MAX_SKEW_MS of the
// receiver's clock. A user's key, token or session is never accepted there, nor is this
// header anywhere else.

import { createHmac, timingSafeEqual } from 'node:crypto';
import { ServiceError } from '../errors.ts';
import { NODE_ID } from './membership.ts';

export const NODE_HEADER = 'x-trawl-node';

/** How far apart two nodes' clocks (and a request's travel) may be. */
const MAX_SKEW_MS = 60_000;

export class PeerAuth {
  constructor(
    private readonly secret: Buffer,
    readonly nodeId: string,
  ) {}

  /** The header value for a request of this node. */
  header(method: string, path: string, now = Date.now()): string {
    const head = `${this.nodeId}:${now}`;
    return `${head}:${this.mac(`${head}:${method} ${path}`)}`;
  }

  /** Throws 401 NOT_AUTHENTICATED unless `headers` carry a valid header for this method and path; returns the sender's node id. */
  check(method: string, path: string, headers: Readonly<Record<string, string>>, now = Date.now()): string {
    const refuse = (why: string) => new ServiceError('NOT_AUTHENTICATED', `node-to-node endpoint: ${why}`);
    const value = headers[NODE_HEADER];
    if (value === undefined) throw refuse('only the nodes of the cluster may call it');
    const parts = value.split(':');
    if (parts.length !== 3 || !NODE_ID.test(parts[0]!) || !/^\d{1,16}$/.test(parts[1]!)) throw refuse('malformed node credential');
    const [id, ms, mac] = parts as [string, string, string];
    if (Math.abs(now - Number(ms)) > MAX_SKEW_MS) throw refuse('node credential too old or from the future (are the clocks set?)');
    const want = Buffer.from(this.mac(`${id}:${ms}:${method} ${path}`));
    const got = Buffer.from(mac);
    if (got.length !== want.length || !timingSafeEqual(got, want)) throw refuse('node credential not valid for this cluster');
    return id;
  }

  private mac(text: string): string {
    return createHmac('sha256', this.secret).update(text).digest('base64url');
  }
}
