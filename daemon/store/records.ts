// The Store's records and the rows that hold them, whatever the database (sqlite-*.ts,
// pg-*.ts): the rules that are not SQL live here once, and every backend imports them.
//
//   - Each table's columns, listed once as [field, column, kind] triples (the same tables
//     and columns in every backend), with a compile-time check that every field of the
//     record has a column.
//   - Opaque ids ("usr_" + 24 hex, ...), how a patch merges into a record, and how a row
//     becomes a record: NULL becomes an absent key, never null or undefined, so records
//     compare equal with deepStrictEqual whatever the backend. A backend whose driver
//     hands back booleans and JSON as stored text (SQLite) passes a `decode`.
//   - The shaping rules of single operations: a new repository's defaults, what a user
//     patch writes, what is kept of a User-Agent, an audit event's columns and filters,
//     the order in which client registration limits refuse.

import { randomBytes } from 'node:crypto';
import type {
  ApiKeyRecord,
  AuditEventRecord,
  AuditQuery,
  BrowserSessionRecord,
  ConnectionRecord,
  NewAuditEvent,
  OAuthClientRecord,
  OAuthCodeRecord,
  OAuthGrantRecord,
  OAuthTokenRecord,
  RegistrationLimits,
  RegistrationOutcome,
  RepoFields,
  RepoRecord,
  ScopedTokenRecord,
  SearchContextRecord,
  SignInIdentityRecord,
  UserRecord,
} from './store.ts';

export type Row = Record<string, unknown>;

/** An opaque, unguessable id that is never reused: prefix ("usr", "key", "oac", ...) + "_" + 12 random bytes in hex. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}

const ID_RANDOM = /^[0-9a-f]{24}$/;

/** Whether `text` has the form newId gives the ids of `prefix` (text of any other form names no record). */
export function isIdOf(prefix: string, text: string): boolean {
  return text.length === prefix.length + 25 && text.startsWith(`${prefix}_`) && ID_RANDOM.test(text.slice(prefix.length + 1));
}

// How each field maps to its column. 'text'/'int' are required (NOT NULL); 'opt*' are
// optional fields stored as NULL when undefined.
export type Kind = 'text' | 'int' | 'bool' | 'json' | 'optText' | 'optInt';

/** The fields of R that no column maps (compile-time check that a table lists every field). */
export type Unmapped<R, Columns extends ReadonlyArray<readonly [unknown, ...unknown[]]>, Id> = Exclude<keyof R, Columns[number][0] | Id>;

export type Columns = ReadonlyArray<readonly [string, string, Kind]>;

export const isOptional = (kind: Kind): boolean => kind === 'optText' || kind === 'optInt';

/** How a backend turns a stored value of `kind` into the record's value (identity when its driver already does). */
export type Decode = (kind: Kind, value: unknown) => unknown;

const asStored: Decode = (_kind, value) => value;

/** Row -> record fields: NULL becomes an absent key; `decode` turns the rest into the record's values. */
export function fromRow(columns: Columns, row: Row, out: Row, decode: Decode = asStored): Row {
  for (const [field, column, kind] of columns) {
    const value = row[column];
    if (value === null || value === undefined) continue;
    out[field] = decode(kind, value);
  }
  return out;
}

/**
 * Merges `patch` into `base`. A key that is absent keeps the old value; an optional field
 * given as undefined (or null) is cleared, which is how callers drop a stale lastError or
 * nextAttemptAt. A required field given as undefined is left alone: it cannot be cleared,
 * and `Partial<...>` patches built by spreading often carry such keys. Keys that are not
 * fields (repoId, typos) are ignored.
 */
export function merge(columns: Columns, base: Row, patch: object): Row {
  const out: Row = { ...base };
  const given = patch as Row;
  for (const [field, , kind] of columns) {
    if (!Object.hasOwn(given, field)) continue;
    const value = given[field];
    if (value === undefined || value === null) {
      if (isOptional(kind)) delete out[field];
      continue;
    }
    out[field] = value;
  }
  return out;
}

export const columnList = (columns: Columns): string => columns.map(([, column]) => column).join(', ');

// ---- the tables' columns (documented at the top of sqlite-store.ts and its siblings) ----

export const REPO_COLUMNS = [
  ['repoName', 'repo_name', 'text'],
  ['displayName', 'display_name', 'text'],
  ['codeHostType', 'code_host_type', 'text'],
  ['connectionId', 'connection_id', 'optInt'],
  ['cloneUrl', 'clone_url', 'optText'],
  ['externalWebUrl', 'external_web_url', 'optText'],
  ['imageUrl', 'image_url', 'optText'],
  ['defaultBranch', 'default_branch', 'optText'],
  ['isFork', 'is_fork', 'bool'],
  ['isArchived', 'is_archived', 'bool'],
  ['visibility', 'visibility', 'text'],
  ['pushedAt', 'pushed_at', 'optText'],
  ['indexedAt', 'indexed_at', 'optText'],
  ['state', 'state', 'text'],
  ['lastError', 'last_error', 'optText'],
  ['lastErrorAt', 'last_error_at', 'optText'],
  ['lastSuccessAt', 'last_success_at', 'optText'],
  ['failures', 'failures', 'int'],
  ['nextAttemptAt', 'next_attempt_at', 'optText'],
  ['indexedRefs', 'indexed_refs', 'json'],
  ['topics', 'topics', 'json'],
  ['lastEventAt', 'last_event_at', 'optText'],
  ['lastEventSyncedAt', 'last_event_synced_at', 'optText'],
] as const satisfies ReadonlyArray<readonly [keyof RepoRecord, string, Kind]>;

export const CONNECTION_COLUMNS = [
  ['name', 'name', 'text'],
  ['connectionType', 'connection_type', 'text'],
  ['lastSyncedAt', 'last_synced_at', 'optText'],
  ['lastError', 'last_error', 'optText'],
  ['lastErrorAt', 'last_error_at', 'optText'],
] as const satisfies ReadonlyArray<readonly [keyof ConnectionRecord, string, Kind]>;

export const USER_COLUMNS = [
  ['id', 'id', 'text'],
  ['email', 'email', 'text'],
  ['name', 'name', 'text'],
  ['role', 'role', 'text'],
  ['suspendedAt', 'suspended_at', 'optText'],
  ['createdAt', 'created_at', 'text'],
  ['updatedAt', 'updated_at', 'text'],
  ['lastActivityAt', 'last_activity_at', 'optText'],
  ['dailyLimit', 'daily_limit', 'optInt'],
] as const satisfies ReadonlyArray<readonly [keyof UserRecord, string, Kind]>;

export const API_KEY_COLUMNS = [
  ['id', 'id', 'text'],
  ['userId', 'user_id', 'text'],
  ['name', 'name', 'text'],
  ['hint', 'hint', 'text'],
  ['createdAt', 'created_at', 'text'],
  ['lastUsedAt', 'last_used_at', 'optText'],
  ['revokedAt', 'revoked_at', 'optText'],
] as const satisfies ReadonlyArray<readonly [keyof ApiKeyRecord, string, Kind]>;

export const SCOPED_TOKEN_COLUMNS = [
  ['id', 'id', 'text'],
  ['userId', 'user_id', 'text'],
  ['apiKeyId', 'api_key_id', 'optText'],
  ['repoIds', 'repo_ids', 'json'],
  ['createdAt', 'created_at', 'text'],
  ['expiresAt', 'expires_at', 'text'],
  ['revokedAt', 'revoked_at', 'optText'],
] as const satisfies ReadonlyArray<readonly [keyof ScopedTokenRecord, string, Kind]>;

export const SESSION_COLUMNS = [
  ['id', 'id', 'text'],
  ['userId', 'user_id', 'text'],
  ['apiKeyId', 'api_key_id', 'optText'],
  ['identityId', 'identity_id', 'optText'],
  ['userAgent', 'user_agent', 'optText'],
  ['createdAt', 'created_at', 'text'],
  ['expiresAt', 'expires_at', 'text'],
  ['lastUsedAt', 'last_used_at', 'optText'],
  ['endedAt', 'ended_at', 'optText'],
] as const satisfies ReadonlyArray<readonly [keyof BrowserSessionRecord, string, Kind]>;

export const SIGN_IN_IDENTITY_COLUMNS = [
  ['id', 'id', 'text'],
  ['userId', 'user_id', 'text'],
  ['issuer', 'issuer', 'text'],
  ['subject', 'subject', 'text'],
  ['provider', 'provider', 'text'],
  ['email', 'email', 'optText'],
  ['createdAt', 'created_at', 'text'],
  ['lastSignedInAt', 'last_signed_in_at', 'text'],
] as const satisfies ReadonlyArray<readonly [keyof SignInIdentityRecord, string, Kind]>;

export const OAUTH_CLIENT_COLUMNS = [
  ['id', 'id', 'text'],
  ['secretHash', 'secret_hash', 'optText'],
  ['name', 'name', 'text'],
  ['redirectUris', 'redirect_uris', 'json'],
  ['metadata', 'metadata', 'json'],
  ['createdAt', 'created_at', 'text'],
] as const satisfies ReadonlyArray<readonly [keyof OAuthClientRecord, string, Kind]>;

export const OAUTH_CODE_COLUMNS = [
  ['hash', 'hash', 'text'],
  ['clientId', 'client_id', 'text'],
  ['userId', 'user_id', 'text'],
  ['apiKeyId', 'api_key_id', 'optText'],
  ['redirectUri', 'redirect_uri', 'text'],
  ['codeChallenge', 'code_challenge', 'text'],
  ['scope', 'scope', 'text'],
  ['resource', 'resource', 'optText'],
  ['createdAt', 'created_at', 'text'],
  ['expiresAt', 'expires_at', 'text'],
  ['usedAt', 'used_at', 'optText'],
  ['grantId', 'grant_id', 'optText'],
] as const satisfies ReadonlyArray<readonly [keyof OAuthCodeRecord, string, Kind]>;

export const OAUTH_GRANT_COLUMNS = [
  ['id', 'id', 'text'],
  ['clientId', 'client_id', 'text'],
  ['userId', 'user_id', 'text'],
  ['apiKeyId', 'api_key_id', 'optText'],
  ['scope', 'scope', 'text'],
  ['resource', 'resource', 'optText'],
  ['createdAt', 'created_at', 'text'],
  ['lastUsedAt', 'last_used_at', 'optText'],
  ['revokedAt', 'revoked_at', 'optText'],
] as const satisfies ReadonlyArray<readonly [keyof OAuthGrantRecord, string, Kind]>;

export const OAUTH_TOKEN_COLUMNS = [
  ['hash', 'hash', 'text'],
  ['grantId', 'grant_id', 'text'],
  ['kind', 'kind', 'text'],
  ['createdAt', 'created_at', 'text'],
  ['expiresAt', 'expires_at', 'text'],
  ['rotatedAt', 'rotated_at', 'optText'],
  ['revokedAt', 'revoked_at', 'optText'],
] as const satisfies ReadonlyArray<readonly [keyof OAuthTokenRecord, string, Kind]>;

export const SEARCH_CONTEXT_COLUMNS = [
  ['name', 'name', 'text'],
  ['definition', 'definition', 'json'],
  ['createdAt', 'created_at', 'text'],
  ['updatedAt', 'updated_at', 'text'],
] as const satisfies ReadonlyArray<readonly [keyof SearchContextRecord, string, Kind]>;

// A field added to a record without a column here fails to compile, instead of being
// dropped silently on write or read.
const allMapped: [
  | Unmapped<RepoRecord, typeof REPO_COLUMNS, 'repoId'>
  | Unmapped<ConnectionRecord, typeof CONNECTION_COLUMNS, 'id'>
  | Unmapped<UserRecord, typeof USER_COLUMNS, never>
  | Unmapped<ApiKeyRecord, typeof API_KEY_COLUMNS, never>
  | Unmapped<ScopedTokenRecord, typeof SCOPED_TOKEN_COLUMNS, never>
  | Unmapped<BrowserSessionRecord, typeof SESSION_COLUMNS, never>
  | Unmapped<SignInIdentityRecord, typeof SIGN_IN_IDENTITY_COLUMNS, never>
  | Unmapped<OAuthClientRecord, typeof OAUTH_CLIENT_COLUMNS, never>
  | Unmapped<OAuthCodeRecord, typeof OAUTH_CODE_COLUMNS, never>
  | Unmapped<OAuthGrantRecord, typeof OAUTH_GRANT_COLUMNS, never>
  | Unmapped<OAuthTokenRecord, typeof OAUTH_TOKEN_COLUMNS, never>
  | Unmapped<SearchContextRecord, typeof SEARCH_CONTEXT_COLUMNS, never>,
] extends [never]
  ? true
  : never = true;
void allMapped;

// ---- the shaping rules of single operations ----

/** The fields of a repository upsertRepo creates: state 'new', no failures, no refs, no topics, unless given. */
export function newRepoFields(fields: RepoFields): Row {
  return merge(REPO_COLUMNS, { state: 'new', failures: 0, indexedRefs: [], topics: [] }, fields);
}

/** An updateConnection patch as written: the name is the connection's identity (its key in the config), never patched. */
export function connectionPatch(patch: object): Row {
  const { name: _ignored, ...rest } = patch as Row;
  return rest;
}

/**
 * The users row's columns after updateUser's patch: a key present in the patch sets the
 * column (null clears it), an absent key keeps the stored value; activity alone
 * (lastActivityAt) is not an update of the user and leaves updated_at.
 */
export function patchedUserColumns(row: Row, patch: Row, now: string): Row {
  const pick = (key: string, column: string) => (key in patch ? (patch[key] ?? null) : row[column]);
  return {
    id: row.id,
    name: pick('name', 'name'),
    role: pick('role', 'role'),
    suspended_at: pick('suspendedAt', 'suspended_at'),
    last_activity_at: pick('lastActivityAt', 'last_activity_at'),
    daily_limit: pick('dailyLimit', 'daily_limit'),
    updated_at: Object.keys(patch).some((k) => k !== 'lastActivityAt') ? now : row.updated_at,
  };
}

/** What is kept of a User-Agent header: enough to tell browsers apart. */
export const USER_AGENT_MAX = 256;

/** A session's User-Agent as stored: cut to USER_AGENT_MAX characters; none (NULL) when absent or empty. */
export function storedUserAgent(userAgent: string | undefined): string | null {
  return userAgent === undefined || userAgent === '' ? null : userAgent.slice(0, USER_AGENT_MAX);
}

/**
 * registerClient's decision once the counts are read: the address's limit first (with the
 * oldest registration in its window, which tells the caller when it frees up), then the
 * cap on clients never used; undefined when neither refuses.
 */
export function registrationRefusal(mine: { n: number; oldest: string | null }, unused: number, limits: RegistrationLimits): RegistrationOutcome | undefined {
  if (mine.n >= limits.perAddress) return { refused: 'address', oldest: mine.oldest! };
  if (unused >= limits.maxUnused) return { refused: 'unused' };
  return undefined;
}

/** An audit event's columns (camelCase, as statement parameters): absent fields NULL, details as JSON text. */
export function auditEventColumns(event: NewAuditEvent): Row {
  return {
    at: event.at,
    action: event.action,
    outcome: event.outcome,
    actorUserId: event.actor.userId ?? null,
    actorKind: event.actor.credentialKind,
    actorCredentialId: event.actor.credentialId ?? null,
    targetType: event.target?.type ?? null,
    targetId: event.target?.id ?? null,
    sourceAddress: event.sourceAddress ?? null,
    details: event.details === undefined ? null : JSON.stringify(event.details),
  };
}

/** An audit query's filters, each NULL when not given: an action ending in "." is a prefix, otherwise exact. */
export function auditFilters(query: AuditQuery): {
  actor: string | null;
  action: string | null;
  prefix: string | null;
  target: string | null;
  since: string | null;
  until: string | null;
} {
  const prefix = query.action?.endsWith('.') ? query.action : undefined;
  return {
    actor: query.actor ?? null,
    action: prefix === undefined ? (query.action ?? null) : null,
    prefix: prefix ?? null,
    target: query.target ?? null,
    since: query.since ?? null,
    until: query.until ?? null,
  };
}

/** An audit_events row as a record: NULL columns become absent keys (as everywhere in the store). */
export function auditEventFromRow(row: Row, decode: Decode = asStored): AuditEventRecord {
  const actor: AuditEventRecord['actor'] = { credentialKind: row.actor_kind as string };
  if (row.actor_user_id !== null) actor.userId = row.actor_user_id as string;
  if (row.actor_credential_id !== null) actor.credentialId = row.actor_credential_id as string;
  const event: AuditEventRecord = {
    id: row.id as number,
    at: row.at as string,
    action: row.action as string,
    outcome: row.outcome as AuditEventRecord['outcome'],
    actor,
  };
  if (row.target_type !== null) event.target = { type: row.target_type as string, id: row.target_id as string };
  if (row.source_address !== null) event.sourceAddress = row.source_address as string;
  if (row.details !== null) event.details = decode('json', row.details) as Record<string, unknown>;
  return event;
}
