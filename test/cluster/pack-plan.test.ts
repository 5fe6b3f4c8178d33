// Which published repositories a cluster copies into compound shards (pack-plan.ts): a
// table of published indexes and the jobs planned for them.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ManifestShard } from '../../daemon/index/manifest.ts';
import { packJobId, planPacks } from '../../daemon/cluster/pack-plan.ts';
import type { PublishedIndex } from '../../daemon/cluster/published.ts';

const TARGET = 1000;
const BELOW = 250;

let nextId = 1;
/** A published repository named `name` at generation 7 with these shards. */
function repo(name: string, shards: ManifestShard[], extra: { symbolsPending?: true; deleted?: true } = {}): PublishedIndex {
  const repoId = nextId++;
  return {
    repoId,
    generation: 7,
    builtBy: 'a',
    publishedAt: '2026-01-01T00:00:00Z',
    ...(extra.deleted ? { deleted: true as const } : {}),
    manifest: {
      version: 2,
      repoId,
      repo: { name, displayName: name, codeHostType: 'genericGitHost', kind: 'git', source: '/x', visibility: 'public', archived: false, fork: false } as never,
      generation: 7,
      refs: [],
      shards,
      indexedAt: '',
      files: 1,
      contentBytes: shards.reduce((n, s) => n + s.contentBytes, 0),
      skipped: 0,
      baseGeneration: 7,
      ...(extra.symbolsPending ? { symbolsPending: true as const } : {}),
    },
  };
}
const own = (bytes: number, more: Partial<ManifestShard> = {}): ManifestShard => ({
  file: 'g7-0.trawl',
  docs: 1,
  liveDocs: 1,
  contentBytes: bytes,
  liveContentBytes: bytes,
  delta: false,
  ...more,
});
const member = (file: string, k: number, bytes: number, packBytes: number): ManifestShard => ({
  file,
  member: k,
  packBytes,
  packDocs: 10,
  docs: 1,
  liveDocs: 1,
  contentBytes: bytes,
  liveContentBytes: bytes,
  delta: false,
});

/** The planned jobs as repository names. */
function planned(indexes: PublishedIndex[]): string[][] {
  const names = new Map(indexes.map((p) => [p.repoId, p.manifest!.repo.name]));
  return planPacks(indexes, TARGET, BELOW).map((j) => j.pack.map((p) => names.get(p.repoId)!));
}

const cases: Array<{ name: string; indexes: () => PublishedIndex[]; want: string[][] }> = [
  { name: 'nothing published', indexes: () => [], want: [] },
  { name: 'two small repositories of their own: packed together, by name', indexes: () => [repo('b', [own(100)]), repo('a', [own(100)])], want: [['a', 'b']] },
  { name: 'one alone gains nothing', indexes: () => [repo('a', [own(100)])], want: [] },
  {
    name: 'one joins a small pack',
    indexes: () => [repo('c', [own(100)]), repo('a', [member('p1-0.trawl', 0, 100, 200)]), repo('b', [member('p1-0.trawl', 1, 100, 200)])],
    want: [['a', 'b', 'c']],
  },
  {
    name: 'one does not join a small pack many times its size',
    indexes: () => [repo('c', [own(20)]), repo('a', [member('p1-0.trawl', 0, 450, 460)])],
    want: [],
  },
  { name: 'one does not join a pack that is not small', indexes: () => [repo('c', [own(200)]), repo('a', [member('p1-0.trawl', 0, 600, 650)])], want: [] },
  { name: 'above the small bound: stays on its own', indexes: () => [repo('a', [own(300)]), repo('b', [own(300)])], want: [] },
  {
    name: 'several shards, a delta, a membership file, symbols pending, removed: left alone',
    indexes: () => [
      repo('a', [own(10), own(10, { file: 'g7-1.trawl' })]),
      repo('b', [own(10, { delta: true })]),
      repo('c', [own(10, { membership: 'g8-0.membership' })]),
      repo('d', [own(10)], { symbolsPending: true }),
      repo('e', [own(10)], { deleted: true }),
    ],
    want: [],
  },
  {
    name: 'a full pack and a healthy one stay',
    indexes: () => [repo('a', [member('p1-0.trawl', 0, 600, 600)]), repo('b', [member('p3-0.trawl', 0, 700, 700)])],
    want: [],
  },
  {
    name: 'two small packs are merged',
    indexes: () => [repo('a', [member('p1-0.trawl', 0, 100, 100)]), repo('b', [member('p3-0.trawl', 0, 100, 100)])],
    want: [['a', 'b']],
  },
  {
    name: 'a small new pack is not merged into one many times its size',
    indexes: () => [repo('a', [member('p1-0.trawl', 0, 450, 460)]), repo('b', [member('p3-0.trawl', 0, 10, 10)])],
    want: [],
  },
  {
    name: 'small packs of one size tier are merged, others left',
    indexes: () => [repo('a', [member('p1-0.trawl', 0, 450, 460)]), repo('b', [member('p3-0.trawl', 0, 10, 10)]), repo('c', [member('p5-0.trawl', 0, 12, 12)])],
    want: [['b', 'c']],
  },
  {
    name: 'a small pack rides along with a tombstoned one no smaller',
    indexes: () => [
      repo('a', [member('p1-0.trawl', 0, 100, 900)]),
      repo('b', [member('p3-0.trawl', 0, 90, 90)]),
      repo('c', [member('p5-0.trawl', 0, 400, 400)]),
    ],
    want: [['a', 'b']],
  },
  { name: 'a mostly tombstoned pack is rewritten', indexes: () => [repo('a', [member('p1-0.trawl', 0, 400, 900)])], want: [['a']] },
  {
    name: 'cut into jobs of about the target, in name order',
    indexes: () => ['f', 'e', 'd', 'c', 'b', 'a'].map((n) => repo(n, [own(240)])),
    want: [
      ['a', 'b', 'c', 'd'],
      ['e', 'f'],
    ],
  },
];

for (const c of cases) {
  test(`pack plan: ${c.name}`, () => {
    assert.deepEqual(planned(c.indexes()), c.want);
  });
}

test('pack plan: only repositories whose shard a live node holds (a job could not read the others)', () => {
  const indexes = [repo('a', [own(100)]), repo('b', [own(100)]), repo('c', [own(100)])];
  const unheld = indexes[1]!.repoId;
  const names = new Map(indexes.map((p) => [p.repoId, p.manifest!.repo.name]));
  assert.deepEqual(
    planPacks(indexes, TARGET, BELOW, (id) => id !== unheld).map((j) => j.pack.map((p) => names.get(p.repoId))),
    [['a', 'c']],
  );
  assert.deepEqual(
    planPacks(indexes.slice(0, 2), TARGET, BELOW, (id) => id !== unheld),
    [],
  );
});

test('a plan queued twice has one id; another plan another', () => {
  assert.equal(packJobId({ pack: [{ repoId: 1, generation: 2 }] }), packJobId({ pack: [{ repoId: 1, generation: 2 }] }));
  assert.notEqual(packJobId({ pack: [{ repoId: 1, generation: 2 }] }), packJobId({ pack: [{ repoId: 1, generation: 3 }] }));
});
