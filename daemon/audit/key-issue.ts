// Creating an API key: one way for `trawl keys create` (cli/users-command.ts) and for
// POST /api/keys (http/handlers/credentials.ts). The key is made here and returned once;
// the store keeps only its keyed hash under the installation's secret (auth/credentials.ts)
// and its first characters as a hint; the api_key.created event is written in the same
// transaction as the key (log.ts), naming the key by its id, never by its value. It sits
// with the audit log, above auth, because it drives both (imports run down the floors).

import type { AuditLog } from './log.ts';
import type { AuditActorOf } from './events.ts';
import type { ApiKeyRecord, Store, UserRecord } from '../store/store.ts';
import { credentialHash, keyHint, newApiKey } from '../auth/credentials.ts';

export interface IssuedKey {
  /** The key itself (`svk_` + 64 hex): shown once, stored nowhere. */
  key: string;
  record: ApiKeyRecord;
}

/** Where a key is issued: the store that keeps it, the audit log, and the installation's secret its hash is keyed with. */
interface KeyIssuer {
  store: Pick<Store, 'createApiKey'>;
  audit: AuditLog;
  secret: Buffer;
}

/** A key for `user`, called `name`, issued `by` an actor (from an address, when over HTTP) at `now`. */
export async function issueApiKey(
  { store, audit, secret }: KeyIssuer,
  { user, name }: { user: Pick<UserRecord, 'id' | 'email'>; name: string },
  by: { actor: AuditActorOf; sourceAddress?: string; now: string },
): Promise<IssuedKey> {
  const key = newApiKey();
  const record = await audit.change(
    () => store.createApiKey({ userId: user.id, name, hash: credentialHash(secret, key), hint: keyHint(key) }, by.now),
    (k) => ({
      action: 'api_key.created',
      actor: by.actor,
      target: { type: 'api_key', id: k.id },
      ...(by.sourceAddress ? { sourceAddress: by.sourceAddress } : {}),
      details: { userId: user.id, email: user.email, name: k.name },
    }),
  );
  return { key, record };
}
