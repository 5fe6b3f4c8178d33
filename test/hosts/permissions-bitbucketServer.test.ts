// What only Bitbucket Server's permission API does: a repository's readers gathered from
// its own, its project's and the global permissions (administrators read everything),
// directly and through groups; no list when a project lets every licensed user read;
// deactivated users left out; a token's user named by the X-AUSERNAME header; logins
// matched whole and case-insensitively.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Connection } from '../../daemon/config/types.ts';
import { HostError, createCodeHost } from '../../daemon/repos/hosts/index.ts';
import type { HostPermissions } from '../../daemon/repos/hosts/index.ts';
import { ACCOUNTS, NOW_MS, TOKEN, startFake } from './fake-hosts.ts';
import type { FakeAccount, FakeOptions, FakeRepo } from './fake-hosts.ts';
import { serverGrants } from './fake-permissions/bitbucketServer.ts';

const TOKEN_ENV = 'TRAWL_TEST_PERMISSION_TOKEN';
const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers) await close();
});

function connection(url: string): Connection {
  return {
    type: 'bitbucket',
    deploymentType: 'server',
    url,
    token: { env: TOKEN_ENV },
    revisions: { branches: [], tags: [] },
    exclude: { forks: false, archived: false, repos: [] },
    workspaces: [],
    projects: ['ALPHA', 'BETA'],
    repos: [],
  };
}

function permissionsAt(url: string): HostPermissions {
  return createCodeHost('conn', connection(url), { env: { [TOKEN_ENV]: TOKEN }, now: () => NOW_MS, sleep: async () => {} }).permissions!;
}

async function fake(options: FakeOptions): Promise<HostPermissions> {
  const f = await startFake('bitbucketServer', options);
  closers.push(() => f.close());
  return permissionsAt(f.url);
}

/** A server of canned answers by path (query left out); any other path is a 404. */
async function canned(answers: Record<string, { body: unknown; headers?: Record<string, string> }>): Promise<HostPermissions> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const answer = answers[new URL(req.url ?? '/', 'http://x').pathname];
    res.writeHead(answer === undefined ? 404 : 200, { 'content-type': 'application/json', ...answer?.headers });
    res.end(JSON.stringify(answer?.body ?? { errors: [{ message: 'Not found' }] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return permissionsAt(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
}

const lastPage = (values: unknown[]): { body: unknown } => ({ body: { size: values.length, limit: 100, isLastPage: true, start: 0, values } });
const user = (name: string, id: number, active = true): unknown => ({ name, id, active, slug: name, emailAddress: `${name}@example.com`, displayName: name });
const API = '/rest/api/1.0';

test('readers on the repository, on its project and global administrators, directly and through groups, across pages', async () => {
  const frank: FakeAccount = { id: 199, login: 'frank', email: 'frank@example.com', token: 'user-token-frank' };
  // The five accounts that read something here, then frank: serverGrants places grants by position.
  const accounts = [...ACCOUNTS.filter((a) => a.login !== 'jdoe'), frank];
  const repos: FakeRepo[] = [
    { owner: 'alpha', name: 'x', group: 'g', private: true, readers: ['alice', 'carol', 'frank'] },
    { owner: 'alpha', name: 'open', group: 'g' },
    { owner: 'beta', name: 'y', group: 'g', private: true, readers: ['bob', 'carol', 'frank', 'dave'] },
  ];
  // The fake keeps each grant where this test means it to be.
  const where = serverGrants(repos, accounts).map((g) => `${g.login} ${g.level} ${g.group === undefined ? 'user' : 'group'}`);
  for (const kind of ['alice repo user', 'bob project group', 'carol global user', 'dave repo group', 'frank global group'])
    assert.ok(where.includes(kind), kind);
  const permissions = await fake({ repos, accounts, pageSize: 1 });
  const logins = async (name: string): Promise<string[]> => ((await permissions.readersOf(name)) ?? []).map((a) => a.login).sort();
  assert.deepEqual(await logins('ALPHA/x'), ['alice', 'carol', 'frank']);
  assert.deepEqual(await logins('BETA/y'), ['bob', 'carol', 'dave', 'frank']);
});

test('a project that lets every licensed user read has no readers list', async () => {
  const reading = await canned({ [`${API}/projects/ALPHA/permissions/PROJECT_READ/all`]: { body: { permitted: true } } });
  assert.equal(await reading.readersOf('ALPHA/x'), undefined);
  // A server that does not count a default write permission as a read one.
  const writing = await canned({
    [`${API}/projects/ALPHA/permissions/PROJECT_READ/all`]: { body: { permitted: false } },
    [`${API}/projects/ALPHA/permissions/PROJECT_WRITE/all`]: { body: { permitted: true } },
  });
  assert.equal(await writing.readersOf('ALPHA/x'), undefined);
});

test('deactivated users are no readers', async () => {
  const none = lastPage([]);
  const permissions = await canned({
    [`${API}/projects/ALPHA/permissions/PROJECT_READ/all`]: { body: { permitted: false } },
    [`${API}/projects/ALPHA/permissions/PROJECT_WRITE/all`]: { body: { permitted: false } },
    [`${API}/projects/ALPHA/repos/x/permissions/users`]: lastPage([
      { user: user('gone', 7, false), permission: 'REPO_WRITE' },
      { user: user('here', 8), permission: 'REPO_READ' },
    ]),
    [`${API}/projects/ALPHA/repos/x/permissions/groups`]: none,
    [`${API}/projects/ALPHA/permissions/users`]: none,
    [`${API}/projects/ALPHA/permissions/groups`]: none,
    [`${API}/admin/permissions/users`]: none,
    [`${API}/admin/permissions/groups`]: none,
  });
  assert.deepEqual(await permissions.readersOf('ALPHA/x'), [{ id: '8', login: 'here' }]);
});

test("a token's user is the one X-AUSERNAME names; an answer without it is a bad response", async () => {
  const named = await canned({
    [`${API}/profile/recent/repos`]: { ...lastPage([]), headers: { 'x-ausername': 'Here' } },
    [`${API}/users`]: lastPage([user('here-too', 9), user('here', 8)]),
  });
  assert.deepEqual(await named.accountOfToken('some-token'), { id: '8', login: 'here' });
  const unnamed = await canned({ [`${API}/profile/recent/repos`]: lastPage([]) });
  const err = await unnamed.accountOfToken('some-token').then(
    () => assert.fail('no user named'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof HostError);
  assert.equal(err.kind, 'bad-response');
  assert.match(err.message, /X-AUSERNAME/);
});

test('a login is matched whole and case-insensitively', async () => {
  const permissions = await fake({});
  assert.deepEqual(await permissions.accountByLogin('ALICE'), { id: '101', login: 'alice' });
  assert.equal(await permissions.accountByLogin('ali'), undefined, "the users' filter matches parts of names");
});
