// The OAuth server's credentials: what they look like and how long they live.
//
// Every one is a prefix and 32 random bytes in hex, like API keys (auth/credentials.ts),
// so a leaked one is recognisable in logs and secret scanners, and the store keeps only
// its keyed hash. Lifetimes: an authorization code 5 minutes (it crosses one browser
// redirect), an access token 1 hour, a refresh token 30 days; refresh tokens rotate, so
// each is good for one exchange.

import { randomBytes } from 'node:crypto';

// ACCESS_TOKEN_PREFIX ('svoa_') lives with the API's other bearer credentials
// (auth/credentials.ts): the authenticator recognises access tokens by it.
export const REFRESH_TOKEN_PREFIX = 'svor_';
export const CODE_PREFIX = 'svoc_';
export const CLIENT_SECRET_PREFIX = 'svcs_';

export const CODE_LIFETIME_MS = 5 * 60 * 1000;
export const ACCESS_TOKEN_LIFETIME_MS = 60 * 60 * 1000;
export const REFRESH_TOKEN_LIFETIME_MS = 30 * 24 * 60 * 60 * 1000;

/** The one scope: search and read code as the user who consented (read-only, like the API). */
export const SCOPE = 'search';

const SHAPE = /^(svoa|svor|svoc|svcs)_[0-9a-f]{64}$/;

export function newCredential(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('hex')}`;
}

/** Whether `value` has the shape of a credential with `prefix` (checked before any lookup). */
export function hasShape(value: string, prefix: string): boolean {
  return value.startsWith(prefix) && SHAPE.test(value);
}
