// Whether a request to an endpoint outside the API's routes (which authenticate every
// request in server.ts) carries an owner's API key: what GET /metrics needs
// (metrics-access.ts), and what GET /readyz needs to add its repository counts, which
// cover private repositories too (readiness.ts). Bearer credentials only (Authorization or
// an API key header): a browser's session cookie is not a scraper's or a probe's.

import type { Authenticator, Identity } from '../auth/identity.ts';
import { readCredentials } from './auth.ts';

/** An owner using an API key: the one caller told what the daemon holds in private repositories. */
export function isOwnerKey(identity: Identity): boolean {
  return identity.kind === 'apiKey' && identity.role === 'owner';
}

/**
 * Whether the request carries an owner's API key: false when it carries no credential (a
 * probe) or another caller's; a credential the authenticator refuses is its 401, as on
 * every route, rather than passing for no credential.
 */
export async function ownerKeySent(headers: Readonly<Record<string, string | undefined>>, authenticator: Authenticator): Promise<boolean> {
  const sent = readCredentials(headers, true);
  if (sent.token === undefined) return false;
  return isOwnerKey(await authenticator.authenticate(sent));
}
