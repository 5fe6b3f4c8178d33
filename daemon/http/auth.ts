// The one authentication and rate-limit step every route goes through (server.ts): the
// seam's types. The implementations: auth/authenticator.ts (API keys of the store's
// users, their tokens and browser sessions, anonymous access as configured) and
// ratelimit/daily-limiter.ts (the daily limit per user).

import { CSRF_HEADER, readCookie, SESSION_COOKIE } from '../auth/browser-session.ts';
import { ServiceError } from '../errors.ts';
import type { Role } from '../store/store.ts';

/**
 * 'browserSession': the web UI's sign-in cookie (auth/browser-session.ts), acting as the
 * user of the API key it was signed in with; never counted against the daily limit.
 */
export type CredentialKind = 'anonymous' | 'apiKey' | 'oauth' | 'scopedToken' | 'browserSession';

export interface Identity {
  kind: CredentialKind;
  /** The user the credential belongs to; undefined for anonymous. */
  userId?: string;
  role?: Role;
  /**
   * The scoped access token used (kind 'scopedToken'), the OAuth grant (kind 'oauth'), or
   * the API key: the one used (kind 'apiKey') or the one the session was signed in with
   * (kind 'browserSession').
   */
  tokenId?: string;
  /** The user's own daily request limit; undefined: settings.rateLimit.requestsPerDay. */
  dailyLimit?: number;
  /** Whether this repository may be shown to the caller (search results, source, lists). */
  canSee(repo: { repoId: number; visibility: 'public' | 'private' }): boolean;
}

/** The request's credentials as sent (API.md section 5, and the web UI's session cookie). */
export interface Credentials {
  /** The token of `Authorization: Bearer <token>`, or the X-Service-Api-Key header. */
  token?: string;
  /** The session token of the trawl_session cookie (via 'session'). */
  session?: string;
  /** The X-CSRF-Token header as sent, absent when it was not (via 'session'). */
  csrf?: string;
  /** Which header carried the credential. */
  via?: 'bearer' | 'apiKeyHeader' | 'session';
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
 * The credential of a request (`headers`: lower-case names). A header that is present
 * counts even when empty: uWS hands over an empty value for bytes that are not UTF-8, and
 * such a request must not pass as anonymous.
 *
 * Authorization and X-Service-Api-Key win over the session cookie, which is then ignored.
 * On a CORS route (`cors`: the tool server, OAuth) the cookie is ignored altogether: any
 * origin may call those, and a browser would attach the cookie to a request a foreign page
 * starts (SameSite aside), so they take bearer credentials only.
 */
export function readCredentials(headers: Readonly<Record<string, string | undefined>>, cors: boolean): Credentials {
  const authorization = headers['authorization'];
  const apiKeyHeader = headers['x-service-api-key'];
  if (authorization !== undefined) {
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    if (!m) throw new ServiceError('NOT_AUTHENTICATED', 'the Authorization header must be "Bearer <API key or token>"');
    return { token: m[1]!, via: 'bearer' };
  }
  if (apiKeyHeader !== undefined) {
    if (apiKeyHeader.trim() === '') throw new ServiceError('NOT_AUTHENTICATED', 'the X-Service-Api-Key header is empty');
    return { token: apiKeyHeader.trim(), via: 'apiKeyHeader' };
  }
  if (cors) return {};
  const session = readCookie(headers['cookie'], SESSION_COOKIE);
  if (session === undefined) return {};
  const csrf = headers[CSRF_HEADER];
  return csrf === undefined ? { session, via: 'session' } : { session, csrf, via: 'session' };
}
