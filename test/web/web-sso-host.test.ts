// Single sign-on and the code host's permissions, end to end in headless Chromium: a GitLab
// connection (the fake GitLab, its repositories served by a git server of their own) with
// settings.permissions "code-host". A person signs in through the in-process OpenID
// Connect provider and is provisioned; until the permission sync has asked the host about
// them they see the public repository only. Once it has (an owner's sync now here; the
// schedule does it within an interval), the host's readers list names their verified
// email, their account there is linked, and the same search shows the private repository
// the host lets them read, never the one it does not; the settings page shows the account.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../../bench/suite/browser.ts';
import { newUserKey } from '../helpers/cli-users.ts';
import { tempDir } from '../helpers/corpus.ts';
import { call, startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { freePort } from '../helpers/free-port.ts';
import { startGitServer, type GitServer } from '../helpers/git-server.ts';
import { TestRepo } from '../helpers/git.ts';
import { installLicense, testLicensor } from '../helpers/license.ts';
import { startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.ts';
import { newTab } from '../helpers/web.ts';
import { TOKEN, startFake, type FakeHost } from '../hosts/fake-hosts.ts';

let browser: Browser;
let idp: TestOidcProvider;
let d: TestDaemon;
let base: string;
let git: GitServer;
let host: FakeHost;
const dir = tempDir('web-sso-host');

before(async () => {
  browser = await launchBrowser();
  const sources = join(dir.path, 'src');
  TestRepo.init(join(sources, 'api')).commit({ 'api.c': 'int gear_shared_api;\n' });
  TestRepo.init(join(sources, 'web')).commit({ 'web.c': 'int gear_shared_web;\n' });
  TestRepo.init(join(sources, 'ops')).commit({ 'ops.c': 'int gear_shared_ops;\n' });
  git = await startGitServer(sources, { credentials: { username: 'oauth2', password: TOKEN } });
  host = await startFake('gitlab', {
    repos: [
      { owner: 'acme', name: 'api', group: 'core' },
      { owner: 'acme', name: 'web', group: 'web', private: true, readers: ['alice', 'bob'] },
      { owner: 'acme', name: 'ops', group: 'ops', private: true, readers: ['bob'] },
    ],
    cloneUrl: (r) => `${git.url}/${r.name}`,
  });
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  idp = await startOidcProvider({
    redirectUris: [`${base}/auth/corp/callback`],
    accounts: { 'sub-alice': { email: 'alice@example.com', email_verified: true, name: 'Alice' } },
  });
  const licensor = testLicensor('web-sso-host');
  // The daemon's repository sync reads connection tokens from its environment.
  process.env.GL_TOKEN = TOKEN;
  d = await startTestDaemon({
    secret: false,
    settings: { anonymousAccess: false, publicUrl: base, permissions: 'code-host', symbols: false },
    config: {
      license: { publicKeys: [licensor.publicPem] },
      connections: { gl: { type: 'gitlab', url: host.url, token: { env: 'GL_TOKEN' }, cloneOrigins: [git.url], groups: ['acme'] } },
      signIn: {
        providers: { corp: { type: 'oidc', issuer: idp.issuer, clientId: idp.clientId, clientSecret: { env: 'CORP_SECRET' }, displayName: 'Corp SSO' } },
      },
    },
    daemon: { port, sync: true, env: { ...process.env, CORP_SECRET: idp.clientSecret, GL_TOKEN: TOKEN } },
  });
  await installLicense(d.dataDir, licensor.sign(['org-management']));
  const store = d.daemon.services.store;
  const end = Date.now() + 30_000;
  while ((await store.listRepos()).filter((r) => r.connectionId !== undefined && r.state === 'indexed').length < 3) {
    if (Date.now() > end) throw new Error('the connection was not indexed in time');
    await new Promise((r) => setTimeout(r, 50));
  }
});

after(async () => {
  await browser?.close();
  await d?.cleanup();
  await idp?.close();
  await host?.close();
  await git?.close();
  dir.cleanup();
});

describe('single sign-on with permissions from the code host', () => {
  test('a member signed in through OpenID Connect sees the public repository, then, once synced, exactly what the host lets them read', async () => {
    idp.nextLogin = 'sub-alice';
    const page = await newTab(browser);
    try {
      await page.goto(`${base}/?q=gear_shared`);
      await page.waitForSelector('dialog#signin[open]');
      await Promise.all([page.waitForURL(`${base}/?q=gear_shared`), page.locator('dialog#signin a.sso-button').click()]);
      await page.locator('#account .who', { hasText: 'Alice' }).waitFor();
      const shown = async (): Promise<string[]> => {
        await page.waitForSelector('details.stats');
        return [...new Set((await page.locator('.result .repo').allInnerTexts()).map((n) => n.replace(/^.*\//, '')))].sort();
      };
      assert.deepEqual(await shown(), ['api'], 'provisioned, not yet synced: public only');

      const owner = await newUserKey('owner@example.com', ['--data-dir', d.dataDir], 'owner');
      const synced = await call(`${d.url}/api/ee/permissions/sync`, { headers: { authorization: `Bearer ${owner}` }, json: { force: true, wait: true } });
      assert.equal(synced.status, 200, synced.text);
      assert.equal(synced.json.connections[0].linkedByEmail, 1, "the readers list named alice's verified email");

      await page.reload();
      assert.deepEqual(await shown(), ['api', 'web'], 'the host lets alice read web, not ops');
      const accounts = await call(`${d.url}/api/ee/users/${(await d.daemon.services.store.getUserByEmail('alice@example.com'))!.id}/accounts`, {
        headers: { authorization: `Bearer ${owner}` },
      });
      assert.deepEqual(
        accounts.json.map((a: { connection: string; login: string; linkedBy: string }) => [a.connection, a.login, a.linkedBy]),
        [['gl', 'alice', 'email']],
      );
      // The settings page shows the member their linked account.
      await page.goto(`${base}/settings`);
      // The section loads its table after the page draws.
      await page.locator('#accounts-table tbody tr').first().waitFor();
      const cells = await page.locator('#accounts-table tbody tr td').allInnerTexts();
      assert.deepEqual(cells.slice(0, 3), ['gl', 'alice', 'matched by verified email']);
      assert.doesNotMatch(cells[3]!, /not yet|failed/);
    } finally {
      await page.context().close();
    }
  });
});
