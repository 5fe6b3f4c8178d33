// Sync passes end to end: connections (a glob over local repositories, a fake GitHub whose
// clone URLs point at real repositories made here and served over http), mirrors,
// incremental indexing, deletion, failures recorded and retried with back-off without
// touching the other repositories or the previous index.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseConfig } from '../../daemon/config/load.ts';
import { shardsDir } from '../../daemon/index/data-dir.ts';
import { collectGarbage, readAllManifests, RETIRE_GRACE_MS } from '../../daemon/index/manifest.ts';
import { syncOnce, syncRepoJob, type SyncReport } from '../../daemon/sync/sync.ts';
import { mirrorPath } from '../../daemon/sync/fetch-source.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { openStore } from '../../daemon/store/open.ts';
import { tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';
import { startGitServer } from '../helpers/git-server.ts';
import { startFake, TOKEN } from '../hosts/fake-hosts.ts';

const search = async (s: Searcher, query: string): Promise<string[]> => {
  const r = await s.search({ query, matches: 1000, contextLines: 0, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: false });
  assert.equal(r.stats.crashes, 0);
  return r.files.map((f) => `${f.repository}:${f.fileName.text}@${f.branches.join(',')}`).sort();
};

const outcomes = (r: SyncReport) => Object.fromEntries(r.repos.map((x) => [x.repoName.split('/').pop()!, x.outcome]));

test('a glob connection: first sync, incremental re-sync, failures with back-off, deletion', async () => {
  const dir = tempDir('sync-git');
  const data = join(dir.path, 'data');
  const repos = join(dir.path, 'repos');
  const store = openStore(data);
  const searcher = new Searcher({ dataDir: data, workers: 1 });
  try {
    const alpha = TestRepo.init(join(repos, 'alpha'));
    alpha.commit({ 'a.c': 'int alpha_marker;\n' });
    alpha.checkout('dev', true).commit({ 'dev.c': 'int alpha_dev_marker;\n' });
    alpha.checkout('main');
    const beta = TestRepo.init(join(repos, 'beta'));
    beta.commit({ 'b.c': 'int beta_marker;\n' });
    const gamma = TestRepo.init(join(repos, 'gamma'));
    gamma.commit({ 'g.c': 'int gamma_marker;\n' });
    const config = parseConfig(
      JSON.stringify({
        settings: { symbols: false, retryBaseMs: 60000 },
        connections: { local: { type: 'git', url: `${repos}/*`, revisions: { branches: ['dev'] } } },
      }),
      join(dir.path, 'trawl.json'),
    );
    let clock = Date.parse('2026-11-22T10:00:00Z');
    const now = () => clock;

    const first = await syncOnce({ config, dataDir: data, store, now });
    assert.deepEqual(first.connections, [{ name: 'local', ok: true, repos: 3 }]);
    assert.deepEqual(outcomes(first), { alpha: 'indexed', beta: 'indexed', gamma: 'indexed' });
    assert.deepEqual(await search(searcher, 'marker branch:*'), ['alpha:a.c@main,dev', 'alpha:dev.c@dev', 'beta:b.c@main', 'gamma:g.c@main']);
    const alphaRec = (await store.getRepoByName('alpha'))!;
    assert.equal(alphaRec.state, 'indexed');
    assert.deepEqual(
      alphaRec.indexedRefs.map((r) => r.name),
      ['main', 'dev'],
    );
    assert.equal(alphaRec.lastSuccessAt, new Date(clock).toISOString());

    // Small repositories share a compound shard (pack-build.ts).
    const packed = readAllManifests(data).map((m) => m.shards.map((s) => s.file).join());
    assert.equal(new Set(packed).size, 1, `one compound shard: ${packed.join(' ')}`);
    assert.deepEqual(
      readAllManifests(data)
        .map((m) => m.shards[0]!.member)
        .sort(),
      [0, 1, 2],
    );

    // One commit to one branch of one repository: only it is re-indexed, whole (a small
    // repository moves to a new compound shard; the others stay where they are).
    alpha.checkout('dev').commit({ 'dev.c': 'int alpha_dev_marker_two;\n' });
    alpha.checkout('main');
    clock += 1000;
    const second = await syncOnce({ config, dataDir: data, store, now });
    assert.deepEqual(outcomes(second), { alpha: 'indexed', beta: 'unchanged', gamma: 'unchanged' });
    assert.equal(second.repos.find((r) => r.repoName === 'alpha')!.mode, 'full');
    const moved = readAllManifests(data).map((m) => m.shards[0]!.file);
    assert.equal(new Set(moved).size, 2, `alpha in a pack of its own now: ${moved.join(' ')}`);
    assert.deepEqual(await search(searcher, 'alpha_dev_marker branch:*'), ['alpha:dev.c@dev']);
    assert.deepEqual(await search(searcher, 'alpha_dev_marker_two branch:dev'), ['alpha:dev.c@dev']);

    // A repository whose source breaks keeps serving its last index; the error is recorded
    // and it is retried with back-off; the others are not affected.
    const betaHead = beta.head();
    renameSync(join(beta.path, '.git', 'objects'), join(beta.path, '.git', 'objects-gone'));
    writeFileSync(join(beta.path, '.git', 'refs', 'heads', 'main'), '1111111111111111111111111111111111111111\n');
    gamma.commit({ 'g2.c': 'int gamma_second;\n' });
    clock += 1000;
    const third = await syncOnce({ config, dataDir: data, store, now });
    assert.deepEqual(outcomes(third), { alpha: 'unchanged', beta: 'failed', gamma: 'indexed' });
    const betaRec = (await store.getRepoByName('beta'))!;
    assert.equal(betaRec.state, 'failed');
    assert.equal(betaRec.failures, 1);
    assert.match(betaRec.lastError!, /beta/);
    assert.equal(betaRec.nextAttemptAt, new Date(clock + 60000).toISOString());
    assert.ok(betaRec.indexedAt, 'its last good index is still recorded');
    assert.deepEqual(await search(searcher, 'beta_marker'), ['beta:b.c@main'], 'the previous index keeps serving');
    assert.deepEqual(await search(searcher, 'gamma_second'), ['gamma:g2.c@main']);

    clock += 1000;
    assert.equal(outcomes(await syncOnce({ config, dataDir: data, store, now })).beta, 'backing-off');
    assert.equal(outcomes(await syncOnce({ config, dataDir: data, store, now, force: true })).beta, 'failed');
    assert.equal((await store.getRepoByName('beta'))!.failures, 2);
    assert.equal((await store.getRepoByName('beta'))!.nextAttemptAt, new Date(clock + 120000).toISOString(), 'the back-off doubles');

    // Repaired: it recovers and the failure count resets.
    renameSync(join(beta.path, '.git', 'objects-gone'), join(beta.path, '.git', 'objects'));
    writeFileSync(join(beta.path, '.git', 'refs', 'heads', 'main'), `${betaHead}\n`);
    beta.commit({ 'b2.c': 'int beta_repaired;\n' });
    clock += 200_000;
    assert.equal(outcomes(await syncOnce({ config, dataDir: data, store, now })).beta, 'indexed');
    assert.equal((await store.getRepoByName('beta'))!.failures, 0);
    assert.equal((await store.getRepoByName('beta'))!.lastError, undefined);

    // Deleted upstream: gone from results at once, from disk after the grace, id not reused.
    const gammaId = (await store.getRepoByName('gamma'))!.repoId;
    rmSync(gamma.path, { recursive: true });
    const fourth = await syncOnce({ config, dataDir: data, store, now });
    assert.equal(outcomes(fourth).gamma, 'deleted');
    assert.deepEqual(await search(searcher, 'gamma'), []);
    assert.equal((await store.getRepo(gammaId))!.state, 'deleted');
    assert.equal(existsSync(mirrorPath(data, gammaId)), false);
    collectGarbage(data, new Set(), Date.now() + RETIRE_GRACE_MS);
    assert.equal(existsSync(shardsDir(data, gammaId)), false);
    const again = TestRepo.init(join(repos, 'gamma'));
    again.commit({ 'g.c': 'int gamma_back;\n' });
    await syncOnce({ config, dataDir: data, store, now });
    assert.ok((await store.getRepoByName('gamma'))!.repoId > gammaId, 'a returning name gets a new id');
  } finally {
    await searcher.close();
    await store.close();
    dir.cleanup();
  }
});

test('a code host connection: metadata from the host, host down keeps the index, bad token recorded', async () => {
  const dir = tempDir('sync-host');
  const data = join(dir.path, 'data');
  const store = openStore(data);
  const searcher = new Searcher({ dataDir: data, workers: 1 });
  const sources = join(dir.path, 'src');
  TestRepo.init(join(sources, 'api')).commit({ 'server.go': 'package api // api_marker\n' });
  TestRepo.init(join(sources, 'web')).commit({ 'index.ts': 'export const web_marker = 1;\n' });
  // The repositories are served by a git server of their own: an origin the connection lists in cloneOrigins.
  const gitServer = await startGitServer(sources, { credentials: { username: 'x-access-token', password: TOKEN } });
  const fake = await startFake('github', {
    repos: [
      { owner: 'acme', name: 'api', group: 'core', defaultBranch: 'main', pushedAt: '2026-11-01T10:00:00Z' },
      { owner: 'acme', name: 'web', group: 'web', defaultBranch: 'main', private: true, archived: true },
    ],
    cloneUrl: (r) => `${gitServer.url}/${r.name}`,
  });
  try {
    const config = parseConfig(
      JSON.stringify({
        settings: { symbols: false },
        connections: { gh: { type: 'github', url: fake.url, token: { env: 'GH_TOKEN' }, cloneOrigins: [gitServer.url], orgs: ['acme'] } },
      }),
      join(dir.path, 'trawl.json'),
    );
    const hostOptions = { env: { GH_TOKEN: TOKEN } };
    const first = await syncOnce({ config, dataDir: data, store, hostOptions });
    assert.deepEqual(
      first.repos.map((r) => r.outcome),
      ['indexed', 'indexed'],
    );
    const api = (await store.listRepos()).find((r) => r.repoName.endsWith('/acme/api'))!;
    assert.equal(api.codeHostType, 'github');
    assert.equal(api.displayName, 'acme/api');
    assert.equal(api.pushedAt, '2026-11-01T10:00:00Z');
    assert.equal(api.visibility, 'public');
    assert.equal(api.externalWebUrl, `${fake.url}/acme/api`);
    const web = (await store.listRepos()).find((r) => r.repoName.endsWith('/acme/web'))!;
    assert.equal(web.isArchived, true);
    assert.equal(web.visibility, 'private');

    // Flags from the host reach the search filters, and links use the host's page.
    const res = await searcher.search({
      query: 'marker archived:no',
      matches: 100,
      contextLines: 0,
      whole: false,
      isRegexEnabled: false,
      isCaseSensitivityEnabled: false,
    });
    assert.deepEqual(
      res.files.map((f) => f.fileName.text),
      ['server.go'],
    );
    assert.equal(res.files[0]!.externalWebUrl, `${fake.url}/acme/api/blob/main/server.go`);
    assert.deepEqual(await search(searcher, 'marker visibility:private'), [`${web.repoName}:index.ts@main`]);

    // The host goes down: the connection's failure is recorded, nothing is removed.
    await fake.close();
    const down = await syncOnce({ config, dataDir: data, store, hostOptions });
    assert.equal(down.connections[0]!.ok, false);
    assert.match(down.connections[0]!.error!, /unreachable|connect|ECONNREFUSED/i);
    assert.deepEqual(down.repos, []);
    assert.equal((await store.listConnections())[0]!.lastError, down.connections[0]!.error);
    assert.equal((await store.listRepos()).length, 2);
    assert.deepEqual(await search(searcher, 'api_marker'), [`${api.repoName}:server.go@main`]);

    // A missing token is a clear connection error, with the same guarantee.
    const bad = await syncOnce({ config, dataDir: data, store, hostOptions: { env: {} } });
    assert.match(bad.connections[0]!.error!, /GH_TOKEN is not set/);
    assert.equal((await store.listRepos()).length, 2);

    // The connection is removed from the configuration: its repositories go with it.
    const none = parseConfig(JSON.stringify({ connections: {} }), join(dir.path, 'trawl.json'));
    const removed = await syncOnce({ config: none, dataDir: data, store });
    assert.deepEqual(
      removed.repos.map((r) => r.outcome),
      ['deleted', 'deleted'],
    );
    assert.deepEqual(await store.listRepos(), []);
    assert.deepEqual(await search(searcher, 'marker'), []);
  } finally {
    await fake.close().catch(() => {});
    await gitServer.close();
    await searcher.close();
    await store.close();
    dir.cleanup();
  }
});

test('a queued job whose clone URL its connection refuses fails without reading it (listed under another configuration)', async () => {
  const dir = tempDir('sync-job');
  const data = join(dir.path, 'data');
  const store = openStore(data);
  const searcher = new Searcher({ dataDir: data, workers: 1 });
  try {
    const secret = TestRepo.init(join(dir.path, 'disk', 'secret'));
    secret.commit({ 'prod.env': 'DB_PASSWORD=queued_job_secret\n' });
    const config = parseConfig(
      JSON.stringify({
        settings: { symbols: false },
        connections: { gt: { type: 'gitea', url: 'https://gitea.example.com', orgs: ['acme'] } },
      }),
      join(dir.path, 'trawl.json'),
    );
    const hostRepo = {
      repoName: 'gitea.example.com/acme/api',
      displayName: 'acme/api',
      codeHostType: 'gitea' as const,
      cloneUrl: secret.path,
      isFork: false,
      isArchived: false,
      visibility: 'public' as const,
    };
    const record = await store.upsertRepo({ ...hostRepo, cloneUrl: undefined });
    const done = await syncRepoJob({ config, dataDir: data, store }, { repoId: record.repoId, connection: 'gt', hostRepo }, 1);
    assert.equal(done?.outcome, 'failed');
    assert.match(
      done?.error ?? '',
      /^clone URL ".*secret" refused: not an http\(s\) URL \(a gitea connection fetches from https:\/\/gitea\.example\.com only\)$/,
    );
    assert.match((await store.getRepo(record.repoId))!.lastError!, /refused/);
    assert.deepEqual(await search(searcher, 'queued_job_secret'), []);
  } finally {
    await searcher.close();
    await store.close();
    dir.cleanup();
  }
});

test('a change found among many up-to-date repositories is built before the others are compared', async () => {
  const dir = tempDir('sync-prompt');
  const data = join(dir.path, 'data');
  const repos = join(dir.path, 'repos');
  const store = openStore(data);
  const searcher = new Searcher({ dataDir: data, workers: 1 });
  try {
    const names = Array.from({ length: 48 }, (_, i) => `r${String(i).padStart(2, '0')}`);
    const all = names.map((n) => TestRepo.init(join(repos, n)));
    all.forEach((r, i) => r.commit({ 'x.c': `int marker_${i};\n` }));
    const config = parseConfig(
      JSON.stringify({ settings: { symbols: false }, connections: { local: { type: 'git', url: `${repos}/*` } } }),
      join(dir.path, 'trawl.json'),
    );
    await syncOnce({ config, dataDir: data, store });

    all[2]!.commit({ 'x.c': 'int changed_marker;\n' });
    const done: string[] = [];
    // Without its time bound the focus decides the order, however slowly the build runs on a loaded machine.
    const report = await syncOnce({
      config,
      dataDir: data,
      store,
      focusMaxMs: 60_000,
      onEvent: (e) => e.type === 'repo-done' && done.push(`${e.repoName}:${e.outcome}`),
    });
    assert.equal(report.repos.filter((r) => r.outcome === 'indexed').length, 1);
    // The pass compares up to READERS repositories at once; the ones after them wait for the change's build.
    const changed = done.indexOf('r02:indexed');
    assert.ok(changed >= 0, done.join(' '));
    assert.ok(done.slice(changed + 1).length >= 16, `the change was committed before the last repositories were compared: ${done.join(' ')}`);
    assert.deepEqual(await search(searcher, 'changed_marker'), ['r02:x.c@main']);
    assert.deepEqual(await search(searcher, 'marker_47'), ['r47:x.c@main']);
  } finally {
    await searcher.close();
    await store.close();
    dir.cleanup();
  }
});
