// The revocation endpoint (RFC 7009). Revoking a refresh token revokes its grant, so every
// access and refresh token of that consent (RFC 7009 section 2.1 allows and recommends
// it); revoking an access token revokes that token. The answer is 200 whether or not the
// token was known, valid or the client's own (a client learns nothing about other tokens);
// only a token of the authenticated client is touched. token_type_hint is not needed:
// the lookup by hash finds either kind.

import { authenticateClient } from './clients.ts';
import { hashOf, type OAuthContext } from './context.ts';
import { required, type Params } from './form.ts';
import { ACCESS_TOKEN_PREFIX, hasShape, REFRESH_TOKEN_PREFIX } from './tokens.ts';

export function revokeRequest(ctx: OAuthContext, params: Params, authorization: string | undefined): void {
  const client = authenticateClient(ctx, params, authorization);
  const token = required(params, 'token');
  if (!hasShape(token, ACCESS_TOKEN_PREFIX) && !hasShape(token, REFRESH_TOKEN_PREFIX)) return;
  const found = ctx.store.oauth.findToken(hashOf(ctx, token));
  if (!found || found.grant.clientId !== client.id) return;
  const now = ctx.now().toISOString();
  if (found.token.kind === 'refresh') ctx.store.oauth.revokeGrant(found.grant.id, now);
  else ctx.store.oauth.revokeToken(found.token.hash, now);
}
