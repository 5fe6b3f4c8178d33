// A flood of push notices: 3,000 signed notices over 30 repositories of a plain git
// server's connection, sent 64 at a time through the git route while searches go on, after
// every repository got a commit. Every notice is accepted (202, none lost), the syncs
// coalesce (far fewer batches than notices; the queue never holds more entries than there
// are repositories), searches keep answering, and every repository ends at its newest
// commit. (The bench sends 10,000 in a minute to 2,000 repositories: bench/README.md.)

import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseConfig } from '../../daemon/config/load.ts';
import { startDaemon } from '../../daemon/daemon.ts';
import { silentHttpLogger } from '../../daemon/http/logging.ts';
import type { RepoSyncQueue } from '../../daemon/sync/repo-queue.ts';
import { tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';
import { until } from '../helpers/haystack.ts';

const SECRET = 'flood-webhook-secret-0123456789abcdef';
const REPOS = 30;
const NOTICES = 3000;

test('a flood of push notices: all accepted, coalesced, searches answered, every repository at its newest commit', async (t) => {
  const dir = tempDir('webhook-flood');
  t.after(() => dir.cleanup());
  const reposDir = join(dir.path, 'repos');
  const repos = Array.from({ length: REPOS }, (_, i) => {
    const r = TestRepo.init(join(reposDir, `r${String(i).padStart(2, '0')}`));
    r.commit({ 'main.c': `int flood_zero_${i};\n` });
    return r;
  });
  const config = parseConfig(
    JSON.stringify({
      settings: { symbols: false, anonymousAccess: true },
      connections: { local: { type: 'git', url: `${reposDir}/*`, webhookSecret: { env: 'FLOOD_HOOK' } } },
    }),
    join(dir.path, 'trawl.json'),
  );
  const d = await startDaemon({
    config,
    dataDir: join(dir.path, 'data'),
    host: '127.0.0.1',
    port: 0,
    logger: silentHttpLogger,
    workers: 1,
    env: { ...process.env, FLOOD_HOOK: SECRET },
  });
  t.after(() => d.close());
  const found = async (query: string) => {
    const r = await fetch(`${d.url}/api/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query, matches: 1000 }),
    });
    assert.equal(r.status, 200);
    return ((await r.json()) as { files: unknown[] }).files.length;
  };
  await until('the first pass', async () => (await found('flood_zero_')) === REPOS, 60_000);
  const queue = (d.services.repoSync as unknown as { queue: RepoSyncQueue }).queue;
  const before = { ...queue.counts };

  for (const [i, r] of repos.entries()) r.commit({ 'main.c': `int flood_zero_${i};\nint flood_new_${i};\n` });
  const notice = (repo: string) => {
    const body = JSON.stringify({ repository: repo, refs: [{ ref: 'refs/heads/main', after: randomUUID() }] });
    return { body, signature: `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}` };
  };
  const statuses = new Map<number, number>();
  let most = 0;
  const searches: number[] = [];
  let sending = true;
  const searching = (async () => {
    while (sending) {
      const started = performance.now();
      await found('flood_zero_');
      searches.push(performance.now() - started);
    }
  })();
  let next = 0;
  const lane = async () => {
    while (next < NOTICES) {
      const n = notice(`r${String(next++ % REPOS).padStart(2, '0')}`);
      const r = await fetch(`${d.url}/api/webhooks/git`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-trawl-signature-256': n.signature },
        body: n.body,
      });
      await r.arrayBuffer();
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      most = Math.max(most, queue.waiting);
    }
  };
  await Promise.all(Array.from({ length: 64 }, lane));
  sending = false;
  await searching;

  assert.deepEqual([...statuses], [[202, NOTICES]], 'every notice accepted');
  assert.ok(most <= REPOS, `the queue held ${most} entries at most, one per repository`);
  assert.ok(searches.length > 0);
  await until('every repository at its newest commit', async () => (await found('flood_new_')) === REPOS, 120_000);
  const batches = queue.counts.batches - before.batches;
  assert.equal(queue.counts.requests - before.requests, NOTICES);
  assert.ok(batches < NOTICES / 10, `${batches} batches for ${NOTICES} notices`);
  t.diagnostic(`${batches} batches for ${NOTICES} notices; ${searches.length} searches meanwhile, the slowest ${Math.round(Math.max(...searches))} ms`);
});
