// A request's credentials as the HTTP server reads them from its headers (server.ts), for
// the one authentication step every route goes through. Who they belong to is the
// Authenticator's answer (auth/identity.ts).

import { CSRF_HEADER, readCookie, SESSION_COOKIE } from '../auth/browser-session.ts';
import type { Credentials } from '../auth/identity.ts';
import { ServiceError } from '../errors.ts';

/**
 * The headers that carry an API key on their own: trawl's, and Sourcebot's spelling so that
 * clients written for Sourcebot work unchanged (docs/http-api.md section 5). Same rules for
 * both; CORS allows them (server.ts) and logs redact them (logging.ts).
 */
export const API_KEY_HEADERS = ['X-Service-Api-Key', 'X-Sourcebot-Api-Key'] as const;

/** Whether the request sent a bearer credential (Authorization or an API key header), valid or not. */
export function credentialSent(headers: Readonly<Record<string, string | undefined>>): boolean {
  return headers.authorization !== undefined || API_KEY_HEADERS.some((h) => headers[h.toLowerCase()] !== undefined);
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
  const authorization = headers.authorization;
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
  const session = readCookie(headers.cookie, SESSION_COOKIE);
  if (session === undefined) return {};
  const csrf = headers[CSRF_HEADER];
  return csrf === undefined ? { session, via: 'session' } : { session, csrf, via: 'session' };
}
