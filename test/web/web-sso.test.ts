// Single sign-on end to end, in headless Chromium: the sign-in dialog offers the provider
// beside the API-key form; its button goes through an in-process OpenID Connect provider
// (test/helpers/oidc-provider.ts) and back; the new member is provisioned and lands on the
// search page they started from, signed in, and sees what the configuration grants them
// (settings.permissions "code-host": the granted private repository, not another one). A
// refused sign-in comes back to the dialog, which says why.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../../bench/suite/browser.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { freePort } from '../helpers/free-port.ts';
import { startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.ts';
import { newTab } from '../helpers/web.ts';

let browser: Browser;
let idp: TestOidcProvider;
let d: TestDaemon;
let base: string;

before(async () => {
  browser = await launchBrowser();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  idp = await startOidcProvider({
    redirectUris: [`${base}/auth/corp/callback`],
    accounts: {
      'sub-gina': { email: 'gina@example.com', email_verified: true, name: 'Gina' },
      'sub-hal': { email: 'hal@example.com', email_verified: false, name: 'Hal' },
    },
  });
  d = await startTestDaemon({
    settings: { anonymousAccess: false, publicUrl: base, permissions: 'code-host' },
    config: {
      permissions: { grants: [{ users: ['gina@example.com'], repos: ['secret'] }] },
      signIn: {
        providers: { corp: { type: 'oidc', issuer: idp.issuer, clientId: idp.clientId, clientSecret: { env: 'CORP_SECRET' }, displayName: 'Corp SSO' } },
        allowedDomains: ['example.com'],
      },
    },
    // A second private repository, which nobody is granted.
    extraRepos: [{ name: 'hidden', visibility: 'private', build: (repo) => repo.commit({ 'hidden.c': 'int widget_hidden_gear;\n' }) }],
    daemon: { port, env: { CORP_SECRET: idp.clientSecret } },
  });
});

after(async () => {
  await browser?.close();
  await d?.cleanup();
  await idp?.close();
});

describe('single sign-on in the web UI', () => {
  test('the dialog offers the provider; signing in provisions the member, who lands on their search and sees what is granted', async () => {
    idp.nextLogin = 'sub-gina';
    const page = await newTab(browser);
    try {
      await page.goto(`${base}/?q=widget_`);
      await page.waitForSelector('dialog#signin[open]');
      const button = page.locator('dialog#signin a.sso-button');
      assert.equal(await button.innerText(), 'Sign in with Corp SSO');
      assert.equal(await page.locator('#signin-key').count(), 1, 'the API-key form stays');
      await Promise.all([page.waitForURL(`${base}/?q=widget_`), button.click()]);
      // Back on the page it started from, signed in: the search runs.
      await page.locator('#account .who', { hasText: 'Gina' }).waitFor();
      assert.equal(await page.locator('dialog#signin').count(), 0);
      await page.waitForSelector('details.stats');
      const repos = new Set(await page.locator('.result .repo').allInnerTexts());
      assert.ok(repos.has('widgets'), `a public repository: ${[...repos].join(', ')}`);
      assert.ok(repos.has('secret'), 'the private repository granted to the member');
      assert.ok(!repos.has('hidden'), 'not the private one nobody is granted');
      const cookies = await page.context().cookies(base);
      const session = cookies.find((c) => c.name === 'trawl_session')!;
      assert.equal(session.httpOnly, true);
      assert.equal(session.sameSite, 'Strict');
      assert.equal(
        cookies.find((c) => c.name === 'trawl_sign_in'),
        undefined,
        'the flow cookie is gone',
      );
    } finally {
      await page.context().close();
    }
  });

  test('a refused sign-in comes back to the dialog, which says why; the address no longer holds the reason', async () => {
    idp.nextLogin = 'sub-hal';
    const page = await newTab(browser);
    try {
      await page.goto(`${base}/`);
      await page.waitForSelector('dialog#signin[open]');
      await Promise.all([page.waitForURL((u) => u.pathname === '/' && u.search === ''), page.locator('dialog#signin a.sso-button').click()]);
      await page.locator('#signin-error', { hasText: 'Your email address at Corp SSO is not verified.' }).waitFor();
      assert.equal(new URL(page.url()).search, '', 'signInError and provider leave the address');
      assert.equal(await page.locator('dialog#signin[open]').count(), 1);
    } finally {
      await page.context().close();
    }
  });

  test('the dialog with its provider and a refusal has no serious accessibility violations (axe-core)', async () => {
    // The shell's CSP allows no inline script: this context bypasses it for axe only.
    const page = await newTab(browser, { bypassCSP: true });
    try {
      await page.goto(`${base}/?signInError=domain_not_allowed&provider=corp`);
      await page.locator('#signin-error', { hasText: 'People of your email domain' }).waitFor();
      await page.addScriptTag({ content: readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8') });
      const violations = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)`)) as Array<{
        id: string;
        impact: string;
      }>;
      assert.deepEqual(
        violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id),
        [],
      );
    } finally {
      await page.context().close();
    }
  });
});
