// Versioned schema migrations of the SQLite store (sqlite-store.ts).
//
// A database's schema version is the highest id recorded in its `schema_migrations` table
// (0 for a new file). At open, migrate() applies every migration above that version, in
// order, each in its own IMMEDIATE transaction together with the row that records it: a
// migration is applied completely or not at all, and a failure leaves the database at the
// previous version. A database whose version is above the last migration this code knows
// was written by a newer trawl and is refused (SchemaTooNewError): an older schema reader
// would silently drop what it does not understand.
//
// HOW TO ADD A MIGRATION (users, keys, tokens, licenses, rate counters, ...):
//   append `{ id: <last id + 1>, name: 'snake_case_summary', up: `SQL` }` to MIGRATIONS.
//   That is all; the next open of every database applies it. Rules:
//   - Never edit, reorder or remove a migration that has shipped: databases in the field
//     have already run it. Fix mistakes with a new migration.
//   - Ids are consecutive from 1 (checked at start-up), so two branches that both append
//     id N collide loudly in review instead of silently skipping one another.
//   - No BEGIN/COMMIT in the SQL: the runner owns the transaction.
//   - `up` may be a function `(db) => void` for data changes SQL cannot express; it must be
//     synchronous (a better-sqlite3 transaction cannot span an await).
//   - Foreign-key enforcement is off while migrations run and checked (PRAGMA
//     foreign_key_check) before each commit. That lets a migration rebuild a table the
//     SQLite way (CREATE new, INSERT ... SELECT, DROP old, ALTER ... RENAME): with
//     enforcement on, dropping a parent table would fire ON DELETE actions on its children.
//   - Several processes may open one file at once (a `trawl sync` CLI beside the daemon):
//     each migration re-reads the version inside its transaction, so it runs exactly once.

import type BetterSqlite3 from 'better-sqlite3';

export interface Migration {
  /** 1, 2, 3, ...: the schema version once this migration has run. */
  id: number;
  /** What it does, for people reading schema_migrations; not used to match. */
  name: string;
  up: string | ((db: BetterSqlite3.Database) => void);
}

export const MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    name: 'connections_and_repos',
    // The tables are documented at the top of sqlite-store.ts.
    up: `
      CREATE TABLE connections (
        id               INTEGER PRIMARY KEY AUTOINCREMENT,
        name             TEXT NOT NULL UNIQUE,
        connection_type  TEXT NOT NULL,
        last_synced_at   TEXT,
        last_error       TEXT,
        last_error_at    TEXT
      );

      CREATE TABLE repos (
        repo_id          INTEGER PRIMARY KEY AUTOINCREMENT,
        repo_name        TEXT NOT NULL,
        display_name     TEXT NOT NULL,
        code_host_type   TEXT NOT NULL,
        connection_id    INTEGER REFERENCES connections (id) ON DELETE SET NULL,
        clone_url        TEXT,
        external_web_url TEXT,
        image_url        TEXT,
        default_branch   TEXT,
        is_fork          INTEGER NOT NULL CHECK (is_fork IN (0, 1)),
        is_archived      INTEGER NOT NULL CHECK (is_archived IN (0, 1)),
        visibility       TEXT NOT NULL CHECK (visibility IN ('public', 'private')),
        pushed_at        TEXT,
        indexed_at       TEXT,
        state            TEXT NOT NULL DEFAULT 'new'
                         CHECK (state IN ('new', 'indexed', 'failed', 'deleted')),
        last_error       TEXT,
        last_error_at    TEXT,
        last_success_at  TEXT,
        failures         INTEGER NOT NULL DEFAULT 0 CHECK (failures >= 0),
        next_attempt_at  TEXT,
        indexed_refs     TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(indexed_refs))
      );

      CREATE UNIQUE INDEX repos_live_name ON repos (repo_name) WHERE state != 'deleted';
      CREATE INDEX repos_connection ON repos (connection_id);
    `,
  },
  {
    id: 2,
    name: 'users_and_api_keys',
    // Documented at the top of sqlite-identity.ts.
    up: `
      CREATE TABLE users (
        id               TEXT PRIMARY KEY,
        email            TEXT NOT NULL UNIQUE COLLATE NOCASE,
        name             TEXT NOT NULL,
        role             TEXT NOT NULL CHECK (role IN ('owner', 'member')),
        suspended_at     TEXT,
        created_at       TEXT NOT NULL,
        updated_at       TEXT NOT NULL,
        last_activity_at TEXT,
        daily_limit      INTEGER CHECK (daily_limit IS NULL OR daily_limit >= 0)
      );

      CREATE TABLE api_keys (
        id               TEXT PRIMARY KEY,
        user_id          TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        name             TEXT NOT NULL,
        hash             TEXT NOT NULL UNIQUE,
        hint             TEXT NOT NULL,
        created_at       TEXT NOT NULL,
        last_used_at     TEXT,
        revoked_at       TEXT
      );

      CREATE INDEX api_keys_user ON api_keys (user_id, created_at);
    `,
  },
  {
    id: 3,
    name: 'license',
    // One row at most: the installed license file's text (auth/license.ts verifies it on read).
    up: `
      CREATE TABLE license (
        id           INTEGER PRIMARY KEY CHECK (id = 1),
        text         TEXT NOT NULL,
        installed_at TEXT NOT NULL
      );
    `,
  },
  {
    id: 4,
    name: 'scoped_access_tokens',
    // Documented at the top of sqlite-identity.ts.
    up: `
      CREATE TABLE scoped_tokens (
        id          TEXT PRIMARY KEY,
        user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        hash        TEXT NOT NULL UNIQUE,
        repo_ids    TEXT NOT NULL CHECK (json_valid(repo_ids)),
        created_at  TEXT NOT NULL,
        expires_at  TEXT NOT NULL,
        revoked_at  TEXT
      );
    `,
  },
  {
    id: 5,
    name: 'request_counts',
    // Documented at the top of sqlite-request-counts.ts.
    up: `
      CREATE TABLE request_counts (
        user_id  TEXT NOT NULL,
        day      TEXT NOT NULL,
        count    INTEGER NOT NULL CHECK (count >= 1),
        PRIMARY KEY (user_id, day)
      ) WITHOUT ROWID;
    `,
  },
  {
    id: 6,
    name: 'oauth',
    // Documented at the top of sqlite-oauth.ts.
    up: `
      CREATE TABLE oauth_clients (
        id             TEXT PRIMARY KEY,
        secret_hash    TEXT,
        name           TEXT NOT NULL,
        redirect_uris  TEXT NOT NULL CHECK (json_valid(redirect_uris)),
        metadata       TEXT NOT NULL CHECK (json_valid(metadata)),
        created_at     TEXT NOT NULL
      );

      CREATE TABLE oauth_grants (
        id          TEXT PRIMARY KEY,
        client_id   TEXT NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
        user_id     TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        scope       TEXT NOT NULL,
        resource    TEXT,
        created_at  TEXT NOT NULL,
        revoked_at  TEXT
      );
      CREATE INDEX oauth_grants_client ON oauth_grants (client_id);
      CREATE INDEX oauth_grants_user ON oauth_grants (user_id);

      CREATE TABLE oauth_codes (
        hash            TEXT PRIMARY KEY,
        client_id       TEXT NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
        user_id         TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        redirect_uri    TEXT NOT NULL,
        code_challenge  TEXT NOT NULL,
        scope           TEXT NOT NULL,
        resource        TEXT,
        created_at      TEXT NOT NULL,
        expires_at      TEXT NOT NULL,
        used_at         TEXT,
        grant_id        TEXT REFERENCES oauth_grants (id) ON DELETE SET NULL
      );
      CREATE INDEX oauth_codes_client ON oauth_codes (client_id);

      CREATE TABLE oauth_tokens (
        hash        TEXT PRIMARY KEY,
        grant_id    TEXT NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
        kind        TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
        created_at  TEXT NOT NULL,
        expires_at  TEXT NOT NULL,
        rotated_at  TEXT,
        revoked_at  TEXT
      );
      CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_id);
      CREATE INDEX oauth_tokens_expiry ON oauth_tokens (expires_at);
    `,
  },
  {
    id: 7,
    name: 'oauth_client_registration_address',
    // Documented at the top of sqlite-oauth.ts: who registered a client, for the per-address limit.
    up: `
      ALTER TABLE oauth_clients ADD COLUMN registered_from TEXT;
      CREATE INDEX oauth_clients_from ON oauth_clients (registered_from, created_at);
      CREATE INDEX oauth_clients_created ON oauth_clients (created_at);
    `,
  },
  {
    id: 8,
    name: 'audit_events',
    // Documented at the top of sqlite-audit.ts.
    up: `
      CREATE TABLE audit_events (
        id                   INTEGER PRIMARY KEY AUTOINCREMENT,
        at                   TEXT NOT NULL,
        action               TEXT NOT NULL,
        outcome              TEXT NOT NULL CHECK (outcome IN ('success', 'failure')),
        actor_user_id        TEXT,
        actor_kind           TEXT NOT NULL,
        actor_credential_id  TEXT,
        target_type          TEXT,
        target_id            TEXT,
        source_address       TEXT,
        details              TEXT CHECK (details IS NULL OR json_valid(details)),
        CHECK ((target_type IS NULL) = (target_id IS NULL))
      );
      CREATE INDEX audit_events_at ON audit_events (at, id);
      CREATE INDEX audit_events_actor_user ON audit_events (actor_user_id, at);
      CREATE INDEX audit_events_actor_credential ON audit_events (actor_credential_id, at);
      CREATE INDEX audit_events_target ON audit_events (target_id, at);
      CREATE INDEX audit_events_action ON audit_events (action, at);
      CREATE TRIGGER audit_events_append_only BEFORE UPDATE ON audit_events
      BEGIN
        SELECT RAISE(ABORT, 'audit events are append-only');
      END;
    `,
  },
  {
    id: 9,
    name: 'credential_origins_and_browser_sessions',
    // Which API key opened each scoped token, authorization code and OAuth grant, so that
    // revoking the key ends them; a grant's last use; stored browser sessions, so that they
    // can be listed and ended one by one. Documented at the top of sqlite-identity.ts,
    // sqlite-oauth.ts and sqlite-sessions.ts.
    //
    // Credentials made before this migration name no key, and a credential whose key is
    // unknown is refused (auth/origin.ts): revoking the key that made them could not reach
    // them. The live ones are marked revoked here, so that listings say so: scoped tokens
    // (an hour of life at most, so little is lost) and OAuth grants (their clients ask the
    // user to consent again, the safe choice for a grant that may be a leaked key's).
    // Browser sessions of before were never stored: their tokens (format v1) are refused.
    up: `
      ALTER TABLE scoped_tokens ADD COLUMN api_key_id TEXT REFERENCES api_keys (id) ON DELETE CASCADE;
      CREATE INDEX scoped_tokens_key ON scoped_tokens (api_key_id);
      CREATE INDEX scoped_tokens_user ON scoped_tokens (user_id, expires_at);

      ALTER TABLE oauth_codes ADD COLUMN api_key_id TEXT REFERENCES api_keys (id) ON DELETE CASCADE;
      ALTER TABLE oauth_grants ADD COLUMN api_key_id TEXT REFERENCES api_keys (id) ON DELETE CASCADE;
      ALTER TABLE oauth_grants ADD COLUMN last_used_at TEXT;
      CREATE INDEX oauth_grants_key ON oauth_grants (api_key_id);

      CREATE TABLE browser_sessions (
        id            TEXT PRIMARY KEY,
        user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        api_key_id    TEXT NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
        user_agent    TEXT,
        created_at    TEXT NOT NULL,
        expires_at    TEXT NOT NULL,
        last_used_at  TEXT,
        ended_at      TEXT
      );
      CREATE INDEX browser_sessions_user ON browser_sessions (user_id, expires_at);
      CREATE INDEX browser_sessions_key ON browser_sessions (api_key_id);
      CREATE INDEX browser_sessions_expiry ON browser_sessions (expires_at);

      UPDATE scoped_tokens SET revoked_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
        WHERE revoked_at IS NULL AND expires_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now');
      UPDATE oauth_grants SET revoked_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE revoked_at IS NULL;
    `,
  },
  {
    id: 10,
    name: 'shared_secrets',
    // Secrets every process of an installation shares, by name (store.ts SecretStoreSync;
    // sqlite-identity.ts). One node keeps its server secret in a file of the data dir
    // (auth/credentials.ts); a cluster's nodes take theirs from here.
    up: `
      CREATE TABLE secrets (
        name        TEXT PRIMARY KEY,
        value       TEXT NOT NULL,
        created_at  TEXT NOT NULL
      );
    `,
  },
  {
    id: 11,
    name: 'code_host_permissions',
    // What the code hosts say members may read, and the accounts asked for it (store.ts
    // PermissionStoreSync; sqlite-permissions.ts).
    up: `
      CREATE TABLE external_accounts (
        user_id       TEXT NOT NULL,
        connection    TEXT NOT NULL,
        account_id    TEXT NOT NULL,
        login         TEXT NOT NULL,
        email         TEXT,
        sealed_token  TEXT,
        linked_by     TEXT NOT NULL,
        linked_at     TEXT NOT NULL,
        PRIMARY KEY (user_id, connection),
        UNIQUE (connection, account_id)
      );
      CREATE TABLE repo_permissions (
        user_id  TEXT NOT NULL,
        repo_id  INTEGER NOT NULL,
        source   TEXT NOT NULL,
        PRIMARY KEY (user_id, repo_id, source)
      ) WITHOUT ROWID;
      CREATE INDEX repo_permissions_source ON repo_permissions (repo_id, source);
      CREATE TABLE account_permission_syncs (
        user_id     TEXT NOT NULL,
        connection  TEXT NOT NULL,
        synced_at   TEXT,
        error       TEXT,
        error_at    TEXT,
        PRIMARY KEY (user_id, connection)
      );
      CREATE TABLE repo_permission_syncs (
        repo_id    INTEGER PRIMARY KEY,
        synced_at  TEXT,
        error      TEXT,
        error_at   TEXT
      );
    `,
  },
  {
    id: 12,
    name: 'repository_topics_and_search_contexts',
    // A repository's code-host topics (what a search context selects by); the search
    // contexts made through the API (those of the configuration file are not stored); each
    // user's default context, by name, since it may name one of the file's. Documented at
    // the top of sqlite-store.ts and sqlite-contexts.ts.
    up: `
      ALTER TABLE repos ADD COLUMN topics TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(topics));

      CREATE TABLE search_contexts (
        name        TEXT PRIMARY KEY,
        definition  TEXT NOT NULL CHECK (json_valid(definition)),
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL
      );

      CREATE TABLE default_search_contexts (
        user_id  TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
        context  TEXT NOT NULL,
        set_at   TEXT NOT NULL
      );
      CREATE INDEX default_search_contexts_context ON default_search_contexts (context);
    `,
  },
  {
    id: 13,
    name: 'single_sign_on',
    // The accounts people sign in with at a single sign-on provider, each linked to a
    // member; the sign-in flows that came back (each may come back once); and browser
    // sessions signed in through such an account, which name it instead of an API key.
    // Documented at the top of sqlite-sign-in.ts and sqlite-sessions.ts. browser_sessions
    // is rebuilt the SQLite way (its api_key_id was NOT NULL); its rows keep their values.
    up: `
      CREATE TABLE sign_in_identities (
        id                 TEXT PRIMARY KEY,
        user_id            TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        issuer             TEXT NOT NULL,
        subject            TEXT NOT NULL,
        provider           TEXT NOT NULL,
        email              TEXT,
        created_at         TEXT NOT NULL,
        last_signed_in_at  TEXT NOT NULL,
        UNIQUE (issuer, subject)
      );
      CREATE INDEX sign_in_identities_user ON sign_in_identities (user_id);

      CREATE TABLE sign_in_flows (
        state_hash  TEXT PRIMARY KEY,
        expires_at  TEXT NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX sign_in_flows_expiry ON sign_in_flows (expires_at);

      CREATE TABLE browser_sessions_new (
        id            TEXT PRIMARY KEY,
        user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        api_key_id    TEXT REFERENCES api_keys (id) ON DELETE CASCADE,
        identity_id   TEXT REFERENCES sign_in_identities (id) ON DELETE CASCADE,
        user_agent    TEXT,
        created_at    TEXT NOT NULL,
        expires_at    TEXT NOT NULL,
        last_used_at  TEXT,
        ended_at      TEXT,
        CHECK ((api_key_id IS NULL) != (identity_id IS NULL))
      );
      INSERT INTO browser_sessions_new (id, user_id, api_key_id, user_agent, created_at, expires_at, last_used_at, ended_at)
        SELECT id, user_id, api_key_id, user_agent, created_at, expires_at, last_used_at, ended_at FROM browser_sessions;
      DROP TABLE browser_sessions;
      ALTER TABLE browser_sessions_new RENAME TO browser_sessions;
      CREATE INDEX browser_sessions_user ON browser_sessions (user_id, expires_at);
      CREATE INDEX browser_sessions_key ON browser_sessions (api_key_id);
      CREATE INDEX browser_sessions_identity ON browser_sessions (identity_id);
      CREATE INDEX browser_sessions_expiry ON browser_sessions (expires_at);
    `,
  },
  {
    id: 14,
    name: 'repository_events',
    // When a repository's sync was last asked for by an event (a webhook, an owner), and
    // when the sync that answered it ended: its freshness (sync/repo-queue.ts). Documented
    // at the top of sqlite-store.ts.
    up: `
      ALTER TABLE repos ADD COLUMN last_event_at TEXT;
      ALTER TABLE repos ADD COLUMN last_event_synced_at TEXT;
    `,
  },
  {
    id: 15,
    name: 'watches',
    // Saved queries whose changes are delivered, their matches, their events, and what the
    // watches last saw of each repository (sqlite-watches.ts documents the tables).
    up: `
      CREATE TABLE watches (
        id                INTEGER PRIMARY KEY AUTOINCREMENT,
        user_id           TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        name              TEXT NOT NULL,
        query             TEXT NOT NULL,
        is_regex          INTEGER NOT NULL,
        case_sensitive    INTEGER NOT NULL,
        url               TEXT,
        salt              TEXT NOT NULL,
        created_at        TEXT NOT NULL,
        last_changed_at   TEXT,
        delivered         INTEGER NOT NULL DEFAULT 0,
        dead_letters      INTEGER NOT NULL DEFAULT 0
      );
      CREATE INDEX watches_user ON watches (user_id);
      CREATE TABLE watch_matches (
        watch_id  INTEGER NOT NULL REFERENCES watches (id) ON DELETE CASCADE,
        repo_id   INTEGER NOT NULL,
        matches   TEXT NOT NULL,
        PRIMARY KEY (watch_id, repo_id)
      );
      CREATE INDEX watch_matches_repo ON watch_matches (repo_id);
      CREATE TABLE watch_events (
        id               INTEGER PRIMARY KEY AUTOINCREMENT,
        watch_id         INTEGER NOT NULL REFERENCES watches (id) ON DELETE CASCADE,
        payload          TEXT NOT NULL,
        created_at       TEXT NOT NULL,
        state            TEXT NOT NULL,
        attempts         INTEGER NOT NULL DEFAULT 0,
        next_attempt_at  TEXT,
        last_error       TEXT
      );
      CREATE INDEX watch_events_watch ON watch_events (watch_id, id);
      CREATE INDEX watch_events_due ON watch_events (state, next_attempt_at);
      CREATE TABLE watched_repos (
        repo_id     INTEGER PRIMARY KEY,
        generation  INTEGER NOT NULL,
        refs        TEXT NOT NULL
      );
    `,
  },
];

/** The database was written by a newer trawl (its schema version is above ours). */
export class SchemaTooNewError extends Error {
  readonly databaseVersion: number;
  readonly knownVersion: number;

  constructor(file: string, databaseVersion: number, knownVersion: number) {
    super(
      `${file} is at schema version ${databaseVersion}, but this trawl knows versions up to ` +
        `${knownVersion}: it was written by a newer trawl. Run that version (or newer), or ` +
        `restore a copy of the data directory taken before the upgrade; downgrading in place is not supported.`,
    );
    this.name = 'SchemaTooNewError';
    this.databaseVersion = databaseVersion;
    this.knownVersion = knownVersion;
  }
}

/** A migration threw; its transaction was rolled back. */
export class MigrationError extends Error {
  readonly migration: Migration;

  constructor(migration: Migration, version: number, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(`migration ${migration.id} (${migration.name}) failed, the database stays at version ${version}: ${reason}`, {
      cause,
    });
    this.name = 'MigrationError';
    this.migration = migration;
  }
}

const CREATE_SCHEMA_MIGRATIONS = `
  CREATE TABLE IF NOT EXISTS schema_migrations (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TEXT NOT NULL
  )`;

/** The highest migration id recorded in `db` (0 when none, or no table yet). */
export function schemaVersion(db: BetterSqlite3.Database): number {
  const table = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'").get();
  if (table === undefined) return 0;
  return db.prepare('SELECT coalesce(max(id), 0) FROM schema_migrations').pluck().get() as number;
}

function checkList(migrations: readonly Migration[]): void {
  migrations.forEach((m, i) => {
    if (m.id !== i + 1) {
      throw new Error(`migration list is malformed: entry ${i} has id ${m.id}, expected ${i + 1} (ids are consecutive from 1)`);
    }
  });
}

/**
 * Brings `db` up to the last of `migrations` (MIGRATIONS unless a test passes its own);
 * returns the ids it applied, [] when the database was already current. Throws
 * SchemaTooNewError for a database from a newer trawl and MigrationError when a migration
 * fails (the migrations before it stay applied).
 */
export function migrate(db: BetterSqlite3.Database, migrations: readonly Migration[] = MIGRATIONS): number[] {
  checkList(migrations);
  const known = migrations.length;
  db.exec(CREATE_SCHEMA_MIGRATIONS);
  const readVersion = db.prepare('SELECT coalesce(max(id), 0) FROM schema_migrations').pluck();
  const record = db.prepare('INSERT INTO schema_migrations (id, name, applied_at) VALUES (?, ?, ?)');
  const current = (): number => {
    const version = readVersion.get() as number;
    if (version > known) throw new SchemaTooNewError(db.name, version, known);
    return version;
  };

  // The common case, an up-to-date database, takes no write lock.
  if (current() === known) return [];

  const applied: number[] = [];
  // PRAGMA foreign_keys is a no-op inside a transaction, so it is switched here, outside.
  const foreignKeys = db.pragma('foreign_keys', { simple: true }) === 1;
  if (foreignKeys) db.pragma('foreign_keys = OFF');
  try {
    for (const migration of migrations) {
      const step = db.transaction((): boolean => {
        // Re-read under the write lock: another process may have applied it meanwhile.
        const version = current();
        if (version >= migration.id) return false;
        try {
          if (typeof migration.up === 'string') db.exec(migration.up);
          else migration.up(db);
          const violations = db.pragma('foreign_key_check') as unknown[];
          if (violations.length > 0) {
            throw new Error(`leaves ${violations.length} foreign key violation(s), e.g. ${JSON.stringify(violations[0])}`);
          }
        } catch (err) {
          throw new MigrationError(migration, version, err);
        }
        record.run(migration.id, migration.name, new Date().toISOString());
        return true;
      });
      if (step.immediate()) applied.push(migration.id);
    }
  } finally {
    if (foreignKeys) db.pragma('foreign_keys = ON');
  }
  return applied;
}
