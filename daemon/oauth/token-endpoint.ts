// The token endpoint (OAuth 2.1 section 3.2): an authorization code with its PKCE
// verifier, or a refresh token, for a new access token (1 hour) and refresh token.
//
// Refresh tokens rotate: each is good for one exchange. Presenting one that was already
// exchanged means two parties hold it (OAuth 2.1 section 4.3.1), so the whole grant, every
// access and refresh token descending from that consent, is revoked at once. An
// authorization code used twice revokes the grant its first use created, likewise.
//
// A grant lives at most ctx.grantLifetimeMs from consent: every token is minted to expire
// by then, and a refresh after it is refused, so rotation cannot keep a grant alive for
// ever. And it lives only while the API key the user consented with does: the exchange
// and the refresh refuse a grant whose key is revoked (invalid_grant), as the API refuses
// its access tokens (oauth/access.ts).
//
// The audit log records the grant a code's exchange creates, and a grant a reuse revokes,
// in one transaction with the change; the actor is the client (its id), acting for the
// grant's user. Refreshes are not recorded: they hand out nothing the grant did not.

import type { AuditActorOf } from '../audit/events.ts';
import { firstTime } from '../audit/log.ts';
import { originLive } from '../auth/origin.ts';
import type { NewOAuthToken, OAuthClientRecord, OAuthGrantRecord } from '../store/store.ts';
import { authenticateClient } from './clients.ts';
import { hashOf, type OAuthContext } from './context.ts';
import { OAuthError } from './errors.ts';
import { required, type Params } from './form.ts';
import { verifierMatches } from './pkce.ts';
import { acceptResource } from './resource.ts';
import { ACCESS_TOKEN_LIFETIME_MS, CODE_PREFIX, hasShape, newCredential, REFRESH_TOKEN_LIFETIME_MS, REFRESH_TOKEN_PREFIX } from './tokens.ts';
import { ACCESS_TOKEN_PREFIX } from '../auth/credentials.ts';

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
  refresh_token?: string;
}

/** Who is asking, for the audit log: the authenticated client, from the client address. */
interface Caller {
  client: OAuthClientRecord;
  address: string;
}

export async function tokenRequest(ctx: OAuthContext, params: Params, authorization: string | undefined, address: string): Promise<TokenResponse> {
  const grantType = required(params, 'grant_type');
  const client = await authenticateClient(ctx, params, authorization);
  const caller: Caller = { client, address };
  if (grantType === 'authorization_code') return exchangeCode(ctx, caller, params);
  if (grantType === 'refresh_token') return refresh(ctx, caller, params);
  throw new OAuthError('unsupported_grant_type', `grant_type must be authorization_code or refresh_token, not ${grantType.slice(0, 64)}`);
}

async function exchangeCode(ctx: OAuthContext, caller: Caller, params: Params): Promise<TokenResponse> {
  const { client } = caller;
  const code = required(params, 'code');
  const verifier = required(params, 'code_verifier');
  const invalid = (why: string) => new OAuthError('invalid_grant', why);
  if (!hasShape(code, CODE_PREFIX)) throw invalid('the authorization code is not valid');
  const hash = hashOf(ctx, code);
  const record = await ctx.store.oauth.peekCode(hash);
  const now = ctx.now();
  if (!record) throw invalid('the authorization code is not valid');
  if (record.usedAt !== undefined) throw await codeReused(ctx, caller, record.grantId);
  if (record.clientId !== client.id) throw invalid('the authorization code was issued to another client');
  if (now.getTime() >= Date.parse(record.expiresAt)) throw invalid('the authorization code has expired (codes are good for 5 minutes); authorize again');
  const redirectUri = params.get('redirect_uri');
  if (redirectUri !== undefined && redirectUri !== record.redirectUri) throw invalid('redirect_uri differs from the one of the authorization request');
  if (!verifierMatches(verifier, record.codeChallenge)) throw invalid('code_verifier does not match the code_challenge of the authorization request');
  checkResource(ctx, params, record.resource);
  await activeUser(ctx, record.userId);
  await liveKey(ctx, record.apiKeyId, record.userId);
  // The grant is created now: it ends grantLifetimeMs from now.
  const { tokens, response } = mint(ctx, client, record.scope, now, now.getTime() + ctx.grantLifetimeMs);
  const result = await ctx.audit.change(
    () => ctx.store.oauth.redeemCode(hash, tokens, now.toISOString()),
    (r) =>
      r !== undefined && 'grant' in r
        ? {
            action: 'oauth_grant.created',
            actor: actorFor(caller, r.grant.userId),
            target: { type: 'oauth_grant', id: r.grant.id },
            sourceAddress: caller.address,
            details: { clientId: client.id, clientName: client.name, scope: r.grant.scope },
          }
        : undefined,
  );
  if (!result) throw invalid('the authorization code is not valid');
  // Another request exchanged it between the look and the exchange.
  if ('reused' in result) throw await codeReused(ctx, caller, result.reused.grantId);
  return response;
}

async function refresh(ctx: OAuthContext, caller: Caller, params: Params): Promise<TokenResponse> {
  const { client } = caller;
  if (!grantTypes(client).includes('refresh_token')) throw new OAuthError('unauthorized_client', 'this client did not register the refresh_token grant type');
  const token = required(params, 'refresh_token');
  const invalid = (why: string) => new OAuthError('invalid_grant', why);
  if (!hasShape(token, REFRESH_TOKEN_PREFIX)) throw invalid('the refresh token is not valid');
  const hash = hashOf(ctx, token);
  const found = await ctx.store.oauth.findToken(hash);
  const now = ctx.now();
  if (found?.token.kind !== 'refresh' || found.grant.clientId !== client.id) throw invalid('the refresh token is not valid');
  if (found.token.rotatedAt !== undefined) throw await refreshReused(ctx, caller, found.grant);
  if (found.token.revokedAt !== undefined || found.grant.revokedAt !== undefined) throw invalid('the refresh token has been revoked');
  const grantEnd = Date.parse(found.grant.createdAt) + ctx.grantLifetimeMs;
  if (now.getTime() >= grantEnd) {
    throw invalid(`this authorization was given more than ${formatDays(ctx.grantLifetimeMs)} ago, the longest an authorization lives; authorize again`);
  }
  if (now.getTime() >= Date.parse(found.token.expiresAt)) throw invalid('the refresh token has expired; authorize again');
  const scope = params.get('scope');
  if (scope !== undefined) {
    const granted = new Set(found.grant.scope.split(' '));
    const extra = scope.split(' ').filter((s) => s !== '' && !granted.has(s));
    if (extra.length > 0) throw new OAuthError('invalid_scope', `a refresh cannot add scopes to the grant (${extra.slice(0, 5).join(' ')})`);
  }
  checkResource(ctx, params, found.grant.resource);
  await activeUser(ctx, found.grant.userId);
  await liveKey(ctx, found.grant.apiKeyId, found.grant.userId);
  const { tokens, response } = mint(ctx, client, found.grant.scope, now, grantEnd);
  if (!(await ctx.store.oauth.rotateRefreshToken(hash, tokens, now.toISOString()))) {
    // Lost a race with another exchange of the same token (or a revocation): read again.
    const again = await ctx.store.oauth.findToken(hash);
    if (again?.token.rotatedAt !== undefined) throw await refreshReused(ctx, caller, again.grant);
    throw invalid('the refresh token has been revoked');
  }
  return response;
}

async function codeReused(ctx: OAuthContext, caller: Caller, grantId: string | undefined): Promise<OAuthError> {
  if (grantId !== undefined) await revokeForReuse(ctx, caller, grantId, 'authorization_code_reused');
  return new OAuthError('invalid_grant', 'the authorization code was used before; the tokens issued for it are revoked');
}

async function refreshReused(ctx: OAuthContext, caller: Caller, grant: OAuthGrantRecord): Promise<OAuthError> {
  await revokeForReuse(ctx, caller, grant.id, 'refresh_token_reused');
  return new OAuthError('invalid_grant', 'the refresh token was used before; every token of this authorization is revoked, authorize again');
}

/** Revokes a grant whose code or refresh token came back, recorded when it takes effect (a later replay records nothing more). */
async function revokeForReuse(ctx: OAuthContext, caller: Caller, grantId: string, reason: 'authorization_code_reused' | 'refresh_token_reused'): Promise<void> {
  const now = ctx.now().toISOString();
  await ctx.audit.change(
    async () => firstTime((await ctx.store.oauth.getGrant(grantId))?.revokedAt, await ctx.store.oauth.revokeGrant(grantId, now)),
    (g) =>
      g?.first
        ? {
            action: 'oauth_grant.revoked',
            actor: actorFor(caller, g.userId),
            target: { type: 'oauth_grant', id: g.id },
            sourceAddress: caller.address,
            details: { reason, clientId: g.clientId },
          }
        : undefined,
  );
}

/** The client, acting for the grant's user. */
function actorFor(caller: Caller, userId: string): AuditActorOf {
  return { userId, credentialKind: 'oauthClient', credentialId: caller.client.id };
}

/** A resource parameter at the token endpoint must be acceptable and agree with the authorization's. */
function checkResource(ctx: OAuthContext, params: Params, authorized: string | undefined): void {
  const resource = params.get('resource');
  if (resource === undefined) return;
  acceptResource(ctx.issuer(), resource);
  if (authorized !== undefined && resource.replace(/\/+$/, '') !== authorized.replace(/\/+$/, '')) {
    throw new OAuthError('invalid_target', 'resource differs from the one of the authorization request');
  }
}

/** Tokens are not issued for a grant whose API key is revoked (or was never recorded). */
async function liveKey(ctx: OAuthContext, apiKeyId: string | undefined, userId: string): Promise<void> {
  if (!(await originLive(ctx.store, apiKeyId, userId)))
    throw new OAuthError('invalid_grant', 'the API key this authorization was approved with has been revoked; authorize again');
}

/** "90 days", "1 day", "2.5 hours": a lifetime as people read it. */
function formatDays(ms: number): string {
  const days = ms / 86_400_000;
  if (days >= 1) return `${Number(days.toFixed(2))} day${days === 1 ? '' : 's'}`;
  const hours = ms / 3_600_000;
  return `${Number(hours.toFixed(2))} hour${hours === 1 ? '' : 's'}`;
}

/** Tokens are not issued for a user who is gone or suspended. */
async function activeUser(ctx: OAuthContext, userId: string): Promise<void> {
  const user = await ctx.store.getUser(userId);
  if (!user) throw new OAuthError('invalid_grant', 'the user of this authorization no longer exists');
  if (user.suspendedAt !== undefined) throw new OAuthError('invalid_grant', 'the user of this authorization is suspended');
}

function grantTypes(client: OAuthClientRecord): string[] {
  const g = client.metadata.grant_types;
  return Array.isArray(g) ? (g as string[]) : ['authorization_code', 'refresh_token'];
}

/**
 * A new access token (and refresh token, when the client registered that grant type): the
 * answer, and what the store keeps of them. No token outlives `grantEnd` (ms): one minted
 * near the grant's end expires with it, and expires_in says so.
 */
function mint(ctx: OAuthContext, client: OAuthClientRecord, scope: string, now: Date, grantEnd: number): { tokens: NewOAuthToken[]; response: TokenResponse } {
  const expiry = (lifetime: number) => Math.min(now.getTime() + lifetime, grantEnd);
  const record = (value: string, kind: NewOAuthToken['kind'], lifetime: number): NewOAuthToken => ({
    hash: hashOf(ctx, value),
    kind,
    expiresAt: new Date(expiry(lifetime)).toISOString(),
  });
  const access = newCredential(ACCESS_TOKEN_PREFIX);
  const tokens = [record(access, 'access', ACCESS_TOKEN_LIFETIME_MS)];
  const expiresIn = Math.floor((expiry(ACCESS_TOKEN_LIFETIME_MS) - now.getTime()) / 1000);
  const response: TokenResponse = { access_token: access, token_type: 'Bearer', expires_in: expiresIn, scope };
  if (grantTypes(client).includes('refresh_token')) {
    const refreshToken = newCredential(REFRESH_TOKEN_PREFIX);
    tokens.push(record(refreshToken, 'refresh', REFRESH_TOKEN_LIFETIME_MS));
    response.refresh_token = refreshToken;
  }
  return { tokens, response };
}
