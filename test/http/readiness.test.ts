// GET /readyz: the table of its rule (http/readiness.ts), and a real daemon on loopback
// moving from not ready to ready as its repositories get indexed: its counts for an
// owner's API key, the status alone for anyone else.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { parseConfig } from '../../daemon/config/load.ts';
import { startDaemon } from '../../daemon/daemon.ts';
import { silentHttpLogger } from '../../daemon/http/logging.ts';
import { readiness, type ReadinessFacts } from '../../daemon/http/readiness.ts';
import { openStore } from '../../daemon/store/open.ts';
import { newUserKey } from '../helpers/cli-users.ts';
import { tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';
import { until } from '../helpers/haystack.ts';

const none = new Set<number>();
const base: ReadinessFacts = { unavailable: undefined, firstPassRunning: false, repos: [], loaded: none, damaged: none, symbolsPending: none };

test('readiness: the rule', () => {
  const cases: Array<[string, Partial<ReadinessFacts>, number, string, { total: number; searchable: number; waiting: number; symbolsPending: number }]> = [
    ['nothing configured, nothing indexed', {}, 200, 'ready', { total: 0, searchable: 0, waiting: 0, symbolsPending: 0 }],
    [
      'every repository loaded',
      {
        repos: [
          { repoId: 1, state: 'indexed' },
          { repoId: 2, state: 'indexed' },
        ],
        loaded: new Set([1, 2]),
      },
      200,
      'ready',
      { total: 2, searchable: 2, waiting: 0, symbolsPending: 0 },
    ],
    [
      'one discovered, not indexed yet',
      {
        repos: [
          { repoId: 1, state: 'indexed' },
          { repoId: 2, state: 'new' },
        ],
        loaded: new Set([1]),
      },
      503,
      'starting',
      { total: 2, searchable: 1, waiting: 1, symbolsPending: 0 },
    ],
    [
      'indexed in the store, its shards not loaded (a restore in progress)',
      { repos: [{ repoId: 1, state: 'indexed' }] },
      503,
      'starting',
      { total: 1, searchable: 0, waiting: 1, symbolsPending: 0 },
    ],
    [
      'failed with nothing indexed: not waited for',
      {
        repos: [
          { repoId: 1, state: 'failed' },
          { repoId: 2, state: 'indexed' },
        ],
        loaded: new Set([2]),
      },
      200,
      'ready',
      { total: 2, searchable: 1, waiting: 0, symbolsPending: 0 },
    ],
    [
      'damaged index: not waited for',
      { repos: [{ repoId: 1, state: 'indexed' }], damaged: new Set([1]) },
      200,
      'ready',
      { total: 1, searchable: 0, waiting: 0, symbolsPending: 0 },
    ],
    ['first sync pass running, nothing listed yet', { firstPassRunning: true }, 503, 'starting', { total: 0, searchable: 0, waiting: 0, symbolsPending: 0 }],
    [
      "first pass running, the previous run's repositories loaded (a restart)",
      { firstPassRunning: true, repos: [{ repoId: 1, state: 'indexed' }], loaded: new Set([1]) },
      200,
      'ready',
      { total: 1, searchable: 1, waiting: 0, symbolsPending: 0 },
    ],
    [
      'content searchable, symbols still being added: ready, counted',
      {
        repos: [
          { repoId: 1, state: 'indexed' },
          { repoId: 2, state: 'indexed' },
        ],
        loaded: new Set([1, 2]),
        symbolsPending: new Set([2]),
      },
      200,
      'ready',
      { total: 2, searchable: 2, waiting: 0, symbolsPending: 1 },
    ],
    [
      'shutting down',
      { unavailable: 'the server is shutting down', repos: [{ repoId: 1, state: 'indexed' }], loaded: new Set([1]) },
      503,
      'unavailable',
      { total: 1, searchable: 1, waiting: 0, symbolsPending: 0 },
    ],
  ];
  for (const [name, facts, status, word, repositories] of cases) {
    const out = readiness({ ...base, ...facts }, true);
    assert.equal(out.status, status, name);
    assert.equal(out.body.status, word, name);
    assert.deepEqual(out.body.repositories, repositories, name);
    assert.equal(out.body.reason === undefined, status === 200, `${name}: a reason exactly when not ready`);
    // Anyone but an owner: the same status and word, no counts, in the reason neither.
    const plain = readiness({ ...base, ...facts }, false);
    assert.equal(plain.status, status, `${name} (no counts)`);
    assert.deepEqual(
      Object.keys(plain.body),
      Object.keys(out.body).filter((k) => k !== 'repositories'),
      `${name} (no counts)`,
    );
    assert.equal(plain.body.status, word, `${name} (no counts)`);
    assert.doesNotMatch(plain.body.reason ?? '', /\d/, `${name}: no number in the reason`);
  }
});

test('GET /readyz answers 503 until the configured repositories are indexed, then 200; /api/health is 200 throughout', async (t) => {
  const dir = tempDir('readyz');
  t.after(() => dir.cleanup());
  const dataDir = join(dir.path, 'data');
  const repo = TestRepo.init(join(dir.path, 'repos', 'widgets'));
  repo.commit({ 'src/widget.c': 'int widget_ready(void) { return 1; }\n' });
  const configText = JSON.stringify({
    settings: { anonymousAccess: true, symbols: false },
    connections: { local: { type: 'git', url: join(dir.path, 'repos', '*') } },
  });
  const config = parseConfig(configText, join(dir.path, 'trawl.json'));

  // A repository the store knows and the index lacks (discovered by a sync that did not
  // get to index it): the daemon waits for it, until it is given up on.
  const store = openStore(join(dir.path, 'data-pending'));
  const pending = await store.upsertRepo({
    repoName: 'example.com/pending',
    displayName: 'pending',
    codeHostType: 'genericGitHost',
    isFork: false,
    isArchived: false,
    visibility: 'private',
  });
  await store.close();
  const where = ['--data-dir', join(dir.path, 'data-pending')];
  const owner = { authorization: `Bearer ${await newUserKey('olga@example.com', where, 'owner')}` };
  const member = { authorization: `Bearer ${await newUserKey('mel@example.com', where, 'member')}` };
  const idle = await startDaemon({
    config,
    dataDir: join(dir.path, 'data-pending'),
    host: '127.0.0.1',
    port: 0,
    logger: silentHttpLogger,
    workers: 1,
    sync: false,
  });
  try {
    const r = await fetch(`${idle.url}/readyz`, { headers: owner });
    assert.equal(r.status, 503);
    assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(await r.json(), {
      status: 'starting',
      reason: '1 of 1 repositories are not indexed yet',
      repositories: { total: 1, searchable: 0, waiting: 1, symbolsPending: 0 },
    });
    // The repository is private: a probe, and a member, learn that the daemon is not ready, not how many it waits for.
    for (const headers of [{}, member]) {
      const plain = await fetch(`${idle.url}/readyz`, { headers });
      assert.equal(plain.status, 503);
      assert.deepEqual(await plain.json(), { status: 'starting', reason: 'repositories are not indexed yet' });
    }
    const bad = await fetch(`${idle.url}/readyz`, { headers: { authorization: 'Bearer not-a-key' } });
    assert.equal(bad.status, 401, 'a credential refused is refused here too');
    assert.equal(((await bad.json()) as { errorCode: string }).errorCode, 'NOT_AUTHENTICATED');
    assert.equal((await fetch(`${idle.url}/api/health`)).status, 200, 'alive all the same');
    await idle.services.store.updateRepo(pending.repoId, { state: 'failed', lastError: 'clone failed' });
    const after = await fetch(`${idle.url}/readyz`, { headers: owner });
    assert.equal(after.status, 200, 'a repository given up on is not waited for');
    assert.deepEqual(await after.json(), { status: 'ready', repositories: { total: 1, searchable: 0, waiting: 0, symbolsPending: 0 } });
    assert.deepEqual(await (await fetch(`${idle.url}/readyz`)).json(), { status: 'ready' });
  } finally {
    await idle.close();
  }

  // A first start with a connection: the first pass indexes its repository, then the
  // daemon is ready, and ready means searchable.
  const d = await startDaemon({ config, dataDir, host: '127.0.0.1', port: 0, logger: silentHttpLogger, workers: 1 });
  try {
    await until('ready', async () => (await fetch(`${d.url}/readyz`)).status === 200, 30_000);
    assert.deepEqual(await (await fetch(`${d.url}/readyz`)).json(), { status: 'ready' });
    const search = await fetch(`${d.url}/api/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'widget_ready', matches: 10 }),
    });
    assert.equal(((await search.json()) as { files: unknown[] }).files.length, 1, 'ready means searchable');
  } finally {
    await d.close();
  }
});
