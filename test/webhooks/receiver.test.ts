// The receiver (webhooks/receiver.ts) with a store of a few repositories and a recording
// sync in place of the daemon's: what each kind of delivery leads to, what is refused and
// counted, replays, several connections of one type, and a daemon that syncs nothing.

import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../daemon/config/load.ts';
import { ServiceError } from '../../daemon/errors.ts';
import type { ConnectionRecord, RepoRecord } from '../../daemon/store/store.ts';
import type { WebhookHost } from '../../daemon/webhooks/hosts.ts';
import { WebhookReceiver, type ReceiverDeps } from '../../daemon/webhooks/receiver.ts';
import { SeenDeliveries } from '../../daemon/webhooks/seen-deliveries.ts';
import { delivery } from './deliveries.ts';

const config = parseConfig(
  JSON.stringify({
    connections: {
      work: { type: 'github', url: 'https://github.com', orgs: ['acme'], webhookSecret: { env: 'WORK_SECRET' } },
      oss: { type: 'github', url: 'https://github.com', orgs: ['oss'], webhookSecret: { env: 'OSS_SECRET' } },
      lab: { type: 'gitlab', url: 'https://gitlab.example.com', groups: ['acme'], webhookSecret: { env: 'UNSET_SECRET' } },
      tea: { type: 'gitea', url: 'https://gitea.example.com', orgs: ['acme'] },
    },
  }),
  '/etc/trawl/trawl.json',
);
const env = { WORK_SECRET: 'work-secret-0123456789', OSS_SECRET: 'oss-secret-0123456789' };
const connections: ConnectionRecord[] = [
  { id: 1, name: 'work', connectionType: 'github' },
  { id: 2, name: 'oss', connectionType: 'github' },
];
const repo = (repoId: number, repoName: string, connectionId: number, state: RepoRecord['state'] = 'indexed'): RepoRecord => ({
  repoId,
  repoName,
  displayName: repoName,
  codeHostType: 'github',
  connectionId,
  isFork: false,
  isArchived: false,
  visibility: 'private',
  state,
  failures: 0,
  indexedRefs: [],
  topics: [],
});
const repos = [
  repo(10, 'github.com/acme/api', 1),
  repo(11, 'github.com/acme/web', 1),
  repo(20, 'github.com/oss/lib', 2),
  repo(30, 'github.com/acme/gone', 1, 'deleted'),
];

function receiver(overrides: Partial<ReceiverDeps> = {}) {
  const synced: number[] = [];
  const refused: string[] = [];
  const outcomes: string[] = [];
  let listings = 0;
  const r = new WebhookReceiver({
    config,
    env,
    store: {
      getRepoByName: async (name: string) => repos.find((x) => x.repoName === name),
      listConnections: async () => connections,
    },
    syncing: () => ({
      request: async (repoId) => (synced.push(repoId), { repoId, outcome: 'indexed', seconds: 0 }),
      listing: () => void listings++,
    }),
    seen: new SeenDeliveries(),
    refused: (address, host, why) => void refused.push(`${address} ${host} ${why}`),
    observe: { delivery: (host, outcome) => void outcomes.push(`${host} ${outcome}`), searchable: () => {} },
    ...overrides,
  });
  return { r, synced, refused, outcomes, listings: () => listings };
}

const errorOf = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p;
  } catch (err) {
    if (err instanceof ServiceError) return `${err.statusCode} ${err.errorCode}`;
    throw err;
  }
  return 'no error';
};

test("a push signed with a connection's secret queues the sync of its repository, for that connection only", async () => {
  const { r, synced, outcomes } = receiver();
  const a = await r.receive('github', delivery('github', { path: 'acme/api', secret: env.WORK_SECRET }), '203.0.113.1');
  assert.deepEqual(a, { status: 202, body: { outcome: 'queued', event: 'push', repositories: ['github.com/acme/api'] } });
  // Signed with the other GitHub connection's secret: that connection's repository.
  const b = await r.receive('github', delivery('github', { path: 'oss/lib', secret: env.OSS_SECRET }), '203.0.113.1');
  assert.equal(b.body.outcome, 'queued');
  // A repository of the other connection, signed with this one's secret: not this connection's to sync.
  const c = await r.receive('github', delivery('github', { path: 'oss/lib', secret: env.WORK_SECRET }), '203.0.113.1');
  assert.deepEqual(c, { status: 200, body: { outcome: 'ignored', event: 'push', unknown: ['github.com/oss/lib'] } });
  const d = await r.receive('github', delivery('github', { path: 'acme/gone', secret: env.WORK_SECRET }), '203.0.113.1');
  assert.equal(d.body.outcome, 'ignored', 'a deleted repository');
  const e = await r.receive('github', delivery('github', { path: 'acme/brand-new', secret: env.WORK_SECRET }), '203.0.113.1');
  assert.deepEqual(e.body.unknown, ['github.com/acme/brand-new']);
  await new Promise((res) => setImmediate(res));
  assert.deepEqual(synced, [10, 20]);
  assert.deepEqual(outcomes, ['github queued', 'github queued', 'github ignored', 'github ignored', 'github ignored']);
});

test('repository events ask for a listing; pings and other events do nothing', async () => {
  const { r, synced, listings } = receiver();
  assert.deepEqual(await r.receive('github', delivery('github', { path: 'acme/api', kind: 'repository', secret: env.WORK_SECRET }), ''), {
    status: 202,
    body: { outcome: 'listing', event: 'repository' },
  });
  assert.equal(listings(), 1);
  assert.deepEqual((await r.receive('github', delivery('github', { path: 'acme/api', kind: 'ping', secret: env.WORK_SECRET }), '')).body, {
    outcome: 'ping',
    event: 'ping',
  });
  assert.deepEqual((await r.receive('github', delivery('github', { path: 'acme/api', kind: 'other', secret: env.WORK_SECRET }), '')).body, {
    outcome: 'ignored',
    event: 'issues',
  });
  assert.deepEqual(synced, []);
});

test('a delivery taken before is not acted on again; the same id for another connection is another delivery', async () => {
  const { r, synced } = receiver();
  const first = delivery('github', { path: 'acme/api', secret: env.WORK_SECRET, id: 'guid-1' });
  assert.equal((await r.receive('github', first, '')).body.outcome, 'queued');
  assert.deepEqual(await r.receive('github', first, ''), { status: 200, body: { outcome: 'replayed', event: 'push' } });
  assert.equal((await r.receive('github', delivery('github', { path: 'oss/lib', secret: env.OSS_SECRET, id: 'guid-1' }), '')).body.outcome, 'queued');
  await new Promise((res) => setImmediate(res));
  assert.deepEqual(synced, [10, 20]);
});

test('refused, counted, and nothing done: no connection of that type takes webhooks (404), or none verifies it (401)', async () => {
  const { r, synced, refused, outcomes } = receiver();
  const cases: Array<[WebhookHost, ReturnType<typeof delivery>, string]> = [
    ['github', delivery('github', { path: 'acme/api' }), '401 NOT_AUTHENTICATED'],
    ['github', delivery('github', { path: 'acme/api', secret: 'guessed-secret' }), '401 NOT_AUTHENTICATED'],
    // The GitLab connection's variable is not set: it takes nothing.
    ['gitlab', delivery('gitlab', { path: 'acme/api', secret: 'anything' }), '404 NOT_FOUND'],
    // The Gitea connection has no webhook secret.
    ['gitea', delivery('gitea', { path: 'acme/api', secret: 'x' }), '404 NOT_FOUND'],
    ['gerrit', delivery('gerrit', { path: 'tools/api', secret: 'x' }), '404 NOT_FOUND'],
  ];
  for (const [host, d, expected] of cases) assert.equal(await errorOf(r.receive(host, d, '198.51.100.9')), expected, host);
  assert.deepEqual(refused, [
    '198.51.100.9 github unverified',
    '198.51.100.9 github unverified',
    '198.51.100.9 gitlab unknown',
    '198.51.100.9 gitea unknown',
    '198.51.100.9 gerrit unknown',
  ]);
  assert.deepEqual(synced, []);
  assert.deepEqual(outcomes, [], 'only verified deliveries are counted as deliveries');
  // Verified but not what GitHub sends: 400, not counted as refused.
  const body = Buffer.from('{"ref":"refs/heads/main"}');
  const signed = {
    headers: { 'x-github-event': 'push', 'x-hub-signature-256': `sha256=${createHmac('sha256', env.WORK_SECRET).update(body).digest('hex')}` },
    query: {},
    body,
  };
  assert.equal(await errorOf(r.receive('github', signed, '')), '400 INVALID_REQUEST_BODY');
  assert.equal(refused.length, 5);
});

test('a daemon that syncs nothing itself verifies deliveries and answers 503 to one it would act on', async () => {
  const { r, refused } = receiver({ syncing: () => undefined });
  assert.equal(await errorOf(r.receive('github', delivery('github', { path: 'acme/api', secret: env.WORK_SECRET }), '')), '503 SERVICE_UNAVAILABLE');
  assert.equal(await errorOf(r.receive('github', delivery('github', { path: 'acme/api' }), '')), '401 NOT_AUTHENTICATED');
  assert.equal(refused.length, 1);
});
