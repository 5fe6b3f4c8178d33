// `type:diff` over HTTP on a real daemon (loopback): a repository whose history is indexed
// answers POST /api/search and /api/stream_search with one result per commit and path, as
// the OpenAPI document describes them (commit, diff, chunk hunks), the commits git log -G
// lists; `matches` cuts it; a query a diff search cannot answer is a 400. And history:yes
// dates a match.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { indexLocal, indexLocalHistory } from '../../daemon/sync/local-repos.ts';
import { tempDir } from '../helpers/corpus.ts';
import { call, startTestDaemon } from '../helpers/daemon.ts';
import { gitLogG } from '../helpers/diff-oracle.ts';
import { git } from '../helpers/git.ts';
import { ResponseChecker } from '../helpers/openapi.ts';

test('type:diff over /api/search and /api/stream_search', async () => {
  const own = tempDir('http-diff');
  const dataDir = join(own.path, 'data');
  let path = '';
  const d = await startTestDaemon({
    dataDir,
    extraRepos: [
      {
        name: 'hist',
        build(r) {
          path = r.path;
          r.commit({ 'src/gear.c': 'int gear_marker = 1;\nint other = 2;\n' }, 'Add the gear');
          r.commit({ 'src/gear.c': 'int gear_marker = 3;\nint other = 2;\n' }, 'Turn the gear');
          git(r.path, 'mv', 'src/gear.c', 'src/cog.c');
          r.commit({}, 'Rename the gear');
          r.commit({ 'src/cog.c': 'int other = 2;\n' }, 'Remove the gear');
        },
      },
    ],
    prepare: async (store) => {
      const summary = await indexLocal(path, { dataDir, store, name: 'hist', workers: 1 });
      const h = await indexLocalHistory(summary, { dataDir, workers: 1 });
      assert.notEqual(h, 'unchanged');
    },
  });
  try {
    const checker = new ResponseChecker((await call(`${d.url}/api/openapi.json`)).json);
    const search = async (query: string, matches = 100) => {
      const a = await call(`${d.url}/api/search`, { json: { query, matches } });
      checker.check('POST', '/api/search', a.status, a.json);
      return a;
    };

    const all = await search('type:diff gear_marker');
    assert.equal(all.status, 200, all.text);
    const ids = all.json.files.map((f: { commit: { id: string } }) => f.commit.id);
    assert.deepEqual([...ids].sort(), gitLogG(path, 'gear_marker', false, ['main']));
    const log = git(path, 'log', '--format=%H %s', 'main').trim().split('\n');
    // Newest first: the removal, the turn, the addition (the rename changed no line).
    assert.deepEqual(
      all.json.files.map((f: { commit: { message: string } }) => f.commit.message.trim()),
      ['Remove the gear', 'Turn the gear', 'Add the gear'],
    );
    const turn = all.json.files[1];
    assert.equal(turn.repository, 'hist');
    assert.deepEqual(turn.branches, []);
    assert.equal(turn.diff.path, 'src/gear.c');
    assert.equal(turn.diff.parent, log.find((l: string) => l.endsWith('Add the gear'))!.split(' ')[0]);
    assert.equal(turn.webUrl, `${d.url}/hist/-/commit/${turn.commit.id}`);
    assert.equal(turn.commit.author.email, 'test@example.com');
    assert.deepEqual(turn.chunks[0].hunk, { oldStart: 1, oldLines: 1, newStart: 1, newLines: 1 });
    assert.equal(turn.chunks[0].content, '-int gear_marker = 1;\n+int gear_marker = 3;');
    assert.deepEqual(
      turn.chunks[0].matchRanges.map((r: { start: { byteOffset: number; lineNumber: number; column: number } }) => [
        r.start.lineNumber,
        r.start.column,
        r.start.byteOffset,
      ]),
      [
        [1, 6, 5],
        [2, 6, 27],
      ],
    );
    assert.equal(all.json.files[2].diff.parent, null, 'the first commit is diffed against the empty tree');
    assert.equal(all.json.isSearchExhaustive, true);
    assert.equal(all.json.stats.actualMatchCount, 4);

    const removed = await search('type:diff select:removed gear_marker');
    assert.deepEqual(
      removed.json.files.map((f: { commit: { message: string } }) => f.commit.message.trim()),
      ['Remove the gear', 'Turn the gear'],
    );
    assert.ok(
      removed.json.files.every((f: { chunks: Array<{ content: string; matchRanges: unknown[] }> }) => f.chunks.every((c) => c.matchRanges.length === 1)),
    );

    const cut = await search('type:diff gear_marker', 2);
    assert.equal(cut.json.isSearchExhaustive, false);
    assert.equal(cut.json.stats.actualMatchCount, 2);
    assert.equal(cut.json.stats.totalMatchCount, 4);

    const bad = await call(`${d.url}/api/search`, { json: { query: 'type:diff gear_marker lang:c', matches: 10 } });
    assert.equal(bad.status, 400);
    assert.equal(bad.json.errorCode, 'FAILED_TO_PARSE_QUERY');
    assert.match(bad.json.message, /type:diff takes only a pattern and repo: and file: filters/);

    // history:yes: the file's span on main's first-parent line, from the rename that made its path.
    const dated = await search('"int other" history:yes repo:^hist$');
    assert.equal(dated.status, 200, dated.text);
    const renamed = log.find((l: string) => l.endsWith('Rename the gear'))!.split(' ')[0];
    // The old path held it until the rename, the new one from the rename on.
    const spans = dated.json.files.map((f: { history: { spans: Array<{ appeared: { id: string }; gone: { id: string } | null }> } }) => f.history.spans);
    assert.equal(spans.length, 2);
    assert.ok(spans.some((s: Array<{ appeared: { id: string }; gone: unknown }>) => s.length === 1 && s[0]!.appeared.id === renamed && s[0]!.gone === null));
    assert.ok(spans.some((s: Array<{ gone: { id: string } | null }>) => s.length === 1 && s[0]!.gone?.id === renamed));

    const stream = await call(`${d.url}/api/stream_search`, { json: { query: 'type:diff gear_marker', matches: 100 } });
    assert.equal(stream.status, 200);
    const messages = stream.text
      .split('\n\n')
      .map((m) => m.trim())
      .filter((m) => m.startsWith('data: ') && m !== 'data: [DONE]')
      .map((m) => JSON.parse(m.slice(6)));
    const files = messages.filter((m) => m.type === 'chunk').flatMap((m) => m.files);
    const final = messages.find((m) => m.type === 'final');
    assert.equal(final.isSearchExhaustive, true);
    assert.deepEqual(
      files.sort((a, b) => b.score - a.score).map((f: { commit: { id: string } }) => f.commit.id),
      ids,
    );
    assert.equal(final.accumulatedStats.actualMatchCount, 4);
  } finally {
    await d.cleanup();
    own.cleanup();
  }
});
