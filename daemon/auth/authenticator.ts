// The Authenticator of a deployment with users (identity.ts defines the seam): API keys
// in either header, scoped access tokens and OAuth access tokens as bearer tokens, checked against the store by
// their keyed hash; the web UI's browser sessions (a signed cookie plus a CSRF header,
// auth/browser-session.ts), checked against their stored record. Every credential other
// than an API key works only while the API key that opened it is live (auth/origin.ts),
// but for a browser session of single sign-on, which works only while its sign-in
// identity is (the identity's user's, its provider still configured).
// A revoked key, token, grant or session, an expired token or session or a suspended user
// fails at once (every request reads the store; there is no cache to go stale). Without
// credentials: the anonymous user when settings.anonymousAccess is on.

import { ServiceError } from '../errors.ts';
import type { Authenticator, CredentialKind, Credentials, Identity, IdentityRef } from './identity.ts';
import type { IdentityStore, OAuthStore, SessionStore, SignInStore, UserRecord } from '../store/store.ts';
import { isIdOf } from '../store/records.ts';
import { invalidCsrf, type BrowserSessions } from './browser-session.ts';
import { ACCESS_TOKEN_PREFIX, credentialHash, isApiKeyShape, isScopedTokenShape, SCOPED_TOKEN_PREFIX } from './credentials.ts';
import { identityLive, originLive } from './origin.ts';
import type { RepositoryPermissions } from './permissions.ts';

export interface StoreAuthenticatorOptions {
  /** Users, keys, scoped tokens, sessions, sign-in identities; of the OAuth store only the grants' lastUsedAt. */
  store: IdentityStore & SessionStore & Pick<SignInStore, 'getSignInIdentity'> & { readonly oauth: Pick<OAuthStore, 'touchGrant' | 'getGrant'> };
  secret: Buffer;
  anonymousAccess: boolean;
  /** Injectable clock (tests). */
  now?: () => Date;
  /** Checks an OAuth access token, its grant and the grant's API key (oauth/access.ts); without it such tokens are refused. */
  oauth?: (token: string) => Promise<{ userId: string; grantId: string }>;
  /** Signs and checks browser session tokens; without it a session cookie is refused (401). */
  sessions?: BrowserSessions;
  /**
   * Told when recording activity (lastUsedAt of a key, session or grant, lastActivityAt)
   * fails, at most once per TOUCH_EVERY_MS; the request goes on (a full disk must not stop reads).
   */
  onTouchError?: (err: Error) => void;
  /** Which repositories each member may read (settings.permissions); without it, every one. */
  permissions?: RepositoryPermissions;
  /**
   * The issuers of the configured single sign-on providers (auth/sso/providers.ts): a
   * session signed in through an identity of another issuer is refused. Absent: none.
   */
  signInIssuers?: ReadonlySet<string>;
}

const NO_ISSUERS: ReadonlySet<string> = new Set();

/** A key's, session's or grant's lastUsedAt, and a user's lastActivityAt, are written at most this often. */
const TOUCH_EVERY_MS = 60_000;
/** Past this many remembered touches, those older than TOUCH_EVERY_MS are forgotten (sessions and grants come and go). */
const TOUCHED_MAX = 10_000;

const anonymous: Identity = { kind: 'anonymous', canSee: (repo) => repo.visibility === 'public' };

const EVERY_REPOSITORY: Identity['canSee'] = () => true;

export class StoreAuthenticator implements Authenticator {
  private readonly touched = new Map<string, number>();
  private touchErrorAt = -Infinity;

  constructor(private readonly options: StoreAuthenticatorOptions) {}

  async authenticate(credentials: Credentials): Promise<Identity> {
    const kind = credentialKindOf(credentials);
    if (kind === 'browserSession') return this.browserSession(credentials.session!, credentials.csrf);
    const token = credentials.token;
    if (token === undefined) {
      if (this.options.anonymousAccess) return anonymous;
      throw new ServiceError('NOT_AUTHENTICATED', 'credentials are required: send "Authorization: Bearer <API key>" or "X-Service-Api-Key: <API key>"');
    }
    if (kind === 'scopedToken') return this.scopedToken(credentials, token);
    if (kind === 'oauth') return this.oauthToken(credentials, token);
    // One message for every bad key: which part was wrong is not the caller's business.
    // Made only on failure: an error captures a stack trace, a cost every valid request would pay otherwise.
    const invalid = () => new ServiceError('NOT_AUTHENTICATED', 'the API key is not valid (unknown, malformed or revoked)');
    if (!isApiKeyShape(token)) throw invalid();
    const { store, secret } = this.options;
    const key = await store.findApiKey(credentialHash(secret, token));
    if (!key || key.revokedAt !== undefined) throw invalid();
    const user = await store.getUser(key.userId);
    if (!user) throw invalid();
    if (user.suspendedAt !== undefined) throw new ServiceError('NOT_AUTHENTICATED', 'the user this API key belongs to is suspended');
    this.touchKey(key.id, user.id);
    return { kind: 'apiKey', userId: user.id, role: user.role, tokenId: key.id, ...limitOf(user), canSee: await this.userSees(user) };
  }

  /**
   * A browser session acts as the user it was signed in as (with an API key, or through a
   * single sign-on identity), seeing what that user sees. The CSRF token comes first (403
   * INVALID_CSRF_TOKEN): a request a foreign page makes the browser send carries the
   * cookie but cannot carry the header, and it learns nothing about the session from the
   * answer. Then the token (signature, expiry) and the store: the session's record exists,
   * says what the token says, has not ended; its key is live and the user's (or its
   * identity is the user's and its provider still configured); the user exists and is not
   * suspended. Any of those failing is one 401, whichever it was.
   */
  private async browserSession(session: string, csrf: string | undefined): Promise<Identity> {
    const { sessions, store } = this.options;
    if (sessions && !sessions.csrfMatches(session, csrf)) throw invalidCsrf(csrf);
    const invalid = () => new ServiceError('NOT_AUTHENTICATED', 'the browser session has expired or is no longer valid; sign in again');
    const claims = sessions?.verify(session);
    if (!claims) throw invalid();
    // The record's expiry is the token's, already checked with its signature.
    const record = await store.getSession(claims.sessionId);
    if (!record || record.endedAt !== undefined) throw invalid();
    if (record.userId !== claims.userId || record.apiKeyId !== claims.apiKeyId || record.identityId !== claims.identityId) throw invalid();
    // The key a session names, or else its sign-in identity: what it was signed in with.
    const origin = record.apiKeyId ?? record.identityId!;
    if (!(await this.sessionOriginLive(origin, record.userId))) throw invalid();
    const user = await store.getUser(record.userId);
    if (!user || user.suspendedAt !== undefined) throw invalid();
    if (record.apiKeyId !== undefined) this.touchKey(record.apiKeyId, user.id);
    else this.touchUser(user.id);
    this.touch(`session:${record.id}`, (at) => store.touchSession(record.id, at));
    // dailyLimit is left out: these requests are never counted (ratelimit/daily-limiter.ts).
    return { kind: 'browserSession', userId: user.id, role: user.role, tokenId: origin, canSee: await this.userSees(user) };
  }

  /** Whether what a browser session was signed in with is live: an API key (origin.ts originLive), or a sign-in identity ("sso_" ids: identityLive). */
  private sessionOriginLive(origin: string, userId: string): Promise<boolean> {
    const { store, signInIssuers = NO_ISSUERS } = this.options;
    return isIdOf('sso', origin) ? identityLive(store, origin, userId, signInIssuers) : originLive(store, origin, userId);
  }

  /**
   * A scoped access token acts as its creator, limited to its repositories (intersected
   * with what the creator may see now). Bearer only; expired (exactly one hour after
   * creation), revoked, the API key it was created with revoked, or its creator
   * suspended: 401.
   */
  private async scopedToken(credentials: Credentials, token: string): Promise<Identity> {
    const invalid = () => new ServiceError('NOT_AUTHENTICATED', 'the scoped access token is not valid (unknown, malformed, expired or revoked)');
    if (credentials.via !== 'bearer') throw new ServiceError('NOT_AUTHENTICATED', 'a scoped access token is sent only as "Authorization: Bearer <token>"');
    if (!isScopedTokenShape(token)) throw invalid();
    const { store, secret } = this.options;
    const t = await store.findScopedToken(credentialHash(secret, token));
    const now = this.options.now?.() ?? new Date();
    if (!t || t.revokedAt !== undefined || now.getTime() >= Date.parse(t.expiresAt)) throw invalid();
    if (!(await originLive(store, t.apiKeyId, t.userId))) throw invalid();
    const user = await store.getUser(t.userId);
    if (!user) throw invalid();
    if (user.suspendedAt !== undefined) throw new ServiceError('NOT_AUTHENTICATED', 'the user this token belongs to is suspended');
    const repos = new Set(t.repoIds);
    const creator = await this.userSees(user);
    return {
      kind: 'scopedToken',
      userId: user.id,
      role: user.role,
      tokenId: t.id,
      ...limitOf(user),
      canSee: (repo) => repos.has(repo.repoId) && creator(repo),
    };
  }

  /** An OAuth access token acts as the user who consented; bearer only. */
  private async oauthToken(credentials: Credentials, token: string): Promise<Identity> {
    if (credentials.via !== 'bearer') throw new ServiceError('NOT_AUTHENTICATED', 'an OAuth access token is sent only as "Authorization: Bearer <token>"');
    if (!this.options.oauth) throw new ServiceError('NOT_AUTHENTICATED', 'OAuth access tokens are not accepted by this server');
    const { userId, grantId } = await this.options.oauth(token);
    const user = await this.options.store.getUser(userId);
    if (!user) throw new ServiceError('NOT_AUTHENTICATED', 'the OAuth access token is not valid (unknown, malformed, expired or revoked)');
    if (user.suspendedAt !== undefined) throw new ServiceError('NOT_AUTHENTICATED', 'the user this token belongs to is suspended');
    const grants = this.options.store.oauth;
    this.touch(`grant:${grantId}`, (at) => grants.touchGrant(grantId, at));
    return { kind: 'oauth', userId: user.id, role: user.role, tokenId: grantId, ...limitOf(user), canSee: await this.userSees(user) };
  }

  /**
   * A caller another node authenticated (Authenticator.resume), checked again here against
   * the shared store the way authenticate() checks the credential behind it, without its
   * secret: the key (a browser session's too), scoped token or grant still live and the
   * user's, the token not expired, the user not suspended. The scoped token's repositories
   * limit what it sees, as they do on the node that authenticated it. Nothing is touched
   * (lastUsedAt): that node did.
   */
  async resume(ref: IdentityRef): Promise<Identity> {
    if (ref.kind === 'anonymous') {
      if (this.options.anonymousAccess) return anonymous;
      throw new ServiceError('NOT_AUTHENTICATED', 'credentials are required: anonymous access is off');
    }
    const invalid = () => new ServiceError('NOT_AUTHENTICATED', 'the credential of this request is no longer valid (revoked or expired)');
    const { userId, tokenId } = ref;
    if (userId === undefined || tokenId === undefined) throw invalid();
    const { store } = this.options;
    const user = await store.getUser(userId);
    if (!user) throw invalid();
    let canSee = await this.userSees(user);
    if (ref.kind === 'scopedToken') {
      const t = await store.getScopedToken(tokenId);
      const now = this.options.now?.() ?? new Date();
      if (!t || t.userId !== userId || t.revokedAt !== undefined || now.getTime() >= Date.parse(t.expiresAt)) throw invalid();
      if (!(await originLive(store, t.apiKeyId, userId))) throw invalid();
      const repos = new Set(t.repoIds);
      const creator = canSee;
      canSee = (repo) => repos.has(repo.repoId) && creator(repo);
    } else if (ref.kind === 'oauth') {
      const g = await store.oauth.getGrant(tokenId);
      if (!g || g.userId !== userId || g.revokedAt !== undefined || !(await originLive(store, g.apiKeyId, userId))) throw invalid();
    } else if (ref.kind === 'browserSession' ? !(await this.sessionOriginLive(tokenId, userId)) : !(await originLive(store, tokenId, userId))) {
      // An API key, or what a browser session was signed in with (its key, or its sign-in identity).
      throw invalid();
    }
    if (user.suspendedAt !== undefined) throw new ServiceError('NOT_AUTHENTICATED', 'the user this credential belongs to is suspended');
    // A browser session has no limit of its own: its requests are never counted.
    return { kind: ref.kind, userId, role: user.role, tokenId, ...(ref.kind === 'browserSession' ? {} : limitOf(user)), canSee };
  }

  async memberSees(userId: string): Promise<Identity['canSee'] | undefined> {
    const user = await this.options.store.getUser(userId);
    if (!user || user.suspendedAt !== undefined) return undefined;
    return this.userSees(user);
  }

  /** What a user may see (permissions.ts; without permissions, every repository); a scoped token narrows it further. */
  private async userSees(user: UserRecord): Promise<Identity['canSee']> {
    return (await this.options.permissions?.canSeeFor(user)) ?? EVERY_REPOSITORY;
  }

  /** A key's lastUsedAt and its user's lastActivityAt. */
  private touchKey(keyId: string, userId: string): void {
    const { store } = this.options;
    this.touch(keyId, async (at) => {
      await store.touchApiKey(keyId, at);
      await store.updateUser(userId, { lastActivityAt: at }, at);
    });
  }

  /** A user's lastActivityAt alone (a session of single sign-on has no key to touch). */
  private touchUser(userId: string): void {
    const { store } = this.options;
    this.touch(`user:${userId}`, (at) => store.updateUser(userId, { lastActivityAt: at }, at).then(() => undefined));
  }

  /**
   * Activity is recorded cheaply: one write per key, session or grant (`what`) per minute
   * at most. It is a record, not a check: the request does not wait for it, and when the
   * write fails (a full disk, a locked database) the request still goes on, and `what` is
   * not tried again before the minute is over.
   */
  private touch(what: string, write: (at: string) => Promise<void>): void {
    const now = (this.options.now?.() ?? new Date()).getTime();
    if (now - (this.touched.get(what) ?? -Infinity) < TOUCH_EVERY_MS) return;
    if (this.touched.size >= TOUCHED_MAX) {
      for (const [k, t] of this.touched) if (now - t >= TOUCH_EVERY_MS) this.touched.delete(k);
    }
    this.touched.set(what, now);
    const at = new Date(now).toISOString();
    // An async wrapper, so that a write which throws at once is caught like one that rejects.
    void (async () => write(at))().catch((err: Error) => {
      if (now - this.touchErrorAt < TOUCH_EVERY_MS) return;
      this.touchErrorAt = now;
      this.options.onTouchError?.(err);
    });
  }
}

/**
 * Which kind of credential was sent, told by its form alone (valid or not): a session
 * cookie, a token by its prefix, any other token as an API key; nothing: anonymous.
 */
export function credentialKindOf(credentials: Credentials): CredentialKind {
  if (credentials.via === 'session' && credentials.session !== undefined) return 'browserSession';
  const token = credentials.token;
  if (token === undefined) return 'anonymous';
  if (token.startsWith(SCOPED_TOKEN_PREFIX)) return 'scopedToken';
  if (token.startsWith(ACCESS_TOKEN_PREFIX)) return 'oauth';
  return 'apiKey';
}

function limitOf(user: UserRecord): { dailyLimit?: number } {
  return user.dailyLimit === undefined ? {} : { dailyLimit: user.dailyLimit };
}
