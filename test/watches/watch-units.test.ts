// The watches' parts on their own: what counts as a change of matches (match-set.ts), the
// lines and paths read from git (changed-text.ts), the URLs a watch may POST to
// (url-policy.ts), and the signing secret (signature.ts).

import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { chmodSync } from 'node:fs';
import { test } from 'node:test';
import { join } from 'node:path';
import { ServiceError } from '../../daemon/errors.ts';
import type { WatchMatch } from '../../daemon/store/store.ts';
import { hunkLines, PATCH_MAX_FILES } from '../../daemon/repos/diff-lines.ts';
import { languageNeedsContent } from '../../daemon/index/language.ts';
import { changedFiles, type DocReader, type HeldFile, type RefFiles, type RefParts } from '../../daemon/search/held-files.ts';
import { planSearch } from '../../daemon/search/plan-cache.ts';
import { changedText } from '../../daemon/repos/changed-text.ts';
import { changedInIndex, lineChanges } from '../../daemon/watches/index-change.ts';
import { changeTest } from '../../daemon/watches/watch-filter.ts';
import { changedMatches } from '../../daemon/watches/match-set.ts';
import { signature, watchSecret } from '../../daemon/watches/signature.ts';
import { checkWatchUrl, privateAddress } from '../../daemon/watches/url-policy.ts';
import { tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';

const m = (path: string, line: number, text: string): WatchMatch => ({ path, line, text });

test('changedMatches: identity is path and text (a moved line is no change); copies count; both directions', () => {
  const table: Array<{ name: string; before: WatchMatch[]; after: WatchMatch[]; added: WatchMatch[]; removed: WatchMatch[] }> = [
    { name: 'nothing', before: [], after: [], added: [], removed: [] },
    { name: 'a new line', before: [], after: [m('a', 3, 'x')], added: [m('a', 3, 'x')], removed: [] },
    { name: 'a line gone', before: [m('a', 3, 'x')], after: [], added: [], removed: [m('a', 3, 'x')] },
    { name: 'a line moved', before: [m('a', 3, 'x')], after: [m('a', 9, 'x')], added: [], removed: [] },
    { name: 'a second copy', before: [m('a', 3, 'x')], after: [m('a', 3, 'x'), m('a', 7, 'x')], added: [m('a', 7, 'x')], removed: [] },
    { name: 'one copy of two gone', before: [m('a', 3, 'x'), m('a', 7, 'x')], after: [m('a', 3, 'x')], added: [], removed: [m('a', 7, 'x')] },
    { name: 'the same text in another file', before: [m('a', 1, 'x')], after: [m('a', 1, 'x'), m('b', 1, 'x')], added: [m('b', 1, 'x')], removed: [] },
    { name: 'a line edited', before: [m('a', 1, 'x = 1')], after: [m('a', 1, 'x = 2')], added: [m('a', 1, 'x = 2')], removed: [m('a', 1, 'x = 1')] },
    { name: 'a file renamed', before: [m('a', 1, 'x')], after: [m('b', 1, 'x')], added: [m('b', 1, 'x')], removed: [m('a', 1, 'x')] },
    { name: 'a file matched by name', before: [], after: [m('a', 0, '')], added: [m('a', 0, '')], removed: [] },
  ];
  for (const c of table) assert.deepEqual(changedMatches(c.before, c.after), { added: c.added, removed: c.removed }, c.name);
});

test('changedText: the lines added and removed, and the paths, between two commits; unknown when it cannot be read', async (t) => {
  const dir = tempDir('changed-text');
  t.after(() => dir.cleanup());
  const repo = TestRepo.init(join(dir.path, 'r'));
  const first = repo.commit({ 'a.sql': 'select 1;\n-- keep\n', 'b.txt': 'old\n' });
  const second = repo.commit({ 'a.sql': 'select 1;\n-- keep\n-- added comment\n', 'b.txt': null, 'c/new.go': 'package c\n' });
  const refs = (commit: string) => [{ name: 'main', kind: 'branch' as const, commit }];
  const changed = await changedText(repo.path, refs(first), refs(second));
  assert.ok(changed);
  assert.deepEqual(changed.lines.toString('utf8').split('\n').sort(), ['', '-- added comment', 'old', 'package c'].sort());
  assert.deepEqual([...changed.paths].sort(), ['a.sql', 'b.txt', 'c/new.go']);
  assert.deepEqual(await changedText(repo.path, refs(first), refs(first)), { lines: Buffer.alloc(0), paths: [] }, 'nothing moved');
  assert.equal(await changedText(repo.path, refs('0'.repeat(40)), refs(second)), undefined, 'a commit git does not have');
  assert.equal(await changedText(repo.path, [], refs(second)), undefined, 'a ref added');
  assert.equal(await changedText(repo.path, [{ name: 'dev', commit: first }], refs(second)), undefined, 'another ref');
  // A rename is its old path's lines removed and its new path's added.
  const third = repo.commit({ 'c/new.go': null, 'c/moved.go': 'package c\n' });
  const renamed = await changedText(repo.path, refs(second), refs(third));
  assert.deepEqual([...renamed!.paths].sort(), ['c/moved.go', 'c/new.go']);
  assert.deepEqual(renamed!.lines.toString('utf8'), 'package c\npackage c\n');
  // A file libgit2 takes for binary: not known.
  const fourth = repo.commit({ 'blob.bin': Buffer.from([1, 0, 2, 0, 3]) });
  const fifth = repo.commit({ 'blob.bin': Buffer.from([1, 0, 2, 0, 4]) });
  assert.equal(await changedText(repo.path, refs(fourth), refs(fifth)), undefined, 'a binary file changed');
  // Its mode alone: the path, no line.
  chmodSync(join(repo.path, 'a.sql'), 0o755);
  const sixth = repo.commit({}, 'mode');
  assert.deepEqual(await changedText(repo.path, refs(fifth), refs(sixth)), { lines: Buffer.alloc(0), paths: ['a.sql'] }, 'a mode changed');
  // More files than one patch text is made for: read through the bounded diff, the same lines.
  const many = Object.fromEntries(Array.from({ length: PATCH_MAX_FILES + 3 }, (_, i) => [`m/${i}.txt`, `line ${i}\n`]));
  const seventh = repo.commit(many);
  const wide = await changedText(repo.path, refs(sixth), refs(seventh));
  assert.equal(wide!.paths.length, PATCH_MAX_FILES + 3);
  assert.deepEqual(
    wide!.lines.toString('utf8').split('\n').filter(Boolean).sort(),
    Object.values(many)
      .map((v) => v.trim())
      .sort(),
  );
});

test('hunkLines: the added and removed lines of a patch, never its file headers', () => {
  const table: Array<{ name: string; patch: string; lines: string[] }> = [
    { name: 'empty', patch: '', lines: [] },
    { name: 'one line changed', patch: 'diff --git a/t b/t\nindex 1..2 100644\n--- a/t\n+++ b/t\n@@ -2 +2 @@ a\n-b\n+B\n', lines: ['b', 'B'] },
    {
      name: 'two files, the second header after the first hunk',
      patch:
        'diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\ndiff --git a/y b/y\nnew file mode 100644\n--- /dev/null\n+++ b/y\n@@ -0,0 +1,2 @@\n+--- not a header\n+\n',
      lines: ['old', 'new', '--- not a header', ''],
    },
    {
      name: 'no newline at the end',
      patch: 'diff --git a/z b/z\n--- a/z\n+++ b/z\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n',
      lines: ['a', 'b'],
    },
    {
      name: 'binary and mode changes have no hunk',
      patch: 'diff --git a/b b/b\nBinary files a/b and b/b differ\ndiff --git a/m b/m\nold mode 100644\nnew mode 100755\n',
      lines: [],
    },
  ];
  for (const c of table) assert.deepEqual(hunkLines(c.patch), c.lines, c.name);
});

test('checkWatchUrl: http(s) only, no credentials, nothing inside the network unless allowed', () => {
  const ok = ['https://hooks.example.com/trawl', 'http://93.184.216.34:8080/x?y=1'];
  for (const u of ok) assert.equal(checkWatchUrl(u, false).href, new URL(u).href, u);
  const refused = [
    'ftp://example.com/',
    'not a url',
    'https://user:pass@example.com/',
    'http://localhost:8080/',
    'http://127.0.0.1/',
    'http://10.1.2.3/',
    'http://169.254.169.254/latest/meta-data',
    'http://[::1]/',
    'http://[fd00::1]/',
    'http://192.168.1.1/',
    `https://example.com/${'x'.repeat(2100)}`,
  ];
  for (const u of refused) {
    assert.throws(
      () => checkWatchUrl(u, false),
      (e: unknown) => e instanceof ServiceError && e.errorCode === 'INVALID_REQUEST_BODY',
      u,
    );
  }
  assert.equal(checkWatchUrl('http://127.0.0.1:9/x', true).hostname, '127.0.0.1', 'allowed by the setting');
  assert.deepEqual(['8.8.8.8', '127.0.0.1', '::ffff:127.0.0.1', '2606:4700::1', 'fe80::1'].map(privateAddress), [false, true, true, false, true]);
});

test('the signing secret is derived from the installation secret and the salt; the signature is HMAC-SHA256 of the body', () => {
  const a = watchSecret(Buffer.from('install-a'), 'salt');
  assert.equal(a, watchSecret(Buffer.from('install-a'), 'salt'));
  assert.notEqual(a, watchSecret(Buffer.from('install-b'), 'salt'));
  assert.notEqual(a, watchSecret(Buffer.from('install-a'), 'salt2'));
  assert.equal(signature(a, '{"x":1}'), `sha256=${createHmac('sha256', a).update('{"x":1}').digest('hex')}`);
});

test('lineChanges: the lines one version holds more copies of than the other, removed first; order alone is no change', () => {
  const cases: Array<[string, string | undefined, string | undefined, string[]]> = [
    ['a line added', 'a\nb\n', 'a\nx\nb\n', ['x']],
    ['a line removed', 'a\nb\nc\n', 'a\nc\n', ['b']],
    ['a line changed', 'a\nb\n', 'a\nB\n', ['b', 'B']],
    ['lines moved', 'a\nb\nc\n', 'c\na\nb\n', []],
    ['a second copy', 'a\nb\n', 'a\nb\na\n', ['a']],
    ['one copy of two removed', 'a\na\nb\n', 'b\na\n', ['a']],
    ['a file added', undefined, 'x\ny', ['x', 'y']],
    ['a file deleted', 'x\n\ny\n', undefined, ['x', '', 'y']],
    ['the last newline added: no line changed', 'a\nb', 'a\nb\n', []],
    ['an empty file', '', 'a\n', ['a']],
    ['carriage returns are part of a line', 'a\r\n', 'a\n', ['a\r', 'a']],
  ];
  for (const [what, old, fresh, want] of cases) {
    const out: Buffer[] = [];
    lineChanges(old === undefined ? undefined : Buffer.from(old), fresh === undefined ? undefined : Buffer.from(fresh), out);
    assert.deepEqual(
      out.map((b) => b.toString()),
      want,
      what,
    );
  }
  // Bytes that are not UTF-8 are compared as bytes: two such lines are told apart, and kept as they are.
  const out: Buffer[] = [];
  lineChanges(Buffer.from([0xff, 0x0a]), Buffer.from([0xfe, 0x0a]), out);
  assert.deepEqual(out, [Buffer.from([0xff]), Buffer.from([0xfe])]);
});

test('changedInIndex: paths whose blob differs on a ref, or that one state lacks; unknown when the refs differ or the versions are too large', () => {
  let reads = 0;
  const file = (oid: string, text: string): HeldFile => ({
    oid,
    read: () => {
      reads++;
      return Buffer.from(text);
    },
  });
  const refs = (byRef: Record<string, Record<string, HeldFile>>): RefFiles =>
    new Map(Object.entries(byRef).map(([r, files]) => [r, new Map(Object.entries(files))]));
  const a1 = file('a1', 'alpha\nbeta\n');
  const a2 = file('a2', 'alpha\ngamma\n');
  const b = file('b', 'same\n');
  const c = file('c', 'gone\n');
  const d = file('d', 'new\n');
  const before = refs({ main: { 'a.txt': a1, 'b.txt': b, 'c.txt': c }, dev: { 'a.txt': a1 } });
  const after = refs({ main: { 'a.txt': a2, 'b.txt': b, 'd.txt': d }, dev: { 'a.txt': a2 } });
  const changed = changedInIndex(before, after, 1 << 20)!;
  assert.deepEqual(changed.paths.sort(), ['a.txt', 'c.txt', 'd.txt']);
  assert.equal(changed.lines.toString(), 'beta\ngamma\nnew\ngone\n');
  assert.equal(reads, 4, 'a.txt changed the same way on both refs: its two versions are read once');
  assert.deepEqual(changedInIndex(before, before, 1 << 20), { lines: Buffer.alloc(0), paths: [] }, 'nothing changed');
  assert.equal(changedInIndex(before, refs({ main: { 'a.txt': a1 } }), 1 << 20), undefined, 'a ref fewer');
  assert.equal(changedInIndex(before, refs({ main: {}, other: {} }), 1 << 20), undefined, 'another ref');
  assert.equal(changedInIndex(before, after, 20), undefined, 'the versions to compare are larger than the bound');
});

test('changedFiles: only the documents on one side of a ref are decoded; a file moved unchanged is the same blob on both', () => {
  let decoded = 0;
  /** A shard file of these documents: [path, blob id (or undefined), text]. */
  const shard = (docs: Array<[string, string | undefined, string]>): DocReader => ({
    name: (d) => (decoded++, docs[d]![0]),
    oid: (d) => docs[d]![1],
    contentOf: (d) => Buffer.from(docs[d]![2]),
  });
  const full = shard([
    ['a.txt', 'a1', 'alpha\nbeta\n'],
    ['b.txt', 'b', 'same\n'],
    ['c.txt', 'c', 'gone\n'],
    ['e.txt', 'e', 'kept\n'],
  ]);
  const delta = shard([
    ['a.txt', 'a2', 'alpha\ngamma\n'],
    ['d.txt', 'd', 'new\n'],
  ]);
  // A merge moved b.txt, unchanged, into another file.
  const merged = shard([['b.txt', 'b', 'same\n']]);
  const parts = (byRef: Record<string, Array<[string, DocReader, number[]]>>): RefParts =>
    new Map(Object.entries(byRef).map(([ref, ps]) => [ref, ps.map(([file, s, docs]) => ({ file, shard: s, docs: Uint32Array.from(docs) }))]));
  const before = parts({ main: [['full', full, [0, 1, 2, 3]]], dev: [['full', full, [0, 3]]] });
  const after = parts({
    main: [
      ['full', full, [3]],
      ['delta', delta, [0, 1]],
      ['merged', merged, [0]],
    ],
    dev: [
      ['full', full, [3]],
      ['delta', delta, [0]],
    ],
  });
  const changed = changedFiles(before, after)!;
  const paths = (f: RefFiles) => Object.fromEntries([...f].map(([ref, files]) => [ref, [...files].map(([p, h]) => `${p}@${h.oid}`).sort()]));
  assert.deepEqual(paths(changed.before), { main: ['a.txt@a1', 'b.txt@b', 'c.txt@c'], dev: ['a.txt@a1'] });
  assert.deepEqual(paths(changed.after), { main: ['a.txt@a2', 'b.txt@b', 'd.txt@d'], dev: ['a.txt@a2'] });
  assert.equal(decoded, 8, 'e.txt, in the same file on both sides, is never decoded');
  const text = changedInIndex(changed.before, changed.after, 1 << 20)!;
  assert.deepEqual(text.paths.sort(), ['a.txt', 'c.txt', 'd.txt'], 'b.txt moved, unchanged');
  assert.equal(text.lines.toString(), 'beta\ngamma\nnew\ngone\n');
  assert.deepEqual(changedFiles(before, before), {
    before: new Map([
      ['main', new Map()],
      ['dev', new Map()],
    ]),
    after: new Map([
      ['main', new Map()],
      ['dev', new Map()],
    ]),
  });
  assert.equal(changedFiles(before, parts({ main: [['full', full, [0]]] })), undefined, 'a ref fewer');
  assert.equal(changedFiles(before, parts({ main: [['full', full, [0]]], other: [] })), undefined, 'another ref');
  const noIds = shard([['a.txt', undefined, 'x\n']]);
  assert.equal(changedFiles(before, parts({ main: [['old', noIds, [0]]], dev: [['full', full, [0, 3]]] })), undefined, 'a changed document without a blob id');
});

test('changeTest: a lang: filter is re-checked when a file whose language its content can decide changed', () => {
  const test = (query: string, paths: string[], lines = '') =>
    changeTest(planSearch({ query, isRegexEnabled: false, isCaseSensitivityEnabled: false }).plan.root)({ lines: Buffer.from(lines), paths });
  assert.equal(test('lang:python alpha', ['bin/run'], '#!/bin/sh\n'), true, 'a file without an extension: its `#!` line decides');
  assert.equal(test('lang:python alpha', ['bin/run'], '\n'), true, 'the line removed may have been the one above the `#!` line');
  assert.equal(test('lang:python alpha', ['src/x.m'], 'x = 1\n'), true, 'an extension whose content hints decide');
  assert.equal(test('lang:python alpha', ['a.py'], 'beta\n'), false, 'the name decides, and no changed line holds alpha');
  assert.equal(test('lang:python alpha', ['a.py'], 'alpha\n'), true);
  assert.equal(test('alpha', ['bin/run'], '#!/bin/sh\n'), false, 'no lang: filter');
  for (const [path, needs] of [
    ['a.go', false],
    ['Makefile', false],
    ['Kconfig.debug', false],
    ['bin/run', true],
    ['lib/x.inc', true],
    ['README', true],
  ] as const)
    assert.equal(languageNeedsContent(path), needs, path);
});
