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

// Open registration cannot be flooded into refusing everyone (docs/mcp.md, "OAuth for MCP
// clients"): anyone may register, but one address (oauth handler: the client address's key,
// an IPv6 /64 as one) only REGISTRATIONS_PER_ADDRESS times per REGISTRATION_WINDOW_MS; a
// client that is never used (no consent reached it: no code, no grant) is removed
// UNUSED_CLIENT_TTL_MS after registration, by the daemon's minute timer; and at most
// MAX_UNUSED_CLIENTS wait at once. One address therefore holds at most about
//   REGISTRATIONS_PER_ADDRESS x (UNUSED_CLIENT_TTL_MS + one timer period) / REGISTRATION_WINDOW_MS
// unused clients (~40), so filling the global cap takes well over a hundred addresses, and
// what they fill drains by itself within UNUSED_CLIENT_TTL_MS. The window is shorter than
// the time to live, so a client still counts against its address while it exists.

export const REGISTRATIONS_PER_ADDRESS = 20;
export const REGISTRATION_WINDOW_MS = 10 * 60_000;
export const UNUSED_CLIENT_TTL_MS = 15 * 60_000;
export const MAX_UNUSED_CLIENTS = 5_000;

/** Redirect URIs an audit event names at most (each cut at URI_DETAIL_LENGTH characters); the count is given beside them. */
const MAX_DETAIL_URIS = 5;
const URI_DETAIL_LENGTH = 200;

/**
 * Registers a client for `fromKey` (the registering address's key), recorded in the audit
 * log with the client address `address`. Over the address's limit: 429
 * temporarily_unavailable with Retry-After (when its oldest registration in the window
 * leaves it); over the global cap of unused clients: 503 with Retry-After.
 */
export async function registerClient(ctx: OAuthContext, body: unknown, fromKey: string, address: string): Promise<Record<string, unknown>> {
  const reg = readRegistration(body);
  const secret = reg.authMethod === 'none' ? undefined : newCredential(CLIENT_SECRET_PREFIX);
  const now = ctx.now();
  const outcome = await ctx.audit.change(
    () =>
      ctx.store.oauth.registerClient(
        { name: reg.name, redirectUris: reg.redirectUris, metadata: reg.metadata, ...(secret ? { secretHash: hashOf(ctx, secret) } : {}) },
        now.toISOString(),
        {
          // The store keeps a keyed hash: who registered is needed for counting, not for reading back.
          from: hashOf(ctx, `registration-address:${fromKey}`),
          since: new Date(now.getTime() - REGISTRATION_WINDOW_MS).toISOString(),
          perAddress: REGISTRATIONS_PER_ADDRESS,
          maxUnused: MAX_UNUSED_CLIENTS,
        },
      ),
    // A refusal is not recorded: it changes nothing, and the per-address limit bounds the log.
    (outcome) =>
      'client' in outcome
        ? {
            action: 'oauth_client.registered',
            actor: { credentialKind: 'anonymous' },
            target: { type: 'oauth_client', id: outcome.client.id },
            sourceAddress: address,
            details: {
              clientName: reg.name,
              authMethod: reg.authMethod,
              redirectUris: reg.redirectUris.slice(0, MAX_DETAIL_URIS).map((u) => u.slice(0, URI_DETAIL_LENGTH)),
              redirectUriCount: reg.redirectUris.length,
            },
          }
        : undefined,
  );
  if ('refused' in outcome) {
    if (outcome.refused === 'address') {
      const seconds = Math.max(1, Math.ceil((Date.parse(outcome.oldest) + REGISTRATION_WINDOW_MS - now.getTime()) / 1000));
      throw new OAuthError(
        'temporarily_unavailable',
        `this address registered ${REGISTRATIONS_PER_ADDRESS} clients in the last ${REGISTRATION_WINDOW_MS / 60_000} minutes; retry in ${seconds} s, or reuse a client already registered`,
        429,
        [['Retry-After', String(seconds)]],
      );
    }
    throw new OAuthError(
      'temporarily_unavailable',
      `${MAX_UNUSED_CLIENTS} registered clients are waiting to be used; clients never used are removed ${UNUSED_CLIENT_TTL_MS / 60_000} minutes after registration, retry in a minute`,
      503,
      [['Retry-After', '60']],
    );
  }
  const { client } = outcome;
  return {
    client_id: client.id,
    ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
    client_id_issued_at: Math.floor(now.getTime() / 1000),
    ...reg.metadata,
  };
}

/** The client making a token or revocation request; 401 invalid_client when it cannot be told apart from an impostor. */
export async function authenticateClient(ctx: OAuthContext, params: Params, authorization: string | undefined): Promise<OAuthClientRecord> {
  const basic = authorization === undefined ? undefined : readBasic(authorization);
  const postSecret = params.get('client_secret');
  const postId = params.get('client_id');
  if (basic && postSecret !== undefined) throw new OAuthError('invalid_request', 'send the client secret once: in HTTP Basic or in the body, not both');
  if (basic && postId !== undefined && postId !== basic.id) throw new OAuthError('invalid_request', 'client_id in the body differs from the one in HTTP Basic');
  const id = basic?.id ?? postId;
  if (id === undefined) throw new OAuthError('invalid_client', 'client authentication is required: client_id (public clients) or the client secret');
  const secret = basic?.secret ?? postSecret;
  const client = await ctx.store.oauth.getClient(id);
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
