// The rule that makes revoking an API key end everything opened with it: a scoped token,
// an OAuth grant (its access and refresh tokens, and the authorization code before it) and
// a browser session each name the key they were created, consented or signed in with, and
// every use asks here whether that key is still live. The store also marks such
// credentials revoked when their key is (store.revokeApiKey), for listings; this check is
// the authoritative one, read at each use, so a consent, code exchange or refresh racing
// the revocation cannot produce anything that outlives it.

import type { IdentityStore, SignInStore } from '../store/store.ts';

/**
 * Whether the API key `apiKeyId` exists, is not revoked and belongs to `userId`. A
 * credential that names no key (created before keys were recorded) has no live origin.
 */
export async function originLive(store: Pick<IdentityStore, 'getApiKey'>, apiKeyId: string | undefined, userId: string): Promise<boolean> {
  if (apiKeyId === undefined) return false;
  const key = await store.getApiKey(apiKeyId);
  return key !== undefined && key.revokedAt === undefined && key.userId === userId;
}

/**
 * Whether the sign-in identity `identityId` (what a browser session of single sign-on
 * names instead of a key) exists, belongs to `userId`, and was vouched for by an issuer
 * that is still configured: taking a provider out of the configuration ends, on the next
 * request, every session signed in through it.
 */
export async function identityLive(
  store: Pick<SignInStore, 'getSignInIdentity'>,
  identityId: string,
  userId: string,
  issuers: ReadonlySet<string>,
): Promise<boolean> {
  const identity = await store.getSignInIdentity(identityId);
  return identity !== undefined && identity.userId === userId && issuers.has(identity.issuer);
}
