// Whether a delivery comes from the code host: checked on the bytes as received, before
// anything of them is parsed, in constant time whatever was sent.
//
// How each host proves it (its webhook settings hold the same secret as the connection's
// webhookSecret):
// - GitHub: X-Hub-Signature-256, "sha256=" and the hex HMAC-SHA256 of the body.
// - Gitea (and Forgejo): X-Gitea-Signature (X-Forgejo-Signature), the hex HMAC-SHA256 of
//   the body.
// - Bitbucket Cloud and Server: X-Hub-Signature, "sha256=" and the hex HMAC-SHA256.
// - GitLab: X-Gitlab-Token, the secret itself.
// - Azure DevOps: the service hook's basic authentication, the secret as its password
//   (any user name).
// - Gerrit: the webhooks plugin can neither sign nor add a header, so the secret is in
//   the URL it posts to: ?secret=...
// - A plain git server (a post-receive hook, docs/configuration.md): X-Trawl-Signature-256,
//   "sha256=" and the hex HMAC-SHA256 of the body, as GitHub signs.

import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { WebhookHost } from './hosts.ts';

/** A delivery as received: headers with lower-case names, the query string's parameters, the body's bytes. */
export interface Received {
  headers: Readonly<Record<string, string | undefined>>;
  query: Readonly<Record<string, string | undefined>>;
  body: Buffer;
}

/** Whether `d` was sent by a holder of `secret`, as `host` proves it. */
export function verified(host: WebhookHost, secret: string, d: Received): boolean {
  switch (host) {
    case 'github':
      return signedHex(secret, d.body, d.headers['x-hub-signature-256'], 'sha256=');
    case 'gitea':
      return signedHex(secret, d.body, d.headers['x-gitea-signature'] ?? d.headers['x-forgejo-signature'], '');
    case 'bitbucket-cloud':
    case 'bitbucket-server':
      return signedHex(secret, d.body, d.headers['x-hub-signature'], 'sha256=');
    case 'gitlab':
      return sameSecret(secret, d.headers['x-gitlab-token']);
    case 'azuredevops':
      return sameSecret(secret, basicPassword(d.headers.authorization));
    case 'gerrit':
      return sameSecret(secret, d.query.secret);
    case 'git':
      return signedHex(secret, d.body, d.headers['x-trawl-signature-256'], 'sha256=');
  }
}

/** `sent` is `prefix` and the hex HMAC-SHA256 of `body` under `secret`. */
function signedHex(secret: string, body: Buffer, sent: string | undefined, prefix: string): boolean {
  if (sent === undefined || !sent.startsWith(prefix)) return false;
  const hex = sent.slice(prefix.length);
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) return false;
  const expected = createHmac('sha256', secret).update(body).digest();
  return timingSafeEqual(Buffer.from(hex, 'hex'), expected);
}

/** `sent` equals `secret`: compared as digests, so that neither its length nor its bytes leak through the time taken. */
function sameSecret(secret: string, sent: string | undefined): boolean {
  if (sent === undefined) return false;
  return timingSafeEqual(digest(sent), digest(secret));
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest();
}

/** The password of an `Authorization: Basic` header, if it is one. */
function basicPassword(header: string | undefined): string | undefined {
  const m = header?.match(/^Basic\s+([A-Za-z0-9+/=]+)\s*$/i);
  if (!m) return undefined;
  const pair = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = pair.indexOf(':');
  return colon < 0 ? undefined : pair.slice(colon + 1);
}
