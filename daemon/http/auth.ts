// The one authentication and rate-limit step every route goes through (server.ts): the
// seam's types. The implementations: auth/authenticator.ts (API keys of the store's
// users, anonymous access as configured) and ratelimit/daily-limiter.ts (the daily limit
// per user).

import { ServiceError } from '../errors.ts';
import type { Role } from '../store/store.ts';

export type CredentialKind = 'anonymous' | 'apiKey' | 'oauth' | 'scopedToken';

export interface Identity {
  kind: CredentialKind;
  /** The user the credential belongs to; undefined for anonymous. */
  userId?: string;
  role?: Role;
  /** The scoped access token used (kind 'scopedToken'), or the OAuth grant (kind 'oauth'). */
  tokenId?: string;
  /** The user's own daily request limit; undefined: settings.rateLimit.requestsPerDay. */
  dailyLimit?: number;
  /** Whether this repository may be shown to the caller (search results, source, lists). */
  canSee(repo: { repoId: number; visibility: 'public' | 'private' }): boolean;
}

/** The request's credentials as sent (API.md section 5). */
export interface Credentials {
  /** The token of `Authorization: Bearer <token>`, or the X-Service-Api-Key header. */
  token?: string;
  /** Which header carried it. */
  via?: 'bearer' | 'apiKeyHeader';
}

export interface Authenticator {
  /** The caller, or a 401/403 ServiceError. */
  authenticate(credentials: Credentials): Promise<Identity>;
}

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Unix seconds of the next reset (00:00 UTC). */
  reset: number;
}

export interface RateLimiter {
  /**
   * Counts one request of `identity` to a rate-limited endpoint. Returns the counters for
   * the X-RateLimit-* headers, undefined when the request is not counted (anonymous), or
   * throws 429 API_RATE_LIMIT_EXCEEDED.
   */
  take(identity: Identity): Promise<RateLimitState | undefined>;
}

/**
 * The credential of a request. A header that is present counts even when empty: uWS
 * hands over an empty value for bytes that are not UTF-8, and such a request must not
 * pass as anonymous.
 */
export function readCredentials(authorization: string | undefined, apiKeyHeader: string | undefined): Credentials {
  if (authorization !== undefined) {
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    if (!m) throw new ServiceError('NOT_AUTHENTICATED', 'the Authorization header must be "Bearer <API key or token>"');
    return { token: m[1]!, via: 'bearer' };
  }
  if (apiKeyHeader !== undefined) {
    if (apiKeyHeader.trim() === '') throw new ServiceError('NOT_AUTHENTICATED', 'the X-Service-Api-Key header is empty');
    return { token: apiKeyHeader.trim(), via: 'apiKeyHeader' };
  }
  return {};
}
