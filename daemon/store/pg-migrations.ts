// Versioned schema migrations of the PostgreSQL store (pg-store.ts), kept the way
// migrations.ts keeps SQLite's: a database's schema version is the highest id in its
// `schema_migrations` table (0 when there is none); at connection, every migration above
// it is applied in order, each in its own transaction together with the row that records
// it, so that a failure leaves the database at the previous version (MigrationError); a
// database above the last migration known here was written by a newer trawl and is refused
// (SchemaTooNewError). The error classes are migrations.ts's: callers tell them apart the
// same way whatever the backend.
//
// Migration 1 is the schema SQLite reached at its version 10, in PostgreSQL's terms (the
// tables are documented at the top of the sqlite-*.ts files; the columns are the same,
// records.ts maps them):
//   - ids that the store assigns (repos, connections, audit_events) are BIGINT identity
//     columns: a sequence never goes back, so an id is never handed out twice, also after
//     its row is deleted (SQLite's AUTOINCREMENT). They come back as JS numbers (pg-db.ts).
//   - every TEXT column is COLLATE "C": compared and ordered byte by byte, like SQLite's
//     BINARY, whatever the database's locale (repository names sort in UTF-8 byte order,
//     ISO 8601 times compare as strings). Users' emails are unique case-insensitively
//     through an index on lower(email), which under "C" folds ASCII letters only, as
//     SQLite's NOCASE does.
//   - booleans are BOOLEAN; JSON is `json`, which keeps the text as given (key order
//     included, as SQLite's TEXT does) and checks it is JSON.
//   - audit events are append-only: a trigger refuses UPDATE, like SQLite's.
//
// HOW TO ADD A MIGRATION: append `{ id: <last id + 1>, name, up: `SQL` }`. The rules of
// migrations.ts hold (never edit a shipped migration; consecutive ids; no BEGIN/COMMIT: the
// runner owns the transaction). `up` is SQL only: what SQLite needed a function for, a
// PL/pgSQL DO block does. Unlike SQLite, PostgreSQL runs DDL in the transaction and keeps
// foreign keys on: a migration that rebuilds a table uses ALTER TABLE instead.
//
// Several processes (a cluster's nodes) connect at once: each migration takes a
// transaction-level advisory lock and re-reads the version under it, so it runs once, and
// the others wait for it instead of failing on half-made tables.

import type pg from 'pg';
import { MigrationError, SchemaTooNewError } from './migrations.ts';

export interface PgMigration {
  /** 1, 2, 3, ...: the schema version once this migration has run. */
  id: number;
  /** What it does, for people reading schema_migrations; not used to match. */
  name: string;
  up: string;
}

export const PG_MIGRATIONS: readonly PgMigration[] = [
  {
    id: 1,
    name: 'schema_of_sqlite_version_10',
    up: `
      CREATE TABLE connections (
        id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        name             TEXT COLLATE "C" NOT NULL UNIQUE,
        connection_type  TEXT COLLATE "C" NOT NULL,
        last_synced_at   TEXT COLLATE "C",
        last_error       TEXT COLLATE "C",
        last_error_at    TEXT COLLATE "C"
      );

      CREATE TABLE repos (
        repo_id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        repo_name        TEXT COLLATE "C" NOT NULL,
        display_name     TEXT COLLATE "C" NOT NULL,
        code_host_type   TEXT COLLATE "C" NOT NULL,
        connection_id    BIGINT REFERENCES connections (id) ON DELETE SET NULL,
        clone_url        TEXT COLLATE "C",
        external_web_url TEXT COLLATE "C",
        image_url        TEXT COLLATE "C",
        default_branch   TEXT COLLATE "C",
        is_fork          BOOLEAN NOT NULL,
        is_archived      BOOLEAN NOT NULL,
        visibility       TEXT COLLATE "C" NOT NULL CHECK (visibility IN ('public', 'private')),
        pushed_at        TEXT COLLATE "C",
        indexed_at       TEXT COLLATE "C",
        state            TEXT COLLATE "C" NOT NULL DEFAULT 'new'
                         CHECK (state IN ('new', 'indexed', 'failed', 'deleted')),
        last_error       TEXT COLLATE "C",
        last_error_at    TEXT COLLATE "C",
        last_success_at  TEXT COLLATE "C",
        failures         INTEGER NOT NULL DEFAULT 0 CHECK (failures >= 0),
        next_attempt_at  TEXT COLLATE "C",
        indexed_refs     JSON NOT NULL DEFAULT '[]'
      );
      CREATE UNIQUE INDEX repos_live_name ON repos (repo_name) WHERE state <> 'deleted';
      CREATE INDEX repos_connection ON repos (connection_id);

      CREATE TABLE users (
        id               TEXT COLLATE "C" PRIMARY KEY,
        email            TEXT COLLATE "C" NOT NULL,
        name             TEXT COLLATE "C" NOT NULL,
        role             TEXT COLLATE "C" NOT NULL CHECK (role IN ('owner', 'member')),
        suspended_at     TEXT COLLATE "C",
        created_at       TEXT COLLATE "C" NOT NULL,
        updated_at       TEXT COLLATE "C" NOT NULL,
        last_activity_at TEXT COLLATE "C",
        daily_limit      INTEGER CHECK (daily_limit IS NULL OR daily_limit >= 0)
      );
      CREATE UNIQUE INDEX users_email ON users (lower(email));

      CREATE TABLE api_keys (
        id               TEXT COLLATE "C" PRIMARY KEY,
        user_id          TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        name             TEXT COLLATE "C" NOT NULL,
        hash             TEXT COLLATE "C" NOT NULL UNIQUE,
        hint             TEXT COLLATE "C" NOT NULL,
        created_at       TEXT COLLATE "C" NOT NULL,
        last_used_at     TEXT COLLATE "C",
        revoked_at       TEXT COLLATE "C"
      );
      CREATE INDEX api_keys_user ON api_keys (user_id, created_at);

      CREATE TABLE license (
        id           INTEGER PRIMARY KEY CHECK (id = 1),
        text         TEXT COLLATE "C" NOT NULL,
        installed_at TEXT COLLATE "C" NOT NULL
      );

      CREATE TABLE scoped_tokens (
        id          TEXT COLLATE "C" PRIMARY KEY,
        user_id     TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        hash        TEXT COLLATE "C" NOT NULL UNIQUE,
        repo_ids    JSON NOT NULL,
        created_at  TEXT COLLATE "C" NOT NULL,
        expires_at  TEXT COLLATE "C" NOT NULL,
        revoked_at  TEXT COLLATE "C",
        api_key_id  TEXT COLLATE "C" REFERENCES api_keys (id) ON DELETE CASCADE
      );
      CREATE INDEX scoped_tokens_key ON scoped_tokens (api_key_id);
      CREATE INDEX scoped_tokens_user ON scoped_tokens (user_id, expires_at);

      CREATE TABLE request_counts (
        user_id  TEXT COLLATE "C" NOT NULL,
        day      TEXT COLLATE "C" NOT NULL,
        count    INTEGER NOT NULL CHECK (count >= 1),
        PRIMARY KEY (user_id, day)
      );

      CREATE TABLE oauth_clients (
        id               TEXT COLLATE "C" PRIMARY KEY,
        secret_hash      TEXT COLLATE "C",
        name             TEXT COLLATE "C" NOT NULL,
        redirect_uris    JSON NOT NULL,
        metadata         JSON NOT NULL,
        created_at       TEXT COLLATE "C" NOT NULL,
        registered_from  TEXT COLLATE "C"
      );
      CREATE INDEX oauth_clients_from ON oauth_clients (registered_from, created_at);
      CREATE INDEX oauth_clients_created ON oauth_clients (created_at);

      CREATE TABLE oauth_grants (
        id            TEXT COLLATE "C" PRIMARY KEY,
        client_id     TEXT COLLATE "C" NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
        user_id       TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        scope         TEXT COLLATE "C" NOT NULL,
        resource      TEXT COLLATE "C",
        created_at    TEXT COLLATE "C" NOT NULL,
        revoked_at    TEXT COLLATE "C",
        api_key_id    TEXT COLLATE "C" REFERENCES api_keys (id) ON DELETE CASCADE,
        last_used_at  TEXT COLLATE "C"
      );
      CREATE INDEX oauth_grants_client ON oauth_grants (client_id);
      CREATE INDEX oauth_grants_user ON oauth_grants (user_id);
      CREATE INDEX oauth_grants_key ON oauth_grants (api_key_id);

      CREATE TABLE oauth_codes (
        hash            TEXT COLLATE "C" PRIMARY KEY,
        client_id       TEXT COLLATE "C" NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
        user_id         TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        redirect_uri    TEXT COLLATE "C" NOT NULL,
        code_challenge  TEXT COLLATE "C" NOT NULL,
        scope           TEXT COLLATE "C" NOT NULL,
        resource        TEXT COLLATE "C",
        created_at      TEXT COLLATE "C" NOT NULL,
        expires_at      TEXT COLLATE "C" NOT NULL,
        used_at         TEXT COLLATE "C",
        grant_id        TEXT COLLATE "C" REFERENCES oauth_grants (id) ON DELETE SET NULL,
        api_key_id      TEXT COLLATE "C" REFERENCES api_keys (id) ON DELETE CASCADE
      );
      CREATE INDEX oauth_codes_client ON oauth_codes (client_id);
      CREATE INDEX oauth_codes_grant ON oauth_codes (grant_id);

      CREATE TABLE oauth_tokens (
        hash        TEXT COLLATE "C" PRIMARY KEY,
        grant_id    TEXT COLLATE "C" NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
        kind        TEXT COLLATE "C" NOT NULL CHECK (kind IN ('access', 'refresh')),
        created_at  TEXT COLLATE "C" NOT NULL,
        expires_at  TEXT COLLATE "C" NOT NULL,
        rotated_at  TEXT COLLATE "C",
        revoked_at  TEXT COLLATE "C"
      );
      CREATE INDEX oauth_tokens_grant ON oauth_tokens (grant_id);
      CREATE INDEX oauth_tokens_expiry ON oauth_tokens (expires_at);

      CREATE TABLE audit_events (
        id                   BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at                   TEXT COLLATE "C" NOT NULL,
        action               TEXT COLLATE "C" NOT NULL,
        outcome              TEXT COLLATE "C" NOT NULL CHECK (outcome IN ('success', 'failure')),
        actor_user_id        TEXT COLLATE "C",
        actor_kind           TEXT COLLATE "C" NOT NULL,
        actor_credential_id  TEXT COLLATE "C",
        target_type          TEXT COLLATE "C",
        target_id            TEXT COLLATE "C",
        source_address       TEXT COLLATE "C",
        details              JSON,
        CHECK ((target_type IS NULL) = (target_id IS NULL))
      );
      CREATE INDEX audit_events_at ON audit_events (at, id);
      CREATE INDEX audit_events_actor_user ON audit_events (actor_user_id, at);
      CREATE INDEX audit_events_actor_credential ON audit_events (actor_credential_id, at);
      CREATE INDEX audit_events_target ON audit_events (target_id, at);
      CREATE INDEX audit_events_action ON audit_events (action, at);
      CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'audit events are append-only';
      END
      $$;
      CREATE TRIGGER audit_events_append_only BEFORE UPDATE ON audit_events
        FOR EACH ROW EXECUTE FUNCTION audit_events_append_only();

      CREATE TABLE browser_sessions (
        id            TEXT COLLATE "C" PRIMARY KEY,
        user_id       TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        api_key_id    TEXT COLLATE "C" NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
        user_agent    TEXT COLLATE "C",
        created_at    TEXT COLLATE "C" NOT NULL,
        expires_at    TEXT COLLATE "C" NOT NULL,
        last_used_at  TEXT COLLATE "C",
        ended_at      TEXT COLLATE "C"
      );
      CREATE INDEX browser_sessions_user ON browser_sessions (user_id, expires_at);
      CREATE INDEX browser_sessions_key ON browser_sessions (api_key_id);
      CREATE INDEX browser_sessions_expiry ON browser_sessions (expires_at);

      CREATE TABLE secrets (
        name        TEXT COLLATE "C" PRIMARY KEY,
        value       TEXT COLLATE "C" NOT NULL,
        created_at  TEXT COLLATE "C" NOT NULL
      );
    `,
  },
  {
    id: 2,
    name: 'code_host_permissions',
    // SQLite migration 11's tables (pg-permissions.ts).
    up: `
      CREATE TABLE external_accounts (
        user_id       TEXT COLLATE "C" NOT NULL,
        connection    TEXT COLLATE "C" NOT NULL,
        account_id    TEXT COLLATE "C" NOT NULL,
        login         TEXT COLLATE "C" NOT NULL,
        email         TEXT COLLATE "C",
        sealed_token  TEXT COLLATE "C",
        linked_by     TEXT COLLATE "C" NOT NULL,
        linked_at     TEXT COLLATE "C" NOT NULL,
        PRIMARY KEY (user_id, connection),
        UNIQUE (connection, account_id)
      );
      CREATE TABLE repo_permissions (
        user_id  TEXT COLLATE "C" NOT NULL,
        repo_id  BIGINT NOT NULL,
        source   TEXT COLLATE "C" NOT NULL,
        PRIMARY KEY (user_id, repo_id, source)
      );
      CREATE INDEX repo_permissions_source ON repo_permissions (repo_id, source);
      CREATE TABLE account_permission_syncs (
        user_id     TEXT COLLATE "C" NOT NULL,
        connection  TEXT COLLATE "C" NOT NULL,
        synced_at   TEXT COLLATE "C",
        error       TEXT COLLATE "C",
        error_at    TEXT COLLATE "C",
        PRIMARY KEY (user_id, connection)
      );
      CREATE TABLE repo_permission_syncs (
        repo_id    BIGINT PRIMARY KEY,
        synced_at  TEXT COLLATE "C",
        error      TEXT COLLATE "C",
        error_at   TEXT COLLATE "C"
      );
    `,
  },
  {
    id: 3,
    name: 'repository_topics_and_search_contexts',
    // SQLite's migration 12 (migrations.ts), in PostgreSQL's terms.
    up: `
      ALTER TABLE repos ADD COLUMN topics JSON NOT NULL DEFAULT '[]';

      CREATE TABLE search_contexts (
        name        TEXT COLLATE "C" PRIMARY KEY,
        definition  JSON NOT NULL,
        created_at  TEXT COLLATE "C" NOT NULL,
        updated_at  TEXT COLLATE "C" NOT NULL
      );

      CREATE TABLE default_search_contexts (
        user_id  TEXT COLLATE "C" PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
        context  TEXT COLLATE "C" NOT NULL,
        set_at   TEXT COLLATE "C" NOT NULL
      );
      CREATE INDEX default_search_contexts_context ON default_search_contexts (context);
    `,
  },
  {
    id: 4,
    name: 'single_sign_on',
    // SQLite's migration 13 (migrations.ts), in PostgreSQL's terms: browser_sessions is
    // altered in place rather than rebuilt.
    up: `
      CREATE TABLE sign_in_identities (
        id                 TEXT COLLATE "C" PRIMARY KEY,
        user_id            TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        issuer             TEXT COLLATE "C" NOT NULL,
        subject            TEXT COLLATE "C" NOT NULL,
        provider           TEXT COLLATE "C" NOT NULL,
        email              TEXT COLLATE "C",
        created_at         TEXT COLLATE "C" NOT NULL,
        last_signed_in_at  TEXT COLLATE "C" NOT NULL,
        UNIQUE (issuer, subject)
      );
      CREATE INDEX sign_in_identities_user ON sign_in_identities (user_id);

      CREATE TABLE sign_in_flows (
        state_hash  TEXT COLLATE "C" PRIMARY KEY,
        expires_at  TEXT COLLATE "C" NOT NULL
      );
      CREATE INDEX sign_in_flows_expiry ON sign_in_flows (expires_at);

      ALTER TABLE browser_sessions ALTER COLUMN api_key_id DROP NOT NULL;
      ALTER TABLE browser_sessions ADD COLUMN identity_id TEXT COLLATE "C" REFERENCES sign_in_identities (id) ON DELETE CASCADE;
      ALTER TABLE browser_sessions ADD CONSTRAINT browser_sessions_origin CHECK ((api_key_id IS NULL) <> (identity_id IS NULL));
      CREATE INDEX browser_sessions_identity ON browser_sessions (identity_id);
    `,
  },
  {
    id: 5,
    name: 'repository_events',
    // SQLite's migration 14 (migrations.ts), in PostgreSQL's terms.
    up: `
      ALTER TABLE repos ADD COLUMN last_event_at TEXT COLLATE "C";
      ALTER TABLE repos ADD COLUMN last_event_synced_at TEXT COLLATE "C";
    `,
  },
  {
    id: 6,
    name: 'watches',
    // SQLite's migration 15 (migrations.ts), in PostgreSQL's terms.
    up: `
      CREATE TABLE watches (
        id                BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id           TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        name              TEXT NOT NULL,
        query             TEXT NOT NULL,
        is_regex          BOOLEAN NOT NULL,
        case_sensitive    BOOLEAN NOT NULL,
        url               TEXT,
        salt              TEXT NOT NULL,
        created_at        TEXT COLLATE "C" NOT NULL,
        last_changed_at   TEXT COLLATE "C",
        delivered         BIGINT NOT NULL DEFAULT 0,
        dead_letters      BIGINT NOT NULL DEFAULT 0
      );
      CREATE INDEX watches_user ON watches (user_id);
      CREATE TABLE watch_matches (
        watch_id  BIGINT NOT NULL REFERENCES watches (id) ON DELETE CASCADE,
        repo_id   INTEGER NOT NULL,
        matches   TEXT NOT NULL,
        PRIMARY KEY (watch_id, repo_id)
      );
      CREATE INDEX watch_matches_repo ON watch_matches (repo_id);
      CREATE TABLE watch_events (
        id               BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        watch_id         BIGINT NOT NULL REFERENCES watches (id) ON DELETE CASCADE,
        payload          TEXT NOT NULL,
        created_at       TEXT COLLATE "C" NOT NULL,
        state            TEXT COLLATE "C" NOT NULL,
        attempts         INTEGER NOT NULL DEFAULT 0,
        next_attempt_at  TEXT COLLATE "C",
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

/**
 * The key of the advisory lock that serializes migrations: 'trawl' and 'm' in ASCII.
 * Advisory locks are per database, so this only ever meets another trawl migrating the same one.
 */
const MIGRATION_LOCK = 0x747261776c6d;

const CREATE_SCHEMA_MIGRATIONS = `
  CREATE TABLE IF NOT EXISTS schema_migrations (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TEXT NOT NULL
  )`;

/** The highest migration id recorded in the connection's database (0 when none, or no table yet). */
export async function pgSchemaVersion(client: pg.ClientBase): Promise<number> {
  const { rows } = await client.query<{ present: boolean }>("SELECT to_regclass('schema_migrations') IS NOT NULL AS present");
  if (!rows[0]!.present) return 0;
  const version = await client.query<{ version: number }>('SELECT coalesce(max(id), 0)::integer AS version FROM schema_migrations');
  return version.rows[0]!.version;
}

function checkList(migrations: readonly PgMigration[]): void {
  migrations.forEach((m, i) => {
    if (m.id !== i + 1) {
      throw new Error(`migration list is malformed: entry ${i} has id ${m.id}, expected ${i + 1} (ids are consecutive from 1)`);
    }
  });
}

/**
 * Brings the database of `client` (a connection of its own, in no transaction) up to the
 * last of `migrations` (PG_MIGRATIONS unless a test passes its own); returns the ids it
 * applied, [] when it was already current. `where` names the database in errors. Throws
 * SchemaTooNewError for a database of a newer trawl, MigrationError when a migration fails
 * (the ones before it stay applied).
 */
export async function migratePg(client: pg.ClientBase, where: string, migrations: readonly PgMigration[] = PG_MIGRATIONS): Promise<number[]> {
  checkList(migrations);
  const known = migrations.length;
  const checked = (version: number): number => {
    if (version > known) throw new SchemaTooNewError(where, version, known);
    return version;
  };

  // The common case, an up-to-date database, takes no lock and writes nothing.
  if (checked(await pgSchemaVersion(client)) === known) return [];

  const applied: number[] = [];
  for (const migration of migrations) {
    await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
    try {
      // Held until COMMIT or ROLLBACK; another process migrating waits here, then re-reads.
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      await client.query(CREATE_SCHEMA_MIGRATIONS);
      const version = checked(await pgSchemaVersion(client));
      if (version >= migration.id) {
        await client.query('COMMIT');
        continue;
      }
      try {
        await client.query(migration.up);
      } catch (err) {
        throw new MigrationError(migration, version, err);
      }
      await client.query('INSERT INTO schema_migrations (id, name, applied_at) VALUES ($1, $2, $3)', [migration.id, migration.name, new Date().toISOString()]);
      await client.query('COMMIT');
      applied.push(migration.id);
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    }
  }
  return applied;
}
