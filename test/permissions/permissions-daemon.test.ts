// Permissions from a code host through a running daemon: a GitHub connection (the fake
// host, its repositories served by a git server of their own) with settings.permissions
// "code-host". After the daemon's own sync and permission sync, each member searches and
// lists exactly the public repositories and the private ones the host lets their linked
// account read; an owner links an account by login and the member's results follow at
// once; a reader removed on the host loses the repository after an owner's sync now;
// the status endpoint reports per connection, failures included; unlinking takes effect
// at once. Every change is in the audit log.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { tempDir } from '../helpers/corpus.ts';
import { call, startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { startGitServer } from '../helpers/git-server.ts';
import { TestRepo } from '../helpers/git.ts';
import { newUserKey } from '../helpers/cli-users.ts';
import { installLicense, testLicensor } from '../helpers/license.ts';
import { ACCOUNTS, TOKEN, startFake } from '../hosts/fake-hosts.ts';
import type { FakeRepo } from '../hosts/fake-hosts.ts';

const alice = ACCOUNTS.find((a) => a.login === 'alice')!;
const bob = ACCOUNTS.find((a) => a.login === 'bob')!;

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const got = await probe();
    if (got !== undefined) return got;
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('code-host permissions end to end: sync, search, link, removal, status, unlink', async () => {
  const dir = tempDir('permissions-daemon');
  const sources = join(dir.path, 'src');
  TestRepo.init(join(sources, 'api')).commit({ 'api.go': 'package api // shared_marker api\n' });
  TestRepo.init(join(sources, 'web')).commit({ 'web.ts': '// shared_marker web\n' });
  TestRepo.init(join(sources, 'ops')).commit({ 'ops.sh': '# shared_marker ops\n' });
  const gitServer = await startGitServer(sources, { credentials: { username: 'x-access-token', password: TOKEN } });
  const repos: FakeRepo[] = [
    { owner: 'acme', name: 'api', group: 'core' },
    { owner: 'acme', name: 'web', group: 'web', private: true, readers: ['alice', 'bob'] },
    { owner: 'acme', name: 'ops', group: 'ops', private: true, readers: ['bob'] },
  ];
  const fake = await startFake('github', { repos, cloneUrl: (r) => `${gitServer.url}/${r.name}` });
  const licensor = testLicensor('permissions-daemon');
  // The daemon's repository sync reads connection tokens from its environment.
  process.env.GH_TOKEN = TOKEN;
  let d: TestDaemon | undefined;
  try {
    d = await startTestDaemon({
      secret: false,
      settings: { permissions: 'code-host', symbols: false },
      config: {
        license: { publicKeys: [licensor.publicPem] },
        connections: { gh: { type: 'github', url: fake.url, token: { env: 'GH_TOKEN' }, cloneOrigins: [gitServer.url], orgs: ['acme'] } },
      },
      daemon: { sync: true, env: { GH_TOKEN: TOKEN } },
    });
    const daemon = d;
    await installLicense(daemon.dataDir, licensor.sign(['org-management']));
    const where = ['--data-dir', daemon.dataDir];
    const owner = await newUserKey('owner@example.com', where, 'owner');
    const keys = { alice: await newUserKey(alice.email, where), bob: await newUserKey(bob.email, where), carol: await newUserKey('carol@example.com', where) };
    const store = daemon.daemon.services.store;
    const userId = async (email: string) => (await store.getUserByEmail(email))!.id;
    const ask = (key: string, path: string, init: { json?: unknown; method?: string } = {}) =>
      call(`${daemon.url}${path}`, { headers: { authorization: `Bearer ${key}` }, ...init });
    const searched = async (key: string) =>
      [
        ...new Set(
          ((await ask(key, '/api/search', { json: { query: 'shared_marker', matches: 100 } })).json as { files: Array<{ repository: string }> }).files.map(
            (f) => f.repository.replace(/^.*\/acme\//, ''),
          ),
        ),
      ]
        .filter((n) => n !== 'widgets')
        .sort();
    const listed = async (key: string) =>
      ((await ask(key, '/api/repos')).json as Array<{ repoName: string }>)
        .map((r) => r.repoName.replace(/^.*\/acme\//, ''))
        .filter((n) => n !== 'widgets')
        .sort();

    // The repository sync indexes all three; with no account linked yet, members see the public one only.
    await until('the three repositories indexed', async () =>
      (await store.listRepos()).filter((r) => r.connectionId !== undefined && r.state === 'indexed').length === 3 ? true : undefined,
    );
    for (const key of Object.values(keys)) assert.deepEqual(await searched(key), ['api']);

    // An owner links alice and bob by their logins; each link syncs the member at once.
    for (const [login, email] of [
      ['alice', alice.email],
      ['bob', bob.email],
    ] as const) {
      const res = await ask(owner, `/api/ee/users/${await userId(email)}/accounts`, { json: { connection: 'gh', login } });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.json.accountId, String(ACCOUNTS.find((a) => a.login === login)!.id));
      assert.equal(res.json.linkedBy, 'owner');
      assert.equal(res.json.hasToken, false);
    }
    // GitHub answers repository-driven (the connection's token lists collaborators): a sync now.
    const report = await ask(owner, '/api/ee/permissions/sync', { json: { force: true, wait: true } });
    assert.equal(report.status, 200, report.text);
    assert.equal(report.json.connections[0].repositories.synced, 2);
    assert.deepEqual(await searched(keys.alice), ['api', 'web']);
    assert.deepEqual(await searched(keys.bob), ['api', 'ops', 'web']);
    assert.deepEqual(await searched(keys.carol), ['api'], 'no linked account: public only, never everything');
    assert.deepEqual(await listed(keys.bob), ['api', 'ops', 'web']);
    assert.deepEqual(await listed(keys.alice), ['api', 'web']);
    const hidden = await ask(
      keys.alice,
      `/api/source?repo=${encodeURIComponent((await store.listRepos()).find((r) => r.repoName.endsWith('/ops'))!.repoName)}&path=ops.sh`,
    );
    assert.equal(hidden.status, 404);
    assert.equal(hidden.json.errorCode, 'REPOSITORY_NOT_FOUND');

    // Removed on the host: gone after the next sync (an owner's, here).
    repos[1]!.readers = ['alice'];
    await ask(owner, '/api/ee/permissions/sync', { json: { force: true, wait: true } });
    assert.deepEqual(await searched(keys.bob), ['api', 'ops']);

    // The status endpoint: per connection, what is linked and synced, and failures.
    const status = await ask(owner, '/api/ee/permissions');
    assert.equal(status.status, 200, status.text);
    assert.equal(status.json.mode, 'code-host');
    const gh = status.json.connections.find((c: { connection: string }) => c.connection === 'gh');
    assert.deepEqual(
      {
        accounts: gh.accounts,
        privateRepositories: gh.privateRepositories,
        repositoriesSynced: gh.repositoriesSynced,
        repositoriesFailing: gh.repositoriesFailing,
      },
      { accounts: 2, privateRepositories: 2, repositoriesSynced: 2, repositoriesFailing: 0 },
    );
    for (let i = 0; i < 50; i++) fake.faults.push({ kind: 'status', status: 500 });
    await ask(owner, '/api/ee/permissions/sync', { json: { force: true, wait: true } });
    fake.faults.length = 0;
    const failing = (await ask(owner, '/api/ee/permissions?repositories=true')).json.connections.find((c: { connection: string }) => c.connection === 'gh');
    assert.deepEqual(
      failing.repositories.map((r: { repoName: string; permissionsSyncedAt: string | null; permissionsError: string | null }) => [
        r.repoName.replace(/^.*\/acme\//, ''),
        r.permissionsSyncedAt !== null,
        r.permissionsError !== null,
      ]),
      [
        ['ops', true, true],
        ['web', true, true],
      ],
      'per repository: synced before, failing now',
    );
    assert.equal(failing.repositoriesFailing, 2);
    assert.match(failing.errors[0].error, /failed|500/);
    assert.deepEqual(await searched(keys.bob), ['api', 'ops'], 'a failing host changes nothing');

    // A member reads their own accounts; another member's are not theirs to read.
    const own = await ask(keys.alice, `/api/ee/users/${await userId(alice.email)}/accounts`);
    assert.equal(own.status, 200);
    assert.equal(own.json[0].login, 'alice');
    assert.equal((await ask(keys.alice, `/api/ee/users/${await userId(bob.email)}/accounts`)).status, 404);
    // Members may not link, and a login the host does not know is refused clearly.
    assert.equal((await ask(keys.alice, `/api/ee/users/${await userId(alice.email)}/accounts`, { json: { connection: 'gh', login: 'alice' } })).status, 403);
    const unknown = await ask(owner, `/api/ee/users/${await userId('carol@example.com')}/accounts`, { json: { connection: 'gh', login: 'nobody-here' } });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.json.errorCode, 'HOST_ACCOUNT_NOT_FOUND');
    const taken = await ask(owner, `/api/ee/users/${await userId('carol@example.com')}/accounts`, { json: { connection: 'gh', login: 'bob' } });
    assert.equal(taken.status, 409);
    assert.equal(taken.json.errorCode, 'HOST_ACCOUNT_LINKED_ELSEWHERE');
    const noConn = await ask(owner, `/api/ee/users/${await userId('carol@example.com')}/accounts`, { json: { connection: 'nope', login: 'bob' } });
    assert.equal(noConn.json.errorCode, 'CONNECTION_NOT_FOUND');

    // Unlinking bob: what his account could read stops counting at once.
    const gone = await ask(owner, `/api/ee/users/${await userId(bob.email)}/accounts/gh`, { method: 'DELETE' });
    assert.equal(gone.status, 204);
    assert.deepEqual(await searched(keys.bob), ['api']);
    assert.equal((await ask(owner, `/api/ee/users/${await userId(bob.email)}/accounts/gh`, { method: 'DELETE' })).json.errorCode, 'HOST_ACCOUNT_NOT_FOUND');

    // The metrics count the passes' subjects by connection and outcome.
    const metrics = (await call(`${daemon.url}/metrics`, { headers: { authorization: `Bearer ${owner}` } })).text;
    assert.match(metrics, /trawl_permission_sync_subjects_total\{connection="gh",direction="repositories",outcome="synced"\} [1-9]/);
    assert.match(metrics, /trawl_permission_sync_subjects_total\{connection="gh",direction="repositories",outcome="failed"\} [1-9]/);
    // The audit log has the links, the unlink and the passes.
    const actions = ((await ask(owner, '/api/ee/audit?perPage=100')).json as Array<{ action: string }>).map((e) => e.action);
    for (const action of ['host_account.linked', 'host_account.unlinked', 'permissions.synced']) assert.ok(actions.includes(action), action);
  } finally {
    await d?.cleanup();
    await fake.close();
    await gitServer.close();
    dir.cleanup();
  }
});
