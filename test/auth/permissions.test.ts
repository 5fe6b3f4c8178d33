// Repository permissions from the configuration (daemon/auth/permissions.ts): table tests
// of who sees what under "all" and "code-host", and the resolved sets following the
// catalog as it changes.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RepositoryPermissions, type RepositoryNames } from '../../daemon/auth/permissions.ts';
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

const seen = (p: RepositoryPermissions, email: string) =>
  REPOS.filter((r) => p.canSeeFor(email)(r))
    .map((r) => r.repoId)
    .join(',');

test('"all": every member sees every repository, whatever the grants', () => {
  const p = new RepositoryPermissions('all', CONFIG, catalog());
  for (const email of ['a@example.com', 'nobody@example.com']) assert.equal(seen(p, email), '1,2,3,4,5');
});

test('"code-host": public repositories, and what grants give by user or group, globs over names without regard to case', () => {
  const p = new RepositoryPermissions('code-host', CONFIG, catalog());
  const table: Array<[string, string]> = [
    ['a@example.com', '1,2,3,5'], // team-a: team-a-* and tools/** (across segments)
    ['A@Example.COM', '1,2,3,5'], // emails compared without case
    ['b@example.com', '1,2,3,5'], // named directly
    ['o@example.com', '1,2,4,5'], // ops: "*" stays within one segment, so not tools/lint/rules
    ['nobody@example.com', '5'], // public only, never everything
  ];
  for (const [email, expected] of table) assert.equal(seen(p, email), expected, email);
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
