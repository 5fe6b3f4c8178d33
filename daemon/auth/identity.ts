// Who is calling: the seam between the HTTP server, which reads a request's credentials
// (http/auth.ts) and asks an Authenticator who sent them, and everything that acts on
// behalf of a caller (the rate limit, the audit log, the tool server, the routes). The
// implementation: auth/authenticator.ts (API keys of the store's users, their tokens and
// browser sessions, anonymous access as configured).

import type { Role } from '../store/store.ts';

/**
 * 'browserSession': the web UI's sign-in cookie (auth/browser-session.ts), acting as the
 * user it was signed in as (with an API key, or through single sign-on); never counted
 * against the daily limit.
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
   * (kind 'browserSession'; a session of single sign-on names its sign-in identity,
   * "sso_...", instead).
   */
  tokenId?: string;
  /** The user's own daily request limit; undefined: settings.rateLimit.requestsPerDay. */
  dailyLimit?: number;
  /** Whether this repository may be shown to the caller (search results, source, lists). */
  canSee(repo: { repoId: number; visibility: 'public' | 'private' }): boolean;
}

/** The request's credentials as sent (docs/http-api.md section 5, and the web UI's session cookie). */
export interface Credentials {
  /** The token of `Authorization: Bearer <token>`, or of an API key header (http/auth.ts API_KEY_HEADERS). */
  token?: string;
  /** The session token of the trawl_session cookie (via 'session'). */
  session?: string;
  /** The X-CSRF-Token header as sent, absent when it was not (via 'session'). */
  csrf?: string;
  /** Which header carried the credential. */
  via?: 'bearer' | 'apiKeyHeader' | 'session';
  /**
   * The client's address (http/client-address.ts), given where a refusal is an attempt to get
   * in: the audit log counts refused credentials per address (audit/auth-failures.ts).
   */
  from?: string;
}

export interface Authenticator {
  /** The caller, or a 401/403 ServiceError. */
  authenticate(credentials: Credentials): Promise<Identity>;
  /**
   * The caller another node of the cluster authenticated (a request it forwarded:
   * cluster/forward.ts), read again from the store this node shares with it: refused
   * (401) when the credential would be refused now (revoked, expired, its user suspended).
   * Absent: this authenticator cannot act for a forwarded caller, and refuses it.
   */
  resume?(ref: IdentityRef): Promise<Identity>;
  /**
   * What a member may see now, acting on their own behalf without a request (a watch's
   * delivery); undefined when they cannot act (no such user, suspended). Absent: this
   * authenticator acts for no member without a credential.
   */
  memberSees?(userId: string): Promise<Identity['canSee'] | undefined>;
}

/**
 * Who a caller is, without their credential: what a node that authenticated a request sends
 * along when another node runs it, so that one acts as the same caller (Authenticator.resume).
 * Nothing secret: an id names a stored credential, it does not prove one.
 */
export interface IdentityRef {
  kind: CredentialKind;
  userId?: string;
  /** Identity.tokenId: the key, scoped token or grant the caller used (the key or sign-in identity of a browser session). */
  tokenId?: string;
}

export function identityRef(identity: Identity): IdentityRef {
  const ref: IdentityRef = { kind: identity.kind };
  if (identity.userId !== undefined) ref.userId = identity.userId;
  if (identity.tokenId !== undefined) ref.tokenId = identity.tokenId;
  return ref;
}
