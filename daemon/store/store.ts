// The Store (docs/design.md "Seams"): what trawl keeps besides the shards:
// repositories and connections, users, API keys and the credentials opened with them,
// OAuth, the audit log, the license and the rate counters. SQLite (sqlite-store.ts) is the
// embedded default, PostgreSQL (pg-store.ts) the store of a cluster; every backend runs
// the same conformance suite (test/store/conformance.ts).
//
// The interfaces are written once, as the synchronous face of a store (the `...Sync`
// ones below, which the SQLite store implements as it is: better-sqlite3 is synchronous);
// what the rest of trawl holds is the same with every method returning a promise
// (`Promised`), which a network database answers. sync-store.ts adapts the one to the other.

import type { CodeHostType } from '../repos/hosts/types.ts';
import type { ConnectionType, SearchContextDefinition } from '../config/types.ts';

/** Where a repository stands in its life cycle. */
export type RepoState =
  | 'new' //      discovered, never cloned or indexed
  | 'indexed' //  the last attempt succeeded
  | 'failed' //   the last attempt failed; lastError says why; the previous index (if any) still serves
  | 'deleted'; // gone from every connection: shards and clone removed, row kept so the id is never reused

import type { IndexedRef } from './indexed-ref.ts';

export type { IndexedRef } from './indexed-ref.ts';

export interface RepoRecord {
  /** Stable, never reused, assigned by the store. */
  repoId: number;
  /** host/path form; unique among repositories that are not deleted. */
  repoName: string;
  displayName: string;
  codeHostType: CodeHostType;
  /** The connection that found it; undefined for `trawl index PATH`. */
  connectionId?: number;
  cloneUrl?: string;
  externalWebUrl?: string;
  imageUrl?: string;
  defaultBranch?: string;
  isFork: boolean;
  isArchived: boolean;
  visibility: 'public' | 'private';
  /** ISO 8601 */
  pushedAt?: string;
  /** ISO 8601, the last successful index. */
  indexedAt?: string;
  state: RepoState;
  lastError?: string;
  /** ISO 8601 */
  lastErrorAt?: string;
  /** ISO 8601, the last sync attempt that succeeded (indexed, or found up to date). */
  lastSuccessAt?: string;
  /** Consecutive failures; 0 after a success. Drives the retry back-off. */
  failures: number;
  /** ISO 8601: do not retry before this (back-off after failures). */
  nextAttemptAt?: string;
  /** The refs the current index holds. */
  indexedRefs: IndexedRef[];
  /** The code host's topics of the repository, lower case (what a search context may select by); empty when it has none. */
  topics: string[];
  /**
   * ISO 8601: when its sync was last asked for by an event (a code host's webhook, an
   * owner's request), the oldest such event not yet synced while one waits.
   */
  lastEventAt?: string;
  /** ISO 8601: when the sync that answered lastEventAt ended (absent while it waits, or if it failed). */
  lastEventSyncedAt?: string;
}

/** Fields a caller may set; repoId and state transitions go through the methods below. */
export type RepoFields = Omit<RepoRecord, 'repoId' | 'state' | 'failures' | 'indexedRefs' | 'topics'> &
  Partial<Pick<RepoRecord, 'state' | 'failures' | 'indexedRefs' | 'topics'>>;

export interface ConnectionRecord {
  id: number;
  name: string;
  connectionType: ConnectionType;
  /** ISO 8601 of the last complete listing of the host. */
  lastSyncedAt?: string;
  lastError?: string;
  lastErrorAt?: string;
}

export interface RepoListOptions {
  /** Include deleted repositories (default false). */
  includeDeleted?: boolean;
  connectionId?: number;
}

/** An organization member's role (docs/http-api.md section 14). */
export type Role = 'owner' | 'member';

export interface UserRecord {
  /** Stable, opaque ("usr_" + 24 hex), assigned by the store. */
  id: string;
  /** Unique, compared case-insensitively. */
  email: string;
  name: string;
  role: Role;
  /** ISO 8601; set while the user is suspended (every credential of theirs fails). */
  suspendedAt?: string;
  createdAt: string;
  updatedAt: string;
  /** ISO 8601 of the last authenticated request (updated at most once a minute). */
  lastActivityAt?: string;
  /** Daily request limit for this user; absent: settings.rateLimit.requestsPerDay. */
  dailyLimit?: number;
}

export interface ApiKeyRecord {
  /** Opaque ("key_" + 24 hex); what `trawl keys revoke` takes. */
  id: string;
  userId: string;
  name: string;
  /** The key's first 12 characters ("svk_" + 8 hex), to tell keys apart; far too short to use. */
  hint: string;
  createdAt: string;
  lastUsedAt?: string;
  revokedAt?: string;
}

export interface ScopedTokenRecord {
  /** Opaque ("sat_" + 24 hex): what DELETE /api/ee/scoped_access_token/{id} takes. */
  id: string;
  /** The user who created it; the token acts as them, limited to repoIds. */
  userId: string;
  /**
   * The API key it was created with: the token works only while that key is live.
   * Absent on tokens created before it was recorded (migration 8 ended those).
   */
  apiKeyId?: string;
  repoIds: number[];
  createdAt: string;
  expiresAt: string;
  revokedAt?: string;
}

/**
 * A browser sign-in session of the web UI (auth/browser-session.ts): the signed session
 * token names it, and it works only while this record is live (not ended, not expired)
 * and what it was signed in with is: its API key, or its single sign-on identity.
 */
export interface BrowserSessionRecord {
  /** Opaque ("ses_" + 24 hex): named in the session token; what DELETE /api/sessions/{id} takes. Not a credential on its own. */
  id: string;
  userId: string;
  /** The API key it was signed in with; absent for a session of single sign-on (then identityId says which). */
  apiKeyId?: string;
  /** The single sign-on identity it was signed in through (SignInIdentityRecord); absent for a session of an API key. */
  identityId?: string;
  /** The browser's User-Agent at sign-in (cut to 256 characters), to tell sessions apart in lists. */
  userAgent?: string;
  createdAt: string;
  /** Sign-in plus 12 hours; never extended. */
  expiresAt: string;
  /** Updated at most once a minute. */
  lastUsedAt?: string;
  /** Set when the session ended: signed out, revoked, with its API key, or by "sign out everywhere". */
  endedAt?: string;
}

/** A session to create: signed in with an API key, or through a single sign-on identity (exactly one of the two). */
export type NewBrowserSession = { userId: string; expiresAt: string; userAgent?: string } & (
  | { apiKeyId: string; identityId?: never }
  | { identityId: string; apiKeyId?: never }
);

/**
 * A person's account at a single sign-on provider (auth/sso/), linked to the member it
 * signs in as. Found by the provider's stable subject, so that a later sign-in finds the
 * member even after the provider's email changed.
 */
export interface SignInIdentityRecord {
  /** Opaque ("sso_" + 24 hex): what a browser session signed in through it names. */
  id: string;
  userId: string;
  /** Who vouches for the account: an OpenID Connect issuer, or a code host's web URL. With `subject`, unique. */
  issuer: string;
  /** The provider's stable id of the account: OpenID Connect's `sub`, a code host's user id. */
  subject: string;
  /** The configured provider (its name under signIn.providers) it last signed in through. */
  provider: string;
  /** The verified email the provider gave at the last sign-in, lower case; absent when it gave none. */
  email?: string;
  createdAt: string;
  lastSignedInAt: string;
}

/** How many live credentials of each kind one revocation ended. */
export interface EndedCredentials {
  scopedTokens: number;
  oauthGrants: number;
  sessions: number;
}

/**
 * Users, API keys and the credentials opened with a key: scoped tokens, and (through
 * revokeApiKey and endUserCredentials) OAuth grants and browser sessions. Credentials are
 * stored only as a keyed hash (auth/credentials.ts).
 *
 * Live: a scoped token that is neither revoked nor expired; an OAuth grant that is not
 * revoked and has a token neither revoked, rotated nor expired; a session neither ended
 * nor expired; in each case also only while the API key it names is not revoked.
 */
export interface IdentityStoreSync {
  /** Throws StoreConflictError when the email is taken. */
  createUser(user: { email: string; name: string; role: Role }, now: string): UserRecord;
  getUser(id: string): UserRecord | undefined;
  /** Case-insensitive. */
  getUserByEmail(email: string): UserRecord | undefined;
  /** By email. */
  listUsers(): UserRecord[];
  /** Merges the patch (null clears an optional field); throws when the id is unknown. */
  updateUser(
    id: string,
    patch: { name?: string; role?: Role; suspendedAt?: string | null; lastActivityAt?: string; dailyLimit?: number | null },
    now: string,
  ): UserRecord;
  /** `hash` is the key's keyed hash; the key itself never reaches the store. */
  createApiKey(key: { userId: string; name: string; hash: string; hint: string }, now: string): ApiKeyRecord;
  /** The key whose hash this is, revoked or not. */
  findApiKey(hash: string): ApiKeyRecord | undefined;
  /** The key with this id, revoked or not (a browser session names the key it came from). */
  getApiKey(id: string): ApiKeyRecord | undefined;
  /** A user's keys, oldest first. */
  listApiKeys(userId: string): ApiKeyRecord[];
  /**
   * Marks the key revoked (once; a second call keeps the first time) and, in the same
   * transaction, ends every live credential opened with it: its scoped tokens (revoked),
   * its OAuth grants (revoked) and its browser sessions (ended), each marked with `now`.
   * Returns the key and how many of each it ended (a second call ends what was opened
   * since, normally nothing); undefined when the id is unknown.
   */
  revokeApiKey(id: string, now: string): { key: ApiKeyRecord; ended: EndedCredentials } | undefined;
  /**
   * "Sign out everywhere": ends every live scoped token, OAuth grant and browser session of
   * the user, in one transaction; the user's API keys stay. Nothing for an unknown user.
   */
  endUserCredentials(userId: string, now: string): EndedCredentials;
  touchApiKey(id: string, now: string): void;
  /** `apiKeyId`: the key the caller authenticated with (the token dies with it). */
  createScopedToken(token: { userId: string; apiKeyId: string; hash: string; repoIds: number[]; expiresAt: string }, now: string): ScopedTokenRecord;
  /** The token whose hash this is, revoked or expired or not. */
  findScopedToken(hash: string): ScopedTokenRecord | undefined;
  getScopedToken(id: string): ScopedTokenRecord | undefined;
  /** Marks it revoked (once); undefined when unknown. */
  revokeScopedToken(id: string, now: string): ScopedTokenRecord | undefined;
  /** The user's live scoped tokens (see above), newest first. */
  listLiveScopedTokens(userId: string, now: string): ScopedTokenRecord[];
}

/** The web UI's browser sessions (BrowserSessionRecord). */
export interface SessionStoreSync {
  /** A new session; the user, and the key or identity it names, must exist. */
  createSession(session: NewBrowserSession, now: string): BrowserSessionRecord;
  /** The session with this id, ended or expired or not. */
  getSession(id: string): BrowserSessionRecord | undefined;
  touchSession(id: string, now: string): void;
  /** Marks it ended (once; a second call keeps the first time); undefined when unknown. */
  endSession(id: string, now: string): BrowserSessionRecord | undefined;
  /** The user's live sessions (not ended, not expired, the key of one signed in with a key not revoked), newest first. */
  listLiveSessions(userId: string, now: string): BrowserSessionRecord[];
  /** Drops sessions that expired or ended before `before`; returns how many. */
  pruneSessions(before: string): number;
}

/**
 * Single sign-on (auth/sso/): the accounts people sign in with at a provider, each linked
 * to a member, and the sign-in flows that came back (each may come back once).
 */
export interface SignInStoreSync {
  /** Links an account to `userId` (who must exist). Throws StoreConflictError when (issuer, subject) is linked already. */
  createSignInIdentity(identity: { userId: string; issuer: string; subject: string; provider: string; email?: string }, now: string): SignInIdentityRecord;
  /** The account `subject` of `issuer` (both compared exactly), when it is linked. */
  findSignInIdentity(issuer: string, subject: string): SignInIdentityRecord | undefined;
  getSignInIdentity(id: string): SignInIdentityRecord | undefined;
  /** Records a sign-in through it: the provider it came through, the email it gave (absent: none) and lastSignedInAt. Undefined when unknown. */
  touchSignInIdentity(id: string, seen: { provider: string; email?: string }, now: string): SignInIdentityRecord | undefined;
  /**
   * Records that the sign-in flow whose state has the keyed hash `stateHash` came back:
   * true the first time, false ever after (a replay), atomically across every process
   * sharing the store. Kept until `expiresAt`, when the flow could not come back anyway.
   */
  useSignInFlow(stateHash: string, expiresAt: string): boolean;
  /** Drops flows that expired before `before`; returns how many. */
  pruneSignInFlows(before: string): number;
}

/**
 * The rate limiter's per-user daily request counters (ratelimit/), in the database every
 * daemon process of a deployment shares.
 */
export interface RequestCountStoreSync {
  /**
   * Counts one request of `userId` on `day` (YYYY-MM-DD, UTC) unless `limit` requests are
   * already counted there. Atomic across every process sharing the store: of any number of
   * concurrent calls with one limit, exactly `limit` are counted per day. Returns the count
   * afterwards and whether this request was counted.
   */
  countRequest(userId: string, day: string, limit: number): { count: number; counted: boolean };
  /** The count of `userId` on `day` (0 when none). */
  requestCount(userId: string, day: string): number;
  /** Drops the counters of days before `day`; returns how many. */
  pruneRequestCounts(beforeDay: string): number;
}

/** A unique value (an email) is already taken. */
export class StoreConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreConflictError';
  }
}

/** An OAuth client registered dynamically (RFC 7591) at /oauth/register. */
export interface OAuthClientRecord {
  /** The client_id: "oac_" + 24 hex. */
  id: string;
  /** Keyed hash of the client secret; absent for a public client (token_endpoint_auth_method "none"). */
  secretHash?: string;
  /** As the client calls itself (unverified). */
  name: string;
  redirectUris: string[];
  /** The registration answer's metadata (client_name, grant_types, ...), as registered. */
  metadata: Record<string, unknown>;
  createdAt: string;
}

/** An authorization code, stored by its keyed hash; good once, for a few minutes. */
export interface OAuthCodeRecord {
  hash: string;
  clientId: string;
  userId: string;
  /** The API key the user consented with; the grant inherits it. Absent on codes made before it was recorded. */
  apiKeyId?: string;
  redirectUri: string;
  /** PKCE: base64url(SHA-256(code_verifier)). */
  codeChallenge: string;
  scope: string;
  /** The RFC 8707 resource the client asked for, if it did. */
  resource?: string;
  createdAt: string;
  expiresAt: string;
  /** Set when the code was exchanged; a second exchange revokes the grant it produced. */
  usedAt?: string;
  /** The grant the first exchange created. */
  grantId?: string;
}

/** What one consent created: every access and refresh token descending from one authorization code. */
export interface OAuthGrantRecord {
  /** "ogr_" + 24 hex. */
  id: string;
  clientId: string;
  userId: string;
  /**
   * The API key the user consented with: the grant's tokens work only while it is live.
   * Absent on grants made before it was recorded (migration 8 revoked those).
   */
  apiKeyId?: string;
  scope: string;
  resource?: string;
  createdAt: string;
  /** When one of its tokens was last used (an access token at the API, at most once a minute; a refresh). */
  lastUsedAt?: string;
  /** Set when revoked (by the user, the revocation endpoint, reuse of a rotated refresh token, its API key's revocation). */
  revokedAt?: string;
}

export interface OAuthTokenRecord {
  /** The token's keyed hash; the token itself is never stored. */
  hash: string;
  grantId: string;
  kind: 'access' | 'refresh';
  createdAt: string;
  expiresAt: string;
  /** Refresh tokens: when exchanged for the next pair (a refresh token is good once). */
  rotatedAt?: string;
  revokedAt?: string;
}

export interface NewOAuthToken {
  hash: string;
  kind: 'access' | 'refresh';
  expiresAt: string;
}

/**
 * The OAuth authorization server's state (oauth/): clients, codes, grants and tokens.
 * Every operation that decides "first use wins" is one atomic step, so two daemon
 * processes (or two requests) racing with one code or refresh token get one success.
 */
/** A client to register (dynamic registration, RFC 7591). */
export interface NewOAuthClient {
  secretHash?: string;
  name: string;
  redirectUris: string[];
  metadata: Record<string, unknown>;
}

/** The limits of open registration (oauth/clients.ts sets them). */
export interface RegistrationLimits {
  /** Who registers: a keyed hash of the client's address key (never the address itself). */
  from: string;
  /** Registrations of `from` created after `since` (the window's open start) count against `perAddress`. */
  since: string;
  perAddress: number;
  /** Clients never used (no code, no grant), from anyone, at most. */
  maxUnused: number;
}

export type RegistrationOutcome =
  | { client: OAuthClientRecord }
  /** `from` has `perAddress` registrations since `since`; the oldest of them was made at `oldest`. */
  | { refused: 'address'; oldest: string }
  /** `maxUnused` clients are waiting to be used or pruned. */
  | { refused: 'unused' };

export interface OAuthStoreSync {
  createClient(client: NewOAuthClient, now: string): OAuthClientRecord;
  /**
   * Registers a client unless a limit refuses it: the limits are checked and the row
   * inserted in one IMMEDIATE transaction, so they hold exactly across the processes
   * sharing the store.
   */
  registerClient(client: NewOAuthClient, now: string, limits: RegistrationLimits): RegistrationOutcome;
  /** Drops clients created before `before` that have no grant and no code (never used). Returns how many went. */
  pruneUnusedClients(before: string): number;
  getClient(id: string): OAuthClientRecord | undefined;
  countClients(): number;
  createCode(code: Omit<OAuthCodeRecord, 'createdAt' | 'usedAt' | 'grantId' | 'apiKeyId'> & { apiKeyId: string }, now: string): OAuthCodeRecord;
  /**
   * Exchanges a code: when it is unused, creates the grant with `tokens` and marks the code
   * used, all at once, and returns { grant }. A code used before returns { reused } (the
   * grant it produced, if any); an unknown code undefined. Expiry and client are the
   * caller's to check, on `peekCode` first.
   */
  redeemCode(hash: string, tokens: NewOAuthToken[], now: string): { grant: OAuthGrantRecord } | { reused: OAuthCodeRecord } | undefined;
  peekCode(hash: string): OAuthCodeRecord | undefined;
  /** A token with its grant, whatever their state. */
  findToken(hash: string): { token: OAuthTokenRecord; grant: OAuthGrantRecord } | undefined;
  /**
   * Rotates a refresh token: when it is neither rotated nor revoked, its grant is not
   * revoked and the grant's API key is recorded and not revoked, marks it rotated, adds
   * `next` to the grant and sets the grant's lastUsedAt, atomically, and returns true;
   * otherwise changes nothing and returns false. (The key is checked here too, so a
   * refresh racing the key's revocation cannot mint tokens after it.)
   */
  rotateRefreshToken(hash: string, next: NewOAuthToken[], now: string): boolean;
  getGrant(id: string): OAuthGrantRecord | undefined;
  /** Records a use of the grant (its lastUsedAt). */
  touchGrant(id: string, now: string): void;
  /** Revokes a grant, so every token of it (once; a second call keeps the first time). */
  revokeGrant(id: string, now: string): OAuthGrantRecord | undefined;
  /** Revokes one token (once). */
  revokeToken(hash: string, now: string): void;
  /** Live grants (IdentityStore's comment: not revoked, a usable token, their API key not revoked), newest first; one user's when userId is given. */
  listLiveGrants(now: string, userId?: string): Array<OAuthGrantRecord & { clientName: string }>;
  /**
   * Drops what can no longer be used: codes and tokens expired before `before`, grants
   * left without tokens, and clients registered before `before` that have no grant and no
   * code. Returns how many rows went.
   */
  prune(before: string): number;
}

/**
 * One event of the audit log (audit/): who did what to which credential or setting, from
 * where, and whether it went through. Never a secret: credentials are named by their ids.
 */
export interface AuditEventRecord {
  /** Assigned by the store: increasing, never reused (also after a prune). */
  id: number;
  /** ISO 8601, as given (the recorder's clock). */
  at: string;
  /** audit/events.ts names them: "api_key.created", "auth.failed", ... */
  action: string;
  outcome: 'success' | 'failure';
  actor: AuditActor;
  /** What the action was done to; absent when it names nothing stored (a failed authentication). */
  target?: { type: string; id: string };
  /** The client's address as the daemon saw it (http/client-address.ts); absent for the command line. */
  sourceAddress?: string;
  /** A small JSON object of facts about the event (names, counts, repository ids); never a secret. */
  details?: Record<string, unknown>;
}

export interface AuditActor {
  /** The user acting; absent when unknown (anonymous, the command line, a failed authentication). */
  userId?: string;
  /** audit/events.ts CREDENTIAL_KINDS: "apiKey", "cli", "system", ... */
  credentialKind: string;
  /** The credential's id (key_..., sat_..., ogr_..., oac_...) or the operating-system account of a CLI run; never the secret. */
  credentialId?: string;
}

export type NewAuditEvent = Omit<AuditEventRecord, 'id'>;

/** Which events listAudit returns; every filter given must hold. */
export interface AuditQuery {
  /** The actor's userId or credentialId equals this. */
  actor?: string;
  /** The action equals this; when it ends with ".", the action starts with it. */
  action?: string;
  /** The target's id equals this. */
  target?: string;
  /** ISO 8601 bounds on `at`, both inclusive. */
  since?: string;
  until?: string;
  /** Events skipped (newest first) and returned at most. */
  offset: number;
  limit: number;
}

/**
 * The audit log: appended to, read newest first, pruned by age. Nothing else changes an
 * event (the SQLite table refuses UPDATE).
 */
export interface AuditStoreSync {
  append(event: NewAuditEvent): AuditEventRecord;
  /** The events matching `query`, newest first (by `at`, then id); `total` counts every match, ignoring offset and limit. */
  list(query: AuditQuery): { events: AuditEventRecord[]; total: number };
  /** Drops the events with `at` before `before` (one at `before` stays); returns how many. */
  prune(before: string): number;
}

/** How a member's code-host account came to be linked. */
export type AccountLinkKind =
  | 'sign-in' // the member signed in with the host (single sign-on), which named the account
  | 'owner' //   an owner linked it by login
  | 'email'; //  the permission sync matched the host's verified email to the member's

/**
 * A member's account on the code host of a connection, for the permission sync
 * (permissions/): at most one per member and connection, and an account belongs to one
 * member.
 */
export interface ExternalAccountRecord {
  userId: string;
  /** The connection (by its configured name) whose host the account is on. */
  connection: string;
  /** The host's stable id of the account (HostAccount.id). */
  accountId: string;
  login: string;
  /** The verified email the host gave, lower-case. */
  email?: string;
  /** The member's own token on the host, sealed under the installation's secret (auth/sealed-token.ts); never shown. */
  sealedToken?: string;
  linkedBy: AccountLinkKind;
  linkedAt: string;
}

/** Where one subject's permission sync stands: the last complete sync, and the last failure since. */
export interface PermissionSyncState {
  /** ISO 8601 of the last sync that completed. */
  syncedAt?: string;
  /** Why the last attempt failed; cleared by the next that completes. */
  error?: string;
  errorAt?: string;
}

/**
 * What the code hosts say members may read (the permission sync's results), and the
 * accounts it asks for. Two sources, kept apart so that each sync replaces only its own
 * rows: account-driven (what one member's account on a connection can read) and
 * repository-driven (who can read one repository). A member may read a repository when
 * either says so.
 */
export interface PermissionStoreSync {
  /**
   * Links (or links again, replacing) the member's account on `connection`. Throws
   * StoreConflictError when that host account is linked to another member. Linking a
   * different account than before drops what the old one was found to read.
   */
  linkAccount(account: Omit<ExternalAccountRecord, 'linkedAt'>, now: string): ExternalAccountRecord;
  /**
   * Unlinks it, with what it was found to read, its sync state, and the member's
   * repository-driven rows on the connection's repositories (the readers lists named the
   * member through the account); false when there was none.
   */
  unlinkAccount(userId: string, connection: string): boolean;
  /** Linked accounts, by user and connection; one member's or one connection's when asked. */
  listAccounts(filter?: { userId?: string; connection?: string }): ExternalAccountRecord[];
  /** Account-driven: `repoIds` become what the member's account on `connection` can read, and its sync state says synced at `now`. */
  replaceAccountRepos(userId: string, connection: string, repoIds: readonly number[], now: string): void;
  /** Repository-driven: `userIds` become the repository's readers, and its sync state says synced at `now`. */
  replaceRepoReaders(repoId: number, userIds: readonly string[], now: string): void;
  /** A failed account-driven sync: recorded; what was found before stays. */
  recordAccountSyncError(userId: string, connection: string, error: string, now: string): void;
  /** A failed repository-driven sync: recorded; the readers found before stay. */
  recordRepoSyncError(repoId: number, error: string, now: string): void;
  /** Every repository a host says the member may read (either source), ascending. */
  permittedRepos(userId: string): number[];
  /** Account-driven sync states by user and connection (one member's when asked). */
  accountSyncStates(userId?: string): Array<PermissionSyncState & { userId: string; connection: string }>;
  /** Repository-driven sync states by repository. */
  repoSyncStates(): Array<PermissionSyncState & { repoId: number }>;
}

/**
 * Where the installed license lives: its text as installed, re-verified on every read
 * (auth/license-store.ts), so a key removed from the configuration or an expiry takes
 * effect without reinstalling.
 */
export interface LicenseStoreSync {
  /** The installed license file's text, as installed; undefined when none. */
  getLicense(): string | undefined;
  /** Replaces the installed license. The caller has verified it. */
  putLicense(text: string): void;
}

/**
 * Secrets that every process of an installation must share (a cluster's nodes: the server
 * secret that credentials are hashed and sessions signed under, the secret the nodes
 * authenticate each other with). Written once, never changed.
 */
export interface SecretStoreSync {
  /**
   * The secret stored under `name`; when there is none yet, `candidate` is stored and
   * returned. Concurrent callers with different candidates all get the one that landed.
   */
  sharedSecret(name: string, candidate: string): string;
}

/** A search context made through the API (those of the configuration file are not stored). */
export interface SearchContextRecord {
  /** Unique; config/contexts.ts CONTEXT_NAME. */
  name: string;
  definition: SearchContextDefinition;
  createdAt: string;
  updatedAt: string;
}

/**
 * The search contexts made through the API, and each user's default context. A default
 * is kept by name: it may name a context of the configuration file, which is not stored.
 */
export interface SearchContextStoreSync {
  /** By name (byte order). */
  list(): SearchContextRecord[];
  get(name: string): SearchContextRecord | undefined;
  /** Creates the context, or replaces the definition of the one of that name (its createdAt stays); `created` says which. */
  put(name: string, definition: SearchContextDefinition, now: string): { context: SearchContextRecord; created: boolean };
  /**
   * Removes the context and, in the same step, every user's default that names it;
   * returns how many defaults went, undefined when there was no such context.
   */
  delete(name: string): { clearedDefaults: number } | undefined;
  /** The user's default context; undefined when none is set. */
  defaultOf(userId: string): string | undefined;
  /** Sets the user's default context (the user must exist), or clears it (undefined). */
  setDefault(userId: string, name: string | undefined, now: string): void;
  /** Every default that is set, by user id. */
  listDefaults(): Array<{ userId: string; name: string }>;
}

import type { WatchStoreSync } from './watch-store.ts';

export type { WatchedRepoState, WatchEventRecord, WatchMatch, WatchRecord, WatchStoreSync } from './watch-store.ts';

export interface StoreSync extends IdentityStoreSync, SessionStoreSync, SignInStoreSync, LicenseStoreSync, SecretStoreSync, RequestCountStoreSync {
  /** The OAuth authorization server's clients, codes, grants and tokens. */
  readonly oauth: OAuthStoreSync;
  /** The audit log of credential and administration events. */
  readonly audit: AuditStoreSync;
  /** Code-host permissions and the accounts they are asked for. */
  readonly permissions: PermissionStoreSync;
  /** Search contexts made through the API, and users' default contexts. */
  readonly contexts: SearchContextStoreSync;
  /** Watches, their matches, their events and deliveries. */
  readonly watches: WatchStoreSync;
  /**
   * Runs `fn` as one transaction: every write of the store it makes is committed together,
   * or, when `fn` throws (or the commit fails: a full disk), none is. The audit log records
   * a change this way, so that there is no change without its event (audit/log.ts). `fn` is
   * synchronous; calls may nest (the inner one joins the outer).
   */
  atomically<T>(fn: () => T): T;
  /**
   * The repository named `repoName`, created (state 'new', next unused id) when unknown or
   * when the only rows with that name are deleted ones; otherwise the live row, with
   * `fields` merged in. Ids are never reused, even after deletion.
   */
  upsertRepo(fields: RepoFields): RepoRecord;
  getRepo(repoId: number): RepoRecord | undefined;
  getRepoByName(repoName: string): RepoRecord | undefined;
  /** Sorted by repoName. */
  listRepos(options?: RepoListOptions): RepoRecord[];
  /** Merges `patch` into the row; throws when the id is unknown. */
  updateRepo(repoId: number, patch: Partial<Omit<RepoRecord, 'repoId'>>): RepoRecord;

  /** The connection named `name`, created when unknown (ids are never reused either). */
  upsertConnection(name: string, connectionType: ConnectionType): ConnectionRecord;
  listConnections(): ConnectionRecord[];
  updateConnection(id: number, patch: Partial<Omit<ConnectionRecord, 'id' | 'name'>>): ConnectionRecord;
  /** Removes a connection that is no longer configured (its repositories keep their ids). */
  deleteConnection(id: number): void;

  close(): void;
}

/** `T` with every method returning a promise of what it returns (objects of methods likewise). */
export type Promised<T> = {
  readonly [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<R> : T[K] extends object ? Promised<T[K]> : T[K];
};

export type IdentityStore = Promised<IdentityStoreSync>;
export type SessionStore = Promised<SessionStoreSync>;
export type SignInStore = Promised<SignInStoreSync>;
export type RequestCountStore = Promised<RequestCountStoreSync>;
export type OAuthStore = Promised<OAuthStoreSync>;
export type AuditStore = Promised<AuditStoreSync>;
export type PermissionStore = Promised<PermissionStoreSync>;
export type LicenseStore = Promised<LicenseStoreSync>;
export type SecretStore = Promised<SecretStoreSync>;
export type SearchContextStore = Promised<SearchContextStoreSync>;
export type WatchStore = Promised<WatchStoreSync>;

/**
 * The store as trawl holds it: StoreSync's methods, each answering with a promise, and
 * `atomically` taking an asynchronous function. A call made inside `fn` joins its
 * transaction; the store's other callers neither join it nor read what it has not
 * committed (a backend may make them wait until it ends: the SQLite one does).
 */
export interface Store extends Promised<Omit<StoreSync, 'atomically' | 'oauth' | 'audit' | 'permissions' | 'contexts' | 'watches'>> {
  readonly oauth: OAuthStore;
  readonly audit: AuditStore;
  readonly permissions: PermissionStore;
  readonly contexts: SearchContextStore;
  readonly watches: WatchStore;
  /**
   * Runs `fn` as one transaction: every write of the store it makes is committed together,
   * or, when `fn` throws (or the commit fails: a full disk), none is. Calls may nest (the
   * inner one joins the outer).
   */
  atomically<T>(fn: () => Promise<T>): Promise<T>;
}
