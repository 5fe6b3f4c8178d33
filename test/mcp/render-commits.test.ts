// search_code's text for type:commit results (mcp/render-search.ts): a header naming the
// repository and the commit (author, date, matches), then the matching message lines, or
// the message's first line when only the author or time matched.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { searchedCommit } from '../../daemon/history/commit-match.ts';
import { commitResult } from '../../daemon/history/commit-results.ts';
import { renderSearch } from '../../daemon/mcp/render-search.ts';
import { emptyStats } from '../../daemon/search/types.ts';

const record = {
  id: 'a'.repeat(40),
  parents: ['b'.repeat(40)],
  author: { name: 'Ann', email: 'ann@example.com', date: '2024-01-02T03:04:05+00:00' },
  committer: { name: 'Ann', email: 'ann@example.com', date: '2024-01-02T03:04:05+00:00' },
  message: 'Fix the widget\n\nIt crashed on widget zero.',
};

test('search_code shows a commit result as its commit and its matching message lines', () => {
  const c = searchedCommit(record);
  const message = Buffer.from(record.message);
  const at = message.indexOf('crashed');
  const matched = commitResult({ id: 1, name: 'widgets' }, c, [at, at + 7], 0, 'http://x');
  const bare = commitResult({ id: 1, name: 'widgets' }, c, [], 0, 'http://x');
  const stats = { ...emptyStats(), actualMatchCount: 2, fileCount: 2 };
  const { text } = renderSearch({ stats, files: [matched, bare], repositoryInfo: [], isSearchExhaustive: true }, { matches: 10, contextLines: 0 });
  assert.match(
    text,
    new RegExp(`## repo=widgets commit=${record.id}  \\(Ann <ann@example\\.com>, 2024-01-02T03:04:05\\+00:00; 1 match\\)\\n3: It crashed on widget zero\\.`),
  );
  assert.match(text, /0 matches\)\n1- Fix the widget/);
});
