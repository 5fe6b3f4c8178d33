// A stream's files carry their ranking score (POST /api/stream_search, `score` on each file
// of a `chunk` message): the stream sends files in shard order, each message ranked in
// itself, and ordering all of them by the searcher's comparison (search/rank-order.ts)
// gives exactly the order POST /api/search gives the same request.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { compareRanked } from '../../daemon/search/rank-order.ts';
import type { StreamedFile } from '../../daemon/search/types.ts';
import { call, startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { ALPHA_FILES, fileId, OMEGA_FILES, pageRequest, RANK_QUERY, rankRepos } from '../helpers/rank-corpus.ts';

let d: TestDaemon;
before(async () => {
  d = await startTestDaemon({ extraRepos: rankRepos });
});
after(async () => {
  await d?.cleanup();
});

async function streamChunks(body: unknown): Promise<Array<{ files: StreamedFile[] }>> {
  const res = await fetch(`${d.url}/api/stream_search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  assert.equal(res.status, 200);
  const events: EventSourceMessage[] = [];
  createParser({ onEvent: (e) => events.push(e) }).feed(await res.text());
  assert.equal(events.at(-1)?.data, '[DONE]');
  const messages = events.slice(0, -1).map((e) => JSON.parse(e.data) as { type: string; files?: StreamedFile[]; isSearchExhaustive?: boolean });
  assert.equal(messages.at(-1)?.type, 'final');
  assert.equal(messages.at(-1)?.isSearchExhaustive, true, 'the whole answer is in the stream');
  return messages.filter((m) => m.type === 'chunk') as Array<{ files: StreamedFile[] }>;
}

test('the streamed files sorted by score, repository and path are in /api/search order', async () => {
  for (const body of [pageRequest(RANK_QUERY, 1000), { query: `${RANK_QUERY} or widget`, matches: 1000 }]) {
    const chunks = await streamChunks(body);
    const streamed = chunks.flatMap((c) => c.files);
    for (const f of streamed) assert.equal(typeof f.score, 'number', `${fileId(f)} has a score`);
    const blocking = await call(`${d.url}/api/search`, { json: body });
    assert.equal(blocking.status, 200);
    assert.equal(blocking.json.isSearchExhaustive, true);
    assert.equal(blocking.json.files[0].score, undefined, '/api/search files stay as they were: their order is the rank');
    const want = (blocking.json.files as StreamedFile[]).map(fileId);
    const sorted = [...streamed].sort((a, b) =>
      compareRanked({ score: a.score, repository: a.repository, path: a.fileName.text }, { score: b.score, repository: b.repository, path: b.fileName.text }),
    );
    assert.deepEqual(sorted.map(fileId), want, JSON.stringify(body));
    // Otherwise the test shows nothing: the stream came in several messages, out of rank order.
    assert.ok(chunks.length > 1, `${chunks.length} chunk messages`);
    assert.notDeepEqual(streamed.map(fileId), want, 'the stream order differs from the rank order');
  }
});

test('the corpus ranks the last shard first', async () => {
  const r = await call(`${d.url}/api/search`, { json: pageRequest(RANK_QUERY, 1000) });
  const ids = (r.json.files as StreamedFile[]).map(fileId);
  assert.equal(ids.length, ALPHA_FILES + OMEGA_FILES);
  assert.deepEqual(
    ids.slice(0, OMEGA_FILES),
    Array.from({ length: OMEGA_FILES }, (_, i) => `omega/lib/g${OMEGA_FILES - 1 - i}.c`),
    'the most matches first',
  );
});
