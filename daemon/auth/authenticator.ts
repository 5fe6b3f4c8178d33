// The Authenticator of a deployment with users (http/auth.ts defines the seam): API keys
// in either header, checked against the store by their keyed hash; a revoked key or a
// suspended user fails at once (every request reads the store; there is no cache to go
// stale). Without credentials: the anonymous user when settings.anonymousAccess is on.

import { ServiceError } from '../errors.ts';
import type { Authenticator, Credentials, Identity } from '../http/auth.ts';
import type { IdentityStore } from '../store/store.ts';
import { credentialHash, isApiKeyShape } from './credentials.ts';

export interface StoreAuthenticatorOptions {
  store: IdentityStore;
  secret: Buffer;
  anonymousAccess: boolean;
  /** Injectable clock (tests). */
  now?: () => Date;
}

/** A key's lastUsedAt and its user's lastActivityAt are written at most this often. */
const TOUCH_EVERY_MS = 60_000;

const anonymous: Identity = { kind: 'anonymous', canSee: (repo) => repo.visibility === 'public' };

export class StoreAuthenticator implements Authenticator {
  private readonly touched = new Map<string, number>();

  constructor(private readonly options: StoreAuthenticatorOptions) {}

  async authenticate(credentials: Credentials): Promise<Identity> {
    const token = credentials.token;
    if (token === undefined) {
      if (this.options.anonymousAccess) return anonymous;
      throw new ServiceError('NOT_AUTHENTICATED', 'credentials are required: send "Authorization: Bearer <API key>" or "X-Service-Api-Key: <API key>"');
    }
    // One message for every bad key: which part was wrong is not the caller's business.
    const invalid = new ServiceError('NOT_AUTHENTICATED', 'the API key is not valid (unknown, malformed or revoked)');
    if (!isApiKeyShape(token)) throw invalid;
    const { store, secret } = this.options;
    const key = store.findApiKey(credentialHash(secret, token));
    if (!key || key.revokedAt !== undefined) throw invalid;
    const user = store.getUser(key.userId);
    if (!user) throw invalid;
    if (user.suspendedAt !== undefined) throw new ServiceError('NOT_AUTHENTICATED', 'the user this API key belongs to is suspended');
    this.touch(key.id, user.id);
    // Members and owners see every repository (per-repository permissions would narrow this).
    return { kind: 'apiKey', userId: user.id, role: user.role, canSee: () => true };
  }

  /** Activity is recorded cheaply: one write per key per minute at most. */
  private touch(keyId: string, userId: string): void {
    const now = (this.options.now?.() ?? new Date()).getTime();
    if (now - (this.touched.get(keyId) ?? -Infinity) < TOUCH_EVERY_MS) return;
    this.touched.set(keyId, now);
    const at = new Date(now).toISOString();
    this.options.store.touchApiKey(keyId, at);
    this.options.store.updateUser(userId, { lastActivityAt: at }, at);
  }
}
