// The authorization endpoint (OAuth 2.1 section 4.1): the request is checked, the user
// sees a consent page (consent-page.ts) where they sign in with an API key, and approving
// sends the browser back to the client with a code.
//
// Errors before the client and its redirect URI are known are shown on the page, never
// redirected (an open redirector otherwise); later ones go back to the client as
// error=... with its state (section 4.1.2.1). A code is good once, for 5 minutes, for the
// client, redirect URI and PKCE challenge it was issued to.

import type { OAuthClientRecord } from '../store/store.ts';
import { hashOf, type OAuthContext } from './context.ts';
import { OAuthError } from './errors.ts';
import type { Params } from './form.ts';
import { isChallenge } from './pkce.ts';
import { matchRedirectUri, redirectTo } from './redirect.ts';
import { acceptResource } from './resource.ts';
import { CODE_LIFETIME_MS, CODE_PREFIX, newCredential, SCOPE } from './tokens.ts';

/** A checked authorization request: what the consent page shows and carries. */
export interface AuthorizationRequest {
  client: OAuthClientRecord;
  redirectUri: string;
  codeChallenge: string;
  scope: string;
  state?: string;
  resource?: string;
  /** The parameters as the client sent them, for the consent form to post back. */
  params: Params;
}

/** An error that cannot go back to the client: shown to the user. */
export class AuthorizePageError extends Error {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
    this.name = 'AuthorizePageError';
  }
}

/** An error that goes back to the client's redirect URI. */
export class AuthorizeRedirect extends Error {
  constructor(readonly location: string) {
    super(`redirect to ${location}`);
    this.name = 'AuthorizeRedirect';
  }
}

/** Checks an authorization request; throws AuthorizePageError or AuthorizeRedirect. */
export async function readAuthorizationRequest(ctx: OAuthContext, params: Params): Promise<AuthorizationRequest> {
  const clientId = params.get('client_id');
  if (clientId === undefined) throw new AuthorizePageError('The request names no client (client_id is missing).');
  const client = await ctx.store.oauth.getClient(clientId);
  if (!client) throw new AuthorizePageError('The application asking for access is not registered here (unknown client_id). It should register again.');
  const given = params.get('redirect_uri');
  let redirectUri: string | undefined;
  if (given !== undefined) {
    redirectUri = matchRedirectUri(client.redirectUris, given);
    if (redirectUri === undefined) throw new AuthorizePageError('The address to return to (redirect_uri) is not one the application registered.');
  } else if (client.redirectUris.length === 1) {
    redirectUri = client.redirectUris[0]!;
  } else {
    throw new AuthorizePageError('The request does not say where to return to (redirect_uri), and the application registered several addresses.');
  }

  const state = params.get('state');
  const back = (error: OAuthError): AuthorizeRedirect =>
    new AuthorizeRedirect(redirectTo(redirectUri!, { error: error.error, error_description: error.description, state, iss: ctx.issuer() }));
  const responseType = params.get('response_type');
  if (responseType === undefined) throw back(new OAuthError('invalid_request', 'response_type is required (it must be "code")'));
  if (responseType !== 'code') throw back(new OAuthError('unsupported_response_type', 'response_type must be "code"'));
  const challenge = params.get('code_challenge');
  if (challenge === undefined) throw back(new OAuthError('invalid_request', 'PKCE is required: send code_challenge and code_challenge_method=S256'));
  if (params.get('code_challenge_method') !== 'S256')
    throw back(new OAuthError('invalid_request', 'code_challenge_method must be S256 (plain is not supported)'));
  if (!isChallenge(challenge))
    throw back(new OAuthError('invalid_request', 'code_challenge must be the base64url SHA-256 of the code verifier (43 characters)'));
  const requestedResource = params.get('resource');
  let resource: string | undefined;
  try {
    if (requestedResource !== undefined) resource = acceptResource(ctx.issuer(), requestedResource);
  } catch (err) {
    throw back(err as OAuthError);
  }
  // Only "search" exists; other scopes are ignored rather than refused (RFC 6749 section
  // 3.3), and the token answer says what was granted.
  return {
    client,
    redirectUri,
    codeChallenge: challenge,
    scope: SCOPE,
    params,
    ...(state !== undefined ? { state } : {}),
    ...(resource !== undefined ? { resource } : {}),
  };
}

/** The user said no: back to the client with access_denied. */
export function denyLocation(ctx: OAuthContext, request: AuthorizationRequest): string {
  return redirectTo(request.redirectUri, {
    error: 'access_denied',
    error_description: 'the user did not allow access',
    state: request.state,
    iss: ctx.issuer(),
  });
}

/**
 * The user consented, signed in with the API key `user.keyId` from `address`: a new code,
 * recorded in the audit log with it, and where the browser takes it. The code carries the
 * key to the grant, whose tokens die with it (auth/origin.ts).
 */
export async function approveLocation(
  ctx: OAuthContext,
  request: AuthorizationRequest,
  user: { userId: string; keyId: string },
  address: string,
): Promise<string> {
  const code = newCredential(CODE_PREFIX);
  const now = ctx.now();
  await ctx.audit.change(
    () =>
      ctx.store.oauth.createCode(
        {
          hash: hashOf(ctx, code),
          clientId: request.client.id,
          userId: user.userId,
          apiKeyId: user.keyId,
          redirectUri: request.redirectUri,
          codeChallenge: request.codeChallenge,
          scope: request.scope,
          ...(request.resource !== undefined ? { resource: request.resource } : {}),
          expiresAt: new Date(now.getTime() + CODE_LIFETIME_MS).toISOString(),
        },
        now.toISOString(),
      ),
    () => ({
      action: 'oauth_grant.consented',
      actor: { userId: user.userId, credentialKind: 'apiKey', credentialId: user.keyId },
      target: { type: 'oauth_client', id: request.client.id },
      sourceAddress: address,
      details: { clientName: request.client.name, scope: request.scope, ...(request.resource !== undefined ? { resource: request.resource } : {}) },
    }),
  );
  return redirectTo(request.redirectUri, { code, state: request.state, iss: ctx.issuer() });
}
