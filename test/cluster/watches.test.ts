// Watches in a cluster: two daemons in this process (replication 2) on a private Redis and
// PostgreSQL, whose connection names two repositories on this machine and takes a git
// server's signed push notices. One node leads the watches (ClusterKeys.watchesLeader):
// it alone checks them and POSTs their changes. A watch made through the other node, its
// SSE stream opened there, and the push noticed there: the change is recorded once, POSTed
// once (signed), streamed on the node that did not record it; a watch the changed lines
// rule out is not searched (the change was read from the repository's git mirror, by the
// node that built it when that is the other one: the change route); the node that does not
// lead checks nothing.

import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Redis } from 'ioredis';
import { ClusterKeys } from '../../daemon/cluster/redis-keys.ts';
import { loadConfig } from '../../daemon/config/load.ts';
import type { Daemon } from '../../daemon/daemon.ts';
import { newUserKey } from '../helpers/cli-users.ts';
import { NodeLogs, startClusterBackends, startDaemons, stopCluster } from '../helpers/cluster.ts';
import { tempDir } from '../helpers/corpus.ts';
import { call } from '../helpers/daemon.ts';
import { git, TestRepo } from '../helpers/git.ts';
import { until } from '../helpers/haystack.ts';
import type { TestPostgres } from '../helpers/postgres.ts';
import type { TestRedis } from '../helpers/redis.ts';
import { hookReceiver } from '../helpers/hook-receiver.ts';
import { delivery } from '../webhooks/deliveries.ts';

const SECRET = 'cluster-watch-secret-0123456789abcdef';
/** What the nodes logged: printed when the test fails. */
const logs = new NodeLogs();
const dir = tempDir('cluster-watches');
const keys = new ClusterKeys(`watch${process.pid}`);
let redis: TestRedis | undefined;
let postgres: TestPostgres | undefined;
let skip: string | undefined;
const daemons: Daemon[] = [];
let widgets: TestRepo;
let member = '';

before(async () => {
  const backends = await startClusterBackends();
  if ('skip' in backends) return void (skip = backends.skip);
  ({ redis, postgres } = backends);
  widgets = TestRepo.init(join(dir.path, 'repos', 'widgets'));
  widgets.commit({ 'w.c': 'int widget_zero;\n' });
  TestRepo.init(join(dir.path, 'repos', 'gadgets')).commit({ 'g.c': 'int gadget_zero;\n' });
  const configPath = join(dir.path, 'cluster.json');
  // Long enough that a loaded machine does not move the leadership or count a node dead.
  const cluster = { store: await postgres.newDatabase(), redis: redis.url, replicationFactor: 2, name: keys.name, heartbeatMs: 1000, nodeTimeoutMs: 6000 };
  const connections = { local: { type: 'git', url: join(dir.path, 'repos', '*'), webhookSecret: { env: 'LOCAL_HOOK' } } };
  const settings = { anonymousAccess: true, symbols: false, watches: { allowPrivateUrls: true } };
  writeFileSync(configPath, JSON.stringify({ settings, cluster, connections }));
  member = await newUserKey('wanda@example.com', ['--config', configPath]);
  const config = loadConfig(configPath);
  await startDaemons(daemons, config, dir.path, ['a', 'b'], { env: { ...process.env, LOCAL_HOOK: SECRET } }, logs);
});

after(async () => {
  await stopCluster({ daemons, stores: [], ...(redis ? { redis } : {}), ...(postgres ? { postgres } : {}), dir });
});

async function found(d: Daemon, query: string): Promise<number> {
  const res = await call(`${d.url}/api/search`, { json: { query, matches: 10 } });
  return (res.json as { files: unknown[] }).files.length;
}

/** A counter of the daemon's /metrics (0 when it has no sample yet). */
async function metric(d: Daemon, name: string): Promise<number> {
  const text = await (await fetch(`${d.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.slice(name.length + 1));
}

test(
  'watches in a cluster: made, streamed and noticed through the node that does not lead; checked and POSTed once, by the one that does; taken over when it stops',
  {
    timeout: 120_000,
  },
  (t) =>
    logs.printedOnFailure(t, async () => {
      if (skip) return t.skip(skip);
      const own = new Redis(redis!.url);
      t.after(() => own.disconnect());
      await until('one node leads the watches', async () => ['a', 'b'].includes((await own.get(keys.watchesLeader)) ?? ''));
      const leaderId = await own.get(keys.watchesLeader);
      const leader = daemons[leaderId === 'a' ? 0 : 1]!;
      const other = daemons[leaderId === 'a' ? 1 : 0]!;
      assert.equal(leader.cluster!.leadsWatches, true);
      assert.equal(other.cluster!.leadsWatches, false);
      await until(
        'both repositories searchable through the other node',
        async () => (await found(other, 'widget_zero')) === 1 && (await found(other, 'gadget_zero')) === 1,
      );

      const auth = { authorization: `Bearer ${member}` };
      const hook = await hookReceiver();
      t.after(() => hook.close());
      const made = await call(`${other.url}/api/watches`, { json: { name: 'markers', query: 'widget_marker', url: hook.url }, headers: auth });
      assert.equal(made.status, 201, made.text);
      const { id, secret } = made.json as { id: number; secret: string };
      // A second watch, which the pushed lines rule out.
      const spared = await call(`${other.url}/api/watches`, { json: { name: 'gadgets', query: 'gadget_zero' }, headers: auth });
      assert.equal(spared.status, 201, spared.text);
      assert.equal((await call(`${leader.url}/api/watches/${id}`, { headers: auth })).status, 200, 'the watch is read through either node');

      // Its stream, on the node that does not record the changes.
      const sse = new AbortController();
      t.after(() => sse.abort());
      const streamed: string[] = [];
      const stream = await fetch(`${other.url}/api/watches/${id}/stream`, { headers: auth, signal: sse.signal });
      assert.equal(stream.status, 200);
      void (async () => {
        const decoder = new TextDecoder();
        try {
          for await (const chunk of stream.body!) streamed.push(decoder.decode(chunk as Uint8Array));
        } catch {
          // aborted at the end of the test
        }
      })();

      // (Summed over both nodes: on a loaded machine the leadership may move during the test.)
      const summed = async (name: string) => (await metric(daemons[0]!, name)) + (await metric(daemons[1]!, name));
      // A repository whose change could not be read (its builder busy or gone) has every watch
      // searched in it, two here: legitimate, and not the filter's doing. Nor is a search that
      // did not finish, tried again (one watch here, the one the lines may touch).
      const searches = async () =>
        (await summed('trawl_watch_searches_total')) -
        2 * (await summed('trawl_watch_changes_read_total{from="unread"}')) -
        (await summed('trawl_watch_changes_deferred_total'));
      const searchedBefore = await searches();
      widgets.commit({ 'w.c': 'int widget_zero;\nint widget_marker;\n' });
      const notice = delivery('git', { path: 'widgets', secret: SECRET });
      const answer = await call(`${other.url}/api/webhooks/git`, { method: 'POST', headers: notice.headers, body: notice.body });
      assert.equal(answer.status, 202, answer.text);
      await until('the change POSTed', () => hook.got.length >= 1, 30_000);
      const posted = hook.got[0]!;
      assert.equal(posted.headers['x-trawl-signature-256'], `sha256=${createHmac('sha256', secret).update(posted.body).digest('hex')}`);
      const event = JSON.parse(posted.body) as { id: number; added: unknown; removed: unknown };
      assert.deepEqual(event.added, [{ path: 'w.c', line: 2, text: 'int widget_marker;' }]);
      assert.deepEqual(event.removed, []);
      await until(
        'the change streamed on the node that did not record it',
        () => streamed.join('').includes(`id: ${event.id}\nevent: watch.matches\n`),
        10_000,
      );
      // Each node reads the same one event; the POST was made once.
      for (const d of daemons) {
        const events = (await call(`${d.url}/api/watches/${id}/events`, { headers: auth })).json as Array<{ id: number }>;
        assert.deepEqual(
          events.map((e) => e.id),
          [event.id],
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 1500));
      assert.equal(hook.got.length, 1, 'POSTed once');
      // On a loaded machine the leadership may move during the test (a renewal late past the
      // key's expiry): both nodes may then check the push, and the searches are not one check's.
      if ((await own.get(keys.watchesLeader)) === leaderId && (await metric(other, 'trawl_watch_check_seconds_count')) === 0)
        assert.equal(await searches(), searchedBefore + 1, 'the watch the changed lines rule out was not searched');
      else t.diagnostic('the leadership moved during the test: which node checked, and how often, is not asserted');

      // The change as either node reads it from the repository's git mirror (through the node
      // that built it, for the other one).
      const repoId = (event as unknown as { repository: { id: number } }).repository.id;
      const published = leader.cluster!.view.published.get(repoId)!;
      const refs = published.manifest!.refs;
      const first = [{ name: refs[0]!.name, commit: git(widgets.path, 'rev-parse', 'HEAD~1').trim() }];
      for (const d of daemons) {
        const read = await d.cluster!.readChange(repoId, first, refs);
        assert.ok(read, `read through ${d.cluster!.membership.id} (built by ${published.builtBy})`);
        assert.deepEqual(read.paths, ['w.c']);
        assert.equal(read.lines.toString(), 'int widget_marker;\n');
      }

      // The leading node stops: the other takes the watches over, and reports the next change
      // (the line removed), once.
      const leadingId = await own.get(keys.watchesLeader);
      const leading = daemons.find((d) => d.cluster!.membership.id === leadingId)!;
      const staying = daemons.find((d) => d !== leading)!;
      await leading.close();
      daemons.splice(daemons.indexOf(leading), 1);
      await until('the other node leads the watches', () => staying.cluster!.leadsWatches, 15_000);
      widgets.commit({ 'w.c': 'int widget_zero;\n' });
      const again = delivery('git', { path: 'widgets', secret: SECRET });
      assert.equal((await call(`${staying.url}/api/webhooks/git`, { method: 'POST', headers: again.headers, body: again.body })).status, 202);
      await until('the removal POSTed by the node that took over', () => hook.got.length >= 2, 30_000);
      const removal = JSON.parse(hook.got[1]!.body) as { added: unknown; removed: unknown };
      assert.deepEqual(removal.added, []);
      assert.deepEqual(removal.removed, [{ path: 'w.c', line: 2, text: 'int widget_marker;' }]);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      assert.equal(hook.got.length, 2, 'POSTed once');
    }),
);
