// The rule for the refs a request may name (revision-syntax.ts, revision.ts, reachable.ts):
// the syntax as a table, then resolution in a real repository whose object database holds
// what no indexed ref reaches (a commit reset away, an unindexed branch, a stash), also as
// a table: every accepted form resolves to git's answer, every other one is INVALID_GIT_REF.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServiceError } from '../../daemon/errors.ts';
import { closeAllRepositories, withRepository } from '../../daemon/repos/git-repo-cache.ts';
import type { GitRef } from '../../daemon/repos/git.ts';
import { resolveCommit, type RevisionScope } from '../../daemon/repos/revision.ts';
import { commitIdForm, parseRevision } from '../../daemon/repos/revision-syntax.ts';
import { git, TestRepo } from '../helpers/git.ts';

const root = mkdtempSync(join(tmpdir(), 'trawl-revision-rule-'));
after(async () => {
  await closeAllRepositories();
  rmSync(root, { recursive: true, force: true });
});

test('parseRevision: base and ancestor steps, or INVALID_GIT_REF saying why', () => {
  const cases: Array<[string, { base: string; suffix: string } | RegExp]> = [
    ['main', { base: 'main', suffix: '' }],
    ['feature/x-1.2', { base: 'feature/x-1.2', suffix: '' }],
    ['refs/heads/main', { base: 'refs/heads/main', suffix: '' }],
    ['main~1', { base: 'main', suffix: '~1' }],
    ['main~', { base: 'main', suffix: '~' }],
    ['main^', { base: 'main', suffix: '^' }],
    ['main^2~3^', { base: 'main', suffix: '^2~3^' }],
    ['v1.0^{commit}', { base: 'v1.0', suffix: '^{commit}' }],
    ['v1.0^{}', { base: 'v1.0', suffix: '^{}' }],
    ['HEAD~2', { base: 'HEAD', suffix: '~2' }],
    ['0123456789abcdef0123456789abcdef01234567~0', { base: '0123456789abcdef0123456789abcdef01234567', suffix: '~0' }],
    ['', /it is empty/],
    ['-x', /must not start with "-"/],
    ['--output=/tmp/x', /must not start with "-"/],
    ['a\0b', /NUL/],
    ['ma in', /whitespace/],
    ['main\n', /whitespace/],
    ['a..b', /ranges/],
    ['main...dev', /ranges/],
    ['main:README.md', /":"/],
    [':/fix', /":"/],
    ['main^{/fix}', /message search/],
    ['HEAD@{1}', /reflog/],
    ['@{1}', /reflog/],
    ['main@{1}', /reflog/],
    ['main@{1.year.ago}', /reflog/],
    ['main@{yesterday}', /reflog/],
    ['@{-1}', /reflog/],
    ['@{upstream}', /reflog/],
    ['main@{push}', /reflog/],
    ['stash@{0}', /reflog/],
    ['HEAD@{1}~1', /reflog/],
    ['~1', /names no branch, tag or commit/],
    ['^{commit}', /names no branch, tag or commit/],
    ['main^{tree}', /only "~N", "\^N" and "\^\{commit\}"/],
    ['main^{blob}', /only "~N", "\^N" and "\^\{commit\}"/],
    ['main~1x', /only "~N", "\^N" and "\^\{commit\}"/],
    ['main^!', /only "~N", "\^N" and "\^\{commit\}"/],
  ];
  for (const [ref, want] of cases) {
    if (want instanceof RegExp) {
      assert.throws(
        () => parseRevision(ref),
        (err: unknown) =>
          err instanceof ServiceError &&
          err.errorCode === 'INVALID_GIT_REF' &&
          want.test(err.message) &&
          err.message.startsWith(`ref ${JSON.stringify(ref)} is not valid`),
        JSON.stringify(ref),
      );
    } else assert.deepEqual(parseRevision(ref), want, JSON.stringify(ref));
  }
});

test('commitIdForm: 40 hex digits, or 7 to 39; shorter ones and names are not ids', () => {
  const full = 'a'.repeat(40);
  const cases: Array<[string, 'full' | 'abbreviated' | undefined]> = [
    [full, 'full'],
    [full.toUpperCase(), 'full'],
    ['abcdef0', 'abbreviated'],
    ['ABCDEF0', 'abbreviated'],
    [full.slice(0, 39), 'abbreviated'],
    ['abcdef', undefined],
    ['abcd', undefined],
    [`${full}0`, undefined],
    ['abcdefg', undefined],
    ['main', undefined],
  ];
  for (const [base, want] of cases) assert.equal(commitIdForm(base), want, base);
});

// main and dev are indexed; wip is a branch nobody indexed; v1 (annotated) and light are
// tags. The secret commit was on main until `git reset --hard HEAD~1`: only the reflog
// (and ORIG_HEAD) hold it now. The stash holds another.
const path = join(root, 'repo');
const r = TestRepo.init(path);
const c1 = r.commit({ 'a.txt': 'one\n' }, 'one');
r.tag('v1', true);
const c2 = r.commit({ 'a.txt': 'two\n' }, 'two');
r.checkout('dev', true);
const d1 = r.commit({ 'dev.txt': 'dev\n' }, 'dev work');
r.checkout('wip', true);
const w1 = r.commit({ 'wip.txt': 'WIP_SECRET\n' }, 'wip');
r.checkout('main');
const c3 = r.commit({ 'a.txt': 'three\n' }, 'three');
r.tag('light');
const secret = r.commit({ 'creds.txt': 'SECRET\n' }, 'oops');
git(path, 'reset', '-q', '--hard', 'HEAD~1');
r.commit({ 'stashed.txt': 'x\n' }, 'tmp');
git(path, 'reset', '-q', '--soft', 'HEAD~1');
git(path, 'stash', '-q');
const stash = git(path, 'rev-parse', 'refs/stash').trim();

const indexed: GitRef[] = [
  { name: 'main', kind: 'branch', commit: c3 },
  { name: 'dev', kind: 'branch', commit: d1 },
];
const scope = (refs: GitRef[] = indexed, generation = 1): RevisionScope => ({ defaultRef: refs[0]!.name, label: 'acme/app', indexed: { refs, generation } });
const resolve = (ref: string | undefined, s = scope()) => withRepository(path, async (repo) => (await resolveCommit(repo, ref, s)).sha());

test('accepted: HEAD, indexed branches, tags, and ids of commits they reach, with ancestor steps', async () => {
  const cases: Array<[string | undefined, string]> = [
    [undefined, c3],
    ['HEAD', c3],
    ['HEAD~1', c2],
    ['main', c3],
    ['refs/heads/main', c3],
    ['main~2', c1],
    ['main^', c2],
    ['dev', d1],
    ['refs/heads/dev', d1],
    ['dev~1', c2],
    ['v1', c1],
    ['refs/tags/v1', c1],
    ['v1^{commit}', c1],
    ['v1^{}', c1],
    ['light', c3],
    [c1, c1],
    [c1.toUpperCase(), c1],
    [c1.slice(0, 7), c1],
    [c2.slice(0, 12), c2],
    [`${c3}~1`, c2],
    [`${c2}^{commit}`, c2],
    [d1, d1],
    // The id of the annotated tag object: peeled to its commit.
    [git(path, 'rev-parse', 'v1').trim(), c1],
  ];
  for (const [ref, want] of cases) assert.equal(await resolve(ref), want, String(ref));
});

test('refused: the reflog, unindexed branches, other refs, unreachable and short ids', async () => {
  const unresolved = /^ref ".*" does not resolve to a commit in acme\/app.*: name an indexed branch \(main, dev\), a tag, or the id of a commit they reach$/;
  const reflog = /reflog forms/;
  const cases: Array<[string, RegExp]> = [
    ['HEAD@{1}', reflog],
    ['main@{1}', reflog],
    ['@{1}', reflog],
    ['@{-1}', reflog],
    ['main@{1.year.ago}', reflog],
    ['stash@{0}', reflog],
    ['@', unresolved],
    ['ORIG_HEAD', unresolved],
    ['refs/stash', unresolved],
    ['stash', unresolved],
    ['wip', unresolved],
    ['refs/heads/wip', unresolved],
    ['wip~1', unresolved],
    ['refs/remotes/origin/main', unresolved],
    ['heads/main', unresolved],
    [secret, unresolved],
    [secret.slice(0, 7), unresolved],
    [secret.toUpperCase(), unresolved],
    [`${secret}~0`, unresolved],
    [`${secret}^{commit}`, unresolved],
    [w1, unresolved],
    [w1.slice(0, 10), unresolved],
    [stash, unresolved],
    // A tree and a blob: not commits, and said the same way as a missing id.
    [git(path, 'rev-parse', 'main^{tree}').trim(), unresolved],
    [git(path, 'rev-parse', 'main:a.txt').trim(), unresolved],
    ['0'.repeat(40), unresolved],
    [secret.slice(0, 4), /needs at least 7 hex digits/],
    [c1.slice(0, 6), /needs at least 7 hex digits/],
    ['main~99', /does not resolve to a commit in acme\/app$/],
  ];
  for (const [ref, want] of cases) {
    await assert.rejects(resolve(ref), (err: unknown) => err instanceof ServiceError && err.errorCode === 'INVALID_GIT_REF' && want.test(err.message), ref);
  }
  // Indexing wip makes it, and what it reaches, a ref that may be named.
  const withWip = scope([...indexed, { name: 'wip', kind: 'branch', commit: w1 }], 2);
  assert.equal(await resolve('wip', withWip), w1);
  assert.equal(await resolve(w1, withWip), w1);
});

test('a commit reachable once is refused again when its branch moves away from it, and again when the index changes', async () => {
  const p = join(root, 'moving');
  const m = TestRepo.init(p);
  m.commit({ 'a.txt': '1\n' }, 'one');
  // Not a tip: its answer comes from a walk, and is remembered.
  const middle = m.commit({ 'a.txt': '2\n' }, 'two');
  const tip = m.commit({ 'a.txt': '3\n' }, 'three');
  const at = (ref: string, s: RevisionScope) => withRepository(p, async (repo) => (await resolveCommit(repo, ref, s)).sha());
  const refs: GitRef[] = [{ name: 'main', kind: 'branch', commit: tip }];
  const s1: RevisionScope = { defaultRef: 'main', indexed: { refs, generation: 1 } };
  assert.equal(await at(middle, s1), middle);
  assert.equal(await at(middle, s1), middle); // remembered
  git(p, 'reset', '-q', '--hard', 'HEAD~2');
  await assert.rejects(at(middle, s1), /does not resolve to a commit/);
  await assert.rejects(at(tip, s1), /does not resolve to a commit/);
  git(p, 'reset', '-q', '--hard', tip);
  assert.equal(await at(middle, s1), middle);
  // The next index no longer holds main (only a branch at the first commit): the same id is refused.
  git(p, 'branch', 'old', 'HEAD~2');
  const s2: RevisionScope = {
    defaultRef: 'old',
    indexed: { refs: [{ name: 'old', kind: 'branch', commit: git(p, 'rev-parse', 'old').trim() }], generation: 2 },
  };
  await assert.rejects(at(middle, s2), /does not resolve to a commit/);
});
