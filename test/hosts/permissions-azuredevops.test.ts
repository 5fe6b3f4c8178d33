// What only Azure DevOps's permission API does: readers are project-level (the members of a
// project's teams), the identities API lives elsewhere on Azure DevOps Services, and an
// account's repositories are asked organization by organization with its own token alone.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Connection } from '../../daemon/config/types.ts';
import { createCodeHost } from '../../daemon/repos/hosts/index.ts';
import type { HostPermissions } from '../../daemon/repos/hosts/index.ts';
import { identityServiceUrl } from '../../daemon/repos/hosts/azuredevops-permissions.ts';
import { ACCOUNTS, DATASET, NOW_MS, TOKEN, startFake } from './fake-hosts.ts';
import type { FakeHost, FakeOptions } from './fake-hosts.ts';
import { azureId } from './fake-permissions/azuredevops.ts';

const TOKEN_ENV = 'TRAWL_TEST_PERMISSION_TOKEN';
const fakes: FakeHost[] = [];
after(async () => {
  for (const f of fakes) await f.close();
});

function connection(url: string): Connection {
  return {
    type: 'azuredevops',
    url,
    token: { env: TOKEN_ENV },
    revisions: { branches: [], tags: [] },
    exclude: { forks: false, archived: false, repos: [] },
    orgs: ['acme'],
    projects: ['jdoe/home'],
    repos: ['other/tools/tool'],
  };
}

async function host(options: FakeOptions = {}): Promise<{ fake: FakeHost; permissions: HostPermissions }> {
  const fake = await startFake('azuredevops', options);
  fakes.push(fake);
  const code = createCodeHost('conn', connection(fake.url), { env: { [TOKEN_ENV]: TOKEN }, now: () => NOW_MS, sleep: async () => {} });
  return { fake, permissions: code.permissions! };
}

test('the identities API: vssps.dev.azure.com for Azure DevOps Services, the collection itself on Azure DevOps Server', () => {
  const rows: Array<[string, string]> = [
    ['https://dev.azure.com', 'https://vssps.dev.azure.com'],
    ['https://DEV.azure.com/', 'https://vssps.dev.azure.com'],
    ['https://tfs.example.com/tfs', 'https://tfs.example.com/tfs'],
    ['http://127.0.0.1:8080', 'http://127.0.0.1:8080'],
  ];
  for (const [api, identities] of rows) assert.equal(identityServiceUrl(api), identities, api);
});

test("readers are project-level: every repository of a project has the project's readers", async () => {
  const repos = [...DATASET, { owner: 'acme', name: 'web-admin', group: 'web', private: true, readers: ['erin'] }];
  const h = await host({ repos });
  const logins = async (name: string): Promise<string[]> => ((await h.permissions.readersOf(name)) ?? []).map((a) => a.login).sort();
  const project = ['alice', 'bob', 'carol', 'dave', 'erin'].map((l) => `${l}@example.com`);
  assert.deepEqual(await logins('acme/web/web'), project);
  assert.deepEqual(await logins('acme/web/web-admin'), project, 'Azure DevOps keeps no list per repository that the teams would show');
});

test("a Deny of Read on a repository or its project, or a repository that does not inherit: no readers list for it, since the teams' would over-grant", async () => {
  const repos = [
    ...DATASET,
    { owner: 'acme', name: 'vault', group: 'web', private: true, readers: ['alice'], azureAcl: { denyRead: ['bob'] } },
    { owner: 'acme', name: 'island', group: 'web', private: true, readers: ['erin'], azureAcl: { noInheritance: true } },
    { owner: 'acme', name: 'deploy', group: 'ops', private: true, readers: ['carol', 'dave'], azureAcl: { projectDenyRead: ['dave'] } },
    { owner: 'acme', name: 'infra', group: 'ops', private: true, readers: ['carol'] },
  ];
  const h = await host({ repos });
  for (const name of ['acme/web/vault', 'acme/web/island', 'acme/ops/deploy', 'acme/ops/infra']) {
    assert.equal(await h.permissions.readersOf(name), undefined, name);
  }
  // The project's Readers are denied Contribute, not Read: the other repositories keep their list.
  const web = await h.permissions.readersOf('acme/web/web');
  assert.deepEqual(
    web?.map((a) => a.login).sort(),
    ['alice', 'bob', 'carol', 'dave', 'erin'].map((l) => `${l}@example.com`),
  );

  const before = h.fake.requests.length;
  await h.permissions.readersOf('acme/web/vault');
  const acls = h.fake.requests.slice(before).filter((r) => r.url.includes('/accesscontrollists/'));
  assert.equal(acls.length, 1, 'the repository denies Read: its project is not asked');
  const query = new URL(acls[0]!.url, h.fake.url).searchParams;
  assert.equal(new URL(acls[0]!.url, h.fake.url).pathname, '/acme/_apis/accesscontrollists/2e9eb7ed-3c0a-47d4-87c1-0ffdd275fd87');
  assert.deepEqual([query.get('token'), query.get('includeExtendedInfo'), query.get('api-version')], ['repoV2/acme-web-id/vault-id', 'false', '7.1']);
  assert.ok(!h.fake.requests.slice(before).some((r) => r.url.includes('/teams')), 'no team is listed for it');

  // Those repositories' readers come from members' own tokens: the denied account does not see it.
  const bob = ACCOUNTS[1]!;
  const alice = ACCOUNTS[0]!;
  assert.ok(!(await h.permissions.readableBy({ account: { id: azureId(bob), login: bob.email }, token: bob.token }))?.includes('127.0.0.1/acme/web/vault'));
  assert.ok(
    (await h.permissions.readableBy({ account: { id: azureId(alice), login: alice.email }, token: alice.token }))?.includes('127.0.0.1/acme/web/vault'),
  );
});

test("an account's repositories: each organization of the connection, with its own token and nothing else", async () => {
  const h = await host();
  const bob = ACCOUNTS[1]!;
  const names = await h.permissions.readableBy({ account: { id: azureId(bob), login: bob.email }, token: bob.token });
  assert.ok(names?.includes('127.0.0.1/acme/web/web'));
  assert.ok(names?.includes('127.0.0.1/jdoe/home/notes'));
  const asked = h.fake.requests.map((r) => r.url.split('?')[0]);
  assert.deepEqual(asked, ['/acme/_apis/git/repositories', '/jdoe/_apis/git/repositories', '/other/_apis/git/repositories']);
  for (const r of h.fake.requests) assert.equal(r.headers.authorization, `Bearer ${bob.token}`);
});

test('an account by its sign-in address, with its id and address; other matches of the search are not it', async () => {
  const h = await host();
  const alice = ACCOUNTS[0]!;
  assert.deepEqual(await h.permissions.accountByLogin('ALICE@example.com'), { id: azureId(alice), login: alice.email, email: alice.email });
  // The search matches names that start with the text; the account must be named whole.
  assert.equal(await h.permissions.accountByLogin('alice'), undefined);
});
