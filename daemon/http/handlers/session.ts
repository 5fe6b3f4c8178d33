// The web UI's browser sign-in (auth/browser-session.ts has the token, CSRF and cookie
// formats): POST /api/session trades an API key for a session cookie and a CSRF token (and
// a stored session record: who, which key, the browser), GET /api/session tells the page
// whether it is signed in (and hands it the CSRF token again after a reload) and which
// single sign-on providers it may offer, DELETE /api/session signs out (ends the session in
// the store and drops the cookies). Single sign-on itself: handlers/sign-in.ts. Listing
// and ending sessions from elsewhere: handlers/credentials.ts.
//
// These routes do their own authentication (`authenticated: false`: the server's step would
// refuse a page that is not signed in yet, or one whose cookie went stale), are not rate
// limited (browser use never counts, docs/http-api.md 8.2) and are not CORS routes: a page
// of another origin can neither read their answers nor, for lack of a preflight, send them
// a JSON body, so it can neither sign its visitor in to its own account nor learn the CSRF
// token.
//
// The audit log records a sign-in before its cookie is handed out (no session without its
// record: audit/log.ts) and a sign-out of a valid session, best-effort (dropping a cookie
// must always work). A refused API key counts as a failed authentication of the address.

import {
  clearCsrfCookie,
  clearSessionCookie,
  CSRF_COOKIE,
  csrfCookie,
  CSRF_HEADER,
  invalidCsrf,
  readCookie,
  SESSION_COOKIE,
  sessionCookie,
  type BrowserSessions,
} from '../../auth/browser-session.ts';
import { actorOf } from '../../audit/log.ts';
import { ACCESS_TOKEN_PREFIX, SCOPED_TOKEN_PREFIX } from '../../auth/credentials.ts';
import { ServiceError } from '../../errors.ts';
import { REFRESH_TOKEN_PREFIX } from '../../oauth/tokens.ts';
import type { UserRecord } from '../../store/store.ts';
import type { Authenticator, Identity } from '../../auth/identity.ts';
import type { ProviderView } from '../../auth/sso/providers.ts';
import type { Route } from '../route.ts';
import type { Services } from '../services.ts';

/** Answers about a session are never stored by a cache (they carry the CSRF token). */
const NO_STORE: [string, string] = ['Cache-Control', 'no-store'];

const SET_COOKIE_DOC = {
  'Set-Cookie': {
    description:
      'Two cookies (`; Secure` on both when the public URL is https; no Max-Age: they last for the browser session): ' +
      '`trawl_session=<token>; Path=/; HttpOnly; SameSite=Strict`, the session, and `trawl_csrf=<csrfToken>; Path=/; SameSite=Strict`, ' +
      "the CSRF token for the page's script to read at start. The server never takes the second as proof: the token must come in the X-CSRF-Token header.",
    schema: { type: 'string' },
  },
  'Cache-Control': { description: '`no-store`.', schema: { type: 'string' } },
};
const CLEAR_COOKIE_DOC = {
  'Set-Cookie': {
    description: '`trawl_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0` and `trawl_csrf=; Path=/; SameSite=Strict; Max-Age=0`: drop both cookies.',
    schema: { type: 'string' },
  },
};

/** `providers`: the single sign-on providers GET /api/session names (auth/sso/providers.ts). */
export function sessionRoutes(s: Services, authenticator: Authenticator, sessions: BrowserSessions, providers: { list(): ProviderView[] }): Route[] {
  const base = { tag: 'Session', rateLimited: false, authenticated: false } as const;
  // Known once the daemon listens: read per response.
  const secure = () => s.baseUrl.startsWith('https:');
  const clear = (): Array<[string, string]> => [
    ['Set-Cookie', clearSessionCookie(secure())],
    ['Set-Cookie', clearCsrfCookie(secure())],
  ];

  /** The session's user when the cookie's token is valid now (the same checks as every API request), else undefined. */
  const signedIn = async (token: string): Promise<UserRecord | undefined> => {
    let identity: Identity;
    try {
      // The server vouches for the CSRF token itself: this is where the page gets it.
      identity = await authenticator.authenticate({ session: token, csrf: sessions.csrfToken(token), via: 'session' });
    } catch (err) {
      if (err instanceof ServiceError && err.statusCode === 401) return undefined;
      throw err;
    }
    if (identity.kind !== 'browserSession' || identity.userId === undefined) return undefined;
    return s.store.getUser(identity.userId);
  };

  return [
    {
      ...base,
      method: 'POST',
      path: '/api/session',
      operationId: 'signIn',
      summary: 'Signs the browser in with an API key: a session cookie and the CSRF token',
      description:
        'Only an API key signs in. The answer sets the HttpOnly session cookie; API requests with it must send the CSRF token as the X-CSRF-Token header ' +
        "(else 403 INVALID_CSRF_TOKEN). The session acts as the key's user for 12 hours; it ends at once when signed out, revoked (DELETE /api/sessions/{id}), " +
        'ended by sign-out everywhere, when its key is revoked or its user suspended. It is not counted against the daily limit, and is not accepted by the tool server or the OAuth endpoints. Not rate limited.',
      body: 'SessionRequest',
      response: { status: 201, schema: 'SessionCreated', description: 'Signed in.', headers: SET_COOKIE_DOC },
      errors: ['NOT_AUTHENTICATED'],
      async handle(ctx) {
        const key = (ctx.body as { apiKey: string }).apiKey.trim();
        const onlyApiKey = () =>
          new ServiceError('NOT_AUTHENTICATED', 'only an API key (svk_...) signs in to the web UI, not a scoped access token or an OAuth token');
        // Said before any lookup, so a token's owner learns why rather than "not valid".
        if ([SCOPED_TOKEN_PREFIX, ACCESS_TOKEN_PREFIX, REFRESH_TOKEN_PREFIX].some((p) => key.startsWith(p))) throw onlyApiKey();
        const identity = await authenticator.authenticate({ token: key, via: 'apiKeyHeader', from: ctx.clientAddress });
        if (identity.kind !== 'apiKey' || identity.userId === undefined || identity.tokenId === undefined) throw onlyApiKey();
        const user = await s.store.getUser(identity.userId);
        if (!user) throw new ServiceError('NOT_AUTHENTICATED', 'the API key is not valid (unknown, malformed or revoked)');
        const userAgent = ctx.headers['user-agent'];
        // The session and its event in one transaction: no session without its record.
        const record = await s.audit.change(
          () =>
            s.store.createSession(
              { userId: user.id, apiKeyId: identity.tokenId!, expiresAt: sessions.expiry(), ...(userAgent !== undefined ? { userAgent } : {}) },
              s.now().toISOString(),
            ),
          (r) => ({
            action: 'session.opened',
            actor: actorOf(identity),
            target: { type: 'session', id: r.id },
            sourceAddress: ctx.clientAddress,
            details: { expiresAt: r.expiresAt },
          }),
        );
        const issued = sessions.sign(record);
        return {
          status: 201,
          body: { user: userJson(user), csrfToken: issued.csrfToken, expiresAt: issued.expiresAt },
          headers: [['Set-Cookie', sessionCookie(issued.token, secure())], ['Set-Cookie', csrfCookie(issued.csrfToken, secure())], NO_STORE],
        };
      },
    },
    {
      ...base,
      method: 'GET',
      path: '/api/session',
      operationId: 'getSession',
      summary: 'Whether the browser is signed in, as whom, and its CSRF token; whether anonymous access is on; the single sign-on providers',
      description:
        'Never 401. A session cookie that is no longer valid (expired, tampered with, its key revoked, its user suspended) is dropped with its CSRF cookie (Set-Cookie with Max-Age=0); a valid one whose CSRF cookie is missing gets it again.',
      response: {
        status: 200,
        schema: 'SessionState',
        description: 'The session, if any.',
        headers: { ...CLEAR_COOKIE_DOC, 'Cache-Control': SET_COOKIE_DOC['Cache-Control'] },
      },
      errors: [],
      async handle(ctx) {
        const anonymousAccess = s.config.settings.anonymousAccess;
        const signInWith = providers.list();
        const token = readCookie(ctx.headers.cookie, SESSION_COOKIE);
        if (token === undefined) {
          // A CSRF cookie without its session (the session cookie was deleted) is dropped too.
          const orphan = readCookie(ctx.headers.cookie, CSRF_COOKIE) !== undefined;
          return {
            body: { authenticated: false, anonymousAccess, providers: signInWith },
            headers: orphan ? [['Set-Cookie', clearCsrfCookie(secure())], NO_STORE] : [NO_STORE],
          };
        }
        const user = await signedIn(token);
        const claims = sessions.verify(token);
        if (!user || !claims) return { body: { authenticated: false, anonymousAccess, providers: signInWith }, headers: [...clear(), NO_STORE] };
        const csrfToken = sessions.csrfToken(token);
        return {
          body: {
            authenticated: true,
            anonymousAccess,
            providers: signInWith,
            user: userJson(user),
            csrfToken,
            expiresAt: new Date(claims.expires * 1000).toISOString(),
          },
          // Sets the CSRF cookie again when the page did not have it (so its next start is quick).
          headers: readCookie(ctx.headers.cookie, CSRF_COOKIE) === csrfToken ? [NO_STORE] : [['Set-Cookie', csrfCookie(csrfToken, secure())], NO_STORE],
        };
      },
    },
    {
      ...base,
      method: 'DELETE',
      path: '/api/session',
      operationId: 'signOut',
      summary: 'Signs the browser out: ends the session and drops its cookies',
      description:
        'With a valid session cookie the X-CSRF-Token header must match (else 403 INVALID_CSRF_TOKEN), so another site cannot sign the user out. ' +
        'The session ends in the store: its token, even a copy of it, no longer works.',
      response: { status: 204, description: 'Signed out (also when there was no session).', headers: CLEAR_COOKIE_DOC },
      errors: ['INVALID_CSRF_TOKEN'],
      async handle(ctx) {
        const token = readCookie(ctx.headers.cookie, SESSION_COOKIE);
        const csrf = ctx.headers[CSRF_HEADER];
        const claims = token === undefined ? undefined : sessions.verify(token);
        if (claims && !sessions.csrfMatches(token!, csrf)) throw invalidCsrf(csrf);
        // A token signed by this server names its own session: ending it needs nothing more.
        if (claims) {
          await s.store.endSession(claims.sessionId, s.now().toISOString());
          void s.audit.note({
            action: 'session.ended',
            actor: { userId: claims.userId, credentialKind: 'browserSession', credentialId: claims.apiKeyId ?? claims.identityId },
            target: { type: 'session', id: claims.sessionId },
            sourceAddress: ctx.clientAddress,
            details: { reason: 'signed_out' },
          });
        }
        return { status: 204, body: undefined, headers: [...clear(), NO_STORE] };
      },
    },
  ];
}

function userJson(u: UserRecord): { id: string; name: string; email: string; role: string } {
  return { id: u.id, name: u.name, email: u.email, role: u.role };
}
