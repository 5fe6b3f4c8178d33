// One repository synced on request, between the scheduled passes: syncRepos on the
// records a pass made (only that repository is fetched and indexed; one that cannot be
// synced alone says why), `trawl sync --repo NAME`, and POST /api/repos/{id}/sync on a real
// daemon on loopback (owners only; 202 at once, or the outcome with wait=true).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { parseConfig } from '../../daemon/config/load.ts';
import { startDaemon } from '../../daemon/daemon.ts';
import { silentHttpLogger } from '../../daemon/http/logging.ts';
import { Searcher } from '../../daemon/search/searcher.ts';
import { openStore } from '../../daemon/store/open.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { syncRefusal, syncRepos } from '../../daemon/sync/repo-work.ts';
import { syncOnce } from '../../daemon/sync/sync.ts';
import { newUserKey } from '../helpers/cli-users.ts';
import { tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';
import { until } from '../helpers/haystack.ts';
import { runTrawl } from '../helpers/trawl-cli.ts';
import { delivery } from '../webhooks/deliveries.ts';

const found = async (s: Searcher, query: string): Promise<string[]> => {
  const r = await s.search({ query, matches: 100, contextLines: 0, whole: false, isRegexEnabled: false, isCaseSensitivityEnabled: true });
  return r.files.map((f) => `${f.repository}:${f.fileName.text}`).sort();
};

test('syncRepos fetches and indexes the repositories named, and no other; one that cannot be synced alone says why', async (t) => {
  const dir = tempDir('repo-sync');
  t.after(() => dir.cleanup());
  const data = join(dir.path, 'data');
  const store = openStore(data);
  const searcher = new Searcher({ dataDir: data, workers: 1 });
  t.after(async () => {
    await searcher.close();
    await store.close();
  });
  const alpha = TestRepo.init(join(dir.path, 'repos', 'alpha'));
  alpha.commit({ 'a.c': 'int alpha_one;\n' });
  const beta = TestRepo.init(join(dir.path, 'repos', 'beta'));
  beta.commit({ 'b.c': 'int beta_one;\n' });
  const config = parseConfig(
    JSON.stringify({ settings: { symbols: false }, connections: { local: { type: 'git', url: join(dir.path, 'repos', '*') } } }),
    join(dir.path, 'trawl.json'),
  );
  const options = { config, dataDir: data, store };
  await syncOnce(options);
  const alphaId = (await store.getRepoByName('alpha'))!.repoId;
  const betaRec = (await store.getRepoByName('beta'))!;

  alpha.commit({ 'a.c': 'int alpha_two;\n' });
  beta.commit({ 'b.c': 'int beta_two;\n' });
  const results = await syncRepos(options, [alphaId]);
  assert.deepEqual(
    results.map((r) => [r.repoId, r.outcome]),
    [[alphaId, 'indexed']],
  );
  assert.deepEqual(await found(searcher, 'alpha_two'), ['alpha:a.c']);
  assert.deepEqual(await found(searcher, 'beta_two'), [], 'beta was not asked for: it waits for the next pass');
  assert.equal((await store.getRepo(betaRec.repoId))!.indexedAt, betaRec.indexedAt);
  assert.equal((await syncRepos(options, [alphaId]))[0]!.outcome, 'unchanged', 'nothing moved since');

  // A repository backing off after a failure is tried anyway when asked for.
  await store.updateRepo(betaRec.repoId, { state: 'failed', failures: 3, nextAttemptAt: new Date(Date.now() + 3_600_000).toISOString() });
  assert.equal((await syncRepos(options, [betaRec.repoId]))[0]!.outcome, 'indexed');
  assert.deepEqual(await found(searcher, 'beta_two'), ['beta:b.c']);
  assert.equal((await store.getRepo(betaRec.repoId))!.failures, 0);

  // Not a connection's repository: `trawl index PATH` made it.
  const loose = TestRepo.init(join(dir.path, 'loose'));
  loose.commit({ 'l.c': 'int loose_one;\n' });
  const summary = await indexLocal(loose.path, { dataDir: data, store, symbols: false });
  const looseRec = (await store.getRepo(summary.repoId))!;
  assert.match((await syncRefusal(options, looseRec))!, /indexed from a path, not listed by a connection/);
  assert.equal(await syncRefusal(options, (await store.getRepo(alphaId))!), undefined);
  const [refused] = await syncRepos(options, [looseRec.repoId]);
  assert.equal(refused!.outcome, 'failed');
  assert.match(refused!.error!, /trawl index/);
  assert.deepEqual(await syncRepos(options, [987654]), [{ repoId: 987654, outcome: 'failed', error: 'no repository with id 987654', seconds: 0 }]);

  // Its connection gone from the configuration: not synced alone (the next pass removes it).
  const other = parseConfig(JSON.stringify({ settings: { symbols: false }, connections: {} }), join(dir.path, 'trawl.json'));
  assert.match((await syncRefusal({ config: other, store }, (await store.getRepo(alphaId))!))!, /no longer configured/);
});

test('trawl sync --repo NAME syncs that repository only; an unknown name is refused', async (t) => {
  const dir = tempDir('repo-sync-cli');
  t.after(() => dir.cleanup());
  const data = join(dir.path, 'data');
  const alpha = TestRepo.init(join(dir.path, 'repos', 'alpha'));
  alpha.commit({ 'a.c': 'int alpha_one;\n' });
  const beta = TestRepo.init(join(dir.path, 'repos', 'beta'));
  beta.commit({ 'b.c': 'int beta_one;\n' });
  const configPath = join(dir.path, 'trawl.json');
  writeFileSync(configPath, JSON.stringify({ settings: { symbols: false }, connections: { local: { type: 'git', url: join(dir.path, 'repos', '*') } } }));
  const where = ['--config', configPath, '--data-dir', data];
  assert.equal((await runTrawl(['sync', ...where], dir.path)).code, 0);
  alpha.commit({ 'a.c': 'int alpha_two;\n' });
  beta.commit({ 'b.c': 'int beta_two;\n' });

  const r = await runTrawl(['sync', ...where, '--repo', 'alpha'], dir.path);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /\[1\/1\] alpha: indexed/);
  assert.match(r.stdout, /^sync done: 1 indexed, 0 up to date, 0 failed/m);
  assert.doesNotMatch(r.stdout, /beta/);

  const unknown = await runTrawl(['sync', ...where, '--repo', 'nosuch'], dir.path);
  assert.equal(unknown.code, 2);
  assert.equal(unknown.stderr.trim(), 'trawl: no repository named nosuch (trawl repos lists them)');
});

test('POST /api/repos/{id}/sync: owners only; 202 at once, or the outcome with wait=true; the change is searchable after', async (t) => {
  const dir = tempDir('repo-sync-http');
  t.after(() => dir.cleanup());
  const dataDir = join(dir.path, 'data');
  const repo = TestRepo.init(join(dir.path, 'repos', 'widgets'));
  repo.commit({ 'w.c': 'int widget_one;\n' });
  const config = parseConfig(
    JSON.stringify({
      settings: { symbols: false },
      connections: { local: { type: 'git', url: join(dir.path, 'repos', '*'), webhookSecret: { env: 'LOCAL_HOOK' } } },
    }),
    join(dir.path, 'trawl.json'),
  );
  const where = ['--data-dir', dataDir];
  const owner = { authorization: `Bearer ${await newUserKey('olga@example.com', where, 'owner')}` };
  const member = { authorization: `Bearer ${await newUserKey('mel@example.com', where, 'member')}` };
  // A repository of no connection, indexed before the daemon starts.
  const loose = TestRepo.init(join(dir.path, 'loose'));
  loose.commit({ 'l.c': 'int loose_one;\n' });
  const looseId = (await indexLocal(loose.path, { dataDir, symbols: false })).repoId;

  const d = await startDaemon({
    config,
    dataDir,
    host: '127.0.0.1',
    port: 0,
    logger: silentHttpLogger,
    workers: 1,
    env: { ...process.env, LOCAL_HOOK: 'local-hook-secret-0123456789' },
  });
  t.after(() => d.close());
  const search = async (query: string) => {
    const r = await fetch(`${d.url}/api/search`, {
      method: 'POST',
      headers: { ...owner, 'content-type': 'application/json' },
      body: JSON.stringify({ query, matches: 10 }),
    });
    return ((await r.json()) as { files: unknown[] }).files.length;
  };
  await until('indexed', async () => (await search('widget_one')) === 1, 30_000);
  const id = (await d.services.store.getRepoByName('widgets'))!.repoId;
  const sync = (path: string, headers: Record<string, string>) => fetch(`${d.url}${path}`, { method: 'POST', headers });
  const error = async (r: Response) => ((await r.json()) as { errorCode: string }).errorCode;

  repo.commit({ 'w.c': 'int widget_two;\n' });
  const waited = await sync(`/api/repos/${id}/sync?wait=true`, owner);
  assert.equal(waited.status, 200);
  const body = (await waited.json()) as { repoId: number; repoName: string; outcome: string; seconds: number };
  assert.deepEqual({ ...body, seconds: 0 }, { repoId: id, repoName: 'widgets', outcome: 'indexed', seconds: 0 });
  assert.equal(await search('widget_two'), 1, 'searchable when the answer comes');

  repo.commit({ 'w.c': 'int widget_three;\n' });
  const queued = await sync(`/api/repos/${id}/sync`, owner);
  assert.equal(queued.status, 202);
  assert.deepEqual(await queued.json(), { repoId: id, repoName: 'widgets', queued: true });
  await until('queued sync done', async () => (await search('widget_three')) === 1, 30_000);

  // The git server's post-receive notice, signed: the same queue.
  repo.commit({ 'w.c': 'int widget_four;\n' });
  const notice = delivery('git', { path: 'widgets', secret: 'local-hook-secret-0123456789' });
  const noticed = await fetch(`${d.url}/api/webhooks/git`, { method: 'POST', headers: notice.headers, body: notice.body });
  assert.equal(noticed.status, 202);
  assert.deepEqual(await noticed.json(), { outcome: 'queued', event: 'push', repositories: ['widgets'] });
  await until('noticed sync done', async () => (await search('widget_four')) === 1, 30_000);

  const anonymous = await sync(`/api/repos/${id}/sync`, {});
  assert.equal(anonymous.status, 401);
  const asMember = await sync(`/api/repos/${id}/sync`, member);
  assert.equal(asMember.status, 403);
  assert.equal(await error(asMember), 'INSUFFICIENT_PERMISSIONS');
  for (const bad of ['999999', 'abc', '0', '-1', '1e3']) {
    const r = await sync(`/api/repos/${bad}/sync`, owner);
    assert.equal(r.status, 404, bad);
    assert.equal(await error(r), 'REPOSITORY_NOT_FOUND', bad);
  }
  const notSyncable = await sync(`/api/repos/${looseId}/sync`, owner);
  assert.equal(notSyncable.status, 409);
  assert.equal(await error(notSyncable), 'REPOSITORY_NOT_SYNCABLE');
  const badQuery = await sync(`/api/repos/${id}/sync?wait=maybe`, owner);
  assert.equal(badQuery.status, 400);
  assert.equal(await error(badQuery), 'INVALID_QUERY_PARAMS');
});
