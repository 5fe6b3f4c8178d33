// Which repositories a search context holds (search/context-scope.ts), as a table: include
// entries of each kind (name globs, connections, topics), excludes, an absent include, and
// the rules of each kind (globs over whole names without regard to case, `*` within a part,
// `**` across; topics without regard to case; a connection that no longer exists selects
// nothing). A search naming a context that nobody resolved is refused.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ServiceError } from '../../daemon/errors.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { tempDir } from '../helpers/corpus.ts';
import { completeContext, type WrittenContext } from '../../daemon/config/contexts.ts';
import { contextRepoIds, namesConnections, type ScopedRepo } from '../../daemon/search/context-scope.ts';

const REPOS: ScopedRepo[] = [
  { repoId: 1, name: 'github.com/acme/api-users', connectionId: 10, topics: ['backend', 'go'] },
  { repoId: 2, name: 'github.com/acme/api-billing', connectionId: 10, topics: ['backend'] },
  { repoId: 3, name: 'github.com/acme/legacy-api', connectionId: 10, topics: [] },
  { repoId: 4, name: 'gitlab.example.com/web/shop/legacy-cart', connectionId: 20, topics: ['frontend', 'legacy'] },
  { repoId: 5, name: 'gitlab.example.com/web/Shop', connectionId: 20, topics: ['Frontend'] },
  { repoId: 6, name: 'widgets', topics: [] },
];
const CONNECTIONS: Record<string, number> = { gh: 10, gl: 20 };

const rows: Array<{ name: string; def: WrittenContext; want: number[] }> = [
  { name: 'no include, no exclude: every repository', def: {}, want: [1, 2, 3, 4, 5, 6] },
  { name: 'a glob within one part', def: { include: { repos: ['github.com/acme/api-*'] } }, want: [1, 2] },
  { name: 'globs match whole names, without regard to case', def: { include: { repos: ['GITHUB.COM/ACME/API-USERS', 'acme/*'] } }, want: [1] },
  { name: '* does not cross "/", ** does', def: { include: { repos: ['gitlab.example.com/*', 'gitlab.example.com/**/legacy-*'] } }, want: [4] },
  { name: '** at the start: any depth', def: { include: { repos: ['**/legacy-*'] } }, want: [3, 4] },
  { name: '? is one character', def: { include: { repos: ['widget?', 'widge?'] } }, want: [6] },
  { name: 'a connection', def: { include: { connections: ['gl'] } }, want: [4, 5] },
  { name: 'a connection that no longer exists selects nothing', def: { include: { connections: ['gone'] } }, want: [] },
  { name: 'topics, without regard to case', def: { include: { topics: ['FRONTEND'] } }, want: [4, 5] },
  { name: 'entries of every kind: any one matches', def: { include: { repos: ['widgets'], connections: ['gh'], topics: ['legacy'] } }, want: [1, 2, 3, 4, 6] },
  { name: 'exclude without include: every repository but those', def: { exclude: { repos: ['**/legacy-*'] } }, want: [1, 2, 5, 6] },
  {
    name: 'include then exclude, by another kind',
    def: { include: { connections: ['gh', 'gl'] }, exclude: { topics: ['legacy'], repos: ['github.com/acme/legacy-*'] } },
    want: [1, 2, 5],
  },
  { name: 'an exclude wins over an include', def: { include: { topics: ['backend'] }, exclude: { topics: ['backend'] } }, want: [] },
];

for (const row of rows) {
  test(`context scope: ${row.name}`, () => {
    const ids = contextRepoIds(completeContext(row.def), REPOS, (n) => CONNECTIONS[n]);
    assert.deepEqual(
      [...ids].sort((a, b) => a - b),
      row.want,
    );
  });
}

test('namesConnections: only a definition that names a connection needs their ids', () => {
  assert.equal(namesConnections(completeContext({ include: { repos: ['x'] }, exclude: { topics: ['y'] } })), false);
  assert.equal(namesConnections(completeContext({ exclude: { connections: ['gh'] } })), true);
  assert.equal(namesConnections(completeContext({})), false);
});

test('a search that names a context without the repository filter that resolves it is refused, not searched everywhere', async () => {
  const dir = tempDir('context-unresolved');
  const searcher = new Searcher({ dataDir: join(dir.path, 'data'), workers: 0 });
  try {
    mkdirSync(join(dir.path, 'tree'));
    writeFileSync(join(dir.path, 'tree', 'a.c'), 'int needle;\n');
    await indexLocal(join(dir.path, 'tree'), { dataDir: join(dir.path, 'data'), workers: 1 });
    const req = { query: 'needle context:backend', matches: 10, contextLines: 0, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: false };
    await assert.rejects(
      () => searcher.search(req),
      (err: unknown) => err instanceof ServiceError && err.errorCode === 'FAILED_TO_PARSE_QUERY' && /context:backend names a search context/.test(err.message),
    );
    // Resolved (the daemon's filter), or global: searched.
    assert.equal((await searcher.search(req, { repoFilter: () => true })).files.length, 1);
    assert.equal((await searcher.search({ ...req, query: 'needle context:global' })).files.length, 1);
  } finally {
    await searcher.close();
    dir.cleanup();
  }
});
