// The OAuth authorization server's state in the SQLite store (migration 6).
//
// Tables
//
//   oauth_clients  id TEXT PRIMARY KEY (the client_id, "oac_" + 24 hex), secret_hash (keyed
//                  hash of the client secret, NULL for a public client), name,
//                  redirect_uris (JSON array), metadata (JSON object: the registration
//                  answer), created_at, registered_from (migration 7: a keyed hash of the
//                  registering address's key, for the per-address limit; NULL for clients
//                  registered before it). Indexed by (registered_from, created_at) and
//                  created_at.
//   oauth_grants   id TEXT PRIMARY KEY ("ogr_" + 24 hex), client_id -> oauth_clients(id)
//                  ON DELETE CASCADE, user_id -> users(id) ON DELETE CASCADE, scope,
//                  resource, created_at, revoked_at; migration 8: api_key_id -> api_keys(id)
//                  (the key the user consented with: revoking it revokes the grant; NULL
//                  for grants of before, which that migration revoked) and last_used_at.
//                  One row per consent that was exchanged: every token descends from
//                  exactly one grant, and revoking the grant revokes them all.
//   oauth_codes    hash TEXT PRIMARY KEY (keyed hash of the code), client_id, user_id,
//                  redirect_uri, code_challenge (PKCE S256), scope, resource, created_at,
//                  expires_at, used_at, grant_id -> oauth_grants(id) (the grant its first
//                  exchange created; a second exchange revokes it); migration 8:
//                  api_key_id (the consent's key, handed on to the grant).
//   oauth_tokens   hash TEXT PRIMARY KEY (keyed hash of the token), grant_id ->
//                  oauth_grants(id) ON DELETE CASCADE, kind 'access'|'refresh',
//                  created_at, expires_at, rotated_at (a refresh token exchanged for the
//                  next pair), revoked_at.
//
// No token, code or secret is stored, only its HMAC under the server secret
// (auth/credentials.ts), like API keys. "First use wins" (a code's exchange, a refresh
// token's rotation) is a conditional UPDATE inside an IMMEDIATE transaction, so of two
// racing requests, in one process or two, exactly one finds the row unused.

import type BetterSqlite3 from 'better-sqlite3';
import type {
  NewOAuthClient,
  NewOAuthToken,
  OAuthClientRecord,
  OAuthCodeRecord,
  OAuthGrantRecord,
  OAuthStoreSync,
  OAuthTokenRecord,
  RegistrationLimits,
  RegistrationOutcome,
} from './store.ts';
import { fromRow, writeReturning } from './sqlite-columns.ts';
import { OAUTH_CLIENT_COLUMNS, OAUTH_CODE_COLUMNS, OAUTH_GRANT_COLUMNS, OAUTH_TOKEN_COLUMNS, newId, registrationRefusal, type Row } from './records.ts';

export class SqliteOAuth implements OAuthStoreSync {
  readonly #insertClient: BetterSqlite3.Statement;
  readonly #clientById: BetterSqlite3.Statement;
  readonly #countClients: BetterSqlite3.Statement;
  readonly #registeredFrom: BetterSqlite3.Statement;
  readonly #countUnused: BetterSqlite3.Statement;
  readonly #pruneUnused: BetterSqlite3.Statement;
  readonly #registerTx: BetterSqlite3.Transaction<(client: NewOAuthClient, now: string, limits: RegistrationLimits) => RegistrationOutcome>;
  readonly #insertCode: BetterSqlite3.Statement;
  readonly #codeByHash: BetterSqlite3.Statement;
  readonly #useCode: BetterSqlite3.Statement;
  readonly #insertGrant: BetterSqlite3.Statement;
  readonly #grantById: BetterSqlite3.Statement;
  readonly #revokeGrant: BetterSqlite3.Statement;
  readonly #touchGrant: BetterSqlite3.Statement;
  readonly #insertToken: BetterSqlite3.Statement;
  readonly #tokenByHash: BetterSqlite3.Statement;
  readonly #rotate: BetterSqlite3.Statement;
  readonly #revokeToken: BetterSqlite3.Statement;
  readonly #liveGrants: BetterSqlite3.Statement;
  readonly #prune: BetterSqlite3.Statement[];
  readonly #redeemTx: BetterSqlite3.Transaction<
    (hash: string, tokens: NewOAuthToken[], now: string) => { grant: OAuthGrantRecord } | { reused: OAuthCodeRecord } | undefined
  >;
  readonly #rotateTx: BetterSqlite3.Transaction<(hash: string, next: NewOAuthToken[], now: string) => boolean>;
  readonly #pruneTx: BetterSqlite3.Transaction<(before: string) => number>;

  constructor(db: BetterSqlite3.Database) {
    this.#insertClient = db.prepare(
      `INSERT INTO oauth_clients (id, secret_hash, name, redirect_uris, metadata, created_at, registered_from)
       VALUES (@id, @secretHash, @name, @redirectUris, @metadata, @now, @from) RETURNING *`,
    );
    this.#registeredFrom = db.prepare(
      'SELECT count(*) AS n, min(created_at) AS oldest FROM oauth_clients WHERE registered_from = @from AND created_at > @since',
    );
    // Never used: no grant and no code (a code is made at consent, so a client mid-consent has one).
    const unused = `NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = oauth_clients.id)
         AND NOT EXISTS (SELECT 1 FROM oauth_codes c WHERE c.client_id = oauth_clients.id)`;
    this.#countUnused = db.prepare(`SELECT count(*) FROM oauth_clients WHERE ${unused}`).pluck();
    this.#pruneUnused = db.prepare(`DELETE FROM oauth_clients WHERE created_at < @before AND ${unused}`);
    this.#clientById = db.prepare('SELECT * FROM oauth_clients WHERE id = ?');
    this.#countClients = db.prepare('SELECT count(*) FROM oauth_clients').pluck();
    this.#insertCode = db.prepare(
      `INSERT INTO oauth_codes (hash, client_id, user_id, api_key_id, redirect_uri, code_challenge, scope, resource, created_at, expires_at)
       VALUES (@hash, @clientId, @userId, @apiKeyId, @redirectUri, @codeChallenge, @scope, @resource, @now, @expiresAt) RETURNING *`,
    );
    this.#codeByHash = db.prepare('SELECT * FROM oauth_codes WHERE hash = ?');
    this.#useCode = db.prepare('UPDATE oauth_codes SET used_at = @now, grant_id = @grantId WHERE hash = @hash AND used_at IS NULL');
    this.#insertGrant = db.prepare(
      `INSERT INTO oauth_grants (id, client_id, user_id, api_key_id, scope, resource, created_at)
       VALUES (@id, @clientId, @userId, @apiKeyId, @scope, @resource, @now) RETURNING *`,
    );
    this.#grantById = db.prepare('SELECT * FROM oauth_grants WHERE id = ?');
    this.#revokeGrant = db.prepare('UPDATE oauth_grants SET revoked_at = coalesce(revoked_at, @now) WHERE id = @id RETURNING *');
    this.#touchGrant = db.prepare('UPDATE oauth_grants SET last_used_at = @now WHERE id = @id');
    this.#insertToken = db.prepare(`INSERT INTO oauth_tokens (hash, grant_id, kind, created_at, expires_at) VALUES (@hash, @grantId, @kind, @now, @expiresAt)`);
    this.#tokenByHash = db.prepare('SELECT * FROM oauth_tokens WHERE hash = ?');
    // The grant must be unrevoked and its API key recorded and unrevoked (the EXISTS).
    this.#rotate = db.prepare(
      `UPDATE oauth_tokens SET rotated_at = @now
       WHERE hash = @hash AND kind = 'refresh' AND rotated_at IS NULL AND revoked_at IS NULL
         AND EXISTS (SELECT 1 FROM oauth_grants g JOIN api_keys k ON k.id = g.api_key_id
                     WHERE g.id = oauth_tokens.grant_id AND g.revoked_at IS NULL AND k.revoked_at IS NULL)
       RETURNING grant_id`,
    );
    this.#revokeToken = db.prepare('UPDATE oauth_tokens SET revoked_at = coalesce(revoked_at, @now) WHERE hash = @hash');
    this.#liveGrants = db.prepare(
      `SELECT g.*, c.name AS client_name FROM oauth_grants g JOIN oauth_clients c ON c.id = g.client_id JOIN api_keys k ON k.id = g.api_key_id
       WHERE g.revoked_at IS NULL AND k.revoked_at IS NULL AND (@userId IS NULL OR g.user_id = @userId)
         AND EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.grant_id = g.id AND t.revoked_at IS NULL AND t.rotated_at IS NULL AND t.expires_at > @now)
       ORDER BY g.created_at DESC, g.id`,
    );
    this.#prune = [
      db.prepare('DELETE FROM oauth_codes WHERE expires_at < @before'),
      db.prepare('DELETE FROM oauth_tokens WHERE expires_at < @before'),
      // A grant without tokens can mint none (tokens and grant are created together).
      db.prepare('DELETE FROM oauth_grants WHERE NOT EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.grant_id = oauth_grants.id)'),
      db.prepare(
        `DELETE FROM oauth_clients WHERE created_at < @before
         AND NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = oauth_clients.id)
         AND NOT EXISTS (SELECT 1 FROM oauth_codes c WHERE c.client_id = oauth_clients.id)`,
      ),
    ];

    this.#redeemTx = db.transaction((hash, tokens, now) => {
      const code = this.#codeByHash.get(hash) as Row | undefined;
      if (code === undefined) return undefined;
      if (code.used_at !== null) return { reused: codeFromRow(code) };
      const grant = grantFromRow(
        writeReturning(this.#insertGrant, {
          id: newId('ogr'),
          clientId: code.client_id,
          userId: code.user_id,
          apiKeyId: code.api_key_id,
          scope: code.scope,
          resource: code.resource,
          now,
        }) as Row,
      );
      for (const t of tokens) this.#insertToken.run({ ...t, grantId: grant.id, now });
      this.#useCode.run({ hash, grantId: grant.id, now });
      return { grant };
    });
    this.#rotateTx = db.transaction((hash, next, now) => {
      const row = writeReturning(this.#rotate, { hash, now }) as { grant_id: string } | undefined;
      if (row === undefined) return false;
      for (const t of next) this.#insertToken.run({ ...t, grantId: row.grant_id, now });
      this.#touchGrant.run({ id: row.grant_id, now });
      return true;
    });
    this.#pruneTx = db.transaction((before) => this.#prune.reduce((n, s) => n + s.run({ before }).changes, 0));
    this.#registerTx = db.transaction((client, now, limits) => {
      const mine = this.#registeredFrom.get({ from: limits.from, since: limits.since }) as { n: number; oldest: string | null };
      return registrationRefusal(mine, this.#countUnused.get() as number, limits) ?? { client: this.#insert(client, now, limits.from) };
    });
  }

  createClient(client: NewOAuthClient, now: string): OAuthClientRecord {
    return this.#insert(client, now, null);
  }

  registerClient(client: NewOAuthClient, now: string, limits: RegistrationLimits): RegistrationOutcome {
    return this.#registerTx.immediate(client, now, limits);
  }

  pruneUnusedClients(before: string): number {
    return this.#pruneUnused.run({ before }).changes;
  }

  #insert(client: NewOAuthClient, now: string, from: string | null): OAuthClientRecord {
    return clientFromRow(
      writeReturning(this.#insertClient, {
        id: newId('oac'),
        secretHash: client.secretHash ?? null,
        name: client.name,
        redirectUris: JSON.stringify(client.redirectUris),
        metadata: JSON.stringify(client.metadata),
        now,
        from,
      }) as Row,
    );
  }

  getClient(id: string): OAuthClientRecord | undefined {
    const row = this.#clientById.get(id) as Row | undefined;
    return row && clientFromRow(row);
  }

  countClients(): number {
    return this.#countClients.get() as number;
  }

  createCode(code: Omit<OAuthCodeRecord, 'createdAt' | 'usedAt' | 'grantId' | 'apiKeyId'> & { apiKeyId: string }, now: string): OAuthCodeRecord {
    return codeFromRow(writeReturning(this.#insertCode, { ...code, resource: code.resource ?? null, now }) as Row);
  }

  peekCode(hash: string): OAuthCodeRecord | undefined {
    const row = this.#codeByHash.get(hash) as Row | undefined;
    return row && codeFromRow(row);
  }

  redeemCode(hash: string, tokens: NewOAuthToken[], now: string): { grant: OAuthGrantRecord } | { reused: OAuthCodeRecord } | undefined {
    return this.#redeemTx.immediate(hash, tokens, now);
  }

  findToken(hash: string): { token: OAuthTokenRecord; grant: OAuthGrantRecord } | undefined {
    const row = this.#tokenByHash.get(hash) as Row | undefined;
    if (row === undefined) return undefined;
    const grant = this.#grantById.get(row.grant_id) as Row | undefined;
    return grant && { token: tokenFromRow(row), grant: grantFromRow(grant) };
  }

  rotateRefreshToken(hash: string, next: NewOAuthToken[], now: string): boolean {
    return this.#rotateTx.immediate(hash, next, now);
  }

  getGrant(id: string): OAuthGrantRecord | undefined {
    const row = this.#grantById.get(id) as Row | undefined;
    return row && grantFromRow(row);
  }

  revokeGrant(id: string, now: string): OAuthGrantRecord | undefined {
    const row = writeReturning(this.#revokeGrant, { id, now }) as Row | undefined;
    return row && grantFromRow(row);
  }

  touchGrant(id: string, now: string): void {
    this.#touchGrant.run({ id, now });
  }

  revokeToken(hash: string, now: string): void {
    this.#revokeToken.run({ hash, now });
  }

  listLiveGrants(now: string, userId?: string): Array<OAuthGrantRecord & { clientName: string }> {
    return (this.#liveGrants.all({ now, userId: userId ?? null }) as Row[]).map((row) => ({ ...grantFromRow(row), clientName: row.client_name as string }));
  }

  prune(before: string): number {
    return this.#pruneTx.immediate(before);
  }
}

const clientFromRow = (row: Row) => fromRow(OAUTH_CLIENT_COLUMNS, row, {}) as unknown as OAuthClientRecord;
const codeFromRow = (row: Row) => fromRow(OAUTH_CODE_COLUMNS, row, {}) as unknown as OAuthCodeRecord;
const grantFromRow = (row: Row) => fromRow(OAUTH_GRANT_COLUMNS, row, {}) as unknown as OAuthGrantRecord;
const tokenFromRow = (row: Row) => fromRow(OAUTH_TOKEN_COLUMNS, row, {}) as unknown as OAuthTokenRecord;
