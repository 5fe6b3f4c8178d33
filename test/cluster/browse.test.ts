// Browsing through any node of a cluster (docs/deployment.md: "any node answers every API
// request").
// Three nodes in this process on a private Redis and PostgreSQL, replication 2; each
// repository built on a different node, the git ones from that node's own mirror (in its
// data dir, as a connection to a remote host leaves them: the record's clone URL is the
// remote's), so that the other nodes have no git source of their own to read and must have
// the builder answer. Every answer is compared with one node that indexed everything.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { keysCommand, usersCommand } from '../../daemon/cli/users-command.ts';
import { newUserKey } from '../helpers/cli-users.ts';
import { clusterSecret } from '../../daemon/cluster/node.ts';
import { forward, type ForwardRequest } from '../../daemon/cluster/forward.ts';
import { PeerAuth } from '../../daemon/cluster/peer-auth.ts';
import { PeerClient } from '../../daemon/cluster/peer-client.ts';
import { loadConfig, parseConfig } from '../../daemon/config/load.ts';
import { startDaemon, type Daemon } from '../../daemon/daemon.ts';
import { silentHttpLogger } from '../../daemon/http/logging.ts';
import { indexPath } from '../../daemon/index/indexer.ts';
import { localRepoMeta } from '../../daemon/index/detect-repo.ts';
import type { Manifest } from '../../daemon/index/manifest.ts';
import { openPgStore } from '../../daemon/store/pg-store.ts';
import { openStore } from '../../daemon/store/open.ts';
import type { Store } from '../../daemon/store/store.ts';
import { mirrorPath } from '../../daemon/sync/fetch-source.ts';
import { tempDir } from '../helpers/corpus.ts';
import { call, type Answer } from '../helpers/daemon.ts';
import { git, TestRepo } from '../helpers/git.ts';
import { until } from '../helpers/haystack.ts';
import type { TestPostgres } from '../helpers/postgres.ts';
import type { TestRedis } from '../helpers/redis.ts';
import { startClusterBackends, stopCluster } from '../helpers/cluster.ts';

const dir = tempDir('cluster-browse');
let redis: TestRedis | undefined;
let postgres: TestPostgres | undefined;
let skip: string | undefined;
const stores: Store[] = [];
const daemons: Daemon[] = [];
let reference: Daemon;
let shared: Store;
let configPath = '';
const nodes: Daemon[] = [];
const IDS = ['a', 'b', 'c'] as const;
const PUBLIC_URL = 'http://trawl.example';
const settings = { anonymousAccess: true, publicUrl: PUBLIC_URL };
/** API keys of the same user, on the reference and on the cluster. */
const keys = { reference: '', cluster: '' };

const WIDGETS = 'git.example/widgets';
const VAULT = 'git.example/vault';
const NOTES = 'notes';

/** The repositories, in the order both stores register them (so their ids agree), with the node that builds each. */
const REPOS: Array<{ name: string; visibility: 'public' | 'private'; git: boolean; builder: number }> = [
  { name: WIDGETS, visibility: 'public', git: true, builder: 0 },
  { name: VAULT, visibility: 'private', git: true, builder: 1 },
  { name: NOTES, visibility: 'public', git: false, builder: 2 },
];

/** The sources: two git work trees with some history, and a plain directory. */
function makeSources(): Record<string, string> {
  const widgets = TestRepo.init(join(dir.path, 'src', 'widgets'));
  const at = (n: number) => ({ author: `Ann Author <ann@example.com>`, date: `2024-0${n}-01T12:00:00Z` });
  widgets.commit(
    { 'src/main.c': 'int main(void) {\n  return widget_count();\n}\n', 'README.md': '# Widgets\n\nwidget docs\n' },
    'Initial import\n\nThe first widgets.',
    at(1),
  );
  widgets.commit({ 'src/widget.c': 'int widget_count(void) {\n  return 42;\n}\n' }, 'Add widget_count', at(2));
  widgets.tag('v1.0', true);
  git(widgets.path, 'mv', 'README.md', 'README.txt');
  widgets.commit({}, 'Rename the readme', { author: 'Bea Author <bea@example.com>', date: '2024-03-01T12:00:00Z' });
  widgets.commit({ 'src/main.c': 'int main(void) {\n  int n = widget_count();\n  return n - 42;\n}\n' }, 'main returns 0', at(4));
  const vault = TestRepo.init(join(dir.path, 'src', 'vault'));
  vault.commit({ 'vault.c': 'int widget_secret_sauce;\n' }, 'Secret', at(5));
  const notes = join(dir.path, 'src', 'notes');
  mkdirSync(join(notes, 'sub'), { recursive: true });
  writeFileSync(join(notes, 'top.txt'), 'top notes\n');
  writeFileSync(join(notes, 'sub', 'a.md'), '# A\n\nwidget notes\n');
  writeFileSync(join(notes, 'sub', 'b.txt'), 'b\n');
  return { [WIDGETS]: widgets.path, [VAULT]: vault.path, [NOTES]: notes };
}

/**
 * Registers and indexes the repositories of REPOS that `build` says, as a sync of a remote
 * host would: a git repository from a mirror at the data dir's mirror path, its record
 * naming the remote. Every repository is registered, in order, whoever builds it.
 */
async function indexRepos(
  store: Store,
  sources: Record<string, string>,
  dataDirOf: (builder: number) => string,
  onCommit?: (builder: number, m: Manifest) => void,
): Promise<void> {
  for (const r of REPOS) {
    const record = await store.upsertRepo({
      repoName: r.name,
      displayName: r.name,
      codeHostType: 'genericGitHost',
      cloneUrl: r.git ? `https://${r.name}.git` : sources[r.name]!,
      isFork: false,
      isArchived: false,
      visibility: r.visibility,
    });
    const dataDir = dataDirOf(r.builder);
    let path = sources[r.name]!;
    if (r.git) {
      path = mirrorPath(dataDir, record.repoId);
      mkdirSync(join(path, '..'), { recursive: true });
      git(dir.path, 'clone', '-q', '--mirror', sources[r.name]!, path);
    }
    await indexPath(path, {
      dataDir,
      symbols: true,
      register: async (d) => ({ repoId: record.repoId, repo: { ...localRepoMeta(d, r.name), visibility: r.visibility } }),
      ...(onCommit ? { onCommit: (m: Manifest) => onCommit(r.builder, m) } : {}),
    });
    await store.updateRepo(record.repoId, { state: 'indexed', indexedAt: new Date().toISOString() });
  }
}

before(async () => {
  const backends = await startClusterBackends();
  if ('skip' in backends) return void (skip = backends.skip);
  ({ redis, postgres } = backends);
  const sources = makeSources();

  // The reference: one node with everything.
  const refData = join(dir.path, 'ref');
  // The data dir's own store, which `trawl users --data-dir` writes to as well.
  const refStore = openStore(refData);
  stores.push(refStore);
  await indexRepos(refStore, sources, () => refData);
  reference = await startDaemon({
    config: parseConfig(JSON.stringify({ settings }), join(dir.path, 'ref.json')),
    dataDir: refData,
    host: '127.0.0.1',
    port: 0,
    logger: silentHttpLogger,
    workers: 1,
    sync: false,
    store: refStore,
  });
  daemons.push(reference);

  // The cluster.
  const storeUrl = await postgres.newDatabase();
  shared = openPgStore(storeUrl);
  stores.push(shared);
  configPath = join(dir.path, 'cluster.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      settings,
      cluster: { store: storeUrl, redis: redis.url, replicationFactor: 2, name: `b${process.pid}`, heartbeatMs: 250, nodeTimeoutMs: 3000 },
    }),
  );
  const config = loadConfig(configPath);
  for (const id of IDS) {
    const d = await startDaemon({
      config,
      dataDir: join(dir.path, id),
      host: '127.0.0.1',
      port: 0,
      logger: silentHttpLogger,
      workers: 1,
      sync: false,
      nodeId: id,
    });
    daemons.push(d);
    nodes.push(d);
  }
  const publishing: Array<Promise<void>> = [];
  await indexRepos(
    shared,
    sources,
    (b) => join(dir.path, IDS[b]!),
    (b, m) => void publishing.push(nodes[b]!.cluster!.onCommit(m)),
  );
  await Promise.all(publishing);
  // Settled: every shard held by its two owners only (a builder that is not one has dropped its copy), as every node sees it.
  await until(
    'every shard on its two owners only, as every node sees it',
    async () => {
      for (const n of nodes) {
        const s = await n.cluster!.status();
        if (s.repositories.length !== REPOS.length || s.summary.ok !== s.summary.shards) return false;
        if (!s.repositories.every((r) => r.shards.every((sh) => sh.holders.length === sh.owners.length && sh.owners.every((o) => sh.holders.includes(o)))))
          return false;
      }
      return true;
    },
    20_000,
  );

  // The same user on both, with a key each.
  keys.reference = await newUserKey('reader@example.com', ['--data-dir', refData]);
  keys.cluster = await newUserKey('reader@example.com', ['--config', configPath]);
});

after(() => stopCluster({ daemons, stores, redis, postgres, dir }));

/** What must agree between the reference and a node: status, body, and the headers the route sets. */
function answer(a: Answer): unknown {
  return { status: a.status, body: a.json ?? a.text, type: a.headers.get('content-type'), total: a.headers.get('x-total-count'), link: a.headers.get('link') };
}

/** A request to the reference and to a node, as the user (with their key on each) or anonymously. */
async function both(node: Daemon, path: string, init: { json?: unknown; as?: 'user' | 'anonymous' } = {}): Promise<{ want: Answer; got: Answer }> {
  const send = (url: string, key: string) =>
    call(`${url}${path}`, {
      ...(init.json !== undefined ? { json: init.json } : {}),
      ...(init.as === 'anonymous' ? {} : { headers: { 'X-Sourcebot-Api-Key': key } }),
    });
  return { want: await send(reference.url, keys.reference), got: await send(node.url, keys.cluster) };
}

const q = encodeURIComponent;

/** Every browsing request of the test, on the repository it reads. */
const REQUESTS: Array<{ path: string; json?: unknown }> = [
  { path: `/api/source?repo=${q(WIDGETS)}&path=src/main.c` },
  { path: `/api/source?repo=${q(WIDGETS)}&path=README.md&ref=v1.0` },
  { path: `/api/source?repo=${q(WIDGETS)}&path=missing.c` },
  { path: `/api/source?repo=${q(WIDGETS)}&path=src/main.c&ref=nope` },
  { path: `/api/outline?repo=${q(WIDGETS)}&path=src/widget.c` },
  { path: '/api/files', json: { repoName: WIDGETS, revisionName: 'v1.0' } },
  { path: '/api/tree', json: { repoName: WIDGETS, paths: ['src'] } },
  { path: `/api/folder_contents?repoName=${q(WIDGETS)}&path=src` },
  { path: `/api/blame?repo=${q(WIDGETS)}&path=src/main.c` },
  { path: `/api/diff?repo=${q(WIDGETS)}&base=v1.0&head=main` },
  { path: `/api/commit?repo=${q(WIDGETS)}&ref=main~1` },
  { path: `/api/commits?repo=${q(WIDGETS)}&perPage=2&page=2` },
  { path: `/api/commits?repo=${q(WIDGETS)}&path=src/main.c` },
  { path: `/api/commits/authors?repo=${q(WIDGETS)}` },
  { path: `/api/source?repo=${q(VAULT)}&path=vault.c` },
  { path: `/api/blame?repo=${q(VAULT)}&path=vault.c` },
  { path: `/api/source?repo=${q(NOTES)}&path=sub/a.md` },
  { path: '/api/files', json: { repoName: NOTES } },
  { path: '/api/tree', json: { repoName: NOTES, paths: ['sub'] } },
  { path: `/api/folder_contents?repoName=${q(NOTES)}&path=sub` },
  { path: `/api/commits?repo=${q(NOTES)}` },
  { path: `/api/source?repo=nobody/nothing&path=x` },
];

/** Has `node` run `r` as if another node of the cluster forwarded it (signed with the cluster's secret). */
async function forwarded(node: Daemon, r: ForwardRequest) {
  const peers = new PeerClient(new PeerAuth(await clusterSecret(shared), 'tester'));
  try {
    return await forward(peers, node.url, r);
  } finally {
    peers.close();
  }
}

async function userRef(email: string): Promise<{ kind: 'apiKey'; userId: string; tokenId: string }> {
  const user = (await shared.getUserByEmail(email))!;
  const [key] = await shared.listApiKeys(user.id);
  return { kind: 'apiKey', userId: user.id, tokenId: key!.id };
}

describe('browsing a cluster of three nodes, each repository built on one of them', () => {
  test('GET /api/repos through every node lists what one node lists', async (t) => {
    if (skip) return t.skip(skip);
    // Built apart, the reference's indexes were made at other times: indexedAt aside.
    const withoutTimes = (list: Array<Record<string, unknown>>) => list.map(({ indexedAt: _at, ...rest }) => rest);
    const lists: unknown[] = [];
    for (const n of nodes) {
      for (const as of ['user', 'anonymous'] as const) {
        const { want, got } = await both(n, '/api/repos?perPage=100', { as });
        assert.equal(got.status, 200, got.text);
        assert.deepEqual(withoutTimes(got.json), withoutTimes(want.json), `${n.cluster!.membership.id} as ${as}`);
        const { body: _g, ...gotRest } = answer(got) as Record<string, unknown>;
        const { body: _w, ...wantRest } = answer(want) as Record<string, unknown>;
        assert.deepEqual(gotRest, wantRest);
        if (as === 'user') lists.push(got.json);
      }
    }
    // The nodes agree among themselves on everything, indexedAt included.
    assert.deepEqual(lists[1], lists[0]);
    assert.deepEqual(lists[2], lists[0]);
    // The private repository is listed to the user only.
    const names = (a: Answer) => (a.json as Array<{ repoName: string }>).map((r) => r.repoName);
    assert.deepEqual(names((await both(nodes[0]!, '/api/repos')).got), [WIDGETS, VAULT, NOTES].sort());
    assert.deepEqual(names((await both(nodes[0]!, '/api/repos', { as: 'anonymous' })).got), [WIDGETS, NOTES].sort());
  });

  test('every browsing endpoint through every node answers what one node answers', async (t) => {
    if (skip) return t.skip(skip);
    // Only a git repository's builder has its source; and with replication 2 of 3, one node
    // holds no shard of the directory (one shard), so it has to ask the others for its files.
    const status = await nodes[0]!.cluster!.status();
    const notes = status.repositories.find((r) => r.repository === NOTES)!;
    assert.equal(IDS.filter((id) => !notes.shards.some((sh) => sh.holders.includes(id))).length, 1, JSON.stringify(notes));
    const statuses = new Set<number>();
    for (const n of nodes) {
      for (const r of REQUESTS) {
        const { want, got } = await both(n, r.path, r.json !== undefined ? { json: r.json } : {});
        assert.deepEqual(answer(got), answer(want), `${r.path} ${JSON.stringify(r.json ?? '')} via ${n.cluster!.membership.id}`);
        statuses.add(want.status);
      }
    }
    // Answers and errors of each kind were compared.
    assert.deepEqual([...statuses].sort(), [200, 400, 404]);
  });

  test("a node reads no other node's git source: a forwarded request it cannot serve is answered 503, never forwarded again", async (t) => {
    if (skip) return t.skip(skip);
    // Node c can see node a's mirror (one file system), but it is not its own.
    const r = await forwarded(nodes[2]!, { method: 'GET', target: `/api/source?repo=${q(WIDGETS)}&path=src/main.c`, identity: { kind: 'anonymous' } });
    assert.equal(r.status, 503);
    const body = JSON.parse(r.body.toString()) as { errorCode: string; message: string };
    assert.equal(body.errorCode, 'SERVICE_UNAVAILABLE');
    assert.match(body.message, /forwarded/);
    // Its builder serves it.
    const ok = await forwarded(nodes[0]!, { method: 'GET', target: `/api/source?repo=${q(WIDGETS)}&path=src/main.c`, identity: { kind: 'anonymous' } });
    assert.equal(ok.status, 200);
    assert.equal((JSON.parse(ok.body.toString()) as { path: string }).path, 'src/main.c');
  });

  test('the node that runs a forwarded request acts as the caller, read again from the store', async (t) => {
    if (skip) return t.skip(skip);
    const target = `/api/source?repo=${q(VAULT)}&path=vault.c`;
    // Anonymous: the private repository is not there, as on one node (through the API, and forwarded to its builder).
    const { want, got } = await both(nodes[0]!, target, { as: 'anonymous' });
    assert.equal(want.status, 404);
    assert.deepEqual(answer(got), answer(want));
    const anonymous = await forwarded(nodes[1]!, { method: 'GET', target, identity: { kind: 'anonymous' } });
    assert.equal(anonymous.status, 404);
    assert.equal((JSON.parse(anonymous.body.toString()) as { errorCode: string }).errorCode, 'REPOSITORY_NOT_FOUND');
    // The user sees it.
    const user = await userRef('reader@example.com');
    assert.equal((await forwarded(nodes[1]!, { method: 'GET', target, identity: user })).status, 200);
    // A suspended user is refused where the request runs.
    const io = { out: () => {}, err: () => {}, now: () => new Date() };
    assert.equal(await usersCommand(['add', '--email', 'gone@example.com', '--config', configPath], io), 0);
    assert.equal(await keysCommand(['create', '--user', 'gone@example.com', '--config', configPath], io), 0);
    const gone = await userRef('gone@example.com');
    assert.equal((await forwarded(nodes[1]!, { method: 'GET', target, identity: gone })).status, 200);
    assert.equal(await usersCommand(['suspend', 'gone@example.com', '--config', configPath], io), 0);
    const refused = await forwarded(nodes[1]!, { method: 'GET', target, identity: gone });
    assert.equal(refused.status, 401);
    assert.equal((JSON.parse(refused.body.toString()) as { errorCode: string }).errorCode, 'NOT_AUTHENTICATED');
    // A key id that is not the user's is refused too.
    assert.equal((await forwarded(nodes[1]!, { method: 'GET', target, identity: { ...user, tokenId: gone.tokenId } })).status, 401);
  });

  test('a forwarded request counts once against the daily limit', async (t) => {
    if (skip) return t.skip(skip);
    // Node b has no git source of widgets: each request is answered by node a.
    const remaining: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await call(`${nodes[1]!.url}/api/commits?repo=${q(WIDGETS)}`, { headers: { 'X-Sourcebot-Api-Key': keys.cluster } });
      assert.equal(res.status, 200, res.text);
      remaining.push(Number(res.headers.get('x-ratelimit-remaining')));
    }
    assert.deepEqual(
      remaining.slice(1).map((r, i) => remaining[i]! - r),
      [1, 1, 1],
    );
  });

  test("/_cluster/forward refuses a user's key", async (t) => {
    if (skip) return t.skip(skip);
    const res = await call(`${nodes[0]!.url}/_cluster/forward?m=GET&t=${q(`/api/source?repo=${WIDGETS}&path=src/main.c`)}&k=anonymous`, {
      method: 'POST',
      headers: { 'X-Sourcebot-Api-Key': keys.cluster },
    });
    assert.equal(res.status, 401);
    assert.equal(res.json.errorCode, 'NOT_AUTHENTICATED');
  });

  test('with the node that built a git repository down, browsing it answers 503; it is still listed and searched', async (t) => {
    if (skip) return t.skip(skip);
    await nodes[0]!.close();
    await until('node a is gone for b', () => nodes[1]!.cluster!.view.live().every((n) => n.id !== 'a'), 10_000);
    const res = await call(`${nodes[1]!.url}/api/source?repo=${q(WIDGETS)}&path=src/main.c`, { headers: { 'X-Sourcebot-Api-Key': keys.cluster } });
    assert.equal(res.status, 503, res.text);
    assert.deepEqual(Object.keys(res.json).sort(), ['errorCode', 'message', 'statusCode']);
    assert.equal(res.json.statusCode, 503);
    assert.equal(res.json.errorCode, 'SERVICE_UNAVAILABLE');
    assert.match(res.json.message, /git\.example\/widgets.*\(a\), which is not live/);
    const listed = await call(`${nodes[2]!.url}/api/repos`);
    assert.ok((listed.json as Array<{ repoName: string }>).some((r) => r.repoName === WIDGETS));
    // The other repositories still browse through any node.
    for (const n of nodes.slice(1)) {
      const { want, got } = await both(n, `/api/source?repo=${q(NOTES)}&path=top.txt`);
      assert.deepEqual(answer(got), answer(want));
    }
  });
});
