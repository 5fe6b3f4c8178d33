// Push webhooks end to end: a daemon on loopback with a GitHub connection (a fake GitHub
// whose clone URLs point at a git server of real repositories made here), deliveries
// signed as GitHub signs them. A push is searchable soon after its delivery; forged,
// replayed, unknown and malformed deliveries change nothing; a burst of deliveries for the
// same repositories coalesces, and each ends at its newest commit.

import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { parseConfig } from '../../daemon/config/load.ts';
import { startDaemon } from '../../daemon/daemon.ts';
import { silentHttpLogger } from '../../daemon/http/logging.ts';
import { readAllManifests } from '../../daemon/index/manifest.ts';
import { tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';
import { startGitServer } from '../helpers/git-server.ts';
import { until } from '../helpers/haystack.ts';
import { startFake, TOKEN } from '../hosts/fake-hosts.ts';
import { runTrawl } from '../helpers/trawl-cli.ts';
import { delivery, type Delivery } from './deliveries.ts';

const SECRET = 'e2e-webhook-secret-0123456789abcdef';

test('GitHub push webhooks: searchable after the delivery; forged, replayed, unknown and malformed ones change nothing; a burst coalesces', async (t) => {
  const dir = tempDir('webhooks-e2e');
  t.after(() => dir.cleanup());
  const sources = join(dir.path, 'src');
  const api = TestRepo.init(join(sources, 'api'));
  api.commit({ 'server.go': 'package api // hook_zero\n' });
  const web = TestRepo.init(join(sources, 'web'));
  web.commit({ 'index.ts': 'export const web_zero = 1;\n' });
  const gitServer = await startGitServer(sources, { credentials: { username: 'x-access-token', password: TOKEN } });
  t.after(() => gitServer.close());
  const fake = await startFake('github', {
    repos: [
      { owner: 'acme', name: 'api', group: 'core', defaultBranch: 'main' },
      { owner: 'acme', name: 'web', group: 'web', defaultBranch: 'main' },
    ],
    cloneUrl: (r) => `${gitServer.url}/${r.name}`,
  });
  t.after(() => fake.close());
  const config = parseConfig(
    JSON.stringify({
      settings: { symbols: false, anonymousAccess: true },
      connections: {
        gh: { type: 'github', url: fake.url, token: { env: 'GH_TOKEN' }, webhookSecret: { env: 'GH_HOOK' }, cloneOrigins: [gitServer.url], orgs: ['acme'] },
      },
    }),
    join(dir.path, 'trawl.json'),
  );
  const dataDir = join(dir.path, 'data');
  const d = await startDaemon({
    config,
    dataDir,
    host: '127.0.0.1',
    port: 0,
    logger: silentHttpLogger,
    workers: 1,
    env: { ...process.env, GH_TOKEN: TOKEN, GH_HOOK: SECRET },
  });
  t.after(() => d.close());
  const count = async (query: string) => {
    const r = await fetch(`${d.url}/api/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, matches: 10 }),
    });
    return ((await r.json()) as { files: unknown[] }).files.length;
  };
  await until('the first pass', async () => (await count('hook_zero')) === 1 && (await count('web_zero')) === 1, 30_000);
  const send = async (dl: Delivery, path = '/api/webhooks/github') => {
    const r = await fetch(`${d.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...dl.headers }, body: dl.body });
    return { status: r.status, json: (await r.json()) as Record<string, unknown> };
  };
  const generations = () =>
    readAllManifests(dataDir)
      .map((m) => `${m.repoId}:${m.generation}`)
      .sort()
      .join();

  // A push: 202, and searchable soon after.
  api.commit({ 'server.go': 'package api // hook_one\n' });
  const started = performance.now();
  const pushed = delivery('github', { path: 'acme/api', secret: SECRET, id: 'delivery-1' });
  const answer = await send(pushed);
  assert.equal(answer.status, 202);
  assert.deepEqual(answer.json, { outcome: 'queued', event: 'push', repositories: [`127.0.0.1/acme/api`] });
  await until('the push searchable', async () => (await count('hook_one')) === 1, 20_000);
  t.diagnostic(`push to searchable: ${Math.round(performance.now() - started)} ms (loopback, a two-file repository)`);
  assert.equal(await count('web_zero'), 1);

  // Its freshness: the event, when its sync ended, the lag, the commit indexed; and in trawl repos.
  let listed: Record<string, unknown> = {};
  await until('the event recorded', async () => {
    const all = (await (await fetch(`${d.url}/api/repos`)).json()) as Array<Record<string, unknown>>;
    listed = all.find((r) => r.repoName === '127.0.0.1/acme/api') ?? {};
    return listed.lastEventSyncedAt !== undefined;
  });
  assert.equal(listed.indexedCommit, api.head());
  assert.ok(Date.parse(listed.lastEventSyncedAt as string) >= Date.parse(listed.lastEventAt as string));
  assert.ok(typeof listed.eventLagSeconds === 'number' && listed.eventLagSeconds < 20, String(listed.eventLagSeconds));
  const other = ((await (await fetch(`${d.url}/api/repos`)).json()) as Array<Record<string, unknown>>).find((r) => r.repoName === '127.0.0.1/acme/web')!;
  assert.equal(other.lastEventAt, undefined, 'no event for it yet');
  const cli = await runTrawl(['repos', '--data-dir', dataDir], dir.path);
  assert.equal(cli.code, 0, cli.stderr);
  assert.match(cli.stdout, /LAST EVENT/);
  assert.match(cli.stdout, /127\.0\.0\.1\/acme\/api .* searchable in \d+\.\d s/);

  // Nothing below may change an index.
  const before = generations();
  api.commit({ 'server.go': 'package api // hook_forged\n' });
  const forged = await send(delivery('github', { path: 'acme/api', secret: 'not-the-secret' }));
  assert.equal(forged.status, 401);
  assert.equal(forged.json.errorCode, 'NOT_AUTHENTICATED');
  assert.equal((await send(delivery('github', { path: 'acme/api' }))).status, 401, 'unsigned');
  const replayed = await send(pushed);
  assert.deepEqual([replayed.status, replayed.json.outcome], [200, 'replayed']);
  const unknown = await send(delivery('github', { path: 'acme/elsewhere', secret: SECRET }));
  assert.deepEqual([unknown.status, unknown.json.outcome, unknown.json.unknown], [200, 'ignored', ['127.0.0.1/acme/elsewhere']]);
  const notGitlab = await send(delivery('gitlab', { path: 'acme/api', secret: SECRET }), '/api/webhooks/gitlab');
  assert.deepEqual([notGitlab.status, notGitlab.json.errorCode], [404, 'NOT_FOUND']);
  const huge = await fetch(`${d.url}/api/webhooks/github`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: Buffer.alloc(2 * 1024 * 1024, 32),
  });
  assert.equal(huge.status, 413);
  const malformed = Buffer.from('{"ref": "refs/heads/main"');
  const mal = await send({ ...delivery('github', { path: 'acme/api', secret: SECRET }), body: malformed, headers: signedHeaders(malformed) });
  assert.deepEqual([mal.status, mal.json.errorCode], [400, 'INVALID_REQUEST_BODY']);
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(generations(), before, 'no index changed');
  assert.equal(await count('hook_forged'), 0);

  // A burst: 200 deliveries over both repositories while each gets new commits; every
  // delivery is taken, and each repository ends at its newest commit.
  const bursts: Array<Promise<{ status: number }>> = [];
  for (let i = 0; i < 200; i++) {
    if (i === 100) {
      api.commit({ 'server.go': 'package api // hook_last\n' });
      web.commit({ 'index.ts': 'export const web_last = 1;\n' });
    }
    bursts.push(send(delivery('github', { path: i % 2 === 0 ? 'acme/api' : 'acme/web', secret: SECRET })));
  }
  const statuses = (await Promise.all(bursts)).map((r) => r.status);
  assert.ok(
    statuses.every((s) => s === 202),
    `every delivery queued: ${[...new Set(statuses)].join()}`,
  );
  await until('both at their newest commit', async () => (await count('hook_last')) === 1 && (await count('web_last')) === 1, 30_000);
  const metrics = await (await fetch(`${d.url}/metrics`)).text();
  assert.match(metrics, /trawl_webhook_deliveries_total\{host="github",outcome="queued"\} 201/);
  assert.match(metrics, /trawl_webhook_push_to_searchable_seconds_count [1-9]/);
  // Both are small: each sync built its own compound shard, merged with the other's after it.
  assert.match(metrics, /trawl_compound_shard_merge_seconds_count [1-9]/);
});

/** GitHub's headers for a push whose body is `body`, signed with SECRET. */
function signedHeaders(body: Buffer): Record<string, string> {
  return {
    'x-github-event': 'push',
    'x-github-delivery': 'malformed-1',
    'x-hub-signature-256': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`,
  };
}
