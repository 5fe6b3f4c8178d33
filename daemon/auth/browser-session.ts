// Browser sign-in sessions of the web UI: the session token, its CSRF token and the cookie
// that carries it. A person enters an API key once (POST /api/session), or signs in
// through a single sign-on provider (auth/sso/); the browser then holds the session token
// in an HttpOnly cookie and the page sends the CSRF token in the X-CSRF-Token header of
// every API request. Such requests act as the session's user but are never counted
// against the daily limit (docs/http-api.md 8.2: browser use never counts).
//
// Session token (signed, so that nothing secret is stored; every daemon process sharing
// the data dir, and so the server secret and the store, accepts it):
//
//   v2.<payload>.<signature>
//   payload   = base64url(JSON {"u": user id, "k": API key id, "s": session id, "e":
//               expiry in Unix seconds}); a session of single sign-on has "i", the id of
//               its sign-in identity, instead of "k" (exactly one of the two)
//   signature = base64url(HMAC-SHA256(server secret, "trawl-session\0" + payload))
//               (the payload as it appears in the token: its base64url text)
//
// The session id names a row of the store (store.ts BrowserSessionRecord: who, which key
// or identity, the browser's User-Agent, created, last used, ended), so that sessions can
// be listed and ended one by one. The id is random and unguessable, but it is not a
// credential: it appears in listings, and only the server can sign a token around it. The
// expiry is absolute, 12 hours after sign-in (no sliding renewal). What the token does not
// say is checked on every request against the store (auth/authenticator.ts): the session
// exists, matches the token, has not ended or expired; its key exists, is not revoked and
// belongs to the user (or its identity exists, is the user's, and its provider is still
// configured); the user exists and is not suspended. So signing out, revoking the session,
// revoking its key, "sign out everywhere" and suspending the user each end it at once.
// Tokens of format v1 (stateless, before sessions were stored) are refused: sign in again.
//
// The CSRF token also travels in a second cookie, trawl_csrf, that scripts can read (not
// HttpOnly): the page reads it at start and can send its first request at once, instead
// of waiting for GET /api/session. The server never takes that cookie as proof of
// anything (a browser attaches cookies on its own; only the X-CSRF-Token header, which a
// page on another site cannot set or read, counts), so it weakens nothing.
//
// CSRF token = base64url(HMAC-SHA256(server secret, "trawl-csrf\0" + session token)):
// derived, so it needs no storage either, differs for every session, and cannot be
// computed without the secret. The "\0"-terminated labels keep the two MACs, and the keyed
// hashes of API keys (auth/credentials.ts, whose inputs start with "svk_"), from ever
// being valid for one another.

import { createHmac, timingSafeEqual } from 'node:crypto';
import { ServiceError } from '../errors.ts';
import type { BrowserSessionRecord } from '../store/store.ts';

export const SESSION_COOKIE = 'trawl_session';
/** The cookie that carries the CSRF token to the page's script; never read by the server. */
export const CSRF_COOKIE = 'trawl_csrf';
/** The request header of the CSRF token (lower case, as the server's header map has it). */
export const CSRF_HEADER = 'x-csrf-token';
export const SESSION_LIFETIME_MS = 12 * 60 * 60 * 1000;

const VERSION = 'v2';
const SESSION_LABEL = 'trawl-session\0';
const CSRF_LABEL = 'trawl-csrf\0';
/** A signature is 32 bytes: 43 base64url characters without padding. */
const TOKEN = /^v2\.([A-Za-z0-9_-]{1,1000})\.([A-Za-z0-9_-]{43})$/;
/** Store ids ("usr_"/"key_"/"ses_" + 24 hex) and more; bounded so a forged claim cannot be huge. */
const ID = /^[\w-]{1,64}$/;

/** What a session token says once its signature and expiry check out. */
export interface SessionClaims {
  /** The store's record of the session. */
  sessionId: string;
  userId: string;
  /** The API key it was signed in with (claim "k"); absent for a session of single sign-on. */
  apiKeyId?: string;
  /** The sign-in identity it was signed in through (claim "i"); absent for a session of an API key. */
  identityId?: string;
  /** Unix seconds. */
  expires: number;
}

/** What sign() needs of a stored session: its id, user and expiry, and its API key or its sign-in identity. */
export type SignedSession = Pick<BrowserSessionRecord, 'id' | 'userId' | 'apiKeyId' | 'identityId' | 'expiresAt'>;

export interface IssuedSession {
  token: string;
  csrfToken: string;
  /** ISO 8601. */
  expiresAt: string;
}

export class BrowserSessions {
  constructor(
    private readonly secret: Buffer,
    /** Injectable clock (the daemon's `now`). */
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** When a session signed in now ends: 12 hours from now, in whole seconds (what the token carries), ISO 8601. */
  expiry(): string {
    return new Date(Math.floor((this.now().getTime() + SESSION_LIFETIME_MS) / 1000) * 1000).toISOString();
  }

  /** The token of the stored session `session` (its expiresAt from expiry()). */
  sign(session: SignedSession): IssuedSession {
    const expires = Math.floor(Date.parse(session.expiresAt) / 1000);
    const origin = session.apiKeyId !== undefined ? { k: session.apiKeyId } : { i: session.identityId };
    const payload = Buffer.from(JSON.stringify({ u: session.userId, ...origin, s: session.id, e: expires }), 'utf8').toString('base64url');
    const token = `${VERSION}.${payload}.${this.mac(SESSION_LABEL, payload)}`;
    return { token, csrfToken: this.csrfToken(token), expiresAt: new Date(expires * 1000).toISOString() };
  }

  /**
   * The claims of a token whose shape, signature and expiry are good; undefined otherwise
   * (which part failed is nobody's business: one answer for all).
   */
  verify(token: string): SessionClaims | undefined {
    const m = TOKEN.exec(token);
    if (!m) return undefined;
    const payload = m[1]!;
    const signature = m[2]!;
    if (!sameText(signature, this.mac(SESSION_LABEL, payload))) return undefined;
    // Signed by this server, so well-formed unless the format changed under it: checked anyway.
    let claims: unknown;
    try {
      claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return undefined;
    }
    if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) return undefined;
    const { u, k, i, s, e } = claims as Record<string, unknown>;
    const isId = (v: unknown): v is string => typeof v === 'string' && ID.test(v);
    if (!isId(u) || !isId(s)) return undefined;
    // Exactly one origin: the API key, or the sign-in identity.
    if ((k === undefined) === (i === undefined) || (k !== undefined && !isId(k)) || (i !== undefined && !isId(i))) return undefined;
    if (typeof e !== 'number' || !Number.isSafeInteger(e)) return undefined;
    if (this.now().getTime() >= e * 1000) return undefined;
    return { sessionId: s, userId: u, ...(isId(k) ? { apiKeyId: k } : { identityId: i as string }), expires: e };
  }

  /** The CSRF token of a session token (whatever the token is worth). */
  csrfToken(token: string): string {
    return this.mac(CSRF_LABEL, token);
  }

  /** Whether `sent` (the X-CSRF-Token header) is the session's CSRF token; constant time. */
  csrfMatches(token: string, sent: string | undefined): boolean {
    return sent !== undefined && sameText(sent.trim(), this.csrfToken(token));
  }

  private mac(label: string, text: string): string {
    return createHmac('sha256', this.secret)
      .update(label + text, 'utf8')
      .digest('base64url');
  }
}

/** 403 INVALID_CSRF_TOKEN for a request with the session cookie but not its CSRF token. */
export function invalidCsrf(sent: string | undefined): ServiceError {
  const what = sent === undefined ? 'the X-CSRF-Token header is missing' : 'the X-CSRF-Token header does not match the session';
  return new ServiceError(
    'INVALID_CSRF_TOKEN',
    `${what}: a request with the browser session cookie must send the X-CSRF-Token the page got at sign-in; reload the page`,
  );
}

/** Constant-time equality of two strings (the length, fixed for MACs, is all that leaks). */
function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * The value of cookie `name` in a Cookie header (RFC 6265 section 5.4: `a=1; b=2`), or
 * undefined when absent or empty. The first one wins when it is sent twice (browsers send
 * the most specific path first; trawl sets only Path=/). Pairs are also split at commas:
 * the HTTP server joins repeated headers with ", ", and cookie values never contain one.
 * Surrounding double quotes (allowed by the RFC) are dropped.
 */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const pair of header.split(/[;,]/)) {
    const eq = pair.indexOf('=');
    if (eq < 0 || pair.slice(0, eq).trim() !== name) continue;
    let value = pair.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    return value === '' ? undefined : value;
  }
  return undefined;
}

/**
 * The Set-Cookie value that holds a session: for the whole site, out of scripts' reach
 * (HttpOnly), never sent on a request another site starts (SameSite=Strict), only over
 * TLS when the daemon's public URL is https. No Max-Age or Expires: the cookie ends with
 * the browser session (the token's own expiry ends it sooner).
 */
export function sessionCookie(token: string, secure: boolean): string {
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/** The Set-Cookie value that makes the browser drop the session cookie. */
export function clearSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secure ? '; Secure' : ''}`;
}

/**
 * The Set-Cookie value that hands the page its CSRF token (see the top of this file): like
 * the session cookie but readable by the page's script. The token is base64url, so it
 * needs no quoting.
 */
export function csrfCookie(csrfToken: string, secure: boolean): string {
  return `${CSRF_COOKIE}=${csrfToken}; Path=/; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/** The Set-Cookie value that makes the browser drop the CSRF cookie. */
export function clearCsrfCookie(secure: boolean): string {
  return `${CSRF_COOKIE}=; Path=/; SameSite=Strict; Max-Age=0${secure ? '; Secure' : ''}`;
}
