// Gitea's permission API beyond the shared suite (permissions.test.ts): which teams read
// code, the owner of a user's repository, pull-less repositories of /user/repos, lists
// paged by X-Total-Count alone, and whose credentials each request carries.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Connection } from '../../daemon/config/types.ts';
import { HostError, createCodeHost } from '../../daemon/repos/hosts/index.ts';
import type { HostPermissions } from '../../daemon/repos/hosts/index.ts';
import { teamReadsCode } from '../../daemon/repos/hosts/gitea-permissions.ts';
import { ACCOUNTS, TOKEN, startFake } from './fake-hosts.ts';
import type { FakeHost, FakeOptions } from './fake-hosts.ts';
import { TOKEN_ENV } from './permission-cases.ts';

const fakes: FakeHost[] = [];
after(async () => {
  for (const f of fakes) await f.close();
});

const [alice, bob, , , erin] = ACCOUNTS as [(typeof ACCOUNTS)[0], (typeof ACCOUNTS)[0], unknown, unknown, (typeof ACCOUNTS)[0]];

/** `token`: the connection's (null: none). */
async function gitea(options: FakeOptions = {}, token: string | null = TOKEN): Promise<{ fake: FakeHost; permissions: HostPermissions }> {
  const fake = await startFake('gitea', options);
  fakes.push(fake);
  const conn: Connection = {
    type: 'gitea',
    url: fake.url,
    ...(token === null ? {} : { token: { env: TOKEN_ENV } }),
    revisions: { branches: [], tags: [] },
    exclude: { forks: false, archived: false, repos: [] },
    orgs: ['acme'],
    users: [],
    repos: [],
  };
  const host = createCodeHost('gt', conn, { env: token === null ? {} : { [TOKEN_ENV]: token }, sleep: async () => {} });
  return { fake, permissions: host.permissions! };
}

async function rejection(p: Promise<unknown>): Promise<HostError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof HostError, String(err));
    return err;
  }
  assert.fail('expected a HostError');
}

describe('gitea permissions', () => {
  test('which teams read code', () => {
    const cases: Array<[string, Record<string, unknown>, boolean]> = [
      ['units_map code read', { permission: 'none', units_map: { 'repo.code': 'read', 'repo.issues': 'write' } }, true],
      ['units_map code write', { permission: 'write', units_map: { 'repo.code': 'write' } }, true],
      ['units_map code none, issues only', { permission: 'none', units_map: { 'repo.code': 'none', 'repo.issues': 'write' } }, false],
      ['units_map without code', { permission: 'read', units_map: { 'repo.issues': 'read' } }, false],
      ['administrators read everything', { permission: 'admin', units_map: {} }, true],
      ['the owners team', { permission: 'owner' }, true],
      ['before units_map: read with the code unit', { permission: 'read', units: ['repo.code', 'repo.issues'] }, true],
      ['before units_map: read without the code unit', { permission: 'read', units: ['repo.issues'] }, false],
      ['before units_map: no permission', { permission: 'none', units: ['repo.code'] }, false],
      ['nothing said', {}, false],
    ];
    for (const [name, team, reads] of cases) assert.equal(teamReadsCode(team), reads, name);
  });

  test("a user's private repository is read by its owner and its collaborators", async () => {
    const { permissions } = await gitea();
    const readers = await permissions.readersOf('jdoe/notes');
    assert.deepEqual(readers?.map((a) => a.login).sort(), ['bob', 'jdoe']);
    assert.equal(readers?.find((a) => a.login === 'jdoe')?.id, String(ACCOUNTS.find((a) => a.login === 'jdoe')!.id));
  });

  test('readers come from every page when the host pages by X-Total-Count alone', async () => {
    const { fake, permissions } = await gitea({ pageSize: 1 });
    const readers = await permissions.readersOf('acme/web');
    assert.deepEqual(readers?.map((a) => a.login).sort(), ['alice', 'bob', 'carol', 'dave']);
    const pages = fake.requests.filter((r) => /\/collaborators\?|\/members\?/.test(r.url)).map((r) => r.url);
    assert.equal(pages.length, 4, pages.join(' '));
    // The issues-only team's members (erin) are never asked for.
    assert.equal(pages.filter((u) => u.includes('/members?')).length, 2, pages.join(' '));
  });

  test("a repository an account reaches without its code (an issues-only team) is not readable; the organization's public ones are", async () => {
    const { permissions } = await gitea();
    const names = await permissions.readableBy({ account: { id: String(erin.id), login: erin.login }, token: erin.token });
    assert.ok(names?.includes('127.0.0.1/acme/api'), String(names));
    assert.ok(!names?.includes('127.0.0.1/acme/web'), String(names));
  });

  test("an account's own token is sent alone; acting as an account sends the connection's token with Sudo", async () => {
    const { fake, permissions } = await gitea();
    await permissions.readableBy({ account: { id: String(bob.id), login: bob.login }, token: bob.token });
    const own = fake.requests.filter((r) => r.url.startsWith('/api/v1/user/repos'));
    assert.ok(own.length > 0);
    for (const r of own) {
      assert.equal(r.headers.authorization, `token ${bob.token}`);
      assert.equal(r.headers.sudo, undefined);
    }
    const before = fake.requests.length;
    await permissions.readableBy({ account: { id: String(bob.id), login: bob.login } });
    const sudo = fake.requests.slice(before);
    assert.ok(sudo.length > 0);
    for (const r of sudo) {
      assert.equal(r.headers.authorization, `token ${TOKEN}`);
      assert.equal(r.headers.sudo, 'bob');
    }
  });

  test("a refused own token names the account, never the token or the connection's variable", async () => {
    const { permissions } = await gitea();
    const err = await rejection(permissions.readableBy({ account: { id: String(bob.id), login: bob.login }, token: 'stale-token' }));
    assert.equal(err.kind, 'unauthorized');
    assert.match(err.message, /rejected the own token of account "bob"/);
    assert.doesNotMatch(err.message, /stale-token|TRAWL_TEST/);
  });

  test("a connection token that may not use Sudo is 'forbidden'", async () => {
    const { permissions } = await gitea({}, alice.token);
    const err = await rejection(permissions.readableBy({ account: { id: String(bob.id), login: bob.login } }));
    assert.equal(err.kind, 'forbidden');
    assert.match(err.message, /Only administrators allowed to sudo/);
  });

  test('without any token there is no account-driven answer', async () => {
    const { permissions } = await gitea({}, null);
    assert.equal(await permissions.readableBy({ account: { id: String(bob.id), login: bob.login } }), undefined);
  });

  test("a token's account carries its primary address, lower-case; an account by login carries none", async () => {
    const { permissions } = await gitea({ accounts: ACCOUNTS.map((a) => ({ ...a, email: a.email.toUpperCase() })) });
    const own = await permissions.accountOfToken(alice.token);
    assert.deepEqual(own, { id: String(alice.id), login: 'alice', email: 'alice@example.com' });
    assert.deepEqual(await permissions.accountByLogin('ALICE'), { id: String(alice.id), login: 'alice' });
  });

  test('a name that is not owner/name is refused before asking', async () => {
    const { fake, permissions } = await gitea();
    const err = await rejection(permissions.readersOf('acme'));
    assert.equal(err.kind, 'not-found');
    assert.equal(fake.requests.length, 0);
  });
});
