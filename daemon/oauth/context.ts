// What every part of the OAuth server works with: the store, the server secret (tokens,
// codes and client secrets are kept as its HMAC), the clock, the issuer (the daemon's
// public URL, known once it listens), the license, the daemon's own authentication of
// API keys for the consent step, and how long a grant may live.

import type { AuthFailures } from '../audit/auth-failures.ts';
import type { AuditLog } from '../audit/log.ts';
import type { Entitlements } from '../auth/entitlements.ts';
import { credentialHash } from '../auth/credentials.ts';
import type { Store } from '../store/store.ts';

export const ENTITLEMENT = 'oauth';

export interface OAuthContext {
  store: Store;
  secret: Buffer;
  now(): Date;
  /** The issuer: the daemon's public base URL, without a trailing slash. */
  issuer(): string;
  entitlements: Entitlements;
  /**
   * The user an API key belongs to and the key's id; throws the authenticator's 401 for any
   * other credential. `from`: the client's address (a refusal counts as a failed authentication).
   */
  apiKeyUser(key: string, from: string): Promise<{ userId: string; keyId: string }>;
  /** Records registrations, consents, grants and revocations (audit/log.ts). */
  audit: AuditLog;
  /** Counts clients that fail to authenticate at the token and revocation endpoints. */
  failures: AuthFailures;
  /**
   * A grant's absolute lifetime from consent (settings.oauth.grantLifetimeDays): tokens are
   * minted to expire by then, and a refresh after it is refused, so rotating refresh tokens
   * cannot keep a grant alive for ever.
   */
  grantLifetimeMs: number;
}

export function hashOf(ctx: OAuthContext, credential: string): string {
  return credentialHash(ctx.secret, credential);
}

/** Why OAuth is off on this deployment (no license with the entitlement), or undefined. */
export function unavailable(ctx: OAuthContext): Promise<string | undefined> {
  return ctx.entitlements.missing(ENTITLEMENT);
}
