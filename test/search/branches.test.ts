// Several branches and tags of one repository: a file version shared by refs is stored
// once and matched once with all its branches; branch:/rev: select refs; without them only
// the default branch is searched.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { readManifest } from '../../daemon/index/manifest.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import type { SearchResponse } from '../../daemon/search/types.ts';
import { tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';

const dir = tempDir('branches');
const data = join(dir.path, 'data');
let searcher: Searcher;
let repoId = 0;

before(async () => {
  const repo = TestRepo.init(join(dir.path, 'app'));
  repo.commit({
    'shared.c': 'int shared_marker;\n',
    'changed.c': 'const char *v = "alpha_version";\n',
    'orig.c': 'int moved_marker;\n',
    'logo.png': new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 1, 2]),
  });
  repo.checkout('dev', true).commit({ 'changed.c': 'const char *v = "beta_version";\n', 'only-dev.c': 'int only_dev_marker;\n' });
  repo.checkout('main').checkout('feature/x', true).commit({ 'orig.c': null, 'renamed.c': 'int moved_marker;\n' });
  repo.checkout('main').checkout('release/1.0', true).commit({ 'notes.txt': 'release notes\n' });
  repo.tag('v1.0', true);
  repo.checkout('main');
  // Branches that do not match the selection are not indexed.
  repo.checkout('wip', true).commit({ 'wip.c': 'int wip_marker;\n' });
  repo.checkout('main');
  const summary = await indexLocal(repo.path, { dataDir: data, workers: 1, revisions: { branches: ['dev', 'feature/*', 'release/*'], tags: ['v*'] } });
  repoId = summary.repoId;
  assert.deepEqual(
    summary.refs.map((r) => `${r.kind}:${r.name}`),
    ['branch:main', 'branch:dev', 'branch:feature/x', 'branch:release/1.0', 'tag:v1.0'],
  );
  searcher = new Searcher({ dataDir: data, workers: 2 });
});

after(async () => {
  await searcher?.close();
  dir.cleanup();
});

const search = (query: string): Promise<SearchResponse> =>
  searcher.search({ query, matches: 1000, contextLines: 0, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: false });

const found = (r: SearchResponse) => r.files.map((f) => `${f.fileName.text}@${f.branches.join(',')}`).sort();

test('each distinct file version is stored once', () => {
  const m = readManifest(data, repoId)!;
  // shared.c, changed.c x2, orig.c, renamed.c, only-dev.c, notes.txt (logo.png is binary: skipped once)
  assert.equal(m.files, 7);
  assert.equal(m.skipped, 1);
});

test('without branch: only the default branch is searched', async () => {
  assert.deepEqual(found(await search('shared_marker')), ['shared.c@main']);
  assert.deepEqual(found(await search('only_dev_marker')), []);
  assert.deepEqual(found(await search('beta_version')), []);
  assert.deepEqual(found(await search('moved_marker')), ['orig.c@main']);
});

test('branch:* matches a shared version once, with every ref that holds it', async () => {
  assert.deepEqual(found(await search('shared_marker branch:*')), ['shared.c@main,dev,feature/x,release/1.0,v1.0']);
  const r = await search('shared_marker branch:*');
  assert.equal(r.files[0]!.webUrl, 'http://127.0.0.1:3000/app/-/blob/main/shared.c');
});

test('branch: selects refs by glob; rev: and b: are aliases', async () => {
  assert.deepEqual(found(await search('only_dev_marker branch:dev')), ['only-dev.c@dev']);
  assert.deepEqual(found(await search('only_dev_marker rev:dev')), ['only-dev.c@dev']);
  assert.deepEqual(found(await search('shared_marker b:release/*')), ['shared.c@release/1.0']);
  assert.deepEqual(found(await search('shared_marker branch:v1.*')), ['shared.c@v1.0']);
  assert.deepEqual(found(await search('wip_marker branch:*')), []);
  const dev = await search('only_dev_marker branch:dev');
  assert.equal(dev.files[0]!.webUrl, 'http://127.0.0.1:3000/app/-/blob/dev/only-dev.c');
});

test('branch:HEAD and rev:HEAD name the default branch, whatever it is called', async () => {
  assert.deepEqual(found(await search('shared_marker branch:HEAD')), ['shared.c@main']);
  assert.deepEqual(found(await search('_version rev:HEAD')), ['changed.c@main']);
  assert.deepEqual(found(await search('only_dev_marker rev:HEAD')), []);
  assert.deepEqual(found(await search('_version (rev:HEAD or branch:dev)')), ['changed.c@dev', 'changed.c@main']);
  assert.deepEqual(found(await search('shared_marker -branch:HEAD branch:*')), ['shared.c@dev,feature/x,release/1.0,v1.0']);
});

test('different versions of one path are separate results with their own branches', async () => {
  assert.deepEqual(found(await search('_version branch:*')), ['changed.c@dev', 'changed.c@main,feature/x,release/1.0,v1.0']);
  assert.deepEqual(found(await search('alpha_version branch:*')), ['changed.c@main,feature/x,release/1.0,v1.0']);
  assert.deepEqual(found(await search('beta_version branch:*')), ['changed.c@dev']);
});

test('a renamed file is a new version at its new path', async () => {
  assert.deepEqual(found(await search('moved_marker branch:*')), ['orig.c@main,dev,release/1.0,v1.0', 'renamed.c@feature/x']);
});

test('negated and alternative branch filters decide per branch', async () => {
  assert.deepEqual(found(await search('shared_marker -branch:dev -branch:main')), ['shared.c@feature/x,release/1.0,v1.0']);
  assert.deepEqual(found(await search('(branch:dev or branch:main) _version')), ['changed.c@dev', 'changed.c@main']);
  // Content on one branch, another filter on another: a version matches only where both hold.
  assert.deepEqual(found(await search('(branch:dev beta_version) or (branch:main alpha_version)')), ['changed.c@dev', 'changed.c@main']);
  assert.deepEqual(found(await search('branch:dev alpha_version')), []);
});

test('file-name-only and lang: queries respect branches too', async () => {
  assert.deepEqual(found(await search('file:only-dev')), []);
  assert.deepEqual(found(await search('file:only-dev branch:*')), ['only-dev.c@dev']);
  assert.deepEqual(found(await search('file:notes branch:release/*')), ['notes.txt@release/1.0']);
});

test('filters decided once per filter set answer as filters decided anew, past the sets a shard keeps', async () => {
  // A shard keeps the branches grouped by the last 16 filter sets searched
  // (branch-classes.ts): 20 sets, each searched in turn twice, the second round partly from
  // what was kept and partly decided again (the oldest sets dropped), with other queries
  // between them, give the same answers as the first.
  const filters = [
    'branch:*',
    'branch:d*',
    'branch:*e*',
    'branch:*/*',
    'branch:feature/* or branch:dev',
    '-branch:main branch:*',
    'branch:*0',
    'branch:m*',
    'branch:*x',
    'branch:v*',
    'repo:app branch:*',
    'repo:app',
    '-repo:nothing branch:r*',
    'branch:main branch:*',
    '(branch:dev or branch:v*) -branch:main',
    'branch:*/1.0 or branch:*/x',
    '-branch:dev branch:*',
    'branch:w*',
    '-branch:* ',
    'branch:** -branch:v1.0',
  ];
  const first: string[][] = [];
  const firstMoved: string[][] = [];
  for (const f of filters) {
    first.push(found(await search(`e ${f}`)));
    firstMoved.push(found(await search(`moved_marker ${f}`)));
  }
  // The first round was decided anew each time: spot checks against the refs' contents.
  assert.deepEqual(first[1], ['changed.c@dev', 'only-dev.c@dev', 'orig.c@dev', 'shared.c@dev']);
  assert.deepEqual(first[17], []);
  assert.deepEqual(firstMoved[3], ['orig.c@release/1.0', 'renamed.c@feature/x']);
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < filters.length; i++) {
      const k = round === 0 ? i : filters.length - 1 - i;
      assert.deepEqual(found(await search(`e ${filters[k]}`)), first[k], `${filters[k]} (round ${round + 2})`);
      const j = (k + 7) % filters.length;
      assert.deepEqual(found(await search(`moved_marker ${filters[j]}`)), firstMoved[j], `moved_marker ${filters[j]} (round ${round + 2})`);
    }
  }
});
