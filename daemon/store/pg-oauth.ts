// The OAuth authorization server's state in the PostgreSQL store: the tables and rules of
// sqlite-oauth.ts (same columns: pg-migrations.ts). "First use wins" holds across the
// processes of a cluster this way:
//   - redeemCode reads the code FOR UPDATE in a transaction: a second exchange waits for the
//     first to commit, then finds the code used (and the grant it produced);
//   - rotateRefreshToken is one statement: it locks the token's API key FOR SHARE, then its
//     grant and the token FOR UPDATE, each re-checked once its lock is held, and only then
//     marks the token rotated, adds the next tokens and touches the grant. A key being
//     revoked (its row updated first, pg-identity.ts) makes it wait and then fail; a
//     rotation holding the key's lock makes the revocation wait and then end what the
//     rotation added. Locks are taken key, then grant, then token, as every writer here
//     takes them, so the two cannot deadlock;
//     Within one process, rotations of one token also take turns in the order asked (as
//     every call of the SQLite store does), so the first asked is the one that succeeds;
//     across processes the row lock decides;
//   - registerClient counts and inserts under a transaction-level advisory lock, so the
//     limits hold exactly however many nodes register at once.

import type { PgDb, Sql } from './pg-db.ts';
import {
  OAUTH_CLIENT_COLUMNS,
  OAUTH_CODE_COLUMNS,
  OAUTH_GRANT_COLUMNS,
  OAUTH_TOKEN_COLUMNS,
  fromRow,
  newId,
  registrationRefusal,
  type Row,
} from './records.ts';
import type {
  NewOAuthClient,
  NewOAuthToken,
  OAuthClientRecord,
  OAuthCodeRecord,
  OAuthGrantRecord,
  OAuthStore,
  OAuthTokenRecord,
  RegistrationLimits,
  RegistrationOutcome,
} from './store.ts';

/** The advisory lock that registerClient holds while it counts and inserts: 'trawl' and 'r' in ASCII. */
const REGISTRATION_LOCK = 0x747261776c72;

/** Never used: no grant and no code (a code is made at consent, so a client mid-consent has one). */
const UNUSED = `NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = oauth_clients.id)
  AND NOT EXISTS (SELECT 1 FROM oauth_codes c WHERE c.client_id = oauth_clients.id)`;

/** Inserts `tokens` of `grantId` in one statement (nothing when there are none). */
async function insertTokens(sql: Sql, grantId: string, tokens: NewOAuthToken[], now: string): Promise<void> {
  if (tokens.length === 0) return;
  await sql.changes(
    `INSERT INTO oauth_tokens (hash, grant_id, kind, created_at, expires_at)
     SELECT x.hash, $1, x.kind, $2, x.expires_at FROM unnest($3::text[], $4::text[], $5::text[]) AS x (hash, kind, expires_at)`,
    [grantId, now, ...tokenArrays(tokens)],
  );
}

/** The last rotation asked for of each refresh token in this process, until it settles. */
const rotations = new Map<string, Promise<void>>();

/** Runs `fn` once the rotations of `hash` asked for before it in this process have settled. */
function inTurn<T>(hash: string, fn: () => Promise<T>): Promise<T> {
  const mine = (rotations.get(hash) ?? Promise.resolve()).then(fn);
  const settled = mine.then(
    () => {},
    () => {},
  );
  rotations.set(hash, settled);
  void settled.then(() => {
    if (rotations.get(hash) === settled) rotations.delete(hash);
  });
  return mine;
}

const tokenArrays = (tokens: NewOAuthToken[]): [string[], string[], string[]] => [
  tokens.map((t) => t.hash),
  tokens.map((t) => t.kind),
  tokens.map((t) => t.expiresAt),
];

export class PgOAuth implements OAuthStore {
  constructor(private readonly db: PgDb) {}

  createClient(client: NewOAuthClient, now: string): Promise<OAuthClientRecord> {
    return this.db.run('write', (sql) => insertClient(sql, client, now, null));
  }

  registerClient(client: NewOAuthClient, now: string, limits: RegistrationLimits): Promise<RegistrationOutcome> {
    return this.db.run('transaction', async (sql) => {
      await sql.changes('SELECT pg_advisory_xact_lock($1)', [REGISTRATION_LOCK]);
      const counts = (await sql.row(
        `SELECT (SELECT count(*) FROM oauth_clients WHERE registered_from = $1 AND created_at > $2) AS n,
                (SELECT min(created_at) FROM oauth_clients WHERE registered_from = $1 AND created_at > $2) AS oldest,
                (SELECT count(*) FROM oauth_clients WHERE ${UNUSED}) AS unused`,
        [limits.from, limits.since],
      ))!;
      const mine = { n: counts.n as number, oldest: counts.oldest as string | null };
      return registrationRefusal(mine, counts.unused as number, limits) ?? { client: await insertClient(sql, client, now, limits.from) };
    });
  }

  pruneUnusedClients(before: string): Promise<number> {
    return this.db.run('write', (sql) => sql.changes(`DELETE FROM oauth_clients WHERE created_at < $1 AND ${UNUSED}`, [before]));
  }

  getClient(id: string): Promise<OAuthClientRecord | undefined> {
    return this.db.run('read', async (sql) => {
      const row = await sql.row('SELECT * FROM oauth_clients WHERE id = $1', [id]);
      return row && clientFromRow(row);
    });
  }

  countClients(): Promise<number> {
    return this.db.run('read', async (sql) => (await sql.row('SELECT count(*) AS n FROM oauth_clients'))!.n as number);
  }

  createCode(code: Omit<OAuthCodeRecord, 'createdAt' | 'usedAt' | 'grantId' | 'apiKeyId'> & { apiKeyId: string }, now: string): Promise<OAuthCodeRecord> {
    return this.db.run('write', async (sql) =>
      codeFromRow(
        (await sql.row(
          `INSERT INTO oauth_codes (hash, client_id, user_id, api_key_id, redirect_uri, code_challenge, scope, resource, created_at, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING *`,
          [code.hash, code.clientId, code.userId, code.apiKeyId, code.redirectUri, code.codeChallenge, code.scope, code.resource ?? null, now, code.expiresAt],
        ))!,
      ),
    );
  }

  peekCode(hash: string): Promise<OAuthCodeRecord | undefined> {
    return this.db.run('read', async (sql) => {
      const row = await sql.row('SELECT * FROM oauth_codes WHERE hash = $1', [hash]);
      return row && codeFromRow(row);
    });
  }

  redeemCode(hash: string, tokens: NewOAuthToken[], now: string): Promise<{ grant: OAuthGrantRecord } | { reused: OAuthCodeRecord } | undefined> {
    return this.db.run('transaction', async (sql) => {
      const code = await sql.row('SELECT * FROM oauth_codes WHERE hash = $1 FOR UPDATE', [hash]);
      if (code === undefined) return undefined;
      if (code.used_at !== null) return { reused: codeFromRow(code) };
      const grant = grantFromRow(
        (await sql.row(
          `INSERT INTO oauth_grants (id, client_id, user_id, api_key_id, scope, resource, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
          [newId('ogr'), code.client_id, code.user_id, code.api_key_id, code.scope, code.resource, now],
        ))!,
      );
      await insertTokens(sql, grant.id, tokens, now);
      await sql.changes('UPDATE oauth_codes SET used_at = $2, grant_id = $3 WHERE hash = $1 AND used_at IS NULL', [hash, now, grant.id]);
      return { grant };
    });
  }

  findToken(hash: string): Promise<{ token: OAuthTokenRecord; grant: OAuthGrantRecord } | undefined> {
    return this.db.run('read', async (sql) => {
      // One statement, so the token and its grant come from one snapshot.
      const row = await sql.row(
        `SELECT row_to_json(t) AS token, row_to_json(g) AS grant FROM oauth_tokens t JOIN oauth_grants g ON g.id = t.grant_id WHERE t.hash = $1`,
        [hash],
      );
      return row && { token: tokenFromRow(row.token as Row), grant: grantFromRow(row.grant as Row) };
    });
  }

  rotateRefreshToken(hash: string, next: NewOAuthToken[], now: string): Promise<boolean> {
    return inTurn(hash, () =>
      this.db.run('write', async (sql) => {
        const rotated = await sql.row(
          `WITH live AS (
           SELECT t.hash, t.grant_id FROM oauth_tokens t
             JOIN oauth_grants g ON g.id = t.grant_id
             JOIN api_keys k ON k.id = g.api_key_id
           WHERE t.hash = $1 AND t.kind = 'refresh' AND t.rotated_at IS NULL AND t.revoked_at IS NULL
             AND g.revoked_at IS NULL AND k.revoked_at IS NULL
           FOR SHARE OF k FOR UPDATE OF g, t
         ), rotated AS (
           UPDATE oauth_tokens SET rotated_at = $2 FROM live WHERE oauth_tokens.hash = live.hash RETURNING live.grant_id
         ), touched AS (
           UPDATE oauth_grants SET last_used_at = $2 FROM rotated WHERE oauth_grants.id = rotated.grant_id
         ), added AS (
           INSERT INTO oauth_tokens (hash, grant_id, kind, created_at, expires_at)
           SELECT x.hash, rotated.grant_id, x.kind, $2, x.expires_at
           FROM rotated, unnest($3::text[], $4::text[], $5::text[]) AS x (hash, kind, expires_at)
         )
         SELECT grant_id FROM rotated`,
          [hash, now, ...tokenArrays(next)],
        );
        return rotated !== undefined;
      }),
    );
  }

  getGrant(id: string): Promise<OAuthGrantRecord | undefined> {
    return this.db.run('read', async (sql) => {
      const row = await sql.row('SELECT * FROM oauth_grants WHERE id = $1', [id]);
      return row && grantFromRow(row);
    });
  }

  touchGrant(id: string, now: string): Promise<void> {
    return this.db.run('write', async (sql) => {
      await sql.changes('UPDATE oauth_grants SET last_used_at = $2 WHERE id = $1', [id, now]);
    });
  }

  revokeGrant(id: string, now: string): Promise<OAuthGrantRecord | undefined> {
    return this.db.run('write', async (sql) => {
      const row = await sql.row('UPDATE oauth_grants SET revoked_at = coalesce(revoked_at, $2) WHERE id = $1 RETURNING *', [id, now]);
      return row && grantFromRow(row);
    });
  }

  revokeToken(hash: string, now: string): Promise<void> {
    return this.db.run('write', async (sql) => {
      await sql.changes('UPDATE oauth_tokens SET revoked_at = coalesce(revoked_at, $2) WHERE hash = $1', [hash, now]);
    });
  }

  listLiveGrants(now: string, userId?: string): Promise<Array<OAuthGrantRecord & { clientName: string }>> {
    return this.db.run('read', async (sql) =>
      (
        await sql.rows(
          `SELECT g.*, c.name AS client_name FROM oauth_grants g JOIN oauth_clients c ON c.id = g.client_id JOIN api_keys k ON k.id = g.api_key_id
           WHERE g.revoked_at IS NULL AND k.revoked_at IS NULL AND ($2::text IS NULL OR g.user_id = $2)
             AND EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.grant_id = g.id AND t.revoked_at IS NULL AND t.rotated_at IS NULL AND t.expires_at > $1)
           ORDER BY g.created_at DESC, g.id`,
          [now, userId ?? null],
        )
      ).map((row) => ({ ...grantFromRow(row), clientName: row.client_name as string })),
    );
  }

  prune(before: string): Promise<number> {
    return this.db.run('transaction', async (sql) => {
      let n = await sql.changes('DELETE FROM oauth_codes WHERE expires_at < $1', [before]);
      n += await sql.changes('DELETE FROM oauth_tokens WHERE expires_at < $1', [before]);
      // A grant without tokens can mint none (tokens and grant are created together).
      n += await sql.changes('DELETE FROM oauth_grants WHERE NOT EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.grant_id = oauth_grants.id)');
      n += await sql.changes(`DELETE FROM oauth_clients WHERE created_at < $1 AND ${UNUSED}`, [before]);
      return n;
    });
  }
}

async function insertClient(sql: Sql, client: NewOAuthClient, now: string, from: string | null): Promise<OAuthClientRecord> {
  return clientFromRow(
    (await sql.row(
      `INSERT INTO oauth_clients (id, secret_hash, name, redirect_uris, metadata, created_at, registered_from)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
      [newId('oac'), client.secretHash ?? null, client.name, JSON.stringify(client.redirectUris), JSON.stringify(client.metadata), now, from],
    ))!,
  );
}

const clientFromRow = (row: Row) => fromRow(OAUTH_CLIENT_COLUMNS, row, {}) as unknown as OAuthClientRecord;
const codeFromRow = (row: Row) => fromRow(OAUTH_CODE_COLUMNS, row, {}) as unknown as OAuthCodeRecord;
const grantFromRow = (row: Row) => fromRow(OAUTH_GRANT_COLUMNS, row, {}) as unknown as OAuthGrantRecord;
const tokenFromRow = (row: Row) => fromRow(OAUTH_TOKEN_COLUMNS, row, {}) as unknown as OAuthTokenRecord;
