// The embedded Store: one SQLite file, `<dataDir>/trawl.db` (see open.ts), shared by the
// daemon and any `trawl` CLI command running beside it. The schema is created and upgraded
// by migrations.ts.
//
// Tables
//
//   schema_migrations  id INTEGER PRIMARY KEY, name, applied_at: one row per applied
//                      migration; max(id) is the schema version (migrations.ts).
//
//   connections        id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE,
//                      connection_type, last_synced_at, last_error, last_error_at.
//                      A row per configured connection, keyed by its name in the config.
//
//   repos              repo_id INTEGER PRIMARY KEY AUTOINCREMENT, repo_name, display_name,
//                      code_host_type, connection_id -> connections(id) ON DELETE SET NULL,
//                      clone_url, external_web_url, image_url, default_branch,
//                      is_fork 0/1, is_archived 0/1, visibility 'public'|'private',
//                      pushed_at, indexed_at, state 'new'|'indexed'|'failed'|'deleted',
//                      last_error, last_error_at, last_success_at, failures >= 0,
//                      next_attempt_at, indexed_refs (JSON array of IndexedRef),
//                      topics (JSON array of the code host's topics, lower case),
//                      last_event_at, last_event_synced_at (a sync asked for by an
//                      event, and when the sync answering it ended: RepoRecord).
//                      Unique index repos_live_name on repo_name WHERE state != 'deleted':
//                      at most one live row per name, while a deleted repository's row
//                      stays behind and its name can return as a new row with a new id.
//
// Column conventions: timestamps are ISO 8601 TEXT exactly as given; booleans are 0/1;
// an optional field that is undefined is NULL, and NULL comes back as an absent key
// (never null), so records compare equal with deepStrictEqual whatever the backend.
//
// Ids: AUTOINCREMENT, not a plain INTEGER PRIMARY KEY. A plain rowid key hands out
// max(rowid) + 1, so deleting the row with the highest id would let the next insert take
// that id again; AUTOINCREMENT keeps the high-water mark in sqlite_sequence and never goes
// back. Repository ids name shard directories and appear in URLs and search results, so a
// reused id would point old references at a different repository.
//
// Concurrency: WAL lets readers run beside one writer; busy_timeout makes a second process
// wait for the write lock instead of failing at once. Every read-then-write runs in an
// IMMEDIATE transaction, which takes the write lock before the read: a deferred transaction
// would read, then fail with SQLITE_BUSY when upgrading to a writer (SQLite does not wait
// there, as waiting could deadlock), and two processes could both decide a name is new.
// The partial unique index is the last line of defence behind that.

import Database from 'better-sqlite3';
import type BetterSqlite3 from 'better-sqlite3';
import type {
  ApiKeyRecord,
  BrowserSessionRecord,
  ConnectionRecord,
  EndedCredentials,
  IdentityStoreSync,
  RepoFields,
  RepoListOptions,
  RepoRecord,
  Role,
  ScopedTokenRecord,
  SessionStoreSync,
  SignInIdentityRecord,
  SignInStoreSync,
  Store,
  StoreSync,
  UserRecord,
} from './store.ts';
import { promisedStore } from './sync-store.ts';
import { SqliteIdentity } from './sqlite-identity.ts';
import { SqliteSessions } from './sqlite-sessions.ts';
import { SqliteSignIn } from './sqlite-sign-in.ts';
import { SqliteRequestCounts } from './sqlite-request-counts.ts';
import { SqliteOAuth } from './sqlite-oauth.ts';
import { SqliteAudit } from './sqlite-audit.ts';
import { SqlitePermissions } from './sqlite-permissions.ts';
import { SqliteWatches } from './sqlite-watches.ts';
import { SqliteContexts } from './sqlite-contexts.ts';
import { migrate } from './migrations.ts';
import { assignments, fromRow, paramList, toParams, writeReturning } from './sqlite-columns.ts';
import { CONNECTION_COLUMNS, REPO_COLUMNS, columnList, connectionPatch, merge, newRepoFields, type Row } from './records.ts';

/** How long a process waits for another's write lock before SQLITE_BUSY. Writes are short
 * (one repository or connection each), so this only runs out when something is stuck. */
export const BUSY_TIMEOUT_MS = 10_000;

/**
 * Opens (creating if needed) a SQLite database at `path` (or ':memory:'), sets the pragmas
 * every trawl connection uses and applies pending migrations. For stores of later issues
 * that need the raw handle; everything else goes through openSqliteStore.
 */
export function openSqliteDatabase(path: string): BetterSqlite3.Database {
  const db = new Database(path);
  try {
    // busy_timeout first: switching to WAL and migrating may have to wait for another process.
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // Persistent in the file; ':memory:' stays 'memory', which is fine for tests.
    retryBusy(() => db.pragma('journal_mode = WAL'));
    // In WAL mode NORMAL never corrupts the file; a power cut may lose the last commits,
    // which sync simply redoes. FULL would fsync on every commit.
    db.pragma('synchronous = NORMAL');
    // Off by default in SQLite, per connection: repos.connection_id relies on it.
    db.pragma('foreign_keys = ON');
    migrate(db);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

const SLEEP = new Int32Array(new SharedArrayBuffer(4));

/**
 * Runs `fn` again while SQLite answers SQLITE_BUSY, for up to BUSY_TIMEOUT_MS. Needed where
 * SQLite returns BUSY without calling the busy handler: switching a new file to WAL while
 * another process does the same (it saw 'database is locked' at once in a race test).
 */
function retryBusy<T>(fn: () => T): T {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  for (let waitMs = 1; ; waitMs = Math.min(waitMs * 2, 50)) {
    try {
      return fn();
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() >= deadline) throw err;
      Atomics.wait(SLEEP, 0, 0, waitMs); // a synchronous sleep: opening is synchronous
    }
  }
}

/** The store in the SQLite database at `path` (or ':memory:'), as trawl holds it (sync-store.ts). */
export function openSqliteStore(path: string): Store {
  const db = openSqliteDatabase(path);
  return promisedStore(new SqliteStore(db), {
    // IMMEDIATE, like every read-then-write here (see the top of this file); the store's own
    // transactions inside it become savepoints of it (better-sqlite3 nests them).
    begin: () => db.exec('BEGIN IMMEDIATE'),
    commit: () => db.exec('COMMIT'),
    rollback: () => {
      if (db.inTransaction) db.exec('ROLLBACK');
    },
  });
}

class SqliteStore implements StoreSync {
  readonly #db: BetterSqlite3.Database;
  readonly #repoById: BetterSqlite3.Statement;
  readonly #liveRepoByName: BetterSqlite3.Statement;
  readonly #listRepos: BetterSqlite3.Statement;
  readonly #insertRepo: BetterSqlite3.Statement;
  readonly #updateRepo: BetterSqlite3.Statement;
  readonly #connectionById: BetterSqlite3.Statement;
  readonly #connectionByName: BetterSqlite3.Statement;
  readonly #listConnections: BetterSqlite3.Statement;
  readonly #insertConnection: BetterSqlite3.Statement;
  readonly #updateConnection: BetterSqlite3.Statement;
  readonly #deleteConnection: BetterSqlite3.Statement;
  readonly #upsertRepoTx: BetterSqlite3.Transaction<(fields: RepoFields) => RepoRecord>;
  readonly #updateRepoTx: BetterSqlite3.Transaction<(repoId: number, patch: object) => RepoRecord>;
  readonly #upsertConnectionTx: BetterSqlite3.Transaction<(name: string, connectionType: string) => ConnectionRecord>;
  readonly #updateConnectionTx: BetterSqlite3.Transaction<(id: number, patch: object) => ConnectionRecord>;
  readonly #identity: SqliteIdentity;
  readonly #sessions: SqliteSessions;
  readonly #signIn: SqliteSignIn;
  readonly #requestCounts: SqliteRequestCounts;
  /** OAuth clients, codes, grants and tokens: sqlite-oauth.ts. */
  readonly oauth: SqliteOAuth;
  /** The audit log: sqlite-audit.ts. */
  readonly audit: SqliteAudit;
  /** Code-host permissions: sqlite-permissions.ts. */
  readonly permissions: SqlitePermissions;
  /** Search contexts and default contexts: sqlite-contexts.ts. */
  readonly contexts: SqliteContexts;
  /** Watches, their matches and events: sqlite-watches.ts. */
  readonly watches: SqliteWatches;

  constructor(db: BetterSqlite3.Database) {
    this.#db = db;
    this.oauth = new SqliteOAuth(db);
    this.audit = new SqliteAudit(db);
    this.permissions = new SqlitePermissions(db);
    this.contexts = new SqliteContexts(db);
    this.watches = new SqliteWatches(db);
    this.#identity = new SqliteIdentity(db);
    this.#sessions = new SqliteSessions(db);
    this.#signIn = new SqliteSignIn(db);
    this.#requestCounts = new SqliteRequestCounts(db);
    this.#repoById = db.prepare('SELECT * FROM repos WHERE repo_id = ?');
    // Matches the partial index's condition word for word, so the index serves it.
    this.#liveRepoByName = db.prepare("SELECT * FROM repos WHERE repo_name = ? AND state != 'deleted'");
    // One statement for all four option combinations; repo_id breaks ties between a live
    // row and deleted rows of the same name. BINARY collation: byte order of the UTF-8 name.
    this.#listRepos = db.prepare(
      `SELECT * FROM repos
       WHERE (@includeDeleted OR state != 'deleted') AND (@connectionId IS NULL OR connection_id = @connectionId)
       ORDER BY repo_name, repo_id`,
    );
    this.#insertRepo = db.prepare(`INSERT INTO repos (${columnList(REPO_COLUMNS)}) VALUES (${paramList(REPO_COLUMNS)}) RETURNING *`);
    this.#updateRepo = db.prepare(`UPDATE repos SET ${assignments(REPO_COLUMNS)} WHERE repo_id = @repo_id RETURNING *`);

    this.#connectionById = db.prepare('SELECT * FROM connections WHERE id = ?');
    this.#connectionByName = db.prepare('SELECT * FROM connections WHERE name = ?');
    this.#listConnections = db.prepare('SELECT * FROM connections ORDER BY name');
    // Not INSERT ... ON CONFLICT DO UPDATE: with AUTOINCREMENT every conflicting attempt
    // still advances sqlite_sequence, so each re-sync would burn an id.
    this.#insertConnection = db.prepare(`INSERT INTO connections (${columnList(CONNECTION_COLUMNS)}) VALUES (${paramList(CONNECTION_COLUMNS)}) RETURNING *`);
    this.#updateConnection = db.prepare(`UPDATE connections SET ${assignments(CONNECTION_COLUMNS)} WHERE id = @id RETURNING *`);
    this.#deleteConnection = db.prepare('DELETE FROM connections WHERE id = ?');

    this.#upsertRepoTx = db.transaction((fields: RepoFields): RepoRecord => {
      const live = this.#liveRepoByName.get(fields.repoName) as Row | undefined;
      if (live === undefined) {
        return repoFromRow(writeReturning(this.#insertRepo, toParams(REPO_COLUMNS, newRepoFields(fields))) as Row);
      }
      return this.#writeRepo(live, fields);
    });
    this.#updateRepoTx = db.transaction((repoId: number, patch: object): RepoRecord => {
      const row = this.#repoById.get(repoId) as Row | undefined;
      if (row === undefined) throw new Error(`updateRepo: no repository with id ${repoId}`);
      return this.#writeRepo(row, patch);
    });
    this.#upsertConnectionTx = db.transaction((name: string, connectionType: string): ConnectionRecord => {
      const row = this.#connectionByName.get(name) as Row | undefined;
      if (row === undefined) {
        return connectionFromRow(writeReturning(this.#insertConnection, toParams(CONNECTION_COLUMNS, { name, connectionType })) as Row);
      }
      // The config is the source of truth: a connection whose type changed keeps its id.
      return this.#writeConnection(row, { connectionType });
    });
    this.#updateConnectionTx = db.transaction((id: number, patch: object): ConnectionRecord => {
      const row = this.#connectionById.get(id) as Row | undefined;
      if (row === undefined) throw new Error(`updateConnection: no connection with id ${id}`);
      return this.#writeConnection(row, connectionPatch(patch));
    });
  }

  #writeRepo(row: Row, patch: object): RepoRecord {
    const current = repoFromRow(row);
    const merged = merge(REPO_COLUMNS, current as unknown as Row, patch);
    const params = toParams(REPO_COLUMNS, merged);
    // A write that changes nothing (a listing that finds a repository as it was) is not made.
    const before = toParams(REPO_COLUMNS, current as unknown as Row);
    if (Object.keys(params).every((k) => params[k] === before[k])) return current;
    params.repo_id = row.repo_id;
    return repoFromRow(writeReturning(this.#updateRepo, params) as Row);
  }

  #writeConnection(row: Row, patch: object): ConnectionRecord {
    const merged = merge(CONNECTION_COLUMNS, connectionFromRow(row) as unknown as Row, patch);
    const params = toParams(CONNECTION_COLUMNS, merged);
    params.id = row.id;
    return connectionFromRow(writeReturning(this.#updateConnection, params) as Row);
  }

  upsertRepo(fields: Parameters<StoreSync['upsertRepo']>[0]): RepoRecord {
    return this.#upsertRepoTx.immediate(fields);
  }

  getRepo(repoId: number): RepoRecord | undefined {
    const row = this.#repoById.get(repoId) as Row | undefined;
    return row === undefined ? undefined : repoFromRow(row);
  }

  getRepoByName(repoName: string): RepoRecord | undefined {
    const row = this.#liveRepoByName.get(repoName) as Row | undefined;
    return row === undefined ? undefined : repoFromRow(row);
  }

  listRepos(options: RepoListOptions = {}): RepoRecord[] {
    const rows = this.#listRepos.all({
      includeDeleted: options.includeDeleted === true ? 1 : 0,
      connectionId: options.connectionId ?? null,
    }) as Row[];
    return rows.map(repoFromRow);
  }

  updateRepo(repoId: number, patch: Parameters<StoreSync['updateRepo']>[1]): RepoRecord {
    return this.#updateRepoTx.immediate(repoId, patch);
  }

  upsertConnection(name: string, connectionType: ConnectionRecord['connectionType']): ConnectionRecord {
    return this.#upsertConnectionTx.immediate(name, connectionType);
  }

  listConnections(): ConnectionRecord[] {
    return (this.#listConnections.all() as Row[]).map(connectionFromRow);
  }

  updateConnection(id: number, patch: Parameters<StoreSync['updateConnection']>[1]): ConnectionRecord {
    return this.#updateConnectionTx.immediate(id, patch);
  }

  deleteConnection(id: number): void {
    // One statement, so atomic on its own; ON DELETE SET NULL detaches the repositories.
    this.#deleteConnection.run(id);
  }

  atomically<T>(fn: () => T): T {
    // IMMEDIATE, like every read-then-write here (see the top of this file). Inside, the
    // store's own transactions become savepoints of this one (better-sqlite3 nests them).
    return this.#db.transaction(fn).immediate();
  }

  // Users and API keys: sqlite-identity.ts.
  createUser(user: { email: string; name: string; role: Role }, now: string): UserRecord {
    return this.#identity.createUser(user, now);
  }

  getUser(id: string): UserRecord | undefined {
    return this.#identity.getUser(id);
  }

  getUserByEmail(email: string): UserRecord | undefined {
    return this.#identity.getUserByEmail(email);
  }

  listUsers(): UserRecord[] {
    return this.#identity.listUsers();
  }

  updateUser(id: string, patch: Parameters<IdentityStoreSync['updateUser']>[1], now: string): UserRecord {
    return this.#identity.updateUser(id, patch, now);
  }

  createApiKey(key: { userId: string; name: string; hash: string; hint: string }, now: string): ApiKeyRecord {
    return this.#identity.createApiKey(key, now);
  }

  findApiKey(hash: string): ApiKeyRecord | undefined {
    return this.#identity.findApiKey(hash);
  }

  getApiKey(id: string): ApiKeyRecord | undefined {
    return this.#identity.getApiKey(id);
  }

  listApiKeys(userId: string): ApiKeyRecord[] {
    return this.#identity.listApiKeys(userId);
  }

  revokeApiKey(id: string, now: string): { key: ApiKeyRecord; ended: EndedCredentials } | undefined {
    return this.#identity.revokeApiKey(id, now);
  }

  endUserCredentials(userId: string, now: string): EndedCredentials {
    return this.#identity.endUserCredentials(userId, now);
  }

  touchApiKey(id: string, now: string): void {
    this.#identity.touchApiKey(id, now);
  }

  createScopedToken(token: Parameters<IdentityStoreSync['createScopedToken']>[0], now: string): ScopedTokenRecord {
    return this.#identity.createScopedToken(token, now);
  }

  findScopedToken(hash: string): ScopedTokenRecord | undefined {
    return this.#identity.findScopedToken(hash);
  }

  getScopedToken(id: string): ScopedTokenRecord | undefined {
    return this.#identity.getScopedToken(id);
  }

  revokeScopedToken(id: string, now: string): ScopedTokenRecord | undefined {
    return this.#identity.revokeScopedToken(id, now);
  }

  listLiveScopedTokens(userId: string, now: string): ScopedTokenRecord[] {
    return this.#identity.listLiveScopedTokens(userId, now);
  }

  // Browser sessions: sqlite-sessions.ts.
  createSession(session: Parameters<SessionStoreSync['createSession']>[0], now: string): BrowserSessionRecord {
    return this.#sessions.createSession(session, now);
  }

  getSession(id: string): BrowserSessionRecord | undefined {
    return this.#sessions.getSession(id);
  }

  touchSession(id: string, now: string): void {
    this.#sessions.touchSession(id, now);
  }

  endSession(id: string, now: string): BrowserSessionRecord | undefined {
    return this.#sessions.endSession(id, now);
  }

  listLiveSessions(userId: string, now: string): BrowserSessionRecord[] {
    return this.#sessions.listLiveSessions(userId, now);
  }

  pruneSessions(before: string): number {
    return this.#sessions.pruneSessions(before);
  }

  // Single sign-on: sqlite-sign-in.ts.
  createSignInIdentity(identity: Parameters<SignInStoreSync['createSignInIdentity']>[0], now: string): SignInIdentityRecord {
    return this.#signIn.createSignInIdentity(identity, now);
  }

  findSignInIdentity(issuer: string, subject: string): SignInIdentityRecord | undefined {
    return this.#signIn.findSignInIdentity(issuer, subject);
  }

  getSignInIdentity(id: string): SignInIdentityRecord | undefined {
    return this.#signIn.getSignInIdentity(id);
  }

  touchSignInIdentity(id: string, seen: { provider: string; email?: string }, now: string): SignInIdentityRecord | undefined {
    return this.#signIn.touchSignInIdentity(id, seen, now);
  }

  useSignInFlow(stateHash: string, expiresAt: string): boolean {
    return this.#signIn.useSignInFlow(stateHash, expiresAt);
  }

  pruneSignInFlows(before: string): number {
    return this.#signIn.pruneSignInFlows(before);
  }

  getLicense(): string | undefined {
    return this.#identity.getLicense();
  }

  sharedSecret(name: string, candidate: string): string {
    return this.#identity.sharedSecret(name, candidate);
  }

  putLicense(text: string): void {
    this.#identity.putLicense(text);
  }

  // Rate-limit counters: sqlite-request-counts.ts.
  countRequest(userId: string, day: string, limit: number): { count: number; counted: boolean } {
    return this.#requestCounts.countRequest(userId, day, limit);
  }

  requestCount(userId: string, day: string): number {
    return this.#requestCounts.requestCount(userId, day);
  }

  pruneRequestCounts(beforeDay: string): number {
    return this.#requestCounts.pruneRequestCounts(beforeDay);
  }

  close(): void {
    if (this.#db.open) this.#db.close();
  }
}

function repoFromRow(row: Row): RepoRecord {
  return fromRow(REPO_COLUMNS, row, { repoId: row.repo_id }) as unknown as RepoRecord;
}

function connectionFromRow(row: Row): ConnectionRecord {
  return fromRow(CONNECTION_COLUMNS, row, { id: row.id }) as unknown as ConnectionRecord;
}
