// type:commit over HTTP on a real daemon: the test daemon's two repositories (widgets,
// public, with branches, a tag and two authors; secret, private) get history indexes, and
// POST /api/search and /api/stream_search answer commits with their `commit` field, as the
// OpenAPI document describes them, newest first, the private repository's commits never
// shown to an anonymous caller, and the commit filters refused without type:commit.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { commitRecordsPath, readCommitRecords } from '../../daemon/history/commit-records.ts';
import { syncHistory } from '../../daemon/history/history-index.ts';
import { readAllManifests } from '../../daemon/index/manifest.ts';
import { tempDir } from '../helpers/corpus.ts';
import { call, startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { ResponseChecker } from '../helpers/openapi.ts';

const dir = tempDir('commit-http');
const dataDir = join(dir.path, 'data');
let d: TestDaemon;
let checker: ResponseChecker;

before(async () => {
  d = await startTestDaemon({
    dataDir,
    // Each repository's history, as a sync with history on makes it.
    prepare: async () => {
      for (const m of readAllManifests(dataDir)) {
        if (m.version !== 2 || m.repo === undefined) continue;
        await syncHistory({ enabled: true, dataDir, repoId: m.repoId, repo: m.repo, gitDir: m.repo.source, refs: m.refs, workers: 1 });
      }
    },
  });
  checker = new ResponseChecker((await call(`${d.url}/api/openapi.json`)).json);
});

after(async () => {
  await d?.cleanup();
  dir.cleanup();
});

async function search(body: Record<string, unknown>) {
  const a = await call(`${d.url}/api/search`, { json: body });
  checker.check('POST', '/api/search', a.status, a.json);
  return a;
}

function gitLog(...args: string[]): string[] {
  return execFileSync('git', ['log', '--format=%H', ...args], { cwd: d.repoPath, encoding: 'utf8' })
    .split('\n')
    .filter((l) => l !== '');
}

test('POST /api/search with type:commit answers the matching commits, newest first, with their commit field', async () => {
  const a = await search({ query: 'type:commit widget', matches: 100 });
  assert.equal(a.status, 200);
  const want = gitLog('-F', '-i', '--grep=widget', 'main', 'dev', 'v1.0');
  assert.ok(want.length >= 2);
  // The same commits, newest first (commits made in the same second: in id order, where git lists children first).
  assert.deepEqual(a.json.files.map((f: { commit: { id: string } }) => f.commit.id).sort(), [...want].sort());
  const times = a.json.files.map((f: { commit: { committer: { date: string } } }) => Date.parse(f.commit.committer.date));
  assert.deepEqual(
    times,
    [...times].sort((x, y) => y - x),
  );
  const first = a.json.files.find((f: { commit: { message: string } }) => f.commit.message === 'Add widget_count');
  assert.ok(first, 'the commit that added widget_count');
  assert.equal(first.repository, 'widgets');
  assert.equal(first.fileName.text, '');
  assert.deepEqual(first.branches, []);
  assert.equal(first.webUrl, `${d.url}/widgets/-/commit/${first.commit.id}`);
  assert.equal(first.commit.author.email, 'test@example.com');
  assert.deepEqual(first.commit.parents, gitLog('-1', '--format=%P', first.commit.id)[0]!.split(' '));
  assert.deepEqual(first.chunks, [
    {
      content: 'Add widget_count',
      matchRanges: [{ start: { byteOffset: 4, lineNumber: 1, column: 5 }, end: { byteOffset: 10, lineNumber: 1, column: 11 } }],
      contentStart: { byteOffset: 0, lineNumber: 1, column: 1 },
      symbols: [],
    },
  ]);
  assert.equal(a.json.isSearchExhaustive, true);
  assert.equal(a.json.stats.fileCount, want.length);
});

test('a message body line matches with its context lines; author: narrows to an author', async () => {
  const a = await search({ query: 'type:commit "first widgets"', matches: 10, contextLines: 2 });
  assert.equal(a.json.files.length, 1);
  assert.equal(a.json.files[0].commit.message, 'Initial import\n\nThe first widgets.');
  assert.deepEqual(
    a.json.files[0].chunks.map((c: { content: string; contentStart: { lineNumber: number } }) => [c.contentStart.lineNumber, c.content]),
    [[1, 'Initial import\n\nThe first widgets.']],
  );
  assert.equal(a.json.files[0].chunks[0].matchRanges[0].start.lineNumber, 3);
  const bea = await search({ query: 'type:commit author:BEA@example readme', matches: 10 });
  assert.deepEqual(
    bea.json.files.map((f: { commit: { message: string } }) => f.commit.message),
    ['Rename the readme'],
  );
  const none = await search({ query: 'type:commit before:2000-01-01 widget', matches: 10 });
  assert.deepEqual(none.json.files, []);
});

test('the private repository commits are not shown to an anonymous caller', async () => {
  // secret's one commit has the default message "change": its records hold it.
  const secret = readAllManifests(dataDir).find((m) => m.version === 2 && m.repo?.visibility === 'private')!;
  assert.deepEqual(
    readCommitRecords(commitRecordsPath(dataDir, secret.repoId))?.commits.map((c) => c.message),
    ['change'],
  );
  const a = await search({ query: 'type:commit change', matches: 100 });
  assert.equal(a.status, 200);
  assert.ok(a.json.files.every((f: { repository: string }) => f.repository !== d.privateRepo));
});

test('matches bounds the match ranges: a cut answer is not exhaustive', async () => {
  const a = await search({ query: 'type:commit regex:.', matches: 2 });
  assert.equal(a.json.stats.actualMatchCount, 2);
  assert.equal(a.json.isSearchExhaustive, false);
});

test('the commit filters without type:commit, and unknown types, are 400 FAILED_TO_PARSE_QUERY', async () => {
  for (const query of ['author:bea readme', 'widget after:2020-01-01', 'type:tree widget']) {
    const a = await search({ query, matches: 10 });
    assert.equal(a.status, 400, query);
    assert.equal(a.json.errorCode, 'FAILED_TO_PARSE_QUERY', query);
  }
});

test('POST /api/stream_search streams the same commits with their committer time as score', async () => {
  const body = { query: 'type:commit widget', matches: 100 };
  const res = await fetch(`${d.url}/api/stream_search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  assert.equal(res.status, 200);
  const events: EventSourceMessage[] = [];
  createParser({ onEvent: (e) => events.push(e) }).feed(await res.text());
  assert.equal(events.at(-1)?.data, '[DONE]');
  const messages = events
    .slice(0, -1)
    .map((e) => JSON.parse(e.data) as { type: string; files?: Array<{ commit: { id: string; committer: { date: string } }; score: number }> });
  assert.equal(messages.at(-1)?.type, 'final');
  const files = messages.filter((m) => m.type === 'chunk').flatMap((m) => m.files!);
  const blocking = (await search(body)).json.files.map((f: { commit: { id: string } }) => f.commit.id);
  assert.deepEqual(
    files.map((f) => f.commit.id),
    blocking,
  );
  for (const f of files) assert.equal(f.score, Math.floor(Date.parse(f.commit.committer.date) / 1000));
});
