// The repository filters decided from a repository's name and flags alone (match-tree.ts):
// the string test of a plain `repo:` pattern must agree with the regex it stands for, and
// the three-valued verdict must never rule out a repository a search would match in.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import RE2 from 're2';
import { asciiLower, literalPattern, refFilter, refNames, repoVerdict, requiredRepoName, type RepoFlags } from '../../daemon/search/match-tree.ts';
import { planSearch } from '../../daemon/search/plan-cache.ts';

const NAMES = ['linux', 'Linux-Drivers', 'drivers-net', 'net', 'a.b', 'a-b', 'axb', 'github.com/acme/web', 'x$y', 'Kelvin-\u212a', 'stra\u00dfe', ''];

test('literalPattern: plain patterns only, each agreeing with its regex on every name', () => {
  const table: Array<[string, boolean]> = [
    ['^linux$', true],
    ['linux', true],
    ['^drivers', true],
    ['net$', true],
    ['^a\\.b$', true],
    ['a\\-b', true],
    ['x\\$y', true],
    ['x\\$', true],
    ['github.com', false],
    ['^a.b$', false],
    ['net|linux', false],
    ['(?i)linux', false],
    ['\\bnet', false],
    ['\\x41', false],
    ['li[n]ux', false],
    ['k$', true],
    ['^stra\u00dfe$', false],
    ['', true],
    ['^$', true],
  ];
  for (const [pattern, plain] of table) {
    const lit = literalPattern(pattern);
    assert.equal(lit !== null, plain, `plain: ${pattern}`);
    if (!lit) continue;
    const re = new RE2(pattern, 'i');
    for (const name of NAMES) {
      const said: boolean | undefined = lit(name);
      if (said === undefined) continue;
      assert.equal(said, re.test(name), `${pattern} on ${JSON.stringify(name)}`);
    }
  }
  // A name outside ASCII is left to the regex (RE2 folds the Kelvin sign onto k).
  assert.equal(literalPattern('k$')!('Kelvin-\u212a'), undefined);
});

const flags = (repoName: string, more: Partial<RepoFlags> = {}): RepoFlags => ({ repoName, archived: false, fork: false, visibility: 'public', ...more });
const verdict = (query: string, f: RepoFlags): boolean | undefined =>
  repoVerdict(planSearch({ query, isRegexEnabled: false, isCaseSensitivityEnabled: false }).plan.root, f);

test('repoVerdict: false only where the filters rule the repository out', () => {
  const table: Array<[string, RepoFlags, boolean | undefined]> = [
    ['repo:^linux$ foo', flags('linux'), undefined],
    ['repo:^linux$ foo', flags('LINUX'), undefined],
    ['repo:^linux$ foo', flags('linux-next'), false],
    ['repo:^linux$', flags('linux'), true],
    ['repo:^linux$', flags('net'), false],
    ['repo:linux or foo', flags('net'), undefined],
    ['repo:linux or foo', flags('linux'), true],
    ['-repo:^linux$ foo', flags('linux'), false],
    ['-repo:^linux$ foo', flags('net'), undefined],
    // Not plain text: decided where the shards are searched.
    ['repo:^li.ux$ foo', flags('net'), undefined],
    ['repo:^linux$ branch:main foo', flags('net'), false],
    ['repo:^linux$ branch:main foo', flags('linux'), undefined],
    ['archived:only foo', flags('linux'), false],
    ['archived:only foo', flags('linux', { archived: true }), undefined],
    ['fork:no foo', flags('linux', { fork: true }), false],
    ['visibility:private foo', flags('linux'), false],
    ['visibility:private foo', flags('linux', { visibility: 'private' }), undefined],
    ['foo', flags('linux'), undefined],
  ];
  for (const [query, f, want] of table) {
    assert.equal(verdict(query, f), want, `${query} on ${f.repoName}`);
    // The same with the lower-case name kept beside the flags (the searcher's snapshot).
    assert.equal(verdict(query, { ...f, lowerName: asciiLower(f.repoName) }), want, `${query} on ${f.repoName}, lower-case name kept`);
  }
});

test('repoVerdict with the refs known: false where no ref of the repository can match the branch filter', () => {
  const refs = refNames(['main', 'dev', 'v1.0', 'release/2.x', '0123abcd']);
  const table: Array<[string, RepoFlags, boolean | undefined]> = [
    ['branch:main foo', flags('linux', { refs }), undefined],
    ['branch:nope foo', flags('linux', { refs }), false],
    // Ref names are case-sensitive.
    ['branch:Main foo', flags('linux', { refs }), false],
    ['rev:dev foo', flags('linux', { refs }), undefined],
    ['rev:0123abc foo', flags('linux', { refs }), false],
    ['branch:rel* foo', flags('linux', { refs }), undefined],
    ['branch:*.x foo', flags('linux', { refs }), undefined],
    ['branch:x* foo', flags('linux', { refs }), false],
    ['branch:HEAD foo', flags('linux', { refs }), undefined],
    ['branch:HEAD foo', flags('linux', { refs: refNames([]) }), false],
    ['-branch:nope foo', flags('linux', { refs }), undefined],
    ['branch:nope or foo', flags('linux', { refs }), undefined],
    ['(branch:nope or branch:dev) foo', flags('linux', { refs }), undefined],
    ['(branch:nope or branch:gone) foo', flags('linux', { refs }), false],
    ['repo:^linux$ branch:main', flags('net', { refs }), false],
    // Refs not known (a manifest that does not list them): decided where the shards are searched.
    ['branch:nope foo', flags('linux'), undefined],
  ];
  for (const [query, f, want] of table) assert.equal(verdict(query, f), want, `${query} on ${f.refs?.list.join(',') ?? 'unknown refs'}`);
  // Never false where refFilter, the rule the shards apply, lets one of the refs through.
  for (const glob of ['main', 'dev', 'HEAD', 'v1.0', 'v1.*', '*', 'release/*', '*x', 'ma*n', 'mai', 'v1.0*', '0123abcd', '0123*']) {
    const some = refs.list.some((name, i) => refFilter(glob)(name, i === 0));
    assert.equal(verdict(`branch:${glob} foo`, flags('linux', { refs })), some ? undefined : false, glob);
  }
});

test('requiredRepoName: the one name every match must have, only where a plain repo:^name$ binds them all', () => {
  const table: Array<[string, string | undefined]> = [
    ['repo:^linux$ foo', 'linux'],
    ['repo:^Linux-Drivers$ foo', 'linux-drivers'],
    ['foo repo:^linux$ lang:c', 'linux'],
    ['repo:^linux$', 'linux'],
    ['repo:linux foo', undefined],
    ['repo:^linux foo', undefined],
    ['repo:^li.ux$ foo', undefined],
    ['-repo:^linux$ foo', undefined],
    ['repo:^linux$ or foo', undefined],
    ['(repo:^linux$ foo) or (repo:^net$ bar)', undefined],
    ['foo', undefined],
  ];
  for (const [query, want] of table) {
    const { plan } = planSearch({ query, isRegexEnabled: false, isCaseSensitivityEnabled: false });
    assert.equal(requiredRepoName(plan.root), want, query);
  }
});
