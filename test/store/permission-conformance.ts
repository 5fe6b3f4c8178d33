// The permission part of the Store conformance suite (conformance.ts calls it inside its
// describe): linked accounts, the two sources of permissions and their sync states.
//
// Rules pinned here beyond the interface's comments: listAccounts orders by userId, then
// connection; permittedRepos ascends; a replacement with the same rows twice changes
// nothing; an error recorded after a sync keeps syncedAt; a later sync clears the error.

import assert from 'node:assert/strict';
import type { Store } from '../../daemon/store/store.ts';
import { StoreConflictError } from '../../daemon/store/store.ts';

type StoreTest = (
  title: string,
  fn: (store: Store, ctx: { open(): Promise<Store>; close(store: Store): Promise<void> }) => Promise<void>,
  needs?: { sharedStorage?: boolean },
) => void;

const T1 = '2024-03-01T00:00:00.000Z';
const T2 = '2024-03-02T00:00:00.000Z';
const T3 = '2024-03-03T00:00:00.000Z';

async function twoMembers(store: Store): Promise<[string, string]> {
  const a = await store.createUser({ email: 'a@example.com', name: 'A', role: 'member' }, T1);
  const b = await store.createUser({ email: 'b@example.com', name: 'B', role: 'member' }, T1);
  return [a.id, b.id];
}

export function permissionConformance(storeTest: StoreTest): void {
  storeTest('permissions: a linked account round-trips; optional fields omitted; listed by user and connection', async (store) => {
    const [a, b] = await twoMembers(store);
    const full = await store.permissions.linkAccount(
      { userId: a, connection: 'gh', accountId: '101', login: 'alice', email: 'alice@example.com', sealedToken: 'sealed:x', linkedBy: 'sign-in' },
      T1,
    );
    assert.deepEqual(full, {
      userId: a,
      connection: 'gh',
      accountId: '101',
      login: 'alice',
      email: 'alice@example.com',
      sealedToken: 'sealed:x',
      linkedBy: 'sign-in',
      linkedAt: T1,
    });
    const bare = await store.permissions.linkAccount({ userId: b, connection: 'gh', accountId: '102', login: 'bob', linkedBy: 'owner' }, T2);
    assert.deepEqual(bare, { userId: b, connection: 'gh', accountId: '102', login: 'bob', linkedBy: 'owner', linkedAt: T2 });
    const other = await store.permissions.linkAccount({ userId: a, connection: 'gl', accountId: '7', login: 'alice', linkedBy: 'email' }, T2);
    const sorted = [full, other, bare].sort((x, y) => (x.userId + x.connection < y.userId + y.connection ? -1 : 1));
    assert.deepEqual(await store.permissions.listAccounts(), sorted);
    assert.deepEqual(await store.permissions.listAccounts({ userId: a }), [full, other]);
    assert.deepEqual(
      await store.permissions.listAccounts({ connection: 'gh' }),
      sorted.filter((x) => x.connection === 'gh'),
    );
    assert.deepEqual(await store.permissions.listAccounts({ userId: b, connection: 'gl' }), []);
  });

  storeTest("permissions: an account is one member's; relinking another account drops what the old one could read", async (store) => {
    const [a, b] = await twoMembers(store);
    await store.permissions.linkAccount({ userId: a, connection: 'gh', accountId: '101', login: 'alice', linkedBy: 'sign-in' }, T1);
    await assert.rejects(
      store.permissions.linkAccount({ userId: b, connection: 'gh', accountId: '101', login: 'alice', linkedBy: 'owner' }, T2),
      StoreConflictError,
    );
    await store.permissions.replaceAccountRepos(a, 'gh', [3, 1, 2], T1);
    // The same account again (a new token, say): what it could read stays.
    await store.permissions.linkAccount({ userId: a, connection: 'gh', accountId: '101', login: 'alice2', sealedToken: 't2', linkedBy: 'sign-in' }, T2);
    assert.deepEqual(await store.permissions.permittedRepos(a), [1, 2, 3]);
    assert.equal((await store.permissions.accountSyncStates(a))[0]?.syncedAt, T1);
    // Another account: the old one's rows and state go.
    await store.permissions.linkAccount({ userId: a, connection: 'gh', accountId: '999', login: 'alt', linkedBy: 'owner' }, T3);
    assert.deepEqual(await store.permissions.permittedRepos(a), []);
    assert.deepEqual(await store.permissions.accountSyncStates(a), []);
    // Now b may take account 101.
    await store.permissions.linkAccount({ userId: b, connection: 'gh', accountId: '101', login: 'alice', linkedBy: 'owner' }, T3);
  });

  storeTest('permissions: the two sources add up; each replacement replaces only its own rows', async (store) => {
    const [a, b] = await twoMembers(store);
    await store.permissions.replaceAccountRepos(a, 'gh', [5, 1], T1);
    await store.permissions.replaceAccountRepos(a, 'gl', [9], T1);
    await store.permissions.replaceRepoReaders(1, [a, b], T1);
    await store.permissions.replaceRepoReaders(7, [b], T1);
    assert.deepEqual(await store.permissions.permittedRepos(a), [1, 5, 9]);
    assert.deepEqual(await store.permissions.permittedRepos(b), [1, 7]);
    // Repository 1 loses a as a reader: a still reads it through the account-driven row.
    await store.permissions.replaceRepoReaders(1, [b], T2);
    assert.deepEqual(await store.permissions.permittedRepos(a), [1, 5, 9]);
    // The account no longer reads 1 or 5 on gh: gone; gl's 9 stays.
    await store.permissions.replaceAccountRepos(a, 'gh', [], T2);
    assert.deepEqual(await store.permissions.permittedRepos(a), [9]);
    await store.permissions.replaceAccountRepos(a, 'gl', [9, 9], T3);
    assert.deepEqual(await store.permissions.permittedRepos(a), [9]);
    assert.deepEqual(await store.permissions.permittedRepos('usr_unknown'), []);
  });

  storeTest("permissions: unlinking drops the account, what it could read, its state and the readers rows of the connection's repositories", async (store) => {
    const [a, b] = await twoMembers(store);
    const gh = await store.upsertConnection('gh', 'github');
    const gl = await store.upsertConnection('gl', 'gitlab');
    const ghRepo = await store.upsertRepo({
      repoName: 'gh/x',
      displayName: 'x',
      codeHostType: 'github',
      connectionId: gh.id,
      isFork: false,
      isArchived: false,
      visibility: 'private',
    });
    const glRepo = await store.upsertRepo({
      repoName: 'gl/y',
      displayName: 'y',
      codeHostType: 'gitlab',
      connectionId: gl.id,
      isFork: false,
      isArchived: false,
      visibility: 'private',
    });
    await store.permissions.linkAccount({ userId: a, connection: 'gh', accountId: '101', login: 'alice', linkedBy: 'sign-in' }, T1);
    await store.permissions.replaceAccountRepos(a, 'gh', [4], T1);
    await store.permissions.replaceRepoReaders(ghRepo.repoId, [a, b], T1);
    await store.permissions.replaceRepoReaders(glRepo.repoId, [a], T1);
    assert.equal(await store.permissions.unlinkAccount(a, 'gh'), true);
    assert.equal(await store.permissions.unlinkAccount(a, 'gh'), false);
    assert.deepEqual(await store.permissions.listAccounts(), []);
    assert.deepEqual(await store.permissions.permittedRepos(a), [glRepo.repoId], "another connection's readers rows stay");
    assert.deepEqual(await store.permissions.permittedRepos(b), [ghRepo.repoId], "another member's stay");
    assert.deepEqual(await store.permissions.accountSyncStates(), []);
  });

  storeTest('permissions: sync states: synced, then failed (synced time kept), then synced (error cleared)', async (store) => {
    const [a, b] = await twoMembers(store);
    await store.permissions.recordAccountSyncError(b, 'gh', 'rate limited', T1);
    await store.permissions.replaceAccountRepos(a, 'gh', [1], T1);
    await store.permissions.recordAccountSyncError(a, 'gh', 'host down', T2);
    const states = await store.permissions.accountSyncStates();
    const expected = [
      { userId: a, connection: 'gh', syncedAt: T1, error: 'host down', errorAt: T2 },
      { userId: b, connection: 'gh', error: 'rate limited', errorAt: T1 },
    ].sort((x, y) => (x.userId < y.userId ? -1 : 1));
    assert.deepEqual(states, expected);
    assert.deepEqual(await store.permissions.permittedRepos(a), [1], 'a failure keeps what was found');
    await store.permissions.replaceAccountRepos(a, 'gh', [2], T3);
    assert.deepEqual(await store.permissions.accountSyncStates(a), [{ userId: a, connection: 'gh', syncedAt: T3 }]);

    await store.permissions.recordRepoSyncError(12, 'forbidden', T1);
    await store.permissions.replaceRepoReaders(3, [a], T1);
    await store.permissions.recordRepoSyncError(3, 'server error', T2);
    assert.deepEqual(await store.permissions.repoSyncStates(), [
      { repoId: 3, syncedAt: T1, error: 'server error', errorAt: T2 },
      { repoId: 12, error: 'forbidden', errorAt: T1 },
    ]);
    await store.permissions.replaceRepoReaders(12, [], T3);
    assert.deepEqual((await store.permissions.repoSyncStates())[1], { repoId: 12, syncedAt: T3 });
  });

  storeTest(
    'permissions survive reopening',
    async (store, ctx) => {
      const [a] = await twoMembers(store);
      const link = await store.permissions.linkAccount({ userId: a, connection: 'gh', accountId: '101', login: 'alice', linkedBy: 'sign-in' }, T1);
      await store.permissions.replaceAccountRepos(a, 'gh', [2, 4], T1);
      await store.permissions.replaceRepoReaders(6, [a], T1);
      await ctx.close(store);
      const again = await ctx.open();
      assert.deepEqual(await again.permissions.listAccounts(), [link]);
      assert.deepEqual(await again.permissions.permittedRepos(a), [2, 4, 6]);
    },
    { sharedStorage: true },
  );

  storeTest('permissions: a replacement inside atomically is undone with it', async (store) => {
    const [a] = await twoMembers(store);
    await store.permissions.replaceAccountRepos(a, 'gh', [1], T1);
    await assert.rejects(
      store.atomically(async () => {
        await store.permissions.replaceAccountRepos(a, 'gh', [2, 3], T2);
        throw new Error('boom');
      }),
      /boom/,
    );
    assert.deepEqual(await store.permissions.permittedRepos(a), [1]);
  });
}
