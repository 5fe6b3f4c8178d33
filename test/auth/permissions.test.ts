// Repository permissions from the configuration (daemon/auth/permissions.ts): table tests
// of who sees what under "all" and "code-host", and the resolved sets following the
// catalog as it changes.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RepositoryPermissions, SYNCED_TTL_MS, type RepositoryNames } from '../../daemon/auth/permissions.ts';
import type { PermissionsConfig } from '../../daemon/config/types.ts';

const REPOS = [
  { repoId: 1, name: 'team-a-api', visibility: 'private' as const },
  { repoId: 2, name: 'team-a-web', visibility: 'private' as const },
  { repoId: 3, name: 'tools/lint/rules', visibility: 'private' as const },
  { repoId: 4, name: 'team-b-core', visibility: 'private' as const },
  { repoId: 5, name: 'open-source-lib', visibility: 'public' as const },
];

function catalog(repos = REPOS): RepositoryNames & { bump(next: typeof REPOS): void } {
  let list = repos;
  let generation = 1;
  return {
    generation: () => generation,
    list: () => list,
    bump(next) {
      list = next;
      generation++;
    },
  };
}

const CONFIG: PermissionsConfig = {
  groups: { 'team-a': ['a@example.com', 'c@example.com'], ops: ['o@example.com'] },
  grants: [
    { groups: ['team-a'], users: ['b@example.com'], repos: ['team-a-*', 'tools/**'] },
    { groups: ['ops'], users: [], repos: ['*'] },
  ],
};

async function seen(p: RepositoryPermissions, email: string, id = `usr_${email.toLowerCase()}`): Promise<string> {
  const canSee = await p.canSeeFor({ id, email });
  return REPOS.filter((r) => canSee(r))
    .map((r) => r.repoId)
    .join(',');
}

test('"all": every member sees every repository, whatever the grants', async () => {
  const p = new RepositoryPermissions('all', CONFIG, catalog());
  for (const email of ['a@example.com', 'nobody@example.com']) assert.equal(await seen(p, email), '1,2,3,4,5');
});

test('"code-host": public repositories, and what grants give by user or group, globs over names without regard to case', async () => {
  const p = new RepositoryPermissions('code-host', CONFIG, catalog());
  const table: Array<[string, string]> = [
    ['a@example.com', '1,2,3,5'], // team-a: team-a-* and tools/** (across segments)
    ['A@Example.COM', '1,2,3,5'], // emails compared without case
    ['b@example.com', '1,2,3,5'], // named directly
    ['o@example.com', '1,2,4,5'], // ops: "*" stays within one segment, so not tools/lint/rules
    ['nobody@example.com', '5'], // public only, never everything
  ];
  for (const [email, expected] of table) assert.equal(await seen(p, email), expected, email);
  assert.equal(
    new RepositoryPermissions('code-host', { groups: {}, grants: [{ groups: [], users: ['x@example.com'], repos: ['TEAM-B-*'] }] }, catalog())
      .granted('x@example.com')
      .has(4),
    true,
  );
});

test("a member's set follows the catalog: a repository added or renamed is resolved again", () => {
  const c = catalog();
  const p = new RepositoryPermissions('code-host', CONFIG, c);
  assert.deepEqual([...p.granted('b@example.com')].sort(), [1, 2, 3]);
  c.bump([
    ...REPOS.filter((r) => r.repoId !== 2),
    { repoId: 2, name: 'team-c-web', visibility: 'private' },
    { repoId: 6, name: 'team-a-new', visibility: 'private' },
  ]);
  assert.deepEqual([...p.granted('b@example.com')].sort(), [1, 3, 6]);
});

/** A store of host permissions whose reads are counted. */
function syncedStore(initial: Record<string, number[]>) {
  const rows = new Map(Object.entries(initial));
  const reads: string[] = [];
  return {
    reads,
    set: (userId: string, repos: number[]) => rows.set(userId, repos),
    permittedRepos: async (userId: string) => {
      reads.push(userId);
      return [...(rows.get(userId) ?? [])];
    },
  };
}

test('"code-host": what the code host lets a member read adds to public and granted repositories; nothing before their first sync', async () => {
  const store = syncedStore({ 'usr_b@example.com': [4], usr_x: [2] });
  const p = new RepositoryPermissions('code-host', CONFIG, catalog(), { synced: store });
  assert.equal(await seen(p, 'b@example.com'), '1,2,3,4,5', 'granted 1,2,3 and host 4');
  assert.equal(await seen(p, 'nobody@example.com', 'usr_x'), '2,5', 'host 2 only');
  assert.equal(await seen(p, 'new@example.com'), '5', 'not synced yet: public only');
  assert.equal(await seen(p, 'b@example.com', 'usr_b@example.com'), '1,2,3,4,5');
  assert.deepEqual(store.reads, ['usr_b@example.com', 'usr_x', 'usr_new@example.com'], 'one store read per member, then kept');
});

test("host permissions are read again after the sync's writes here at once, and (in a cluster) after the time to live for other processes' writes", async () => {
  const store = syncedStore({ u1: [1, 4] });
  let clock = 1_000_000;
  const p = new RepositoryPermissions('code-host', { groups: {}, grants: [] }, catalog(), { synced: store, sharedTtlMs: SYNCED_TTL_MS, now: () => clock });
  assert.equal(await seen(p, 'u1@example.com', 'u1'), '1,4,5');
  store.set('u1', [4]);
  clock += SYNCED_TTL_MS - 1;
  assert.equal(await seen(p, 'u1@example.com', 'u1'), '1,4,5', 'within the time to live: kept');
  p.changed('u1');
  assert.equal(await seen(p, 'u1@example.com', 'u1'), '4,5', 'this process wrote: read again');
  store.set('u1', []);
  clock += SYNCED_TTL_MS;
  assert.equal(await seen(p, 'u1@example.com', 'u1'), '5', 'another process wrote: read again after the time to live');
  store.set('u1', [2]);
  p.changed();
  assert.equal(await seen(p, 'u1@example.com', 'u1'), '2,5', 'everyone stale');
});

test('"all" never reads the host permissions', async () => {
  const store = syncedStore({ u1: [] });
  const p = new RepositoryPermissions('all', CONFIG, catalog(), { synced: store });
  assert.equal(await seen(p, 'u1@example.com', 'u1'), '1,2,3,4,5');
  assert.deepEqual(store.reads, []);
});

test('alone (no time to live), host permissions are read once and kept until this process writes', async () => {
  const store = syncedStore({ u1: [1] });
  let clock = 0;
  const p = new RepositoryPermissions('code-host', { groups: {}, grants: [] }, catalog(), { synced: store, now: () => clock });
  assert.equal(await seen(p, 'u1@example.com', 'u1'), '1,5');
  store.set('u1', []);
  clock += 24 * 3_600_000;
  assert.equal(await seen(p, 'u1@example.com', 'u1'), '1,5');
  assert.equal(store.reads.length, 1);
  p.changed('u1');
  assert.equal(await seen(p, 'u1@example.com', 'u1'), '5');
});
