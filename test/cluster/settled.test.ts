// settled(): the state tests and operators wait for, every shard on exactly its owners.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { settled } from '../../daemon/cluster/status.ts';

const shard = (owners: string[], holders: string[], health: 'ok' | 'under-replicated' | 'unavailable' = 'ok') => ({
  shard: 'g1-0.trawl',
  owners,
  holders,
  replicas: holders.length,
  health,
});
const status = (...shards: Array<ReturnType<typeof shard>>) => ({ repositories: [{ repositoryId: 1, repository: 'r', generation: 1, builtBy: 'a', shards }] });

test('settled: every shard held by exactly its owners', () => {
  const cases: Array<[string, ReturnType<typeof status>, boolean]> = [
    ['owners hold it, in another order', status(shard(['a', 'b'], ['b', 'a'])), true],
    ['nothing published', { repositories: [] } as unknown as ReturnType<typeof status>, true],
    ['an owner lacks it', status(shard(['a', 'b'], ['a'])), false],
    ['the builder still holds it besides its owners', status(shard(['a', 'b'], ['a', 'b', 'c'])), false],
    ['as many holders, not the owners', status(shard(['a', 'b'], ['a', 'c'])), false],
    ['one shard of two not settled', status(shard(['a', 'b'], ['a', 'b']), shard(['b', 'c'], ['b'])), false],
    ['held by its owners but reported unavailable', status(shard(['a'], ['a'], 'unavailable')), false],
  ];
  for (const [what, s, want] of cases) assert.equal(settled(s), want, what);
});
