// The search contexts service (http/contexts.ts) on its own, over an in-memory store and a
// repository list of the test's: a context's resolved set is kept while its definition,
// the list's version and the connections' ids stay, and made again when any of them
// changes (a repository that gains a topic joins the context once the list says so); the
// configuration's contexts hide the API's of the same name and cannot be changed; the
// search filter narrows to the context and never past what the caller sees.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Identity } from '../../daemon/auth/identity.ts';
import { defaultConfig } from '../../daemon/config/load.ts';
import { ServiceError } from '../../daemon/errors.ts';
import { SearchContexts } from '../../daemon/http/contexts.ts';
import type { ScopedRepo } from '../../daemon/search/context-scope.ts';
import { openSqliteStore } from '../../daemon/store/sqlite-store.ts';

const NOW = '2026-03-01T00:00:00.000Z';

function setup() {
  const config = defaultConfig();
  config.connections = { gh: { type: 'git', url: '/nonexistent', revisions: { branches: [], tags: [] }, visibility: 'public' } };
  config.contexts = { fixed: { include: { repos: ['a*'], connections: [], topics: [] } } };
  const repos: ScopedRepo[] = [
    { repoId: 1, name: 'alpha', topics: [] },
    { repoId: 2, name: 'beta', topics: [] },
    { repoId: 3, name: 'gamma', topics: ['x'] },
  ];
  let version = 1;
  let listed = 0;
  const catalog = {
    list: () => {
      listed++;
      return repos;
    },
    version: () => String(version),
  };
  const store = openSqliteStore(':memory:');
  const contexts = new SearchContexts(config, store, catalog);
  return { store, contexts, repos, bump: () => version++, listed: () => listed };
}

const identity = (visible: number[]): Identity => ({ kind: 'apiKey', userId: 'u', canSee: (r) => visible.includes(r.repoId) });

test("a context's set is kept while nothing it depends on changes, and made again when the list, the definition or the connections do", async () => {
  const { store, contexts, repos, bump, listed } = setup();
  try {
    await contexts.put('tagged', { include: { topics: ['X'] } }, NOW);
    const def = (await contexts.find('tagged'))!.definition;
    const first = await contexts.repoIds(def);
    assert.deepEqual([...first], [3]);
    assert.equal(await contexts.repoIds(def), first, 'kept: the same set');
    assert.equal(listed(), 1, 'the list was walked once');

    repos[1] = { ...repos[1]!, topics: ['x'] };
    assert.deepEqual([...(await contexts.repoIds(def))], [3], 'a list whose version did not change is not walked again');
    bump();
    assert.deepEqual([...(await contexts.repoIds(def))].sort(), [2, 3], 'a new version of the list: resolved again');

    await contexts.put('tagged', { include: { topics: ['x'], repos: ['alpha'] } }, NOW);
    assert.deepEqual([...(await contexts.repoIds((await contexts.find('tagged'))!.definition))].sort(), [1, 2, 3], 'a new definition');

    await contexts.put('by-connection', { include: { connections: ['gh'] } }, NOW);
    const byConnection = (await contexts.find('by-connection'))!.definition;
    assert.deepEqual([...(await contexts.repoIds(byConnection))], [], 'no connection of that name in the store yet');
    const gh = await store.upsertConnection('gh', 'git');
    repos[0] = { ...repos[0]!, connectionId: gh.id };
    assert.deepEqual([...(await contexts.repoIds(byConnection))], [1], "the connections' ids changed: resolved again");
  } finally {
    await store.close();
  }
});

test("the configuration's contexts hide the API's of the same name and are read-only; the filter never passes what the caller may not see", async () => {
  const { store, contexts } = setup();
  try {
    await store.contexts.put('fixed', { include: { repos: ['b*'], connections: [], topics: [] } }, NOW);
    assert.equal((await contexts.find('fixed'))!.source, 'configuration');
    assert.deepEqual(
      (await contexts.list()).map((c) => [c.name, c.source]),
      [['fixed', 'configuration']],
    );
    await assert.rejects(
      () => contexts.put('fixed', {}, NOW),
      (e: unknown) => e instanceof ServiceError && e.errorCode === 'CONTEXT_READ_ONLY',
    );
    await assert.rejects(
      () => contexts.delete('fixed'),
      (e: unknown) => e instanceof ServiceError && e.errorCode === 'CONTEXT_READ_ONLY',
    );

    const filter = await contexts.searchFilter(identity([1, 2]), { named: 'fixed', useDefault: true });
    const all = [1, 2, 3].map((repoId) => ({ repoId, visibility: 'private' as const }));
    assert.deepEqual(
      all.filter(filter).map((r) => r.repoId),
      [1],
    );
    const narrow = await contexts.searchFilter(identity([2]), { named: 'fixed', useDefault: true });
    assert.deepEqual(all.filter(narrow), [], 'alpha is in the context, but the caller may not see it');
    const global = await contexts.searchFilter(identity([2, 3]), { named: 'global', useDefault: true });
    assert.deepEqual(
      all.filter(global).map((r) => r.repoId),
      [2, 3],
    );
    await assert.rejects(
      () => contexts.searchFilter(identity([1]), { named: 'nope', useDefault: true }),
      (e: unknown) => e instanceof ServiceError && e.errorCode === 'UNKNOWN_CONTEXT',
    );
  } finally {
    await store.close();
  }
});
