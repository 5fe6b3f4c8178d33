// StoreAuthenticator.resume: the caller another node of a cluster authenticated, read again
// from the shared store (cluster/forward.ts sends only who they are). It must act as
// authenticate() did for the credential (the same user, role, limit and, for a scoped
// token, the same repositories) and refuse it when authenticate() would refuse it now:
// the key, token or grant revoked or expired, the user suspended, an id that is not theirs.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { StoreAuthenticator } from '../../daemon/auth/authenticator.ts';
import { credentialHash, newApiKey, newScopedToken } from '../../daemon/auth/credentials.ts';
import { identityRef, type Identity, type IdentityRef } from '../../daemon/auth/identity.ts';
import { ServiceError } from '../../daemon/errors.ts';
import { newCredential } from '../../daemon/oauth/tokens.ts';
import { openSqliteStore } from '../../daemon/store/sqlite-store.ts';
import { tempDir } from '../helpers/corpus.ts';

const T0 = Date.parse('2026-06-01T10:00:00Z');
const HOUR = 3_600_000;
const secret = Buffer.alloc(32, 7);

const PUBLIC = { repoId: 1, visibility: 'public' as const };
const PRIVATE = { repoId: 2, visibility: 'private' as const };

async function refused(p: Promise<Identity>): Promise<string> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof ServiceError && err.statusCode === 401, String(err));
    return err.message;
  }
  assert.fail('resumed a caller that should be refused');
}

test('resume acts as the credential did, and refuses what authenticate() would refuse now', async () => {
  const dir = tempDir('resume');
  const store = openSqliteStore(join(dir.path, 'trawl.db'));
  let clock = new Date(T0);
  const auth = new StoreAuthenticator({ store, secret, anonymousAccess: true, now: () => clock });
  const closed = new StoreAuthenticator({ store, secret, anonymousAccess: false, now: () => clock });
  try {
    const at = clock.toISOString();
    const ann = await store.createUser({ email: 'ann@example.com', name: 'Ann', role: 'owner' }, at);
    const bob = await store.createUser({ email: 'bob@example.com', name: 'Bob', role: 'member' }, at);
    await store.updateUser(ann.id, { dailyLimit: 7 }, at);
    const key = newApiKey();
    const annKey = await store.createApiKey({ userId: ann.id, name: 'k', hash: credentialHash(secret, key), hint: 'x' }, at);
    const bobKey = await store.createApiKey({ userId: bob.id, name: 'k', hash: credentialHash(secret, newApiKey()), hint: 'y' }, at);
    const scoped = newScopedToken();
    await store.createScopedToken(
      { userId: ann.id, apiKeyId: annKey.id, hash: credentialHash(secret, scoped), repoIds: [PRIVATE.repoId], expiresAt: new Date(T0 + HOUR).toISOString() },
      at,
    );
    const client = await store.oauth.createClient({ name: 'agent', redirectUris: ['http://127.0.0.1/cb'], metadata: {} }, at);
    const code = newCredential('svoc_');
    await store.oauth.createCode(
      {
        clientId: client.id,
        userId: ann.id,
        apiKeyId: annKey.id,
        redirectUri: 'http://127.0.0.1/cb',
        codeChallenge: 'x'.repeat(43),
        scope: 'search',
        expiresAt: new Date(T0 + HOUR).toISOString(),
        hash: credentialHash(secret, code),
      },
      at,
    );
    const redeemed = await store.oauth.redeemCode(
      credentialHash(secret, code),
      [{ hash: credentialHash(secret, newCredential('svoa_')), kind: 'access', expiresAt: new Date(T0 + HOUR).toISOString() }],
      at,
    );
    assert.ok(redeemed && 'grant' in redeemed);
    const grant = redeemed.grant;

    // As authenticate() made them.
    const viaKey = await auth.authenticate({ token: key, via: 'bearer' });
    const viaScoped = await auth.authenticate({ token: scoped, via: 'bearer' });
    const same = async (i: Identity) => {
      const r = await auth.resume(identityRef(i));
      assert.deepEqual({ ...r, canSee: undefined }, { ...i, canSee: undefined });
      for (const repo of [PUBLIC, PRIVATE]) assert.equal(r.canSee(repo), i.canSee(repo), `${i.kind} sees repository ${repo.repoId}`);
    };
    await same(viaKey);
    await same(viaScoped);
    assert.equal((await auth.resume(identityRef(viaScoped))).canSee(PUBLIC), false, 'a scoped token sees its repositories only');
    const viaGrant: IdentityRef = { kind: 'oauth', userId: ann.id, tokenId: grant.id };
    assert.equal((await auth.resume(viaGrant)).dailyLimit, 7);
    const viaSession: IdentityRef = { kind: 'browserSession', userId: ann.id, tokenId: annKey.id };
    assert.equal((await auth.resume(viaSession)).dailyLimit, undefined, 'browser sessions are never counted');

    // Anonymous follows the setting.
    assert.equal((await auth.resume({ kind: 'anonymous' })).canSee(PRIVATE), false);
    await refused(closed.resume({ kind: 'anonymous' }));

    // Ids that are not the user's, or missing.
    await refused(auth.resume({ kind: 'apiKey', userId: ann.id, tokenId: bobKey.id }));
    await refused(auth.resume({ kind: 'oauth', userId: bob.id, tokenId: grant.id }));
    await refused(auth.resume({ kind: 'apiKey', userId: ann.id }));
    await refused(auth.resume({ kind: 'scopedToken', userId: ann.id, tokenId: annKey.id }));

    // Expired: the scoped token after its hour.
    clock = new Date(T0 + HOUR);
    await refused(auth.resume(identityRef(viaScoped)));
    clock = new Date(T0);

    // Suspended: everything of the user.
    await store.updateUser(ann.id, { suspendedAt: clock.toISOString() }, clock.toISOString());
    assert.match(await refused(auth.resume(identityRef(viaKey))), /suspended/);
    await refused(auth.resume(viaGrant));
    await store.updateUser(ann.id, { suspendedAt: null }, clock.toISOString());
    await auth.resume(identityRef(viaKey));

    // A revoked grant; then the key, and with it all it opened.
    await store.oauth.revokeGrant(grant.id, clock.toISOString());
    await refused(auth.resume(viaGrant));
    await auth.resume(identityRef(viaScoped));
    await store.revokeApiKey(annKey.id, clock.toISOString());
    for (const ref of [identityRef(viaKey), identityRef(viaScoped), viaSession]) await refused(auth.resume(ref));
  } finally {
    await store.close();
    dir.cleanup();
  }
});
