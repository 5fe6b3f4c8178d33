// What only Bitbucket Cloud's permission API does: logins are nicknames, which are not
// unique (or the account's UUID); an account's repositories are asked workspace by
// workspace, only where it has access; a token's account carries its confirmed primary
// address when the token may read addresses.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Connection } from '../../daemon/config/types.ts';
import { HostError, createCodeHost } from '../../daemon/repos/hosts/index.ts';
import type { HostPermissions } from '../../daemon/repos/hosts/index.ts';
import { ACCOUNTS, DATASET, NOW_MS, TOKEN, USER, startFake } from './fake-hosts.ts';
import type { FakeAccount, FakeHost, FakeOptions } from './fake-hosts.ts';
import { cloudUuid } from './fake-permissions/bitbucketCloud.ts';

const TOKEN_ENV = 'TRAWL_TEST_PERMISSION_TOKEN';
const fakes: FakeHost[] = [];
after(async () => {
  for (const f of fakes) await f.close();
});

function connection(url: string): Connection {
  return {
    type: 'bitbucket',
    deploymentType: 'cloud',
    url,
    token: { env: TOKEN_ENV },
    user: USER,
    revisions: { branches: [], tags: [] },
    exclude: { forks: false, archived: false, repos: [] },
    workspaces: ['acme'],
    projects: ['jdoe/home'],
    repos: ['other/tool'],
  };
}

async function host(options: FakeOptions = {}): Promise<{ fake: FakeHost; permissions: HostPermissions }> {
  const fake = await startFake('bitbucketCloud', options);
  fakes.push(fake);
  const code = createCodeHost('conn', connection(fake.url), { env: { [TOKEN_ENV]: TOKEN }, now: () => NOW_MS, sleep: async () => {} });
  return { fake, permissions: code.permissions! };
}

const alice = ACCOUNTS[0]!;
const carol = ACCOUNTS[2]!;

test('a nickname two accounts share is refused with a way out; a UUID names one account', async () => {
  const twin: FakeAccount = { id: 199, login: 'Alice', email: 'other.alice@example.com', token: 'user-token-twin' };
  const repos = DATASET.map((r) => (r.name === 'web' ? { ...r, readers: [...(r.readers ?? []), 'Alice'] } : r));
  const h = await host({ repos, accounts: [...ACCOUNTS, twin] });
  const err = await h.permissions.accountByLogin('alice').then(
    () => assert.fail('an ambiguous nickname must not pick one account'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof HostError);
  assert.match(err.message, /2 accounts .* nickname "alice" .* by its UUID/);
  assert.deepEqual(await h.permissions.accountByLogin(cloudUuid(twin)), { id: cloudUuid(twin), login: 'Alice' });
  assert.equal(await h.permissions.accountByLogin('{00000000-0000-4000-8000-000000009999}'), undefined);
});

test("an account's repositories: only the connection's workspaces it can access, only those it was granted", async () => {
  const h = await host({ pageSize: 1 });
  const names = await h.permissions.readableBy({ account: { id: cloudUuid(carol), login: carol.login }, token: carol.token });
  assert.deepEqual(names, ['127.0.0.1/acme/web']);
  const asked = h.fake.requests.map((r) => r.url.split('?')[0]);
  assert.ok(asked.includes('/2.0/repositories/acme'));
  assert.ok(!asked.includes('/2.0/repositories/jdoe'), 'carol has no access to jdoe: not asked');
  for (const r of h.fake.requests) assert.equal(r.headers.authorization, `Bearer ${carol.token}`, "the account's own token, never the connection's");
});

test("a token's account carries its confirmed primary address, or none when the token may not read addresses", async () => {
  const h = await host({ pageSize: 1 });
  assert.deepEqual(await h.permissions.accountOfToken(alice.token), { id: cloudUuid(alice), login: 'alice', email: 'alice@example.com' });
  // GET /user answers; GET /user/emails is refused: a token without the email scope.
  h.fake.faults.push({ kind: 'status', status: 403, after: 1 });
  assert.deepEqual(await h.permissions.accountOfToken(alice.token), { id: cloudUuid(alice), login: 'alice' });
});

test("a refused token's message blames the account's token, not the connection's variable", async () => {
  const h = await host();
  const err = await h.permissions.accountOfToken('not-a-token').then(
    () => assert.fail('refused'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof HostError);
  assert.equal(err.kind, 'unauthorized');
  assert.doesNotMatch(err.message, new RegExp(`${TOKEN_ENV}|not-a-token|undefined`));
});
