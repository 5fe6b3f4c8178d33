// Gerrit's permission API beyond the shared suite (permissions.test.ts): an account's
// token ("login:HTTP password", or the password alone where the account is known), run-as
// with the account's id, what the project list leaves out, and logins Gerrit resolves to
// another account.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Connection } from '../../daemon/config/types.ts';
import { HostError, createCodeHost } from '../../daemon/repos/hosts/index.ts';
import type { HostPermissions } from '../../daemon/repos/hosts/index.ts';
import { ACCOUNTS, DATASET, TOKEN, USER, startFake } from './fake-hosts.ts';
import type { FakeHost } from './fake-hosts.ts';
import { TOKEN_ENV } from './permission-cases.ts';

const fakes: FakeHost[] = [];
after(async () => {
  for (const f of fakes) await f.close();
});

const alice = ACCOUNTS[0]!;
const bob = ACCOUNTS[1]!;
const basic = (user: string, password: string): string => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** A Gerrit connection signed in as `user` with `password` (null: anonymous). */
async function gerrit(user = USER, password: string | null = TOKEN): Promise<{ fake: FakeHost; permissions: HostPermissions }> {
  const fake = await startFake('gerrit', { repos: [...DATASET, { owner: 'acme', name: 'secret', group: 'x', hidden: true, private: true, readers: ['bob'] }] });
  fakes.push(fake);
  const conn: Connection = {
    type: 'gerrit',
    url: fake.url,
    ...(password === null ? {} : { token: { env: TOKEN_ENV }, user }),
    revisions: { branches: [], tags: [] },
    exclude: { forks: false, archived: false, repos: [] },
    projects: [],
  };
  const host = createCodeHost('gr', conn, { env: password === null ? {} : { [TOKEN_ENV]: password }, sleep: async () => {} });
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

describe('gerrit permissions', () => {
  test("an account's HTTP password, alone or after its login, is sent as the account and nothing else", async () => {
    const { fake, permissions } = await gerrit();
    const account = { id: String(bob.id), login: bob.login };
    const alone = await permissions.readableBy({ account, token: bob.token });
    const before = fake.requests.length;
    const prefixed = await permissions.readableBy({ account, token: `bob:${bob.token}` });
    assert.deepEqual(prefixed, alone);
    assert.ok(alone?.includes('127.0.0.1/acme/web'));
    for (const r of fake.requests) {
      assert.equal(r.headers.authorization, basic('bob', bob.token), r.url);
      assert.equal(r.headers['x-gerrit-runas'], undefined);
    }
    assert.ok(fake.requests.length - before >= 2, 'the list takes several pages');
  });

  test("acting as an account sends the connection's user with X-Gerrit-RunAs: the account's id", async () => {
    const { fake, permissions } = await gerrit();
    const names = await permissions.readableBy({ account: { id: String(bob.id), login: bob.login } });
    assert.ok(names?.includes('127.0.0.1/jdoe/notes'));
    assert.ok(fake.requests.length > 0);
    for (const r of fake.requests) {
      assert.equal(r.headers.authorization, basic(USER, TOKEN));
      assert.equal(r.headers['x-gerrit-runas'], String(bob.id));
    }
  });

  test("Gerrit's configuration projects and hidden projects are not readable repositories", async () => {
    const { permissions } = await gerrit();
    const names = await permissions.readableBy({ account: { id: String(bob.id), login: bob.login }, token: bob.token });
    assert.ok(names !== undefined && names.length > 0);
    for (const hidden of ['All-Projects', 'All-Users', 'acme/secret']) assert.ok(!names.includes(`127.0.0.1/${hidden}`), hidden);
  });

  test("a connection user without the Run As capability is 'forbidden'", async () => {
    const { permissions } = await gerrit(alice.login, alice.token);
    const err = await rejection(permissions.readableBy({ account: { id: String(bob.id), login: bob.login } }));
    assert.equal(err.kind, 'forbidden');
    assert.match(err.message, /not permitted to use X-Gerrit-RunAs/);
  });

  test('an anonymous connection cannot act as an account, but an own password still answers', async () => {
    const { permissions } = await gerrit(USER, null);
    const account = { id: String(bob.id), login: bob.login };
    assert.equal(await permissions.readableBy({ account }), undefined);
    assert.ok((await permissions.readableBy({ account, token: bob.token }))?.includes('127.0.0.1/acme/web'));
  });

  test('a token\'s account: "login:HTTP password"; anything else is refused without asking, and never echoed', async () => {
    const { fake, permissions } = await gerrit();
    assert.deepEqual(await permissions.accountOfToken(`alice:${alice.token}`), { id: String(alice.id), login: 'alice', email: alice.email });
    const asked = fake.requests.length;
    for (const bad of [alice.token, `:${alice.token}`, 'alice:']) {
      const err = await rejection(permissions.accountOfToken(bad));
      assert.equal(err.kind, 'unauthorized', bad);
      assert.match(err.message, /"login:HTTP password"/);
      assert.ok(!err.message.includes(alice.token), err.message);
    }
    assert.equal(fake.requests.length, asked);
    const err = await rejection(permissions.accountOfToken('alice:wrong-password'));
    assert.equal(err.kind, 'unauthorized');
    assert.match(err.message, /rejected the token being linked/);
    assert.doesNotMatch(err.message, /wrong-password|TRAWL_TEST/);
  });

  test('a login Gerrit resolves to another account (an id, here) is no account', async () => {
    const { permissions } = await gerrit();
    assert.equal((await permissions.accountByLogin('alice'))?.id, String(alice.id));
    assert.equal(await permissions.accountByLogin(String(alice.id)), undefined);
  });
});
