// An API request handed to another node: a node that cannot read what a browsing route
// reads of a repository (its git source, or every shard of a directory's index) has it run
// by one that can (http/forward.ts decides and sends; http/forward-endpoint.ts runs the
// route there). This file is the wire between the two:
//
//   POST /_cluster/forward?m=<method>&t=<path?query>&k=<credential kind>[&u=<user id>]
//        [&i=<token id>][&r=<request id>][&c=<content type>&h=<SHA-256 of the body>]
//   body: the API request's body, as the route reads it
//
// What to run and as whom travels in the query string, which the sender's signature covers
// (peer-auth.ts signs the method and the target with its query), and the body is bound to it
// by its hash: a request cannot be replayed with another caller, route or body. The caller
// is named, not proven (auth/identity.ts IdentityRef): the receiving node reads them again
// from the shared store. The answer is 200 with the route's answer inside: its status in
// X-Trawl-Status, its body as the body, the headers it set named in X-Trawl-Relay. Any other
// status is the forwarding failing (the node is joining, refused the signature, ...).

import { createHash } from 'node:crypto';
import type { CredentialKind, IdentityRef } from '../auth/identity.ts';
import { ServiceError } from '../errors.ts';
import type { PeerReply } from './internal-route.ts';
import type { PeerClient } from './peer-client.ts';

export const FORWARD_PATH = '/_cluster/forward';

const STATUS_HEADER = 'x-trawl-status';
const RELAY_HEADER = 'x-trawl-relay';

const KINDS: ReadonlySet<string> = new Set<CredentialKind>(['anonymous', 'apiKey', 'oauth', 'scopedToken', 'browserSession']);

export interface ForwardRequest {
  method: 'GET' | 'POST';
  /** The API request's path and query string. */
  target: string;
  body?: Buffer;
  /** The body's Content-Type. */
  contentType?: string;
  /** The caller, as the forwarding node authenticated them. */
  identity: IdentityRef;
  /** The forwarding node's request id, so that both nodes' log lines of the request carry it. */
  requestId?: string;
}

/** The route's answer, as the node that ran it gave it. */
export interface ForwardedReply {
  status: number;
  /** Content-Type first, then the headers the route set. */
  headers: Array<[string, string]>;
  body: Buffer;
}

/** The signed target of POST FORWARD_PATH for `r`. */
export function forwardTarget(r: ForwardRequest): string {
  const q = new URLSearchParams({ m: r.method, t: r.target, k: r.identity.kind });
  if (r.identity.userId !== undefined) q.set('u', r.identity.userId);
  if (r.identity.tokenId !== undefined) q.set('i', r.identity.tokenId);
  if (r.requestId !== undefined) q.set('r', r.requestId);
  if (r.body) {
    q.set('c', r.contentType ?? 'application/json');
    q.set('h', digest(r.body));
  }
  return `${FORWARD_PATH}?${q}`;
}

/** The request a POST FORWARD_PATH carries; 400 INVALID_REQUEST_BODY when it is not one. */
export function parseForward(query: string, body: Buffer | undefined): ForwardRequest {
  const q = new URLSearchParams(query);
  const bad = (why: string) => new ServiceError('INVALID_REQUEST_BODY', `not a forwarded request: ${why}`);
  const method = q.get('m');
  const target = q.get('t');
  const kind = q.get('k');
  if (method !== 'GET' && method !== 'POST') throw bad('m must be GET or POST');
  if (!target?.startsWith('/api/')) throw bad('t must be an API path');
  if (kind === null || !KINDS.has(kind)) throw bad('k must be a credential kind');
  const identity: IdentityRef = { kind: kind as CredentialKind };
  const user = q.get('u');
  const token = q.get('i');
  if (user !== null) identity.userId = user;
  if (token !== null) identity.tokenId = token;
  const r: ForwardRequest = { method, target, identity };
  const requestId = q.get('r');
  if (requestId !== null) r.requestId = requestId;
  const hash = q.get('h');
  const sent = body && body.length > 0 ? body : undefined;
  if ((hash === null) !== (sent === undefined) || (sent && hash !== digest(sent))) throw bad('the body is not the one the request was signed with');
  if (sent) {
    r.body = sent;
    r.contentType = q.get('c') ?? 'application/json';
  }
  return r;
}

/** Answers a forwarded request with the route's answer (status, body, the headers it set). */
export function sendForwarded(reply: PeerReply, status: number, contentType: string, body: string | Uint8Array, headers: Array<[string, string]>): void {
  reply.send(200, body, [
    ['Content-Type', contentType],
    ['X-Trawl-Status', String(status)],
    ['X-Trawl-Relay', headers.map(([k]) => k.toLowerCase()).join(',')],
    ...headers,
  ]);
}

/**
 * How long a node may take to answer a forwarded request (its route answers whole, so this
 * bounds all of it): a node that hangs without dying fails it then, and the next node able
 * to read the repository is asked, or the caller gets 503.
 */
export const FORWARD_TIMEOUT_MS = 30_000;

/**
 * Has the node at `url` run `r`; its route's answer. Rejects with PeerError when the node
 * cannot be reached or the forwarding fails there (any status but 200). A connection that
 * breaks before the node answered (a kept-alive one it had closed, or the node restarting)
 * is tried once more: every route forwarded only reads. A node that does not answer within
 * `timeoutMs` is not asked again.
 */
export async function forward(
  peers: PeerClient,
  url: string,
  r: ForwardRequest,
  signal?: AbortSignal,
  timeoutMs = FORWARD_TIMEOUT_MS,
): Promise<ForwardedReply> {
  const target = forwardTarget(r);
  const send = () => peers.send(url, { method: 'POST', target, timeoutMs, ...(r.body ? { body: r.body } : {}), ...(signal ? { signal } : {}) });
  const res = await send().catch((err: Error & { status?: number; timedOut?: boolean }) => {
    // A node that answered, or ran out of time (it may be running the request still), is not asked twice.
    if (err.status !== undefined || err.timedOut === true || signal?.aborted) throw err;
    return send();
  });
  const parts: Buffer[] = [];
  for await (const b of res) parts.push(b as Buffer);
  const status = Number(res.headers[STATUS_HEADER]);
  if (!Number.isInteger(status) || status < 100 || status > 599) throw new Error(`${url} answered a forwarded request without its status`);
  const relay = new Set(
    String(res.headers[RELAY_HEADER] ?? '')
      .split(',')
      .filter((h) => h !== ''),
  );
  const headers: Array<[string, string]> = [['Content-Type', String(res.headers['content-type'] ?? 'application/json')]];
  // rawHeaders keeps each header as sent (a repeated one stays repeated).
  for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) {
    const name = res.rawHeaders[i]!;
    if (relay.has(name.toLowerCase())) headers.push([name, res.rawHeaders[i + 1]!]);
  }
  return { status, headers, body: Buffer.concat(parts) };
}

function digest(body: Buffer): string {
  return createHash('sha256').update(body).digest('base64url');
}
