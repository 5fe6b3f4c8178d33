// Clients: registering one (RFC 7591; metadata rules in registration.ts) and authenticating
// one at the token and revocation endpoints (RFC 6749 section 2.3): a confidential client
// by its secret, in HTTP Basic or in the body (one of the two, never both); a public
// client by its client_id alone, PKCE being what binds its code to it.

import { timingSafeEqual } from 'node:crypto';
import type { OAuthClientRecord } from '../store/store.ts';
import { hashOf, type OAuthContext } from './context.ts';
import { OAuthError } from './errors.ts';
import type { Params } from './form.ts';
import { readRegistration } from './registration.ts';
import { CLIENT_SECRET_PREFIX, hasShape, newCredential } from './tokens.ts';

/** Registrations beyond this many clients are refused until unused ones are pruned (clients without a grant go after a day). */
export const MAX_CLIENTS = 10_000;

export function registerClient(ctx: OAuthContext, body: unknown): Record<string, unknown> {
  const reg = readRegistration(body);
  if (ctx.store.oauth.countClients() >= MAX_CLIENTS) {
    throw new OAuthError('temporarily_unavailable', `this server holds ${MAX_CLIENTS} registered clients; unused ones are removed a day after registration, try again later`);
  }
  const secret = reg.authMethod === 'none' ? undefined : newCredential(CLIENT_SECRET_PREFIX);
  const now = ctx.now();
  const client = ctx.store.oauth.createClient(
    { name: reg.name, redirectUris: reg.redirectUris, metadata: reg.metadata, ...(secret ? { secretHash: hashOf(ctx, secret) } : {}) },
    now.toISOString(),
  );
  return {
    client_id: client.id,
    ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
    client_id_issued_at: Math.floor(now.getTime() / 1000),
    ...reg.metadata,
  };
}

/** The client making a token or revocation request; 401 invalid_client when it cannot be told apart from an impostor. */
export function authenticateClient(ctx: OAuthContext, params: Params, authorization: string | undefined): OAuthClientRecord {
  const basic = authorization === undefined ? undefined : readBasic(authorization);
  const postSecret = params.get('client_secret');
  const postId = params.get('client_id');
  if (basic && postSecret !== undefined) throw new OAuthError('invalid_request', 'send the client secret once: in HTTP Basic or in the body, not both');
  if (basic && postId !== undefined && postId !== basic.id) throw new OAuthError('invalid_request', 'client_id in the body differs from the one in HTTP Basic');
  const id = basic?.id ?? postId;
  if (id === undefined) throw new OAuthError('invalid_client', 'client authentication is required: client_id (public clients) or the client secret');
  const secret = basic?.secret ?? postSecret;
  const client = ctx.store.oauth.getClient(id);
  const fail = (why: string) => new OAuthError('invalid_client', why);
  if (!client) throw fail(`unknown client ${id.slice(0, 64)}; register at the registration endpoint`);
  if (client.secretHash === undefined) {
    if (secret !== undefined) throw fail('this is a public client: it has no secret to send');
    return client;
  }
  if (secret === undefined) throw fail('this client must authenticate with its client secret');
  if (!hasShape(secret, CLIENT_SECRET_PREFIX) || !sameHash(hashOf(ctx, secret), client.secretHash)) throw fail('the client secret is not valid');
  return client;
}

function readBasic(header: string): { id: string; secret: string } {
  const m = /^Basic[ \t]+([A-Za-z0-9+/=]+)[ \t]*$/i.exec(header);
  if (!m) throw new OAuthError('invalid_client', 'the Authorization header must be HTTP Basic with the client id and secret');
  const text = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon < 0) throw new OAuthError('invalid_client', 'HTTP Basic credentials must be "client_id:client_secret"');
  try {
    // RFC 6749 section 2.3.1: both parts are form-urlencoded before they are joined.
    return { id: decodeURIComponent(text.slice(0, colon).replace(/\+/g, ' ')), secret: decodeURIComponent(text.slice(colon + 1).replace(/\+/g, ' ')) };
  } catch {
    throw new OAuthError('invalid_client', 'HTTP Basic credentials are not validly encoded');
  }
}

function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
