// Single sign-on in the PostgreSQL store: the tables and rules of sqlite-sign-in.ts (same
// columns: pg-migrations.ts). Every call is one statement; an account linked twice and a
// flow used twice are told by INSERT ... ON CONFLICT DO NOTHING, which (unlike a unique
// violation) leaves a transaction it runs in usable.

import type { PgDb } from './pg-db.ts';
import { SIGN_IN_IDENTITY_COLUMNS, fromRow, newId, type Row } from './records.ts';
import { StoreConflictError, type SignInIdentityRecord, type SignInStore } from './store.ts';

export class PgSignIn implements SignInStore {
  constructor(private readonly db: PgDb) {}

  createSignInIdentity(
    identity: { userId: string; issuer: string; subject: string; provider: string; email?: string },
    now: string,
  ): Promise<SignInIdentityRecord> {
    return this.db.run('write', async (sql) => {
      const row = await sql.row(
        `INSERT INTO sign_in_identities (id, user_id, issuer, subject, provider, email, created_at, last_signed_in_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $7) ON CONFLICT (issuer, subject) DO NOTHING RETURNING *`,
        [newId('sso'), identity.userId, identity.issuer, identity.subject, identity.provider, identity.email ?? null, now],
      );
      if (!row) throw new StoreConflictError(`the account ${identity.subject} of ${identity.issuer} is linked to a member already`);
      return identityFromRow(row);
    });
  }

  findSignInIdentity(issuer: string, subject: string): Promise<SignInIdentityRecord | undefined> {
    return this.db.run('read', async (sql) => {
      const row = await sql.row('SELECT * FROM sign_in_identities WHERE issuer = $1 AND subject = $2', [issuer, subject]);
      return row && identityFromRow(row);
    });
  }

  getSignInIdentity(id: string): Promise<SignInIdentityRecord | undefined> {
    return this.db.run('read', async (sql) => {
      const row = await sql.row('SELECT * FROM sign_in_identities WHERE id = $1', [id]);
      return row && identityFromRow(row);
    });
  }

  touchSignInIdentity(id: string, seen: { provider: string; email?: string }, now: string): Promise<SignInIdentityRecord | undefined> {
    return this.db.run('write', async (sql) => {
      const row = await sql.row('UPDATE sign_in_identities SET provider = $2, email = $3, last_signed_in_at = $4 WHERE id = $1 RETURNING *', [
        id,
        seen.provider,
        seen.email ?? null,
        now,
      ]);
      return row && identityFromRow(row);
    });
  }

  useSignInFlow(stateHash: string, expiresAt: string): Promise<boolean> {
    return this.db.run(
      'write',
      async (sql) =>
        (await sql.changes('INSERT INTO sign_in_flows (state_hash, expires_at) VALUES ($1, $2) ON CONFLICT (state_hash) DO NOTHING', [
          stateHash,
          expiresAt,
        ])) === 1,
    );
  }

  pruneSignInFlows(before: string): Promise<number> {
    return this.db.run('write', (sql) => sql.changes('DELETE FROM sign_in_flows WHERE expires_at < $1', [before]));
  }
}

const identityFromRow = (row: Row) => fromRow(SIGN_IN_IDENTITY_COLUMNS, row, {}) as unknown as SignInIdentityRecord;
