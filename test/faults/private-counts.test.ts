// Anonymous callers learn nothing about private repositories from counts. Two real daemons
// hold the same public repositories; the second also holds three private ones of different
// sizes: one indexed now, one whose index an earlier trawl wrote (a version 1 manifest,
// which names no visibility: its shards carry it), and one whose index is damaged. Every
// number an anonymous caller can get (search stats over queries that filter on
// repositories and visibility, a stream's final stats, symbol matches, GET /readyz,
// GET /api/health, GET /api/repos with its X-Total-Count and Link) must be the same from
// both daemons. An owner's API key still reads the totals from /readyz, and finds the
// private repositories' files, so the test cannot pass by the second daemon having none.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { BROKEN_MARK, bumpIndexVersion, type Manifest } from '../../daemon/index/manifest.ts';
import { openStore } from '../../daemon/store/open.ts';
import { newUserKey } from '../helpers/cli-users.ts';
import { call, startTestDaemon, type ExtraRepo, type TestDaemon } from '../helpers/daemon.ts';

/** Each file holds the word every query looks for, so a private repository would add to every count. */
const files = (prefix: string, n: number): Record<string, string> =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`src/${prefix}${i}.c`, `int widget_${prefix}_${i}(void) { return widget_count() + ${i}; }\n`]));

const PUBLIC: ExtraRepo[] = [{ name: 'gadgets', build: (r) => void r.commit(files('gadget', 3)) }];
const PRIVATE: ExtraRepo[] = [
  { name: 'vault-now', visibility: 'private', build: (r) => void r.commit(files('now', 40)) },
  { name: 'vault-old', visibility: 'private', build: (r) => void r.commit(files('old', 12)) },
  { name: 'vault-damaged', visibility: 'private', build: (r) => void r.commit(files('damaged', 5)) },
];

const QUERIES: Array<{ query: string; isRegexEnabled?: boolean }> = [
  { query: 'widget' },
  { query: 'widget_count' },
  { query: 'repo:vault' },
  { query: 'repo:vault widget' },
  { query: 'repo:widgets widget' },
  { query: '-repo:widgets widget' },
  { query: 'visibility:private widget' },
  { query: 'visibility:any widget' },
  { query: 'visibility:public widget' },
  { query: 'lang:c return' },
  { query: 'file:now widget' },
  { query: 'widget_now_1' },
  { query: 'nothing_matches_this_anywhere' },
  { query: 'widget_[a-z]+_[0-9]', isRegexEnabled: true },
];

/** Measurements of time, which no two runs share; every other stat is a count. */
const TIMINGS = new Set(['duration', 'wait', 'matchTreeConstruction', 'matchTreeSearch']);

function counts(stats: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(stats).filter(([k]) => !TIMINGS.has(k)));
}

/** The chunks' numbers added up, field by field (a chunk's flush reason is when it was sent, not a count). */
function summed(chunks: Array<Record<string, unknown>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const c of chunks) for (const [k, v] of Object.entries(c)) if (typeof v === 'number') out[k] = (out[k] ?? 0) + v;
  return out;
}

/** The version 1 manifest an earlier trawl wrote for this index: shard names only. */
function writeVersion1(dataDir: string, repoId: number): void {
  const path = join(shardsDir(dataDir, repoId), 'manifest.json');
  const m = JSON.parse(readFileSync(path, 'utf8')) as Manifest;
  const v1 = {
    version: 1,
    repoId,
    repoName: m.repo.name,
    generation: m.generation,
    shards: m.shards.map((s) => s.file),
    indexedAt: m.indexedAt,
    files: m.files,
    contentBytes: m.contentBytes,
    skipped: m.skipped,
  };
  writeFileSync(path, JSON.stringify(v1));
}

/** The private repositories as a daemon finds them after an upgrade and a damage: one old index, one marked broken. */
async function ageAndDamage(d: TestDaemon): Promise<void> {
  const store = openStore(d.dataDir);
  const ids = new Map((await store.listRepos()).map((r) => [r.repoName, r.repoId]));
  await store.close();
  const old = ids.get('vault-old')!;
  writeVersion1(d.dataDir, old);
  const damaged = ids.get('vault-damaged')!;
  const m = JSON.parse(readFileSync(join(shardsDir(d.dataDir, damaged), 'manifest.json'), 'utf8')) as Manifest;
  writeFileSync(join(shardsDir(d.dataDir, damaged), BROKEN_MARK), JSON.stringify({ generation: m.generation, reason: 'damaged for the test' }));
  bumpIndexVersion(d.dataDir);
}

/** Every number an anonymous caller gets from the daemon, with what it says of repositories. */
async function anonymousView(url: string): Promise<Record<string, unknown>> {
  const view: Record<string, unknown> = {};
  for (const q of QUERIES) {
    const r = await call(`${url}/api/search`, { json: { ...q, matches: 500 } });
    assert.equal(r.status, 200, `${q.query}: ${r.text}`);
    view[`search ${q.query}`] = {
      stats: counts(r.json.stats),
      isSearchExhaustive: r.json.isSearchExhaustive,
      files: r.json.files.map((f: { repository: string; fileName: { text: string } }) => `${f.repository}/${f.fileName.text}`),
      repositories: r.json.repositoryInfo.map((i: { name: string }) => i.name),
    };
  }
  for (const query of ['widget', 'repo:vault', 'visibility:private widget']) {
    const res = await fetch(`${url}/api/stream_search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, matches: 500 }),
    });
    const events: EventSourceMessage[] = [];
    createParser({ onEvent: (e) => events.push(e) }).feed(await res.text());
    const messages = events.filter((e) => e.data !== '[DONE]').map((e) => JSON.parse(e.data));
    const final = messages.find((m) => m.type === 'final');
    assert.ok(final, `${query}: a final message`);
    // Summed over the chunks: where a chunk ends depends on when the stream's timer fired.
    view[`stream ${query}`] = { stats: counts(final.accumulatedStats), chunks: summed(messages.filter((m) => m.type === 'chunk').map((m) => counts(m.stats))) };
  }
  for (const symbolName of ['widget_count', 'widget_now_1']) {
    const r = await call(`${url}/api/find_references`, { json: { symbolName } });
    view[`references ${symbolName}`] = { status: r.status, matchCount: r.json?.stats?.matchCount };
  }
  const ready = await call(`${url}/readyz`);
  view.readyz = { status: ready.status, body: ready.json };
  const health = await call(`${url}/api/health`);
  view.health = { status: health.status, body: health.json };
  for (const query of ['', '?perPage=1', '?query=vault', '?query=widgets']) {
    const r = await call(`${url}/api/repos${query}`);
    view[`repos ${query}`] = {
      status: r.status,
      total: r.headers.get('x-total-count'),
      link: r.headers.get('link')?.replaceAll(url, ''),
      names: r.json.map((x: { repoName: string }) => x.repoName),
    };
  }
  return view;
}

test('anonymous answers carry the same counts with no private repository and with three', async () => {
  const none = await startTestDaemon({ secret: false, extraRepos: PUBLIC });
  let three: TestDaemon | undefined;
  try {
    three = await startTestDaemon({ secret: false, extraRepos: [...PUBLIC, ...PRIVATE] });
    await ageAndDamage(three);
    const owner = { authorization: `Bearer ${await newUserKey('olga@example.com', ['--data-dir', three.dataDir], 'owner')}` };

    const withNone = await anonymousView(none.url);
    const withThree = await anonymousView(three.url);
    for (const key of Object.keys(withNone)) assert.deepEqual(withThree[key], withNone[key], `${key}: the same with three private repositories as with none`);

    // The private repositories are there (two searchable, one damaged) for those who may see them.
    const ownerReady = await call(`${three.url}/readyz`, { headers: owner });
    assert.equal(ownerReady.status, 200);
    assert.deepEqual(
      ownerReady.json,
      { status: 'ready', repositories: { total: 5, searchable: 4, waiting: 0, symbolsPending: 0 } },
      "an owner's key reads the totals",
    );
    const seen = await call(`${three.url}/api/search`, { headers: owner, json: { query: 'visibility:private widget', matches: 500 } });
    assert.deepEqual(
      [...new Set(seen.json.files.map((f: { repository: string }) => f.repository))].sort(),
      ['vault-now', 'vault-old'],
      'the owner finds the private files',
    );
    assert.equal(seen.json.stats.crashes, 1, "the damaged repository's shard counts as failed for the owner");
  } finally {
    await three?.cleanup();
    await none.cleanup();
  }
});
