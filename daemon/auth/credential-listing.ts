// What a user's API keys have opened, per key: GET /api/keys answers it and `trawl keys
// list --json` prints it, so the two cannot differ. Only what is live is listed (store.ts
// IdentityStore: not revoked or ended, not expired, its key not revoked); a revoked key
// is listed with its revokedAt and nothing under it. No secret is in it: ids, times,
// names, the key's 12-character hint.

import type { BrowserSessionRecord, EndedCredentials, OAuthGrantRecord, ScopedTokenRecord, Store } from '../store/store.ts';

export interface ListedScopedToken {
  id: string;
  createdAt: string;
  expiresAt: string;
  repoIds: number[];
}

export interface ListedGrant {
  id: string;
  clientId: string;
  /** As the client registered itself (unverified). */
  clientName: string;
  scope: string;
  createdAt: string;
  lastUsedAt: string | null;
}

export interface ListedSession {
  id: string;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string;
  userAgent: string | null;
}

export interface ListedKey {
  id: string;
  name: string;
  /** The key's first 12 characters ("svk_" + 8 hex): to tell keys apart, far too short to use. */
  hint: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  scopedTokens: ListedScopedToken[];
  oauthGrants: ListedGrant[];
  sessions: ListedSession[];
}

/** The user's keys, oldest first, each with its live scoped tokens, OAuth grants and browser sessions (newest first). */
export async function listKeyCredentials(
  store: Pick<Store, 'listApiKeys' | 'listLiveScopedTokens' | 'listLiveSessions' | 'oauth'>,
  userId: string,
  now: string,
): Promise<ListedKey[]> {
  const tokens = byKey(await store.listLiveScopedTokens(userId, now));
  const grants = byKey(await store.oauth.listLiveGrants(now, userId));
  const sessions = byKey(await store.listLiveSessions(userId, now));
  return (await store.listApiKeys(userId)).map((k) => ({
    id: k.id,
    name: k.name,
    hint: k.hint,
    createdAt: k.createdAt,
    lastUsedAt: k.lastUsedAt ?? null,
    revokedAt: k.revokedAt ?? null,
    scopedTokens: (tokens.get(k.id) ?? []).map(scopedTokenJson),
    oauthGrants: (grants.get(k.id) ?? []).map(grantJson),
    sessions: (sessions.get(k.id) ?? []).map(sessionJson),
  }));
}

/** Whether a revocation ended anything (what the audit log records a repeated revocation by). */
export function endedAny(e: EndedCredentials): boolean {
  return e.scopedTokens + e.oauthGrants + e.sessions > 0;
}

function byKey<T extends { apiKeyId?: string }>(records: T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const r of records) if (r.apiKeyId !== undefined) (out.get(r.apiKeyId) ?? out.set(r.apiKeyId, []).get(r.apiKeyId)!).push(r);
  return out;
}

function scopedTokenJson(t: ScopedTokenRecord): ListedScopedToken {
  return { id: t.id, createdAt: t.createdAt, expiresAt: t.expiresAt, repoIds: t.repoIds };
}

function grantJson(g: OAuthGrantRecord & { clientName: string }): ListedGrant {
  return { id: g.id, clientId: g.clientId, clientName: g.clientName, scope: g.scope, createdAt: g.createdAt, lastUsedAt: g.lastUsedAt ?? null };
}

function sessionJson(s: BrowserSessionRecord): ListedSession {
  return { id: s.id, createdAt: s.createdAt, lastUsedAt: s.lastUsedAt ?? null, expiresAt: s.expiresAt, userAgent: s.userAgent ?? null };
}
