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
  /** The token of `Authorization: Bearer <token>`, or of an API key header (API_KEY_HEADERS). */
  token?: string;
  /** The session token of the trawl_session cookie (via 'session'). */
  session?: string;
  /** The X-CSRF-Token header as sent, absent when it was not (via 'session'). */
  csrf?: string;
  /** Which header carried the credential. */
  via?: 'bearer' | 'apiKeyHeader' | 'session';
  /**
   * The client's address (client-address.ts), given where a refusal is an attempt to get
   * in: the audit log counts refused credentials per address (audit/auth-failures.ts).
   */
  from?: string;
}

/**
 * The headers that carry an API key on their own: trawl's, and Sourcebot's spelling so that
 * clients written for Sourcebot work unchanged (API-DETAILS.md section 5). Same rules for
 * both; CORS allows them (server.ts) and logs redact them (logging.ts).
 */
export const API_KEY_HEADERS = ['X-Service-Api-Key', 'X-Sourcebot-Api-Key'] as const;

/** Whether the request sent a bearer credential (Authorization or an API key header), valid or not. */
export function credentialSent(headers: Readonly<Record<string, string | undefined>>): boolean {
  return headers['authorization'] !== undefined || API_KEY_HEADERS.some((h) => headers[h.toLowerCase()] !== undefined);
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
 * such a request must not pass as anonymous. No credential that was sent is ignored: one
 * that is malformed is a 401, and two headers naming different credentials are a 401 too
 * (which one was meant is not for the server to guess).
 *
 * Authorization and the API key headers win over the session cookie, which is then
 * ignored: a browser attaches the cookie by itself, an explicit header is what the caller
 * chose. On a CORS route (`cors`: the tool server, OAuth) the cookie is ignored
 * altogether: any origin may call those, and a browser would attach the cookie to a
 * request a foreign page starts (SameSite aside), so they take bearer credentials only.
 */
export function readCredentials(headers: Readonly<Record<string, string | undefined>>, cors: boolean): Credentials {
  let sent: Credentials | undefined;
  const authorization = headers['authorization'];
  if (authorization !== undefined) {
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    if (!m) throw new ServiceError('NOT_AUTHENTICATED', 'the Authorization header must be "Bearer <API key or token>"');
    sent = { token: m[1]!, via: 'bearer' };
  }
  for (const name of API_KEY_HEADERS) {
    const value = headers[name.toLowerCase()];
    if (value === undefined) continue;
    const key = value.trim();
    if (key === '') throw new ServiceError('NOT_AUTHENTICATED', `the ${name} header is empty`);
    if (sent === undefined) sent = { token: key, via: 'apiKeyHeader' };
    else if (sent.token !== key) throw new ServiceError('NOT_AUTHENTICATED', `the request carries two different credentials (${name} and another); send one`);
  }
  if (sent !== undefined) return sent;
  if (cors) return {};
  const session = readCookie(headers['cookie'], SESSION_COOKIE);
  if (session === undefined) return {};
  const csrf = headers[CSRF_HEADER];
  return csrf === undefined ? { session, via: 'session' } : { session, csrf, via: 'session' };
}
