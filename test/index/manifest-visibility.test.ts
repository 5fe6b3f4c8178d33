// Who may see a manifest's repository (manifest.ts manifestVisibility): a version 2
// manifest's own record; a version 1 manifest names none, so the store's record, and
// without one private: a repository nobody vouches for is never shown to everyone.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { manifestVisibility, type LoadedManifest, type Manifest } from '../../daemon/index/manifest.ts';

const counts = {
  repoId: 7,
  generation: 1,
  shards: [],
  indexedAt: '2026-01-01T00:00:00Z',
  files: 0,
  contentBytes: 0,
  skipped: 0,
  baseGeneration: 1,
  retired: [],
};
const v2 = (visibility: 'public' | 'private'): Manifest => ({
  ...counts,
  version: 2,
  repo: { name: 'r', displayName: 'r', codeHostType: 'genericGitHost', archived: false, fork: false, visibility, kind: 'git', source: '/r' },
  refs: [],
});
const v1: LoadedManifest = { ...counts, version: 1, repoName: 'r' };

test('manifestVisibility: the manifest says, else the store, else private', () => {
  const cases: Array<[string, LoadedManifest, { visibility: 'public' | 'private' } | undefined, 'public' | 'private']> = [
    ['version 2, public', v2('public'), undefined, 'public'],
    ['version 2, private', v2('private'), undefined, 'private'],
    ['version 1, the store says public', v1, { visibility: 'public' }, 'public'],
    ['version 1, the store says private', v1, { visibility: 'private' }, 'private'],
    ['version 1, unknown to the store', v1, undefined, 'private'],
  ];
  for (const [name, m, known, want] of cases) assert.equal(manifestVisibility(m, known), want, name);
});
