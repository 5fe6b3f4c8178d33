// The PostgreSQL Store: the store of a cluster, whose nodes share one database. It keeps
// the same tables, columns and rules as the SQLite store (sqlite-store.ts documents the
// tables; records.ts maps them) and runs the same conformance suite; what is particular to
// PostgreSQL lives in the pg-*.ts files:
//   pg-migrations.ts      the schema, versioned like SQLite's
//   pg-db.ts              the pool, readiness, statements, transactions, atomically
//   pg-columns.ts         records -> statement parameters
//   pg-identity.ts        users, API keys, scoped tokens, license, shared secrets
//   pg-sessions.ts        browser sessions
//   pg-sign-in.ts         single sign-on: linked accounts, sign-in flows
//   pg-oauth.ts           OAuth clients, codes, grants, tokens
//   pg-audit.ts           the audit log
//   pg-permissions.ts     code-host permissions and linked accounts
//   pg-request-counts.ts  the rate limiter's counters
//   pg-contexts.ts        search contexts and users' default contexts
//   pg-watches.ts         watches, their matches, events and deliveries
// This file: opening, repositories and connections, and the Store that puts them together.
//
// Repositories and connections across processes:
//   - upsertRepo locks the live row of the name (SELECT ... FOR UPDATE) and merges into it;
//     when there is none it inserts with ON CONFLICT DO NOTHING on the partial unique index
//     of live names, and when a concurrent insert won, locks and merges into that row. Two
//     nodes upserting one name get one row and one id.
//   - updateRepo and updateConnection lock the row they merge a patch into.
//   - upsertConnection updates the row of the name, or inserts it (ON CONFLICT on the name
//     updates the type instead). An identity value is drawn only when an insert is tried,
//     so repeated upserts of known names use up no ids.

import { PgDb, type PgOptions, type Sql } from './pg-db.ts';
import { PgIdentity } from './pg-identity.ts';
import { PgSessions } from './pg-sessions.ts';
import { PgSignIn } from './pg-sign-in.ts';
import { PgOAuth } from './pg-oauth.ts';
import { PgAudit } from './pg-audit.ts';
import { PgPermissions } from './pg-permissions.ts';
import { PgRequestCounts } from './pg-request-counts.ts';
import { PgWatches } from './pg-watches.ts';
import { PgContexts } from './pg-contexts.ts';
import { pgAssignments, pgPlaceholders, pgValues } from './pg-columns.ts';
import { CONNECTION_COLUMNS, REPO_COLUMNS, columnList, connectionPatch, fromRow, merge, newRepoFields, type Row } from './records.ts';
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

export type { PgOptions } from './pg-db.ts';

/**
 * The store in the PostgreSQL database at `url` (postgres://user:password@host:port/db).
 * Returns at once: the first call connects and brings the schema up to date, and answers
 * with the error when that fails (see pg-db.ts). close() ends the pool.
 */
export function openPgStore(url: string, options: PgOptions = {}): Store {
  return new PgStore(new PgDb(url, options));
}

/** openPgStore, once connected and migrated: throws (and closes) when that fails. */
export async function connectPgStore(url: string, options: PgOptions = {}): Promise<Store> {
  const db = new PgDb(url, options);
  try {
    await db.ready();
  } catch (err) {
    await db.close();
    throw err;
  }
  return new PgStore(db);
}

const INSERT_REPO = `INSERT INTO repos (${columnList(REPO_COLUMNS)}) VALUES (${pgPlaceholders(REPO_COLUMNS)})
  ON CONFLICT (repo_name) WHERE state <> 'deleted' DO NOTHING RETURNING *`;
const UPDATE_REPO = `UPDATE repos SET ${pgAssignments(REPO_COLUMNS, 2)} WHERE repo_id = $1 RETURNING *`;
const LOCK_LIVE_REPO = "SELECT * FROM repos WHERE repo_name = $1 AND state <> 'deleted' FOR UPDATE";
const UPDATE_CONNECTION = `UPDATE connections SET ${pgAssignments(CONNECTION_COLUMNS, 2)} WHERE id = $1 RETURNING *`;

class PgStore implements Store {
  readonly #db: PgDb;
  readonly #identity: PgIdentity;
  readonly #sessions: PgSessions;
  readonly #signIn: PgSignIn;
  readonly #requestCounts: PgRequestCounts;
  readonly oauth: PgOAuth;
  readonly audit: PgAudit;
  readonly permissions: PgPermissions;
  readonly contexts: PgContexts;
  /** Watches, their matches and events: pg-watches.ts. */
  readonly watches: PgWatches;

  constructor(db: PgDb) {
    this.#db = db;
    this.#identity = new PgIdentity(db);
    this.#sessions = new PgSessions(db);
    this.#signIn = new PgSignIn(db);
    this.#requestCounts = new PgRequestCounts(db);
    this.oauth = new PgOAuth(db);
    this.audit = new PgAudit(db);
    this.permissions = new PgPermissions(db);
    this.contexts = new PgContexts(db);
    this.watches = new PgWatches(db);
  }

  atomically<T>(fn: () => Promise<T>): Promise<T> {
    return this.#db.atomically(fn);
  }

  // ---- repositories ----

  upsertRepo(fields: RepoFields): Promise<RepoRecord> {
    return this.#db.run('transaction', async (sql) => {
      const live = await sql.row(LOCK_LIVE_REPO, [fields.repoName]);
      if (live !== undefined) return writeRepo(sql, live, fields);
      const inserted = await sql.row(INSERT_REPO, pgValues(REPO_COLUMNS, newRepoFields(fields)));
      if (inserted !== undefined) return repoFromRow(inserted);
      // A concurrent upsert inserted the name first (ON CONFLICT waited for it to commit).
      const theirs = await sql.row(LOCK_LIVE_REPO, [fields.repoName]);
      if (theirs === undefined) throw new Error(`upsertRepo: ${fields.repoName} was inserted and deleted meanwhile; try again`);
      return writeRepo(sql, theirs, fields);
    });
  }

  getRepo(repoId: number): Promise<RepoRecord | undefined> {
    return this.#db.run('read', async (sql) => {
      const row = await sql.row('SELECT * FROM repos WHERE repo_id = $1', [repoId]);
      return row && repoFromRow(row);
    });
  }

  getRepoByName(repoName: string): Promise<RepoRecord | undefined> {
    return this.#db.run('read', async (sql) => {
      const row = await sql.row("SELECT * FROM repos WHERE repo_name = $1 AND state <> 'deleted'", [repoName]);
      return row && repoFromRow(row);
    });
  }

  listRepos(options: RepoListOptions = {}): Promise<RepoRecord[]> {
    // repo_name is COLLATE "C": UTF-8 byte order; repo_id orders the rows of one name.
    return this.#db.run('read', async (sql) =>
      (
        await sql.rows(
          `SELECT * FROM repos WHERE ($1::boolean OR state <> 'deleted') AND ($2::bigint IS NULL OR connection_id = $2)
           ORDER BY repo_name, repo_id`,
          [options.includeDeleted === true, options.connectionId ?? null],
        )
      ).map(repoFromRow),
    );
  }

  updateRepo(repoId: number, patch: Parameters<StoreSync['updateRepo']>[1]): Promise<RepoRecord> {
    return this.#db.run('transaction', async (sql) => {
      const row = await sql.row('SELECT * FROM repos WHERE repo_id = $1 FOR UPDATE', [repoId]);
      if (row === undefined) throw new Error(`updateRepo: no repository with id ${repoId}`);
      return writeRepo(sql, row, patch);
    });
  }

  // ---- connections ----

  upsertConnection(name: string, connectionType: ConnectionRecord['connectionType']): Promise<ConnectionRecord> {
    return this.#db.run('write', async (sql) => {
      // The config is the source of truth: a connection whose type changed keeps its id.
      const known = await sql.row('UPDATE connections SET connection_type = $2 WHERE name = $1 RETURNING *', [name, connectionType]);
      if (known !== undefined) return connectionFromRow(known);
      const row = await sql.row(
        `INSERT INTO connections (${columnList(CONNECTION_COLUMNS)}) VALUES (${pgPlaceholders(CONNECTION_COLUMNS)})
         ON CONFLICT (name) DO UPDATE SET connection_type = excluded.connection_type RETURNING *`,
        pgValues(CONNECTION_COLUMNS, { name, connectionType }),
      );
      return connectionFromRow(row!);
    });
  }

  listConnections(): Promise<ConnectionRecord[]> {
    return this.#db.run('read', async (sql) => (await sql.rows('SELECT * FROM connections ORDER BY name')).map(connectionFromRow));
  }

  updateConnection(id: number, patch: Parameters<StoreSync['updateConnection']>[1]): Promise<ConnectionRecord> {
    return this.#db.run('transaction', async (sql) => {
      const row = await sql.row('SELECT * FROM connections WHERE id = $1 FOR UPDATE', [id]);
      if (row === undefined) throw new Error(`updateConnection: no connection with id ${id}`);
      const merged = merge(CONNECTION_COLUMNS, connectionFromRow(row) as unknown as Row, connectionPatch(patch));
      return connectionFromRow((await sql.row(UPDATE_CONNECTION, [id, ...pgValues(CONNECTION_COLUMNS, merged)]))!);
    });
  }

  deleteConnection(id: number): Promise<void> {
    // ON DELETE SET NULL detaches the repositories.
    return this.#db.run('write', async (sql) => {
      await sql.changes('DELETE FROM connections WHERE id = $1', [id]);
    });
  }

  // ---- users and API keys: pg-identity.ts ----

  createUser(user: { email: string; name: string; role: Role }, now: string): Promise<UserRecord> {
    return this.#identity.createUser(user, now);
  }

  getUser(id: string): Promise<UserRecord | undefined> {
    return this.#identity.getUser(id);
  }

  getUserByEmail(email: string): Promise<UserRecord | undefined> {
    return this.#identity.getUserByEmail(email);
  }

  listUsers(): Promise<UserRecord[]> {
    return this.#identity.listUsers();
  }

  updateUser(id: string, patch: Parameters<IdentityStoreSync['updateUser']>[1], now: string): Promise<UserRecord> {
    return this.#identity.updateUser(id, patch, now);
  }

  createApiKey(key: { userId: string; name: string; hash: string; hint: string }, now: string): Promise<ApiKeyRecord> {
    return this.#identity.createApiKey(key, now);
  }

  findApiKey(hash: string): Promise<ApiKeyRecord | undefined> {
    return this.#identity.findApiKey(hash);
  }

  getApiKey(id: string): Promise<ApiKeyRecord | undefined> {
    return this.#identity.getApiKey(id);
  }

  listApiKeys(userId: string): Promise<ApiKeyRecord[]> {
    return this.#identity.listApiKeys(userId);
  }

  revokeApiKey(id: string, now: string): Promise<{ key: ApiKeyRecord; ended: EndedCredentials } | undefined> {
    return this.#identity.revokeApiKey(id, now);
  }

  endUserCredentials(userId: string, now: string): Promise<EndedCredentials> {
    return this.#identity.endUserCredentials(userId, now);
  }

  touchApiKey(id: string, now: string): Promise<void> {
    return this.#identity.touchApiKey(id, now);
  }

  createScopedToken(token: Parameters<IdentityStoreSync['createScopedToken']>[0], now: string): Promise<ScopedTokenRecord> {
    return this.#identity.createScopedToken(token, now);
  }

  findScopedToken(hash: string): Promise<ScopedTokenRecord | undefined> {
    return this.#identity.findScopedToken(hash);
  }

  getScopedToken(id: string): Promise<ScopedTokenRecord | undefined> {
    return this.#identity.getScopedToken(id);
  }

  revokeScopedToken(id: string, now: string): Promise<ScopedTokenRecord | undefined> {
    return this.#identity.revokeScopedToken(id, now);
  }

  listLiveScopedTokens(userId: string, now: string): Promise<ScopedTokenRecord[]> {
    return this.#identity.listLiveScopedTokens(userId, now);
  }

  getLicense(): Promise<string | undefined> {
    return this.#identity.getLicense();
  }

  putLicense(text: string): Promise<void> {
    return this.#identity.putLicense(text);
  }

  sharedSecret(name: string, candidate: string): Promise<string> {
    return this.#identity.sharedSecret(name, candidate);
  }

  // ---- browser sessions: pg-sessions.ts ----

  createSession(session: Parameters<SessionStoreSync['createSession']>[0], now: string): Promise<BrowserSessionRecord> {
    return this.#sessions.createSession(session, now);
  }

  getSession(id: string): Promise<BrowserSessionRecord | undefined> {
    return this.#sessions.getSession(id);
  }

  touchSession(id: string, now: string): Promise<void> {
    return this.#sessions.touchSession(id, now);
  }

  endSession(id: string, now: string): Promise<BrowserSessionRecord | undefined> {
    return this.#sessions.endSession(id, now);
  }

  listLiveSessions(userId: string, now: string): Promise<BrowserSessionRecord[]> {
    return this.#sessions.listLiveSessions(userId, now);
  }

  pruneSessions(before: string): Promise<number> {
    return this.#sessions.pruneSessions(before);
  }

  // ---- single sign-on: pg-sign-in.ts ----

  createSignInIdentity(identity: Parameters<SignInStoreSync['createSignInIdentity']>[0], now: string): Promise<SignInIdentityRecord> {
    return this.#signIn.createSignInIdentity(identity, now);
  }

  findSignInIdentity(issuer: string, subject: string): Promise<SignInIdentityRecord | undefined> {
    return this.#signIn.findSignInIdentity(issuer, subject);
  }

  getSignInIdentity(id: string): Promise<SignInIdentityRecord | undefined> {
    return this.#signIn.getSignInIdentity(id);
  }

  touchSignInIdentity(id: string, seen: { provider: string; email?: string }, now: string): Promise<SignInIdentityRecord | undefined> {
    return this.#signIn.touchSignInIdentity(id, seen, now);
  }

  useSignInFlow(stateHash: string, expiresAt: string): Promise<boolean> {
    return this.#signIn.useSignInFlow(stateHash, expiresAt);
  }

  pruneSignInFlows(before: string): Promise<number> {
    return this.#signIn.pruneSignInFlows(before);
  }

  // ---- rate-limit counters: pg-request-counts.ts ----

  countRequest(userId: string, day: string, limit: number): Promise<{ count: number; counted: boolean }> {
    return this.#requestCounts.countRequest(userId, day, limit);
  }

  requestCount(userId: string, day: string): Promise<number> {
    return this.#requestCounts.requestCount(userId, day);
  }

  pruneRequestCounts(beforeDay: string): Promise<number> {
    return this.#requestCounts.pruneRequestCounts(beforeDay);
  }

  close(): Promise<void> {
    return this.#db.close();
  }
}

/** Merges `patch` into the locked `row` and writes it. */
async function writeRepo(sql: Sql, row: Row, patch: object): Promise<RepoRecord> {
  const merged = merge(REPO_COLUMNS, repoFromRow(row) as unknown as Row, patch);
  return repoFromRow((await sql.row(UPDATE_REPO, [row.repo_id, ...pgValues(REPO_COLUMNS, merged)]))!);
}

function repoFromRow(row: Row): RepoRecord {
  return fromRow(REPO_COLUMNS, row, { repoId: row.repo_id }) as unknown as RepoRecord;
}

function connectionFromRow(row: Row): ConnectionRecord {
  return fromRow(CONNECTION_COLUMNS, row, { id: row.id }) as unknown as ConnectionRecord;
}
