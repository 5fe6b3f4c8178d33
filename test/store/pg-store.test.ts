// The PostgreSQL store: the conformance suite, each test on a database of its own, then
// what only PostgreSQL has: versioned migrations under concurrent openers, a lazy
// connection, and several processes (pools) racing on one database.
//
// The server is a private one (test/helpers/postgres.ts) or $TRAWL_TEST_POSTGRES_URL's;
// without either the tests skip, unless TRAWL_REQUIRE_POSTGRES=1.

import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { MigrationError, SchemaTooNewError } from '../../daemon/store/migrations.ts';
import { PG_MIGRATIONS, migratePg, pgSchemaVersion, type PgMigration } from '../../daemon/store/pg-migrations.ts';
import { connectPgStore, openPgStore } from '../../daemon/store/pg-store.ts';
import type { RepoFields, Store } from '../../daemon/store/store.ts';
import { startTestPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { storeConformance } from './conformance.ts';

// Started before the tests are declared, so that they know whether to skip.
const started = await startTestPostgres();
const server: TestPostgres | undefined = 'skip' in started ? undefined : started;
const skip = 'skip' in started ? started.skip : undefined;
after(async () => {
  await server?.stop();
});

const T1 = '2024-01-02T03:04:05.000Z';

function fields(repoName: string, extra: Partial<RepoFields> = {}): RepoFields {
  return { repoName, displayName: repoName, codeHostType: 'github', isFork: false, isArchived: false, visibility: 'public', ...extra };
}

/** A raw connection to `url`, ended after `fn`. */
async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A fresh database for one test, dropped after it with the stores it opened. */
async function freshDatabase(fn: (url: string, open: () => Promise<Store>) => Promise<void>): Promise<void> {
  const url = await server!.newDatabase();
  const stores: Store[] = [];
  try {
    await fn(url, async () => {
      const store = await connectPgStore(url);
      stores.push(store);
      return store;
    });
  } finally {
    for (const s of stores) await s.close();
    await server!.dropDatabase(url);
  }
}

if (server !== undefined) {
  // Every test of the suite on a new database: made at the test's first open (cleanup is
  // synchronous, open is not), the previous one dropped then, its stores being closed.
  let current: Promise<string> | undefined;
  const used: Promise<string>[] = [];
  storeConformance(
    'PgStore',
    async () => {
      if (current === undefined) {
        for (const old of used.splice(0)) await server.dropDatabase(await old);
        current = server.newDatabase();
        used.push(current);
      }
      return await connectPgStore(await current);
    },
    () => {
      current = undefined;
    },
  );
  after(async () => {
    for (const old of used.splice(0)) await server.dropDatabase(await old).catch(() => {});
  });
} else {
  test('PgStore conformance', { skip }, () => {});
}

describe('PostgreSQL migrations', { skip }, () => {
  test(server?.startupMs ? `the private server started in ${server.startupMs} ms` : "the server is $TRAWL_TEST_POSTGRES_URL's", () => {});

  test('two stores opening a fresh database at once: every migration once, in order; both work', async () => {
    await freshDatabase(async (url, open) => {
      const [a, b] = await Promise.all([open(), open()]);
      const rows = await withClient(url, async (c) => (await c.query('SELECT id, name FROM schema_migrations ORDER BY id')).rows);
      assert.deepEqual(
        rows,
        PG_MIGRATIONS.map(({ id, name }) => ({ id, name })),
      );
      const r = await a.upsertRepo(fields('github.com/a/b'));
      assert.deepEqual(await b.getRepo(r.repoId), r);
    });
  });

  test('many openers at once, through lazy stores: no opener fails on a half-made schema', async () => {
    await freshDatabase(async (url) => {
      const stores = Array.from({ length: 6 }, () => openPgStore(url, { poolSize: 2 }));
      try {
        const users = await Promise.all(stores.map((s, i) => s.createUser({ email: `u${i}@example.com`, name: 'u', role: 'member' }, T1)));
        assert.equal(new Set(users.map((u) => u.id)).size, 6);
        await withClient(url, async (c) => assert.equal(await pgSchemaVersion(c), PG_MIGRATIONS.length));
      } finally {
        for (const s of stores) await s.close();
      }
    });
  });

  test('reopening a current database applies nothing', async () => {
    await freshDatabase(async (url, open) => {
      await open();
      const before = await withClient(url, async (c) => (await c.query('SELECT * FROM schema_migrations ORDER BY id')).rows);
      await withClient(url, async (c) => assert.deepEqual(await migratePg(c, 'test'), []));
      await open();
      const again = await withClient(url, async (c) => (await c.query('SELECT * FROM schema_migrations ORDER BY id')).rows);
      assert.deepEqual(again, before, 'same rows, same applied_at');
    });
  });

  test('a database written by a newer trawl is refused, on the first call and by connectPgStore, and left as it was', async () => {
    await freshDatabase(async (url, open) => {
      await open();
      const future = PG_MIGRATIONS.length + 1;
      await withClient(url, (c) => c.query('INSERT INTO schema_migrations (id, name, applied_at) VALUES ($1, $2, $3)', [future, 'from_the_future', T1]));
      const refused = (err: unknown): boolean => {
        assert.ok(err instanceof SchemaTooNewError, String(err));
        assert.equal(err.databaseVersion, future);
        assert.equal(err.knownVersion, PG_MIGRATIONS.length);
        assert.match(err.message, /newer trawl/);
        assert.match(err.message, /PostgreSQL database "trawl_test_/);
        return true;
      };
      const lazy = openPgStore(url);
      try {
        await assert.rejects(() => lazy.listRepos(), refused);
        await assert.rejects(() => lazy.atomically(async () => 1), refused, 'every call, again');
      } finally {
        await lazy.close();
      }
      await assert.rejects(() => connectPgStore(url), refused);
      await withClient(url, async (c) => assert.equal(await pgSchemaVersion(c), future));
    });
  });

  test('single sign-on: browser sessions of before keep their rows; a session names a key or an identity, exactly one', async () => {
    await freshDatabase(async (url) => {
      // Found by name, so that renumbering at a merge does not break the test.
      const at = PG_MIGRATIONS.findIndex((m) => m.name === 'single_sign_on');
      assert.ok(at > 0);
      await withClient(url, async (c) => {
        await migratePg(c, 'test', PG_MIGRATIONS.slice(0, at));
        await c.query(`
          INSERT INTO users (id, email, name, role, created_at, updated_at) VALUES ('usr_1', 'a@b.c', 'A', 'member', '${T1}', '${T1}');
          INSERT INTO api_keys (id, user_id, name, hash, hint, created_at) VALUES ('key_1', 'usr_1', 'k', 'h', 'svk_', '${T1}');
          INSERT INTO browser_sessions (id, user_id, api_key_id, user_agent, created_at, expires_at) VALUES ('ses_1', 'usr_1', 'key_1', 'UA', '${T1}', '${T1}');
        `);
        await migratePg(c, 'test');
        assert.deepEqual((await c.query('SELECT id, api_key_id, identity_id, user_agent FROM browser_sessions')).rows, [
          { id: 'ses_1', api_key_id: 'key_1', identity_id: null, user_agent: 'UA' },
        ]);
        await c.query(
          `INSERT INTO sign_in_identities (id, user_id, issuer, subject, provider, created_at, last_signed_in_at) VALUES ('sso_1', 'usr_1', 'https://i', 's', 'p', '${T1}', '${T1}')`,
        );
        const session = (id: string, key: string | null, identity: string | null) =>
          c.query(
            `INSERT INTO browser_sessions (id, user_id, api_key_id, identity_id, created_at, expires_at) VALUES ($1, 'usr_1', $2, $3, '${T1}', '${T1}')`,
            [id, key, identity],
          );
        await session('ses_2', null, 'sso_1');
        await assert.rejects(() => session('ses_3', 'key_1', 'sso_1'), /browser_sessions_origin/);
        await assert.rejects(() => session('ses_4', null, null), /browser_sessions_origin/);
      });
    });
  });

  test('a failing migration rolls back whole and leaves the previous version', async () => {
    await freshDatabase(async (url, open) => {
      await open();
      const broken: PgMigration[] = [
        ...PG_MIGRATIONS,
        { id: PG_MIGRATIONS.length + 1, name: 'broken', up: 'CREATE TABLE half_made (a integer); SELECT 1 / 0' },
      ];
      await withClient(url, async (c) => {
        await assert.rejects(
          () => migratePg(c, 'test', broken),
          (err: unknown) =>
            err instanceof MigrationError &&
            err.migration.name === 'broken' &&
            new RegExp(`stays at version ${PG_MIGRATIONS.length}\\b.*division by zero`).test(err.message),
        );
        assert.equal(await pgSchemaVersion(c), PG_MIGRATIONS.length);
        assert.equal((await c.query("SELECT to_regclass('half_made') AS t")).rows[0].t, null, 'its table is gone with it');
      });
      await assert.rejects(() => withClient(url, (c) => migratePg(c, 'test', [{ id: 2, name: 'x', up: 'SELECT 1' }])), /malformed: entry 0 has id 2/);
    });
  });

  test('an unreachable server: openPgStore returns at once; each call rejects naming the address, never the password', async () => {
    const url = 'postgres://trawl:s3cret@127.0.0.1:1/trawl';
    const store = openPgStore(url);
    try {
      const check = (err: unknown): boolean => {
        const message = (err as Error).message;
        assert.match(message, /cannot connect to the PostgreSQL database "trawl" at 127\.0\.0\.1:1/);
        assert.ok(!message.includes('s3cret'), message);
        return true;
      };
      await assert.rejects(() => store.getUser('usr_x'), check);
      await assert.rejects(() => store.oauth.countClients(), check, 'tried again, and failing again');
    } finally {
      await store.close();
    }
    await assert.rejects(() => connectPgStore(url), /cannot connect/);
  });
});

describe('PostgreSQL specifics', { skip }, () => {
  test('concurrent upsertRepo of the same names through two stores: one row and one id per name', async () => {
    await freshDatabase(async (_url, open) => {
      const [a, b] = await Promise.all([open(), open()]);
      const names = Array.from({ length: 12 }, (_, i) => `github.com/race/r${i}`);
      const results = await Promise.all(names.flatMap((n) => [a, b, a, b].map((s, i) => s.upsertRepo(fields(n, { displayName: `d${i}` })))));
      for (const n of names) assert.equal(new Set(results.filter((r) => r.repoName === n).map((r) => r.repoId)).size, 1, n);
      assert.equal((await a.listRepos({ includeDeleted: true })).length, names.length);
    });
  });

  test('countRequest from two stores at once, at a limit: exactly the limit is counted', async () => {
    await freshDatabase(async (_url, open) => {
      const [a, b] = await Promise.all([open(), open()]);
      const limit = 25;
      const results = await Promise.all(Array.from({ length: 70 }, (_, i) => (i % 2 ? a : b).countRequest('usr_1', '2024-01-02', limit)));
      assert.equal(results.filter((r) => r.counted).length, limit);
      assert.deepEqual(
        results
          .filter((r) => r.counted)
          .map((r) => r.count)
          .sort((x, y) => x - y),
        Array.from({ length: limit }, (_, i) => i + 1),
      );
      assert.ok(results.filter((r) => !r.counted).every((r) => r.count === limit));
      assert.equal(await b.requestCount('usr_1', '2024-01-02'), limit);
    });
  });

  test('registerClient from two stores at once: the per-address limit holds exactly', async () => {
    await freshDatabase(async (_url, open) => {
      const [a, b] = await Promise.all([open(), open()]);
      const limits = { from: 'addr', since: '2024-01-01T00:00:00.000Z', perAddress: 5, maxUnused: 100 };
      const outcomes = await Promise.all(
        Array.from({ length: 16 }, (_, i) => (i % 2 ? a : b).oauth.registerClient({ name: `c${i}`, redirectUris: [], metadata: {} }, T1, limits)),
      );
      assert.equal(outcomes.filter((o) => 'client' in o).length, 5);
      assert.equal(await a.oauth.countClients(), 5);
    });
  });

  test('refresh rotation racing the revocation of its API key: never a live grant of a revoked key, no deadlock', async () => {
    await freshDatabase(async (_url, open) => {
      const [a, b] = await Promise.all([open(), open()]);
      for (let round = 0; round < 8; round++) {
        const user = await a.createUser({ email: `r${round}@example.com`, name: 'r', role: 'member' }, T1);
        const key = await a.createApiKey({ userId: user.id, name: 'k', hash: `h-${round}`, hint: 'svk_' }, T1);
        const client = await a.oauth.createClient({ name: 'c', redirectUris: [], metadata: {} }, T1);
        const expiresAt = '2030-01-01T00:00:00.000Z';
        await a.oauth.createCode(
          { hash: `code-${round}`, clientId: client.id, userId: user.id, apiKeyId: key.id, redirectUri: 'x', codeChallenge: 'x', scope: 's', expiresAt },
          T1,
        );
        await a.oauth.redeemCode(`code-${round}`, [{ hash: `rt-${round}-0`, kind: 'refresh', expiresAt }], T1);
        const now = '2024-06-01T00:00:00.000Z';
        const rotations = Array.from({ length: 4 }, (_, i) =>
          (i % 2 ? a : b).oauth.rotateRefreshToken(`rt-${round}-0`, [{ hash: `rt-${round}-next-${i}`, kind: 'refresh', expiresAt }], now),
        );
        const [, ...rotated] = await Promise.all([b.revokeApiKey(key.id, now), ...rotations]);
        assert.ok(rotated.filter(Boolean).length <= 1, 'a token rotates once at most');
        assert.deepEqual(await a.oauth.listLiveGrants(now, user.id), [], 'nothing the revoked key opened is live');
      }
    });
  });

  test('atomically: calls inside run in turn on its connection; a failed call leaves the transaction usable; a nested one is a savepoint', async () => {
    await freshDatabase(async (_url, open) => {
      const store = await open();
      const other = await open();
      const result = await store.atomically(async () => {
        // Several calls at once inside: they take turns on the one connection.
        const users = await Promise.all(Array.from({ length: 5 }, (_, i) => store.createUser({ email: `p${i}@example.com`, name: 'p', role: 'member' }, T1)));
        // A conflict inside: the error, and the transaction goes on.
        await assert.rejects(
          () => store.createUser({ email: 'P0@example.com', name: 'dup', role: 'member' }, T1),
          (e: Error) => e.name === 'StoreConflictError',
        );
        // A nested transaction that fails is undone alone.
        await assert.rejects(
          () =>
            store.atomically(async () => {
              await store.createUser({ email: 'nested@example.com', name: 'n', role: 'member' }, T1);
              throw new Error('inner');
            }),
          /inner/,
        );
        assert.equal(await store.getUserByEmail('nested@example.com'), undefined, 'the inner one rolled back to its savepoint');
        const kept = await store.atomically(() => store.createUser({ email: 'kept@example.com', name: 'k', role: 'member' }, T1));
        assert.equal(await other.getUserByEmail('kept@example.com'), undefined, 'nothing is seen outside before the commit');
        return [...users, kept];
      });
      assert.equal((await other.listUsers()).length, 6);
      assert.deepEqual((await other.listUsers()).map((u) => u.id).sort(), result.map((u) => u.id).sort());
    });
  });

  test('atomically: a call that fn left running when it ended runs outside, after it', async () => {
    await freshDatabase(async (_url, open) => {
      const store = await open();
      let late!: Promise<unknown>;
      await assert.rejects(
        () =>
          store.atomically(async () => {
            await store.createUser({ email: 'in@example.com', name: 'i', role: 'member' }, T1);
            late = new Promise((r) => setTimeout(r, 50)).then(() => store.createUser({ email: 'late@example.com', name: 'l', role: 'member' }, T1));
            throw new Error('rolled back');
          }),
        /rolled back/,
      );
      await late;
      assert.equal(await store.getUserByEmail('in@example.com'), undefined);
      assert.ok(await store.getUserByEmail('late@example.com'), 'the late call was not lost with the transaction');
    });
  });

  test('emails are unique with ASCII case folded only, as SQLite NOCASE', async () => {
    await freshDatabase(async (_url, open) => {
      const store = await open();
      const e1 = await store.createUser({ email: 'É@example.com', name: 'a', role: 'member' }, T1);
      const e2 = await store.createUser({ email: 'é@example.com', name: 'b', role: 'member' }, T1);
      assert.notEqual(e1.id, e2.id);
      assert.equal((await store.getUserByEmail('É@EXAMPLE.COM'))?.id, e1.id);
      assert.equal((await store.getUserByEmail('é@Example.com'))?.id, e2.id);
    });
  });

  test('audit events are append-only: an UPDATE is refused; a prune (DELETE) is not', async () => {
    await freshDatabase(async (url, open) => {
      const store = await open();
      const e = await store.audit.append({ at: T1, action: 'user.added', outcome: 'success', actor: { credentialKind: 'cli' } });
      await withClient(url, async (c) => {
        await assert.rejects(() => c.query("UPDATE audit_events SET action = 'x'"), /append-only/);
      });
      assert.deepEqual((await store.audit.list({ offset: 0, limit: 5 })).events, [e]);
      assert.equal(await store.audit.prune('2025-01-01T00:00:00.000Z'), 1);
    });
  });

  test('ids are JS numbers, and keep growing after their rows are deleted', async () => {
    await freshDatabase(async (url, open) => {
      const store = await open();
      const a = await store.upsertConnection('a', 'github');
      await store.deleteConnection(a.id);
      const b = await store.upsertConnection('b', 'github');
      assert.equal(typeof b.id, 'number');
      assert.ok(b.id > a.id);
      const r = await store.upsertRepo(fields('github.com/x/y'));
      await withClient(url, (c) => c.query('DELETE FROM repos'));
      assert.ok((await store.upsertRepo(fields('github.com/x/y'))).repoId > r.repoId);
    });
  });
});
