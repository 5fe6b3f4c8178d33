// The web UI's pure parsers, as table tests: which page an address is (web/app/route.ts),
// and match ranges in code points turned into UTF-16 spans per line, line lists for ?hl=
// (web/app/ranges.ts). They run in the browser; nothing in them touches the DOM.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileWebUrl, repoWebUrl } from '../../daemon/repos/web-urls.ts';
import {
  formatHighlights,
  formatLineList,
  hashSpan,
  MAX_LINK_RANGES,
  parseHighlights,
  parseLineList,
  pieces,
  spanHash,
  spansByLine,
  utf16Index,
} from '../../web/app/ranges.ts';
import { commitUrl, compareUrl, parseRoute, repoUrl, viewUrl } from '../../web/app/route.ts';

test('parseRoute: every kind of address', () => {
  const table: Array<[string, ReturnType<typeof parseRoute>]> = [
    ['/', { page: 'search' }],
    ['/settings', { page: 'settings' }],
    // A repository named like a page: its page has the trailing slash, its views are as usual.
    ['/settings/', { page: 'repo', repo: 'settings' }],
    ['/settings/-/tree/main', { page: 'tree', repo: 'settings', branch: 'main', path: '' }],
    ['/settings/-/blob/main/a.c', { page: 'blob', repo: 'settings', branch: 'main', path: 'a.c' }],
    ['/org/settings', { page: 'repo', repo: 'org/settings' }],
    ['/Settings', { page: 'repo', repo: 'Settings' }],
    ['/widgets', { page: 'repo', repo: 'widgets' }],
    ['/widgets/', { page: 'repo', repo: 'widgets' }],
    ['/github.com/org/repo', { page: 'repo', repo: 'github.com/org/repo' }],
    ['/github.com/org/repo/-/blob/main/src/a.c', { page: 'blob', repo: 'github.com/org/repo', branch: 'main', path: 'src/a.c' }],
    ['/r/-/blob/feature%2Fx/a%20b/c%23d.c', { page: 'blob', repo: 'r', branch: 'feature/x', path: 'a b/c#d.c' }],
    ['/r/-/blame/v1.0/x.c', { page: 'blame', repo: 'r', branch: 'v1.0', path: 'x.c' }],
    ['/r/-/commits/main/x/y.c', { page: 'commits', repo: 'r', branch: 'main', path: 'x/y.c' }],
    ['/r/-/tree/main', { page: 'tree', repo: 'r', branch: 'main', path: '' }],
    ['/r/-/tree/main/src/', { page: 'tree', repo: 'r', branch: 'main', path: 'src' }],
    ['/r/-/blob/main', { page: 'not-found' }],
    ['/r/-/blob/main/', { page: 'not-found' }],
    ['/r/-/raw/main/x', { page: 'not-found' }],
    ['/r/-/blob//x', { page: 'not-found' }],
    ['/-/blob/main/x', { page: 'not-found' }],
    ['/r/-/blob/%E0%A4%A/x', { page: 'not-found' }],
    ['/%zz', { page: 'not-found' }],
    ['/r%C3%A9po/-/blob/m%C3%A4in/%C3%BC.c', { page: 'blob', repo: 'répo', branch: 'mäin', path: 'ü.c' }],
    ['/github.com/org/repo/-/commit/0123abc', { page: 'commit', repo: 'github.com/org/repo', sha: '0123abc' }],
    ['/r/-/commit/main~2/', { page: 'commit', repo: 'r', sha: 'main~2' }],
    ['/r/-/commit', { page: 'not-found' }],
    ['/r/-/commit/', { page: 'not-found' }],
    ['/r/-/commit/abc/x', { page: 'not-found' }],
    ['/r/-/commit/%zz', { page: 'not-found' }],
    ['/r/-/compare', { page: 'compare', repo: 'r', refs: null }],
    ['/r/-/compare/', { page: 'compare', repo: 'r', refs: null }],
    ['/r/-/compare/v1.0...main', { page: 'compare', repo: 'r', refs: { base: 'v1.0', head: 'main' } }],
    ['/r/-/compare/release%2F2.0...feature%2Fx/', { page: 'compare', repo: 'r', refs: { base: 'release/2.0', head: 'feature/x' } }],
    ['/r/-/compare/main~3...main^2', { page: 'compare', repo: 'r', refs: { base: 'main~3', head: 'main^2' } }],
    ['/r/-/compare/main..dev', { page: 'not-found' }],
    ['/r/-/compare/main', { page: 'not-found' }],
    ['/r/-/compare/...dev', { page: 'not-found' }],
    ['/r/-/compare/main...', { page: 'not-found' }],
    ['/r/-/compare/a...b/c', { page: 'not-found' }],
  ];
  for (const [path, want] of table) assert.deepEqual(parseRoute(path), want, path);
});

test("the API's webUrls and the UI's own links parse back to what they were made from", () => {
  const cases: Array<[string, string, string]> = [
    ['github.com/org/repo', 'main', 'src/a.c'],
    ['widgets', 'feature/x', 'dir with space/f#1?.c'],
    ['r', 'release/2.0/rc', 'deep/ly/nested/ü.ts'],
    // Named like the settings page: both sides add the slash that keeps it a repository.
    ['settings', 'main', 'src/a.c'],
  ];
  for (const [repo, branch, path] of cases) {
    assert.deepEqual(parseRoute(new URL(fileWebUrl('http://h:1', repo, branch, path)).pathname), { page: 'blob', repo, branch, path });
    assert.deepEqual(parseRoute(new URL(repoWebUrl('http://h:1', repo)).pathname), { page: 'repo', repo });
    for (const view of ['blob', 'blame', 'commits', 'tree'] as const)
      assert.deepEqual(parseRoute(viewUrl(view, repo, branch, path)), { page: view, repo, branch, path });
    assert.deepEqual(parseRoute(repoUrl(repo)), { page: 'repo', repo });
    assert.deepEqual(parseRoute(commitUrl(repo, branch)), { page: 'commit', repo, sha: branch });
    assert.deepEqual(parseRoute(compareUrl(repo, { base: branch, head: `${branch}~1` })), {
      page: 'compare',
      repo,
      refs: { base: branch, head: `${branch}~1` },
    });
    assert.deepEqual(parseRoute(compareUrl(repo)), { page: 'compare', repo, refs: null });
  }
});

const loc = (lineNumber: number, column: number) => ({ byteOffset: 0, lineNumber, column });

test('code-point columns become UTF-16 spans, per line', () => {
  assert.equal(utf16Index('abc', 1), 0);
  assert.equal(utf16Index('abc', 3), 2);
  assert.equal(utf16Index('abc', 9), 3, 'clamped');
  assert.equal(utf16Index('😀x', 2), 2, 'an astral character is one column, two units');
  assert.equal(utf16Index('é😀😀y', 4), 5);
  const lines = ['a😀foo', 'bar', 'bazqux'];
  const table: Array<[string, Array<{ start: ReturnType<typeof loc>; end: ReturnType<typeof loc> }>, Array<[number, Array<[number, number]>]>]> = [
    ['one range after an emoji', [{ start: loc(10, 3), end: loc(10, 6) }], [[10, [[3, 6]]]]],
    [
      'a range over three lines',
      [{ start: loc(10, 4), end: loc(12, 4) }],
      [
        [10, [[4, 6]]],
        [11, [[0, 3]]],
        [12, [[0, 3]]],
      ],
    ],
    [
      'two ranges on a line, out of order',
      [
        { start: loc(12, 4), end: loc(12, 7) },
        { start: loc(12, 1), end: loc(12, 2) },
      ],
      [
        [
          12,
          [
            [0, 1],
            [3, 6],
          ],
        ],
      ],
    ],
    ['an empty match shows one character', [{ start: loc(11, 2), end: loc(11, 2) }], [[11, [[1, 2]]]]],
    ['a range outside the chunk is dropped', [{ start: loc(3, 1), end: loc(3, 2) }], []],
  ];
  for (const [what, ranges, want] of table) assert.deepEqual([...spansByLine(lines, 10, ranges)], want, what);
  assert.deepEqual(pieces('foobarbaz', [[3, 6]]), [
    { text: 'foo', marked: false },
    { text: 'bar', marked: true },
    { text: 'baz', marked: false },
  ]);
  assert.deepEqual(
    pieces('foobar', [
      [0, 4],
      [2, 6],
    ]),
    [
      { text: 'foob', marked: true },
      { text: 'ar', marked: true },
    ],
    'overlaps do not repeat text',
  );
  assert.deepEqual(pieces('x', undefined), [{ text: 'x', marked: false }]);
});

test('line lists for ?hl=: format and parse', () => {
  assert.equal(formatLineList([9, 3, 7, 8, 3, 12]), '3,7-9,12');
  assert.equal(formatLineList([]), '');
  assert.deepEqual([...parseLineList('3,7-9,12')], [3, 7, 8, 9, 12]);
  assert.deepEqual([...parseLineList('x,4,,5-a, 6 ,-1')], [4, 6], 'bad parts are ignored');
  assert.deepEqual([...parseLineList(null)], []);
  assert.equal(parseLineList('1-99999999').size, 10_000, 'a huge range is capped');
});

test('?hl= with exact ranges: format, parse, and lines for too many ranges', () => {
  const at = (lineNumber: number, column: number) => ({ byteOffset: 0, lineNumber, column });
  const ranges = [
    { start: at(3, 5), end: at(3, 18) },
    { start: at(7, 1), end: at(9, 2) },
  ];
  assert.equal(formatHighlights(ranges), '3:5-3:18,7:1-9:2');
  const parsed = parseHighlights('3:5-3:18,7:1-9:2,12');
  assert.deepEqual(
    parsed.ranges.map((r) => [r.start.lineNumber, r.start.column, r.end.lineNumber, r.end.column]),
    [
      [3, 5, 3, 18],
      [7, 1, 9, 2],
    ],
  );
  assert.deepEqual(
    [...parsed.lines].sort((a, b) => a - b),
    [3, 7, 8, 9, 12],
    'a range marks its lines too',
  );
  // Backwards, zero or malformed ranges are ignored; plain line lists parse as before.
  assert.deepEqual(parseHighlights('5:3-4:1,0:1-1:1,3:x-3:4').ranges, []);
  assert.deepEqual([...parseHighlights('3,7-9').lines], [3, 7, 8, 9]);
  assert.deepEqual(parseHighlights(null), { lines: new Set(), ranges: [] });
  const many = Array.from({ length: MAX_LINK_RANGES + 1 }, (_, i) => ({ start: at(i + 1, 1), end: at(i + 1, 2) }));
  assert.equal(formatHighlights(many), `1-${MAX_LINK_RANGES + 1}`, 'beyond the cap a link names lines');
});

test('#L fragments: one line, a range either way round, and back', () => {
  const rows: Array<[string, { from: number; to: number } | undefined, string | undefined]> = [
    ['#L12', { from: 12, to: 12 }, '#L12'],
    ['#L12-L20', { from: 12, to: 20 }, '#L12-L20'],
    ['#L12-20', { from: 12, to: 20 }, '#L12-L20'],
    ['#L20-L12', { from: 12, to: 20 }, '#L12-L20'],
    ['#L', undefined, undefined],
    ['#l12', undefined, undefined],
    ['#L12-', undefined, undefined],
    ['', undefined, undefined],
  ];
  for (const [hash, span, back] of rows) {
    assert.deepEqual(hashSpan(hash), span, hash);
    if (span) assert.equal(spanHash(span), back, hash);
  }
});
