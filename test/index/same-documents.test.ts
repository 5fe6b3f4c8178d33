// Whether two manifests of a repository name the same documents (manifest.ts
// sameDocuments): what a watches' check skips without reading a file. Only a move of the
// same full build, with no delta on it, at the same refs, is; anything else is not known.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sameDocuments, type LoadedManifest, type Manifest, type ManifestShard } from '../../daemon/index/manifest.ts';

const shard = (file: string, over: Partial<ManifestShard> = {}): ManifestShard => ({
  file,
  docs: 3,
  liveDocs: 3,
  contentBytes: 30,
  liveContentBytes: 30,
  delta: false,
  ...over,
});
const base: Manifest = {
  version: 2,
  repoId: 7,
  generation: 4,
  repo: { name: 'r', displayName: 'r', codeHostType: 'genericGitHost', archived: false, fork: false, visibility: 'public', kind: 'git', source: '/r' },
  refs: [{ name: 'main', kind: 'branch', commit: 'a'.repeat(40) }],
  shards: [shard('pack-1.trawl', { member: 3 })],
  indexedAt: '2026-01-01T00:00:00Z',
  files: 3,
  contentBytes: 30,
  skipped: 0,
  baseGeneration: 4,
  retired: [],
};

test('sameDocuments: a move of the same build at the same refs; not a rebuild, a delta, other refs, another repository', () => {
  const cases: Array<[string, LoadedManifest, boolean]> = [
    ['moved into another compound shard', { ...base, generation: 5, shards: [shard('pack-9.trawl', { member: 0 })] }, true],
    ['new metadata alone', { ...base, generation: 5, repo: { ...base.repo, archived: true } }, true],
    ['built again', { ...base, generation: 5, baseGeneration: 5 }, false],
    ['a delta on it', { ...base, generation: 5, shards: [shard('g4-0.trawl'), shard('g5-0.trawl', { delta: true })] }, false],
    ['another commit', { ...base, generation: 5, refs: [{ name: 'main', kind: 'branch' as const, commit: 'b'.repeat(40) }] }, false],
    ['a ref more', { ...base, generation: 5, refs: [...base.refs, { name: 'v1', kind: 'tag' as const, commit: 'a'.repeat(40) }] }, false],
    ['another file count', { ...base, generation: 5, files: 4 }, false],
    ['another repository', { ...base, repoId: 8 }, false],
    ['a version 1 manifest', { ...base, version: 1, repoName: 'r', repo: undefined, refs: undefined }, false],
  ];
  for (const [what, other, want] of cases) assert.equal(sameDocuments(base, other), want, what);
});
