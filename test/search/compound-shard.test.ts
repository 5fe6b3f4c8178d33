// A compound shard (several repositories in one file, shard format 7) answers every query
// as the repositories' own data says: each match names its repository and its branches,
// repository and branch filters are decided per repository, and a search given only some
// of the members (the others tombstoned, or hidden from the caller) never sees the rest.
// The expected answers come from an oracle that reads the files as given, not the shard.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { buildShard, type JobMember, type ShardFile } from '../../daemon/index/shard-builder.ts';
import { Shard } from '../../daemon/index/shard-reader.ts';
import type { ShardRepoMeta } from '../../daemon/index/shard-format.ts';
import { searchShard } from '../../daemon/search/shard-search.ts';
import type { SearchMember } from '../../daemon/search/branch-classes.ts';
import { Matcher } from '../../daemon/search/matcher.ts';
import { planQuery } from '../../daemon/query/plan.ts';
import { planTerms } from '../../daemon/query/terms.ts';
import { tempDir } from '../helpers/corpus.ts';

/** A repository of the test: its branches ([0] the default) and its file versions, each on some branches. */
interface TestRepo {
  name: string;
  archived?: boolean;
  branches: string[];
  files: Array<{ path: string; text: string; on: number[] }>;
}

const REPOS: TestRepo[] = [
  {
    name: 'alpha',
    branches: ['main', 'dev'],
    files: [
      { path: 'src/lock.c', text: 'int spin_lock(void) { return lock_count; }\n', on: [0, 1] },
      { path: 'src/new.c', text: 'int spin_lock_new(void) { return 1; }\n', on: [1] },
      { path: 'README.md', text: 'alpha uses spin_lock\n', on: [0] },
    ],
  },
  {
    name: 'beta',
    archived: true,
    branches: ['master'],
    files: [
      { path: 'src/lock.c', text: 'void spin_unlock(void) { lock_count--; }\n', on: [0] },
      { path: 'lib/util.h', text: '#define LOCK_COUNT 3\n', on: [0] },
    ],
  },
  { name: 'empty', branches: ['main'], files: [] },
  {
    name: 'gamma',
    branches: ['main', 'v1.0'],
    files: [
      { path: 'src/lock.c', text: 'int spin_lock(void) { return 0; }\n', on: [0] },
      { path: 'src/lock.c', text: 'int spin_lock(void) { return old_lock; }\n', on: [1] },
    ],
  },
];

function meta(r: TestRepo, id: number): ShardRepoMeta {
  return {
    name: r.name,
    id,
    codeHostType: 'genericGitHost',
    source: `/src/${r.name}`,
    kind: 'git',
    branch: r.branches[0]!,
    commit: '',
    remoteUrl: '',
    archived: r.archived === true,
    fork: false,
    visibility: 'public',
  };
}

function buildCompound(dir: string): Shard {
  const members: JobMember[] = REPOS.map((r, i) => ({ repo: meta(r, i + 1), branches: r.branches }));
  const files: ShardFile[] = [];
  // Given member by member in reverse, files out of order: the builder groups them.
  for (let m = REPOS.length - 1; m >= 0; m--) {
    for (const f of [...REPOS[m]!.files].reverse())
      files.push({ path: f.path, size: Buffer.byteLength(f.text), data: Buffer.from(f.text), branches: f.on, member: m });
  }
  const path = join(dir, 'p1-0.trawl');
  buildShard({
    finalPath: path,
    repo: members[0]!.repo,
    shardIndex: 0,
    files,
    maxFileSize: 1 << 20,
    maxTrigrams: 20_000,
    indexedAt: new Date(0).toISOString(),
    branches: REPOS[0]!.branches,
    symbols: false,
    members,
  });
  return Shard.open(path);
}

/** What a search returns of a hit: its repository, path and branches. */
type Found = string;

/** The oracle: each repository's file versions on the branches asked, matched by substring (or a regex). */
function expected(
  pattern: RegExp | string,
  o: { repo?: (name: string) => boolean; branch?: (name: string, isDefault: boolean) => boolean; archived?: boolean; members?: number[] } = {},
): Found[] {
  const out: Found[] = [];
  REPOS.forEach((r, m) => {
    if (o.members && !o.members.includes(m)) return;
    if (o.repo && !o.repo(r.name)) return;
    if (o.archived === false && r.archived) return;
    for (const f of r.files) {
      const on = f.on.filter((b) => (o.branch ? o.branch(r.branches[b]!, b === 0) : b === 0));
      if (on.length === 0) continue;
      const hit = typeof pattern === 'string' ? f.text.includes(pattern) : pattern.test(f.text);
      if (hit) out.push(`${r.name}:${f.path}@${on.map((b) => r.branches[b]).join(',')}`);
    }
  });
  return out.sort();
}

function search(shard: Shard, query: string, regex: boolean, members?: SearchMember[], useIndex = true): Found[] {
  const plan = planQuery({ query, isRegexEnabled: regex, isCaseSensitivityEnabled: true });
  const matchers = planTerms(plan).map((t) => new Matcher(t, useIndex ? 'indexed' : 'reference'));
  const result = searchShard(shard, { plan, matchers, limit: 1000, useIndex, ...(members ? { members } : {}) });
  return result.hits.map((h) => `${REPOS[h.member]!.name}:${shard.name(h.doc)}@${h.branches.join(',')}`).sort();
}

test('a compound shard lists its repositories by document range, each with its own branches', () => {
  const dir = tempDir('compound');
  try {
    const shard = buildCompound(dir.path);
    assert.ok(shard.version >= 7, `a shard of version ${shard.version}`);
    assert.deepEqual(
      shard.members.map((m) => [m.repo.name, m.end - m.first, shard.branches.names.slice(m.branchFirst, m.branchEnd)]),
      REPOS.map((r) => [r.name, r.files.length, r.branches]),
    );
    for (const [k, m] of shard.members.entries()) for (let d = m.first; d < m.end; d++) assert.equal(shard.memberOf(d), k);
    // Each member's documents are its own: paths repeat across repositories.
    const paths = shard.members.map((m) => Array.from({ length: m.end - m.first }, (_, i) => shard.name(m.first + i)).sort());
    assert.deepEqual(
      paths,
      REPOS.map((r) => r.files.map((f) => f.path).sort()),
    );
  } finally {
    dir.cleanup();
  }
});

test('searches of a compound shard give the oracle’s answers, indexed and brute force alike', () => {
  const dir = tempDir('compound');
  try {
    const shard = buildCompound(dir.path);
    const anyBranch = () => true;
    const cases: Array<{ query: string; regex?: boolean; want: Found[] }> = [
      { query: 'spin_lock', want: expected('spin_lock') },
      { query: 'lock_count', want: expected('lock_count') },
      { query: 'spin_lock branch:*', want: expected('spin_lock', { branch: anyBranch }) },
      { query: 'spin_lock branch:dev', want: expected('spin_lock', { branch: (b) => b === 'dev' }) },
      { query: 'spin_lock branch:HEAD', want: expected('spin_lock') },
      { query: 'old_lock branch:v1.0', want: expected('old_lock', { branch: (b) => b === 'v1.0' }) },
      { query: 'spin_lock repo:^gamma$', want: expected('spin_lock', { repo: (n) => n === 'gamma' }) },
      { query: 'lock -repo:alpha', want: expected('lock', { repo: (n) => n !== 'alpha' }) },
      { query: 'lock archived:no', want: expected('lock', { archived: false }) },
      {
        query: '(repo:alpha branch:dev spin_lock_new) or (repo:gamma branch:v1.0 old_lock)',
        want: [
          ...expected('spin_lock_new', { repo: (n) => n === 'alpha', branch: (b) => b === 'dev' }),
          ...expected('old_lock', { repo: (n) => n === 'gamma', branch: (b) => b === 'v1.0' }),
        ].sort(),
      },
      { query: 'spin_(un)?lock\\(', regex: true, want: expected(/spin_(un)?lock\(/) },
      { query: 'nowhere_at_all', want: [] },
    ];
    for (const c of cases) {
      assert.deepEqual(search(shard, c.query, c.regex === true), c.want, c.query);
      assert.deepEqual(search(shard, c.query, c.regex === true, undefined, false), c.want, `${c.query} (brute force)`);
    }
  } finally {
    dir.cleanup();
  }
});

test('a search given some members sees only theirs, with their current records', () => {
  const dir = tempDir('compound');
  try {
    const shard = buildCompound(dir.path);
    // Alpha and beta tombstoned (or hidden): gamma's matches only.
    assert.deepEqual(search(shard, 'spin_lock', false, [{ member: 3 }]), expected('spin_lock', { members: [3] }));
    assert.deepEqual(search(shard, 'lock_count', false, [{ member: 0 }, { member: 1 }]), expected('lock_count', { members: [0, 1] }));
    assert.deepEqual(search(shard, 'spin_lock', false, []), []);
    // A renamed repository is found by its current name, not the one the shard stored.
    const renamed: SearchMember[] = [{ member: 0, repo: { name: 'alpha-renamed', archived: false, fork: false, visibility: 'public' } }, { member: 3 }];
    assert.deepEqual(search(shard, 'spin_lock repo:renamed', false, renamed), expected('spin_lock', { members: [0] }));
    assert.deepEqual(search(shard, 'spin_lock repo:^alpha$', false, renamed), []);
    // Unarchived since the build: archived:no now keeps it.
    const unarchived: SearchMember[] = [{ member: 1, repo: { name: 'beta', archived: false, fork: false, visibility: 'public' } }];
    assert.deepEqual(search(shard, 'lock_count archived:no', false, unarchived), expected('lock_count', { members: [1] }));
  } finally {
    dir.cleanup();
  }
});
