// The revocation endpoint (RFC 7009). Revoking a refresh token revokes its grant, so every
// access and refresh token of that consent (RFC 7009 section 2.1 allows and recommends
// it); revoking an access token revokes that token. The answer is 200 whether or not the
// token was known, valid or the client's own (a client learns nothing about other tokens);
// only a token of the authenticated client is touched. token_type_hint is not needed:
// the lookup by hash finds either kind.

import { firstTime } from '../audit/log.ts';
import { authenticateClient } from './clients.ts';
import { hashOf, type OAuthContext } from './context.ts';
import { required, type Params } from './form.ts';
import { ACCESS_TOKEN_PREFIX } from '../auth/credentials.ts';
import { hasShape, REFRESH_TOKEN_PREFIX } from './tokens.ts';

/** A revocation by the client from `address`, recorded in the audit log when it takes effect. */
export async function revokeRequest(ctx: OAuthContext, params: Params, authorization: string | undefined, address: string): Promise<void> {
  const client = await authenticateClient(ctx, params, authorization);
  const token = required(params, 'token');
  if (!hasShape(token, ACCESS_TOKEN_PREFIX) && !hasShape(token, REFRESH_TOKEN_PREFIX)) return;
  const found = await ctx.store.oauth.findToken(hashOf(ctx, token));
  if (!found || found.grant.clientId !== client.id) return;
  const now = ctx.now().toISOString();
  const { grant } = found;
  const actor = { userId: grant.userId, credentialKind: 'oauthClient', credentialId: client.id } as const;
  if (found.token.kind === 'refresh') {
    await ctx.audit.change(
      async () => firstTime((await ctx.store.oauth.getGrant(grant.id))?.revokedAt, await ctx.store.oauth.revokeGrant(grant.id, now)),
      (g) =>
        g?.first
          ? {
              action: 'oauth_grant.revoked',
              actor,
              target: { type: 'oauth_grant', id: grant.id },
              sourceAddress: address,
              details: { reason: 'client', clientId: client.id },
            }
          : undefined,
    );
  } else {
    const live = found.token.revokedAt === undefined;
    await ctx.audit.change(
      () => ctx.store.oauth.revokeToken(found.token.hash, now),
      () =>
        live
          ? {
              action: 'oauth_token.revoked',
              actor,
              target: { type: 'oauth_grant', id: grant.id },
              sourceAddress: address,
              details: { kind: 'access', clientId: client.id },
            }
          : undefined,
    );
  }
}
