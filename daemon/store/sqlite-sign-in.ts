// Single sign-on in the SQLite store (migration 11).
//
//   sign_in_identities  id TEXT PRIMARY KEY ("sso_" + 24 hex, what a browser session signed
//                       in through it names), user_id -> users(id) ON DELETE CASCADE, issuer
//                       (an OpenID Connect issuer, or a code host's web URL), subject (the
//                       provider's stable id of the account), UNIQUE (issuer, subject) with
//                       both compared byte by byte, provider (the configured name it last
//                       signed in through), email (the verified one it gave then, lower case;
//                       NULL: none), created_at, last_signed_in_at.
//   sign_in_flows       state_hash TEXT PRIMARY KEY (the keyed hash of a sign-in flow's
//                       state: auth/sso/flow-cookie.ts), expires_at; WITHOUT ROWID. A row
//                       says the flow came back; the daemon prunes rows past expires_at,
//                       when the flow's cookie no longer works anyway.
//
// A flow is used by one INSERT ... ON CONFLICT DO NOTHING: a statement holds the write
// lock from start to end, so of two processes handed the same callback, one inserts and
// the other changes nothing (a replay).

import type BetterSqlite3 from 'better-sqlite3';
import { fromRow, writeReturning } from './sqlite-columns.ts';
import { SIGN_IN_IDENTITY_COLUMNS, newId, type Row } from './records.ts';
import { StoreConflictError, type SignInIdentityRecord, type SignInStoreSync } from './store.ts';

export class SqliteSignIn implements SignInStoreSync {
  readonly #insert: BetterSqlite3.Statement;
  readonly #find: BetterSqlite3.Statement;
  readonly #byId: BetterSqlite3.Statement;
  readonly #touch: BetterSqlite3.Statement;
  readonly #useFlow: BetterSqlite3.Statement;
  readonly #pruneFlows: BetterSqlite3.Statement;

  constructor(db: BetterSqlite3.Database) {
    this.#insert = db.prepare(
      `INSERT INTO sign_in_identities (id, user_id, issuer, subject, provider, email, created_at, last_signed_in_at)
       VALUES (@id, @userId, @issuer, @subject, @provider, @email, @now, @now)
       ON CONFLICT (issuer, subject) DO NOTHING RETURNING *`,
    );
    this.#find = db.prepare('SELECT * FROM sign_in_identities WHERE issuer = ? AND subject = ?');
    this.#byId = db.prepare('SELECT * FROM sign_in_identities WHERE id = ?');
    this.#touch = db.prepare('UPDATE sign_in_identities SET provider = @provider, email = @email, last_signed_in_at = @now WHERE id = @id RETURNING *');
    this.#useFlow = db.prepare('INSERT INTO sign_in_flows (state_hash, expires_at) VALUES (?, ?) ON CONFLICT (state_hash) DO NOTHING');
    this.#pruneFlows = db.prepare('DELETE FROM sign_in_flows WHERE expires_at < ?');
  }

  createSignInIdentity(identity: { userId: string; issuer: string; subject: string; provider: string; email?: string }, now: string): SignInIdentityRecord {
    const row = writeReturning(this.#insert, { id: newId('sso'), ...identity, email: identity.email ?? null, now }) as Row | undefined;
    if (!row) throw new StoreConflictError(`the account ${identity.subject} of ${identity.issuer} is linked to a member already`);
    return identityFromRow(row);
  }

  findSignInIdentity(issuer: string, subject: string): SignInIdentityRecord | undefined {
    const row = this.#find.get(issuer, subject) as Row | undefined;
    return row && identityFromRow(row);
  }

  getSignInIdentity(id: string): SignInIdentityRecord | undefined {
    const row = this.#byId.get(id) as Row | undefined;
    return row && identityFromRow(row);
  }

  touchSignInIdentity(id: string, seen: { provider: string; email?: string }, now: string): SignInIdentityRecord | undefined {
    const row = writeReturning(this.#touch, { id, provider: seen.provider, email: seen.email ?? null, now }) as Row | undefined;
    return row && identityFromRow(row);
  }

  useSignInFlow(stateHash: string, expiresAt: string): boolean {
    return this.#useFlow.run(stateHash, expiresAt).changes === 1;
  }

  pruneSignInFlows(before: string): number {
    return this.#pruneFlows.run(before).changes;
  }
}

const identityFromRow = (row: Row) => fromRow(SIGN_IN_IDENTITY_COLUMNS, row, {}) as unknown as SignInIdentityRecord;
