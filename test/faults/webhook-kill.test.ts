// kill -9 between a webhook delivery and its build: the delivery was accepted (202) and
// its sync queued, then the daemon dies before the sync runs. Nothing of the queue
// survives; the next start's first pass compares every repository's refs with its index
// and catches up, without the delivery being sent again.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';
import { startGitServer } from '../helpers/git-server.ts';
import { until } from '../helpers/haystack.ts';
import { exited, serve, stop } from '../helpers/serve.ts';
import { startFake, TOKEN } from '../hosts/fake-hosts.ts';
import { delivery } from '../webhooks/deliveries.ts';

const SECRET = 'kill-webhook-secret-0123456789abcdef';

test('kill -9 after a webhook is accepted and before its build: the next start catches up from the refs', async (t) => {
  const dir = tempDir('webhook-kill');
  t.after(() => dir.cleanup());
  const sources = join(dir.path, 'src');
  const api = TestRepo.init(join(sources, 'api'));
  api.commit({ 'server.go': 'package api // kill_zero\n' });
  const gitServer = await startGitServer(sources, { credentials: { username: 'x-access-token', password: TOKEN } });
  t.after(() => gitServer.close());
  const fake = await startFake('github', {
    repos: [{ owner: 'acme', name: 'api', group: 'core', defaultBranch: 'main' }],
    cloneUrl: (r) => `${gitServer.url}/${r.name}`,
  });
  t.after(() => fake.close());
  const configPath = join(dir.path, 'trawl.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      settings: { symbols: false, anonymousAccess: true },
      connections: {
        gh: {
          type: 'github',
          url: fake.url,
          token: { env: 'KILL_GH_TOKEN' },
          webhookSecret: { env: 'KILL_GH_HOOK' },
          cloneOrigins: [gitServer.url],
          orgs: ['acme'],
        },
      },
    }),
  );
  process.env.KILL_GH_TOKEN = TOKEN;
  process.env.KILL_GH_HOOK = SECRET;
  t.after(() => {
    delete process.env.KILL_GH_TOKEN;
    delete process.env.KILL_GH_HOOK;
  });
  const args = ['--config', configPath, '--data-dir', join(dir.path, 'data')];
  const count = async (url: string, query: string) => {
    const r = await fetch(`${url}/api/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, matches: 10 }),
    });
    return ((await r.json()) as { files: unknown[] }).files.length;
  };

  const first = await serve(args);
  t.after(() => void stop(first.child));
  await until('the first pass', async () => (await count(first.url, 'kill_zero')) === 1, 60_000);
  api.commit({ 'server.go': 'package api // kill_one\n' });
  const d = delivery('github', { path: 'acme/api', secret: SECRET });
  const r = await fetch(`${first.url}/api/webhooks/github`, { method: 'POST', headers: { 'content-type': 'application/json', ...d.headers }, body: d.body });
  assert.equal(r.status, 202, await r.text());
  // Within the queue's coalescing window: the sync has not started.
  first.child.kill('SIGKILL');
  await exited(first.child);

  const second = await serve(args);
  t.after(() => void stop(second.child));
  // The old index serves at once; the first pass brings the pushed change. One search
  // for either version: two searches could straddle the first pass's swap.
  assert.equal(await count(second.url, 'kill_zero or kill_one'), 1, 'one version of the file is served');
  await until('caught up from the refs', async () => (await count(second.url, 'kill_one')) === 1, 60_000);
  assert.equal(await count(second.url, 'kill_zero'), 0);
  assert.equal(await stop(second.child), 0);
});
