// GitHub's permission answers beyond the shared suite (permissions.test.ts): what needs an
// account's own token, which logins are accounts, the verified primary address, and the
// collaborators that are left out.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GitHubConnection } from '../../daemon/config/types.ts';
import { HostError, createCodeHost } from '../../daemon/repos/hosts/index.ts';
import type { HostPermissions } from '../../daemon/repos/hosts/index.ts';
import { ACCOUNTS, DATASET, NOW_MS, TOKEN, startFake } from './fake-hosts.ts';
import type { FakeHost, FakeOptions } from './fake-hosts.ts';

const TOKEN_ENV = 'TRAWL_TEST_GITHUB_PERMISSIONS';
const [alice, bob] = [ACCOUNTS[0]!, ACCOUNTS[1]!];

const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers) await close();
});

function connection(url: string): GitHubConnection {
  return {
    type: 'github',
    url,
    token: { env: TOKEN_ENV },
    revisions: { branches: [], tags: [] },
    exclude: { forks: false, archived: false, repos: [] },
    orgs: ['acme'],
    users: [],
    repos: [],
  };
}

function permissionsOf(url: string, envToken = TOKEN): HostPermissions {
  const host = createCodeHost('gh', connection(url), {
    env: { [TOKEN_ENV]: envToken },
    sleep: async () => {},
    now: () => NOW_MS,
  });
  assert.ok(host.permissions);
  return host.permissions;
}

async function fake(options: FakeOptions = {}): Promise<FakeHost> {
  const f = await startFake('github', options);
  closers.push(() => f.close());
  return f;
}

async function rejection(p: Promise<unknown>): Promise<HostError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof HostError, `expected a HostError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the call to fail');
}

describe('GitHub permissions', () => {
  test("account-driven needs the account's own token: without one the answer is undefined and nothing is asked", async () => {
    const f = await fake();
    const names = await permissionsOf(f.url).readableBy({ account: { id: String(bob.id), login: bob.login } });
    assert.equal(names, undefined);
    assert.equal(f.requests.length, 0);
  });

  test("account-driven with an own token: every page, the account's token alone, public repositories of its organizations too", async () => {
    const f = await fake({ pageSize: 1 });
    const names = await permissionsOf(f.url).readableBy({ account: { id: String(bob.id), login: bob.login }, token: bob.token });
    const host = new URL(f.url).hostname;
    const expected = DATASET.filter((r) => r.owner === 'acme' || r.owner === 'jdoe').map((r) => `${host}/${r.owner}/${r.name}`);
    assert.deepEqual([...(names ?? [])].sort(), expected.sort());
    const asked = f.requests.filter((r) => r.url.startsWith('/api/v3/user/repos?'));
    assert.equal(asked.length, expected.length, 'one request per page of one');
    for (const r of asked) assert.equal(r.headers.authorization, `Bearer ${bob.token}`);
  });

  test("a rejected own token is unauthorized, naming the account, never the token or the connection's variable", async () => {
    const f = await fake();
    const err = await rejection(permissionsOf(f.url).readableBy({ account: { id: String(bob.id), login: bob.login }, token: 'revoked-token' }));
    assert.equal(err.kind, 'unauthorized');
    assert.match(err.message, /connection "gh": .*own token of account "bob"/);
    assert.doesNotMatch(err.message, /revoked-token|TRAWL_TEST_GITHUB_PERMISSIONS/);
  });

  test("readers need a connection token with write access: a read-only one is forbidden, with GitHub's reason", async () => {
    const f = await fake();
    const err = await rejection(permissionsOf(f.url, alice.token).readersOf('acme/web'));
    assert.equal(err.kind, 'forbidden');
    assert.match(err.message, /Must have push access/);
    assert.match(err.message, new RegExp(TOKEN_ENV));
    const missing = await rejection(permissionsOf(f.url).readersOf('acme/nope'));
    assert.equal(missing.kind, 'not-found');
    assert.match(missing.message, /repository "acme\/nope"/);
  });

  test('a login is an account only for a user: any case finds it, an organization is none', async () => {
    const f = await fake();
    const p = permissionsOf(f.url);
    assert.deepEqual(await p.accountByLogin('ALICE'), { id: String(alice.id), login: 'alice' });
    assert.equal((await p.accountByLogin('jdoe'))?.login, 'jdoe');
    assert.equal(await p.accountByLogin('acme'), undefined);
  });

  test("a token's account carries its verified primary address, lower-case; none when the token may not read addresses", async () => {
    const f = await fake();
    const p = permissionsOf(f.url);
    assert.deepEqual(await p.accountOfToken(alice.token), { id: String(alice.id), login: 'alice', email: alice.email });
    // The connection's bot token was made without the user:email scope: GitHub answers 404.
    assert.equal((await p.accountOfToken(TOKEN)).email, undefined);
    // A fine-grained token without the email permission: 403 on the addresses, after /user.
    f.faults.push({ kind: 'status', status: 403, after: 1 });
    assert.deepEqual(await p.accountOfToken(bob.token), { id: String(bob.id), login: 'bob' });
  });

  test('collaborators without pull and repeated entries are left out', async () => {
    const server = createServer((req, res) => {
      const collaborator = (id: number, login: string, permissions?: Record<string, boolean>) => ({
        id,
        login,
        type: 'User',
        ...(permissions ? { permissions } : {}),
      });
      const body =
        req.url === '/api/v3/repos/acme/web/collaborators?affiliation=all&per_page=100'
          ? [
              collaborator(1, 'reader', { pull: true, push: false }),
              collaborator(2, 'no-pull', { pull: false, push: false }),
              collaborator(3, 'no-permissions'),
              collaborator(1, 'reader', { pull: true, push: false }),
            ]
          : { message: 'Not Found' };
      res.writeHead(Array.isArray(body) ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const readers = await permissionsOf(url).readersOf('acme/web');
    assert.deepEqual(readers, [
      { id: '1', login: 'reader' },
      { id: '3', login: 'no-permissions' },
    ]);
  });
});
