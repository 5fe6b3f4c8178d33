// The SQLite store: the conformance suite on ':memory:' and on a file, then what only
// SQLite has: versioned migrations, pragmas, AUTOINCREMENT and several processes on a file.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import type BetterSqlite3 from 'better-sqlite3';
import { MIGRATIONS, MigrationError, SchemaTooNewError, migrate, schemaVersion, type Migration } from '../../daemon/store/migrations.ts';
import { STORE_FILE, openStore } from '../../daemon/store/open.ts';
import { BUSY_TIMEOUT_MS, openSqliteDatabase, openSqliteStore } from '../../daemon/store/sqlite-store.ts';
import { storeConformance } from './conformance.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), 'trawl-store-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

let fileCount = 0;
/** A path for a new database file in the temp directory. */
const newFile = (): string => join(tmp, `db-${++fileCount}.db`);

/** A database file with its WAL companions. */
function removeDb(file: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
}

storeConformance('SqliteStore on :memory:', () => openSqliteStore(':memory:'), undefined, { sharedStorage: false });

let conformanceFile = newFile();
storeConformance(
  'SqliteStore on a file',
  () => openSqliteStore(conformanceFile),
  () => {
    removeDb(conformanceFile);
    conformanceFile = newFile();
  },
);

function appliedMigrations(db: BetterSqlite3.Database): Array<{ id: number; name: string; applied_at: string }> {
  return db.prepare('SELECT id, name, applied_at FROM schema_migrations ORDER BY id').all() as Array<{
    id: number;
    name: string;
    applied_at: string;
  }>;
}

function tableExists(db: BetterSqlite3.Database, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

describe('migrations', () => {
  test('a fresh database gets every migration once, in order', () => {
    for (const path of [':memory:', newFile()]) {
      const db = openSqliteDatabase(path);
      try {
        assert.deepEqual(
          appliedMigrations(db).map(({ id, name }) => ({ id, name })),
          MIGRATIONS.map(({ id, name }) => ({ id, name })),
        );
        assert.equal(schemaVersion(db), MIGRATIONS.length);
        assert.ok(tableExists(db, 'repos') && tableExists(db, 'connections'));
      } finally {
        db.close();
      }
    }
  });

  test('reopening a current database applies nothing', async () => {
    const file = newFile();
    const first = openSqliteDatabase(file);
    const recorded = appliedMigrations(first);
    assert.deepEqual(migrate(first), [], 'migrate on a current database is a no-op');
    first.close();

    await openSqliteStore(file).close();
    const again = openSqliteDatabase(file);
    try {
      assert.deepEqual(migrate(again), []);
      assert.deepEqual(appliedMigrations(again), recorded, 'same rows, same applied_at');
    } finally {
      again.close();
    }
  });

  test('a database written by a newer trawl is refused, and left as it was', () => {
    const file = newFile();
    const db = openSqliteDatabase(file);
    const future = MIGRATIONS.length + 1;
    db.prepare('INSERT INTO schema_migrations (id, name, applied_at) VALUES (?, ?, ?)').run(future, 'from_the_future', new Date().toISOString());
    const before = appliedMigrations(db);
    db.close();

    const refused = (err: unknown): boolean => {
      assert.ok(err instanceof SchemaTooNewError, String(err));
      assert.equal(err.databaseVersion, future);
      assert.equal(err.knownVersion, MIGRATIONS.length);
      assert.match(err.message, new RegExp(`schema version ${future}\\b`));
      assert.match(err.message, /newer trawl/);
      assert.ok(err.message.includes(file), 'names the file');
      return true;
    };
    assert.throws(() => openSqliteStore(file), refused);
    const raw = new Database(file);
    try {
      assert.throws(() => migrate(raw), refused);
      assert.deepEqual(appliedMigrations(raw), before);
    } finally {
      raw.close();
    }
  });

  test('a failing migration rolls back and leaves the previous version', () => {
    const good: Migration[] = [
      { id: 1, name: 'create_t', up: 'CREATE TABLE t (x INTEGER)' },
      {
        id: 2,
        name: 'fill_t',
        up: (db) => {
          db.prepare('INSERT INTO t VALUES (?)').run(2);
        },
      },
    ];
    const badSql: Migration = {
      id: 3,
      name: 'broken_sql',
      up: 'CREATE TABLE t3 (y); INSERT INTO t VALUES (3); SELECT * FROM no_such_table;',
    };
    const badFn: Migration = {
      id: 3,
      name: 'broken_function',
      up: (db) => {
        db.exec('CREATE TABLE t3 (y); INSERT INTO t VALUES (3)');
        throw new Error('deliberate');
      },
    };
    for (const bad of [badSql, badFn]) {
      const db = new Database(':memory:');
      try {
        assert.throws(
          () => migrate(db, [...good, bad]),
          (err: unknown) => {
            assert.ok(err instanceof MigrationError, String(err));
            assert.equal(err.migration, bad);
            assert.match(err.message, new RegExp(`migration 3 \\(${bad.name}\\) failed, the database stays at version 2`));
            return true;
          },
        );
        assert.equal(schemaVersion(db), 2);
        assert.ok(!tableExists(db, 't3'), 'the failed migration left no table');
        assert.deepEqual(db.prepare('SELECT x FROM t').pluck().all(), [2], 'and no rows');
        assert.ok(!db.inTransaction);

        // Fixed, it applies on the next open, and only it.
        assert.deepEqual(migrate(db, [...good, { id: 3, name: 'fixed', up: 'CREATE TABLE t3 (y)' }]), [3]);
        assert.equal(schemaVersion(db), 3);
      } finally {
        db.close();
      }
    }
  });

  test('a migration that leaves a broken foreign key is rolled back; enforcement is back on after', () => {
    const db = new Database(':memory:');
    try {
      db.pragma('foreign_keys = ON');
      const orphan: Migration = {
        id: MIGRATIONS.length + 1,
        name: 'orphan_repo',
        up: `INSERT INTO repos (repo_name, display_name, code_host_type, connection_id, is_fork, is_archived, visibility)
             VALUES ('x/y', 'y', 'github', 999, 0, 0, 'public')`,
      };
      assert.throws(() => migrate(db, [...MIGRATIONS, orphan]), /foreign key violation/);
      assert.equal(schemaVersion(db), MIGRATIONS.length);
      assert.equal(db.prepare('SELECT count(*) FROM repos').pluck().get(), 0);
      assert.equal(db.pragma('foreign_keys', { simple: true }), 1);
    } finally {
      db.close();
    }
  });

  test('a migration list whose ids are not 1, 2, 3, ... is rejected before touching the database', () => {
    const db = new Database(':memory:');
    try {
      assert.throws(
        () =>
          migrate(db, [
            { id: 1, name: 'a', up: 'CREATE TABLE a (x)' },
            { id: 3, name: 'c', up: 'CREATE TABLE c (x)' },
          ]),
        /entry 1 has id 3, expected 2/,
      );
      assert.ok(!tableExists(db, 'schema_migrations') && !tableExists(db, 'a'));
    } finally {
      db.close();
    }
  });

  test('credential origins: scoped tokens and OAuth grants made before keys were recorded are ended by the upgrade', async () => {
    // Found by name, so that renumbering at a merge does not break the test.
    const at = MIGRATIONS.findIndex((m) => m.name === 'credential_origins_and_browser_sessions');
    assert.ok(at > 0);
    const file = newFile();
    const db = new Database(file);
    try {
      migrate(db, MIGRATIONS.slice(0, at));
      const future = new Date(Date.now() + 3_600_000).toISOString();
      const past = '2024-01-01T00:00:00.000Z';
      db.exec(`
        INSERT INTO users (id, email, name, role, created_at, updated_at) VALUES ('usr_1', 'a@b.c', 'A', 'member', '${past}', '${past}');
        INSERT INTO api_keys (id, user_id, name, hash, hint, created_at) VALUES ('key_1', 'usr_1', 'k', 'h', 'svk_', '${past}');
        INSERT INTO scoped_tokens (id, user_id, hash, repo_ids, created_at, expires_at) VALUES
          ('sat_live', 'usr_1', 'h1', '[1]', '${past}', '${future}'),
          ('sat_expired', 'usr_1', 'h2', '[1]', '${past}', '${past}');
        INSERT INTO scoped_tokens (id, user_id, hash, repo_ids, created_at, expires_at, revoked_at) VALUES ('sat_revoked', 'usr_1', 'h3', '[1]', '${past}', '${future}', '${past}');
        INSERT INTO oauth_clients (id, name, redirect_uris, metadata, created_at) VALUES ('oac_1', 'c', '[]', '{}', '${past}');
        INSERT INTO oauth_grants (id, client_id, user_id, scope, created_at) VALUES ('ogr_live', 'oac_1', 'usr_1', 'search', '${past}');
        INSERT INTO oauth_grants (id, client_id, user_id, scope, created_at, revoked_at) VALUES ('ogr_revoked', 'oac_1', 'usr_1', 'search', '${past}', '${past}');
        INSERT INTO oauth_tokens (hash, grant_id, kind, created_at, expires_at) VALUES ('rt', 'ogr_live', 'refresh', '${past}', '${future}');
      `);
      const before = Date.now();
      db.pragma('foreign_keys = ON');
      assert.deepEqual(
        migrate(db),
        MIGRATIONS.slice(at).map((m) => m.id),
      );
      const revokedAt = (table: string, id: string) => db.prepare(`SELECT revoked_at FROM ${table} WHERE id = ?`).pluck().get(id) as string | null;
      // Each UPDATE reads the clock itself: the two may differ by a millisecond.
      const atUpgrade = (t: string | null) => {
        assert.match(t ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, 'ISO 8601 like every other time in the store');
        assert.ok(Date.parse(t!) >= before - 1000 && Date.parse(t!) <= Date.now() + 1000, `${t}: revoked at the upgrade`);
      };
      atUpgrade(revokedAt('scoped_tokens', 'sat_live'));
      assert.equal(revokedAt('scoped_tokens', 'sat_expired'), null, 'an expired token is left alone');
      assert.equal(revokedAt('scoped_tokens', 'sat_revoked'), past, 'a revoked one keeps its time');
      atUpgrade(revokedAt('oauth_grants', 'ogr_live'));
      assert.equal(revokedAt('oauth_grants', 'ogr_revoked'), past);
      db.close();
      // Through the store: the old grant is no longer live, and its refresh token does not rotate.
      const store = openSqliteStore(file);
      try {
        assert.deepEqual(await store.oauth.listLiveGrants(new Date().toISOString()), []);
        assert.equal(await store.oauth.rotateRefreshToken('rt', [], new Date().toISOString()), false);
        assert.deepEqual(await store.listLiveScopedTokens('usr_1', new Date().toISOString()), []);
        assert.ok(!('apiKeyId' in (await store.getScopedToken('sat_live'))!), 'no key is made up for it');
      } finally {
        await store.close();
      }
    } finally {
      if (db.open) db.close();
    }
  });

  test('single sign-on: the rebuilt browser_sessions keeps every session of before; a session names a key or an identity, exactly one', async () => {
    // Found by name, so that renumbering at a merge does not break the test.
    const at = MIGRATIONS.findIndex((m) => m.name === 'single_sign_on');
    assert.ok(at > 0);
    const db = new Database(newFile());
    try {
      migrate(db, MIGRATIONS.slice(0, at));
      const t = '2024-01-01T00:00:00.000Z';
      db.exec(`
        INSERT INTO users (id, email, name, role, created_at, updated_at) VALUES ('usr_1', 'a@b.c', 'A', 'member', '${t}', '${t}');
        INSERT INTO api_keys (id, user_id, name, hash, hint, created_at) VALUES ('key_1', 'usr_1', 'k', 'h', 'svk_', '${t}');
        INSERT INTO browser_sessions (id, user_id, api_key_id, user_agent, created_at, expires_at, last_used_at, ended_at) VALUES
          ('ses_1', 'usr_1', 'key_1', 'UA', '${t}', '${t}', '${t}', NULL),
          ('ses_2', 'usr_1', 'key_1', NULL, '${t}', '${t}', NULL, '${t}');
      `);
      const before = db.prepare('SELECT * FROM browser_sessions ORDER BY id').all();
      db.pragma('foreign_keys = ON');
      assert.deepEqual(
        migrate(db),
        MIGRATIONS.slice(at).map((m) => m.id),
      );
      assert.deepEqual(
        db.prepare('SELECT * FROM browser_sessions ORDER BY id').all(),
        before.map((row) => ({ ...(row as object), identity_id: null })),
      );
      const indexes = db
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'browser_sessions' AND sql IS NOT NULL ORDER BY name")
        .pluck()
        .all();
      assert.deepEqual(indexes, ['browser_sessions_expiry', 'browser_sessions_identity', 'browser_sessions_key', 'browser_sessions_user']);
      db.exec(
        `INSERT INTO sign_in_identities (id, user_id, issuer, subject, provider, created_at, last_signed_in_at) VALUES ('sso_1', 'usr_1', 'https://i', 's', 'p', '${t}', '${t}')`,
      );
      const session = db.prepare(
        `INSERT INTO browser_sessions (id, user_id, api_key_id, identity_id, created_at, expires_at) VALUES (?, 'usr_1', ?, ?, '${t}', '${t}')`,
      );
      session.run('ses_3', null, 'sso_1');
      assert.throws(() => session.run('ses_4', 'key_1', 'sso_1'), /CHECK constraint failed/);
      assert.throws(() => session.run('ses_5', null, null), /CHECK constraint failed/);
      assert.throws(() => session.run('ses_6', null, 'sso_missing'), /FOREIGN KEY constraint failed/);
      // An identity goes with its user, and its sessions with it.
      db.exec("DELETE FROM users WHERE id = 'usr_1'");
      assert.equal(db.prepare('SELECT count(*) FROM sign_in_identities').pluck().get(), 0);
      assert.equal(db.prepare('SELECT count(*) FROM browser_sessions').pluck().get(), 0);
    } finally {
      db.close();
    }
  });
});

describe('SQLite specifics', () => {
  test('connections use WAL, NORMAL sync, foreign keys and a busy timeout', () => {
    const file = newFile();
    const db = openSqliteDatabase(file);
    try {
      assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
      assert.equal(db.pragma('synchronous', { simple: true }), 1); // NORMAL
      assert.equal(db.pragma('foreign_keys', { simple: true }), 1);
      assert.equal(db.pragma('busy_timeout', { simple: true }), BUSY_TIMEOUT_MS);
    } finally {
      db.close();
    }
  });

  test('AUTOINCREMENT: an id is not reused even when its row is physically deleted', async () => {
    const file = newFile();
    let store = openSqliteStore(file);
    await store.upsertRepo({
      repoName: 'github.com/o/a',
      displayName: 'o/a',
      codeHostType: 'github',
      isFork: false,
      isArchived: false,
      visibility: 'public',
    });
    const b = await store.upsertRepo({
      repoName: 'github.com/o/b',
      displayName: 'o/b',
      codeHostType: 'github',
      isFork: false,
      isArchived: false,
      visibility: 'public',
    });
    const conn = await store.upsertConnection('c', 'github');
    await store.close();

    // The Store never deletes a repository row, but a hand-edited database might.
    const raw = new Database(file);
    raw.prepare('DELETE FROM repos WHERE repo_id = ?').run(b.repoId);
    raw.prepare('DELETE FROM connections WHERE id = ?').run(conn.id);
    raw.close();

    store = openSqliteStore(file);
    try {
      const c = await store.upsertRepo({
        repoName: 'github.com/o/c',
        displayName: 'o/c',
        codeHostType: 'github',
        isFork: false,
        isArchived: false,
        visibility: 'public',
      });
      assert.ok(c.repoId > b.repoId, `${c.repoId} > ${b.repoId}`);
      assert.ok((await store.upsertConnection('d', 'github')).id > conn.id);
    } finally {
      await store.close();
    }
  });

  test('audit events are append-only: an UPDATE is refused; a prune (DELETE) is not', async () => {
    const file = newFile();
    const store = openSqliteStore(file);
    const event = await store.audit.append({
      at: '2026-01-01T00:00:00.000Z',
      action: 'user.added',
      outcome: 'success',
      actor: { credentialKind: 'cli', credentialId: 'root' },
    });
    await store.close();
    const db = new Database(file);
    try {
      assert.throws(() => db.prepare("UPDATE audit_events SET action = 'user.suspended' WHERE id = ?").run(event.id), /audit events are append-only/);
      assert.throws(() => db.prepare('UPDATE audit_events SET details = NULL').run(), /append-only/);
      assert.throws(
        () => db.prepare("INSERT INTO audit_events (at, action, outcome, actor_kind, details) VALUES ('x', 'y', 'success', 'cli', 'not json')").run(),
        /CHECK constraint/,
      );
      assert.throws(
        () => db.prepare("INSERT INTO audit_events (at, action, outcome, actor_kind, target_type) VALUES ('x', 'y', 'success', 'cli', 'user')").run(),
        /CHECK constraint/,
        'a target has a type and an id, or neither',
      );
      assert.equal(db.prepare('SELECT action FROM audit_events WHERE id = ?').pluck().get(event.id), 'user.added');
      assert.equal(db.prepare('DELETE FROM audit_events').run().changes, 1);
    } finally {
      db.close();
    }
  });

  test('openStore creates the data directory and trawl.db', async () => {
    const dataDir = join(tmp, 'data', 'nested');
    const store = openStore(dataDir);
    try {
      assert.ok(existsSync(join(dataDir, STORE_FILE)));
      await store.upsertConnection('x', 'github');
    } finally {
      await store.close();
    }
    const again = openStore(dataDir);
    try {
      assert.equal((await again.listConnections()).length, 1);
    } finally {
      await again.close();
    }
  });

  test('processes racing on one new file: migrations run once, each name gets one id', async () => {
    const file = newFile();
    const names = Array.from({ length: 150 }, (_, i) => `github.com/race/r${String(i).padStart(3, '0')}`);
    const processes = 4;
    // Each process upserts every name, starting at a different point, after a common start
    // time, so that they open the fresh file and write to it at the same moment.
    const startAt = Date.now() + 2500;
    const child = `
      const { openSqliteStore } = await import(${JSON.stringify(new URL('../../daemon/store/sqlite-store.ts', import.meta.url).href)});
      const [file, startAt, offset, names] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3]), JSON.parse(process.argv[4])];
      while (Date.now() < startAt) {}
      const store = openSqliteStore(file);
      const ids = { connection: store.upsertConnection('shared', 'github').id };
      for (let i = 0; i < names.length; i++) {
        const repoName = names[(i + offset) % names.length];
        ids[repoName] = store.upsertRepo({ repoName, displayName: repoName, codeHostType: 'github',
          isFork: false, isArchived: false, visibility: 'public' }).repoId;
      }
      store.close();
      process.stdout.write(JSON.stringify(ids));
    `;
    const run = promisify(execFile);
    const results = await Promise.all(
      Array.from({ length: processes }, (_, p) =>
        run(
          process.execPath,
          [
            '--import',
            'tsx',
            '--input-type=module',
            '-e',
            child,
            file,
            String(startAt),
            String(Math.floor((p * names.length) / processes)),
            JSON.stringify(names),
          ],
          { cwd: ROOT, timeout: 60_000 },
        ),
      ),
    );
    const seen = results.map((r) => JSON.parse(r.stdout) as Record<string, number>);
    for (const ids of seen.slice(1)) assert.deepEqual(ids, seen[0], 'every process got the same id for each name');

    const db = new Database(file, { readonly: true });
    try {
      assert.deepEqual(
        appliedMigrations(db).map((m) => m.id),
        MIGRATIONS.map((m) => m.id),
      );
      assert.equal(db.prepare('SELECT count(*) FROM repos').pluck().get(), names.length);
      assert.equal(db.prepare('SELECT count(DISTINCT repo_id) FROM repos').pluck().get(), names.length);
      assert.equal(db.prepare('SELECT count(*) FROM connections').pluck().get(), 1);
    } finally {
      db.close();
    }
  });
});

test("an old data dir's repos.json is imported with its ids, and new ids start past them", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-legacy-'));
  try {
    writeFileSync(
      join(dir, 'repos.json'),
      JSON.stringify({
        nextId: 5,
        repos: [
          { id: 1, name: 'github.com/a/one' },
          { id: 3, name: 'two' },
        ],
      }),
    );
    const store = openStore(dir);
    try {
      assert.equal((await store.getRepoByName('github.com/a/one'))?.repoId, 1);
      assert.equal((await store.getRepoByName('two'))?.repoId, 3);
      assert.equal(
        (
          await store.upsertRepo({
            repoName: 'new',
            displayName: 'new',
            codeHostType: 'genericGitHost',
            isFork: false,
            isArchived: false,
            visibility: 'public',
          })
        ).repoId,
        5,
      );
    } finally {
      await store.close();
    }
    assert.equal(existsSync(join(dir, 'repos.json')), false);
    assert.equal(existsSync(join(dir, 'repos.json.imported')), true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
