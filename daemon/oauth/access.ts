// Checking an OAuth access token presented to the API (auth/authenticator.ts calls this).
// Good while: it is an access token (a refresh token is not a bearer credential), neither
// it nor its grant is revoked, its hour has not passed, the API key the user consented
// with is live (auth/origin.ts), and the license still grants OAuth (OAuth tokens are an
// enterprise feature: docs/http-api.md section 5).

import { originLive } from '../auth/origin.ts';
import { ServiceError } from '../errors.ts';
import { hashOf, unavailable, type OAuthContext } from './context.ts';
import { ACCESS_TOKEN_PREFIX } from '../auth/credentials.ts';
import { hasShape } from './tokens.ts';

export async function verifyAccessToken(ctx: OAuthContext, token: string): Promise<{ userId: string; grantId: string }> {
  const invalid = () => new ServiceError('NOT_AUTHENTICATED', 'the OAuth access token is not valid (unknown, malformed, expired or revoked)');
  if (!hasShape(token, ACCESS_TOKEN_PREFIX)) throw invalid();
  const found = await ctx.store.oauth.findToken(hashOf(ctx, token));
  if (found?.token.kind !== 'access' || found.token.revokedAt !== undefined || found.grant.revokedAt !== undefined) throw invalid();
  if (ctx.now().getTime() >= Date.parse(found.token.expiresAt)) throw invalid();
  if (!(await originLive(ctx.store, found.grant.apiKeyId, found.grant.userId))) throw invalid();
  const off = await unavailable(ctx);
  if (off) throw new ServiceError('NOT_AUTHENTICATED', `OAuth access tokens are not accepted: ${off}`);
  return { userId: found.grant.userId, grantId: found.grant.id };
}
