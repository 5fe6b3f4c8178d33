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
    name: 'small repositories of their own join the small pack of the size tier they make together (not a pack of their own, merged with it next)',
    indexes: () => [
      repo('a', [member('p1-0.trawl', 0, 100, 200)]),
      repo('b', [member('p1-0.trawl', 1, 100, 200)]),
      repo('c', [own(100)]),
      repo('d', [own(100)]),
    ],
    want: [['a', 'b', 'c', 'd']],
  },
  {
    name: 'a merge takes in the small pack of the size tier it grows into',
    indexes: () => [repo('a', [member('p1-0.trawl', 0, 60, 60)]), repo('b', [member('p3-0.trawl', 0, 60, 60)]), repo('c', [member('p5-0.trawl', 0, 130, 130)])],
    want: [['a', 'b', 'c']],
  },
  {
    name: 'a new pack does not take in a small pack once it is itself no longer small',
    indexes: () => [repo('a', [own(250)]), repo('b', [own(250)]), repo('c', [member('p1-0.trawl', 0, 480, 480)])],
    want: [['a', 'b']],
  },
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

/** What the jobs leave: each job's repositories copied into a new pack of their live bytes, at a new generation. */
function applied(indexes: PublishedIndex[], jobs: ReturnType<typeof planPacks>, pack: number): PublishedIndex[] {
  const byRepo = new Map(indexes.map((p) => [p.repoId, p]));
  for (const job of jobs) {
    const file = `p${pack++}-0.trawl`;
    const moved = job.pack.map((j) => byRepo.get(j.repoId)!);
    const packBytes = moved.reduce((n, p) => n + p.manifest!.shards[0]!.liveContentBytes, 0);
    moved.forEach((p, k) => {
      const bytes = p.manifest!.shards[0]!.liveContentBytes;
      byRepo.set(p.repoId, {
        ...p,
        generation: p.generation + 2,
        manifest: { ...p.manifest!, generation: p.generation + 2, shards: [member(file, k, bytes, packBytes)] },
      });
    });
  }
  return [...byRepo.values()];
}

test('pack plan: what a plan leaves needs no further plan (random published indexes whose movable content fits one small pack)', () => {
  // mulberry32, seeded: the same states on every run.
  let seed = 12345;
  const rand = (n: number): number => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 2 ** 32) * n);
  };
  let checked = 0;
  for (let round = 0; round < 2000; round++) {
    const indexes: PublishedIndex[] = [];
    let movable = 0;
    for (let i = rand(4); i > 0; i--) {
      const bytes = 5 + rand(120);
      movable += bytes;
      indexes.push(repo(`own${round}-${i}`, [own(bytes)]));
    }
    for (let k = rand(4); k > 0; k--) {
      const file = `p${1000 + 2 * k}-0.trawl`;
      const members = 1 + rand(3);
      const sizes = Array.from({ length: members }, () => 5 + rand(80));
      const live = sizes.reduce((n, b) => n + b, 0);
      // Some packs mostly tombstoned (their other members moved on), some healthy and large.
      const big = rand(4) === 0;
      const packBytes = big ? 600 + rand(300) : rand(3) === 0 ? live * 3 : live;
      const liveSizes = big ? [packBytes] : sizes;
      if (!big) movable += live;
      liveSizes.forEach((b, m) => indexes.push(repo(`pack${round}-${k}-${m}`, [member(file, m, b, packBytes)])));
    }
    if (movable >= TARGET / 2) continue;
    const first = planPacks(indexes, TARGET, BELOW);
    const again = planPacks(applied(indexes, first, 1), TARGET, BELOW);
    assert.deepEqual(again, [], `round ${round}: a second plan after ${JSON.stringify(first)}`);
    checked++;
  }
  assert.ok(checked > 500, `only ${checked} states checked`);
});
