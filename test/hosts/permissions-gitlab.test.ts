// GitLab's permission answers beyond the shared suite (permissions.test.ts): access levels
// below Reporter, which credentials go with which question (an own token alone, or the
// administrator's token with sudo on every page), and the member and user answers whose
// accounts or addresses are left out.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GitLabConnection } from '../../daemon/config/types.ts';
import { HostError, createCodeHost } from '../../daemon/repos/hosts/index.ts';
import type { HostPermissions } from '../../daemon/repos/hosts/index.ts';
import { ACCOUNTS, NOW_MS, TOKEN, startFake } from './fake-hosts.ts';
import type { FakeHost, FakeOptions } from './fake-hosts.ts';

const TOKEN_ENV = 'TRAWL_TEST_GITLAB_PERMISSIONS';
const [alice, bob, carol, , erin] = [ACCOUNTS[0]!, ACCOUNTS[1]!, ACCOUNTS[2]!, ACCOUNTS[3]!, ACCOUNTS[4]!];

const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers) await close();
});

function connection(url: string, withToken: boolean): GitLabConnection {
  return {
    type: 'gitlab',
    url,
    ...(withToken ? { token: { env: TOKEN_ENV } } : {}),
    revisions: { branches: [], tags: [] },
    exclude: { forks: false, archived: false, repos: [] },
    groups: ['acme'],
    users: [],
    projects: [],
  };
}

/** The permission API of a connection to `url` whose token is `envToken` (null: a connection without a token). */
function permissionsOf(url: string, envToken: string | null = TOKEN): HostPermissions {
  const host = createCodeHost('gl', connection(url, envToken !== null), {
    env: envToken === null ? {} : { [TOKEN_ENV]: envToken },
    sleep: async () => {},
    now: () => NOW_MS,
  });
  assert.ok(host.permissions);
  return host.permissions;
}

async function fake(options: FakeOptions = {}): Promise<FakeHost> {
  const f = await startFake('gitlab', options);
  closers.push(() => f.close());
  return f;
}

/** A one-off GitLab on loopback answering `answers` by request URL (404 for any other). */
async function serve(answers: Record<string, unknown>): Promise<string> {
  const server = createServer((req, res) => {
    const body = answers[req.url ?? ''];
    res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body ?? { message: '404 Not Found' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
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

const bobAccount = { id: String(bob.id), login: bob.login };

describe('GitLab permissions', () => {
  test('members below Reporter are listed by GitLab but cannot read the code: left out', async () => {
    const f = await fake({ pageSize: 100 });
    const res = await fetch(`${f.url}/api/v4/projects/acme%2Fweb/members/all?per_page=100`, { headers: { 'private-token': TOKEN } });
    const listed = (await res.json()) as Array<{ username: string; access_level: number }>;
    assert.ok(
      listed.some((m) => m.username === erin.login && m.access_level < 20),
      'the fake lists erin below Reporter',
    );
    const readers = await permissionsOf(f.url).readersOf('acme/web');
    assert.ok(readers);
    assert.ok(!readers.some((a) => a.login === erin.login));
    assert.equal(readers.find((a) => a.login === alice.login)?.email, alice.email, "an administrator's token sees the addresses");
  });

  test("a member's token sees no addresses: the readers come without them", async () => {
    const f = await fake();
    const readers = await permissionsOf(f.url, alice.token).readersOf('acme/web');
    assert.deepEqual(
      readers?.map((a) => a.email),
      readers?.map(() => undefined),
    );
    assert.deepEqual(readers?.map((a) => a.login).sort(), ['alice', 'bob', 'carol', 'dave']);
  });

  test("acting as an account: the connection's token with sudo on every page, and no other credentials", async () => {
    const f = await fake({ pageSize: 1 });
    const names = await permissionsOf(f.url).readableBy({ account: bobAccount });
    const host = new URL(f.url).hostname;
    assert.deepEqual([...(names ?? [])].sort(), [`${host}/acme/web`, `${host}/jdoe/notes`]);
    const asked = f.requests.filter((r) => r.url.startsWith('/api/v4/projects?'));
    assert.equal(asked.length, 2, 'two pages of one');
    for (const r of asked) {
      assert.equal(new URL(r.url, f.url).searchParams.get('sudo'), String(bob.id), r.url);
      assert.equal(r.headers['private-token'], TOKEN);
      assert.equal(r.headers.authorization, undefined);
    }
  });

  test("an account's own token goes alone, as Authorization: Bearer", async () => {
    const f = await fake();
    const names = await permissionsOf(f.url).readableBy({ account: { id: String(carol.id), login: carol.login }, token: carol.token });
    assert.deepEqual(names, [`${new URL(f.url).hostname}/acme/web`]);
    const asked = f.requests.filter((r) => r.url.startsWith('/api/v4/projects?'));
    assert.ok(asked.length > 0);
    for (const r of asked) {
      assert.equal(r.headers.authorization, `Bearer ${carol.token}`);
      assert.equal(r.headers['private-token'], undefined);
      assert.equal(new URL(r.url, f.url).searchParams.get('sudo'), null);
    }
  });

  test("sudo: a token that is not an administrator's is forbidden, with GitLab's reason; an unknown account is not-found; without a token there is no one to act with", async () => {
    const f = await fake();
    const err = await rejection(permissionsOf(f.url, alice.token).readableBy({ account: bobAccount }));
    assert.equal(err.kind, 'forbidden');
    assert.match(err.message, /Must be admin to use sudo/);
    const gone = await rejection(permissionsOf(f.url).readableBy({ account: { id: '999', login: 'gone' } }));
    assert.equal(gone.kind, 'not-found');
    assert.match(gone.message, /account "gone" \(id 999\) not found/);
    const before = f.requests.length;
    assert.equal(await permissionsOf(f.url, null).readableBy({ account: bobAccount }), undefined);
    assert.equal(f.requests.length, before, 'nothing asked');
  });

  test('a rejected own token is unauthorized, naming the account, never the token or the connection variable', async () => {
    const f = await fake();
    const err = await rejection(permissionsOf(f.url).readableBy({ account: bobAccount, token: 'revoked-token' }));
    assert.equal(err.kind, 'unauthorized');
    assert.match(err.message, /connection "gl": .*own token of account "bob"/);
    assert.doesNotMatch(err.message, /revoked-token|TRAWL_TEST_GITLAB_PERMISSIONS/);
  });

  test('user names match in any case', async () => {
    const f = await fake();
    assert.deepEqual(await permissionsOf(f.url).accountByLogin('Carol'), { id: String(carol.id), login: 'carol' });
  });

  test('blocked accounts, awaiting memberships and repeated members are left out; addresses lower-case', async () => {
    const member = (id: number, username: string, more: Record<string, unknown> = {}) => ({
      id,
      username,
      state: 'active',
      access_level: 30,
      membership_state: 'active',
      ...more,
    });
    const url = await serve({
      '/api/v4/projects/acme%2Fweb/members/all?per_page=100': [
        member(1, 'reader', { email: 'Reader@Example.com' }),
        member(2, 'blocked', { state: 'blocked' }),
        member(3, 'awaiting', { membership_state: 'awaiting' }),
        member(4, 'guest', { access_level: 10 }),
        member(5, 'no-states', { state: undefined, membership_state: undefined }),
        member(1, 'reader', { email: 'Reader@Example.com' }),
      ],
    });
    assert.deepEqual(await permissionsOf(url).readersOf('acme/web'), [
      { id: '1', login: 'reader', email: 'reader@example.com' },
      { id: '5', login: 'no-states' },
    ]);
  });

  test("a token's account carries its address only once GitLab has confirmed it", async () => {
    const f = await fake();
    assert.deepEqual(await permissionsOf(f.url).accountOfToken(alice.token), { id: String(alice.id), login: 'alice', email: alice.email });
    const url = await serve({ '/api/v4/user': { id: 9, username: 'newcomer', email: 'new@example.com', confirmed_at: null } });
    assert.deepEqual(await permissionsOf(url).accountOfToken('any-token'), { id: '9', login: 'newcomer' });
  });
});
