// The settings page (/settings) end to end, in headless Chromium against a real daemon on
// loopback without anonymous access: a member signs in, creates an API key there, reads
// it from the page (once), and that key authenticates an API call from Node; revoking it
// there (after a confirmation) makes the next call 401. The Copy button puts the key on
// the clipboard, or selects it where the page has no clipboard. An owner suspends a member
// in the page and the member's key then gets 401, sets their daily limit and the user
// object shows it, and without the org-management entitlement sees the server's message
// instead of the members. Someone not signed in is asked to sign in.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, BrowserContextOptions } from 'playwright-core';
import { keysCommand, usersCommand } from '../../daemon/cli/users-command.ts';
import { launchBrowser } from '../../bench/suite/browser.ts';
import { call, startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { installLicense, testLicensor } from '../helpers/license.ts';
import { activeId, activeText, newTab, signInWith } from '../helpers/web.ts';

const licensor = testLicensor('L-web-settings');
const PUBLIC_PEM = licensor.publicPem;
const license = (entitlements: string[]) => licensor.sign(entitlements);

let browser: Browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

const quietIo = { out: () => {}, err: () => {}, now: () => new Date() };

/** A new API key of the user, made with the CLI. */
async function createKey(dataDir: string, email: string, name: string): Promise<string> {
  const out: string[] = [];
  assert.equal(await keysCommand(['create', '--user', email, '--name', name, '--data-dir', dataDir], { ...quietIo, out: (l: string) => void out.push(l) }), 0);
  return out.at(-1)!;
}

const newPage = (options: BrowserContextOptions = {}) => newTab(browser, options);

const repos = (d: TestDaemon, key: string) => call(`${d.url}/api/repos`, { headers: { authorization: `Bearer ${key}` } });

describe('the settings page without anonymous access', () => {
  let d: TestDaemon;
  const setLicense = (text: string) => installLicense(d.dataDir, text);
  before(async () => {
    d = await startTestDaemon({ settings: { anonymousAccess: false }, config: { license: { publicKeys: [PUBLIC_PEM] } } });
    assert.equal(await usersCommand(['add', '--email', 'olga@example.com', '--name', 'Olga', '--role', 'owner', '--data-dir', d.dataDir], quietIo), 0);
    assert.equal(await usersCommand(['add', '--email', 'max@example.com', '--name', 'Max', '--data-dir', d.dataDir], quietIo), 0);
    await setLicense(license(['org-management']));
  });
  after(async () => {
    await d?.cleanup();
  });

  test('a member creates a key in the page, it works from Node; revoked there, it is refused', async () => {
    const signInKey = await createKey(d.dataDir, 'max@example.com', 'browser');
    const page = await newPage({ permissions: ['clipboard-read', 'clipboard-write'] });
    try {
      await page.goto(`${d.url}/settings`);
      await signInWith(page, signInKey);
      await page.locator('#keys-table tbody tr', { hasText: 'browser' }).waitFor();
      assert.equal(await page.title(), 'Settings · trawl');
      assert.deepEqual(await page.locator('#keys-table thead th').allInnerTexts(), ['Name', 'Key', 'Created', 'Last used', 'Actions']);
      assert.match(await page.locator('#keys-table tbody tr').first().innerText(), /svk_[0-9a-f]{8}…/, 'a key is told apart by its first characters only');
      assert.equal(await page.getAttribute('#account a.settings-link', 'href'), '/settings', 'the header links to the page');
      assert.equal(await page.getAttribute('#account a.settings-link', 'aria-current'), 'page');
      assert.equal(await page.locator('#members-title').count(), 0, 'a member sees no members section');

      await page.fill('#key-name', 'ci');
      await page.press('#key-name', 'Enter');
      await page.locator('#new-key-value').waitFor();
      const key = await page.inputValue('#new-key-value');
      assert.match(key, /^svk_[0-9a-f]{64}$/);
      assert.equal(await page.getAttribute('#new-key-value', 'readonly'), '', 'read-only');
      assert.equal(await activeId(page), 'new-key-value', 'focus lands on the new key');
      assert.match(await page.locator('#new-key-note').innerText(), /will not be shown again/);
      const created = await repos(d, key);
      assert.equal(created.status, 200, 'the key read from the page authenticates an API call');
      await page.locator('#keys-table tbody tr', { hasText: 'ci' }).waitFor();

      await page.click('#copy-key');
      await page.locator('#copy-status', { hasText: 'Copied' }).waitFor();
      assert.equal(await page.evaluate('navigator.clipboard.readText()'), key, 'the clipboard holds the key');
      await page.click('#new-key-done');
      assert.equal(await page.locator('#new-key-value').count(), 0, 'once done, the key is gone from the page');
      assert.equal(await activeId(page), 'key-name');
      assert.ok(!(await page.content()).includes(key), 'and nowhere in the document');

      // Revoking asks first: Escape keeps the key, and focus returns to the button.
      const row = page.locator('#keys-table tbody tr', { hasText: 'ci' });
      await row.locator('button.revoke').click();
      await page.waitForSelector('dialog#confirm[open]');
      assert.match(await page.locator('#confirm-title').innerText(), /Revoke the key “ci”\?/);
      assert.equal(await activeText(page), 'Cancel', 'the safe answer has focus');
      await page.keyboard.press('Escape');
      await page.waitForSelector('dialog#confirm', { state: 'detached' });
      assert.match(String(await activeText(page)), /^Revoke key ci$/);
      assert.equal((await repos(d, key)).status, 200, 'not revoked');

      await row.locator('button.revoke').click();
      await page.click('#confirm-yes');
      await row.waitFor({ state: 'detached' });
      assert.match(await page.locator('#keys-status').innerText(), /The key “ci” is revoked/);
      assert.equal(await activeId(page), 'keys-title', 'focus moves to the section');
      const refused = await repos(d, key);
      assert.equal(refused.status, 401, 'revoked in the page, the key is refused');
      assert.equal(refused.json.errorCode, 'NOT_AUTHENTICATED');
      assert.equal((await repos(d, signInKey)).status, 200, 'the other key still works');
    } finally {
      await page.context().close();
    }
  });

  test('without a clipboard, Copy selects the key', async () => {
    const signInKey = await createKey(d.dataDir, 'max@example.com', 'no-clipboard');
    const page = await newPage();
    try {
      // As on a plain-http address, where browsers give pages no clipboard.
      await page.addInitScript('Object.defineProperty(Navigator.prototype, "clipboard", { get: () => undefined })');
      await page.goto(`${d.url}/settings`);
      await signInWith(page, signInKey);
      await page.fill('#key-name', 'selected');
      await page.click('#key-create-title ~ .field-row button');
      await page.locator('#new-key-value').waitFor();
      await page.focus('#key-name');
      await page.click('#copy-key');
      await page.locator('#copy-status', { hasText: 'the key is selected' }).waitFor();
      assert.equal(await activeId(page), 'new-key-value');
      assert.equal(
        await page.evaluate('(() => { const f = document.getElementById("new-key-value"); return f.value.slice(f.selectionStart, f.selectionEnd); })()'),
        await page.inputValue('#new-key-value'),
      );
      // A blank name is refused in the page, with the reason next to the field.
      await page.fill('#key-name', '   ');
      await page.press('#key-name', 'Enter');
      await page.locator('#key-create-error', { hasText: 'Give the key a name.' }).waitFor();
      assert.equal(await page.getAttribute('#key-create-error', 'role'), 'alert');
    } finally {
      await page.context().close();
    }
  });

  test('an owner suspends a member and limits them; without the entitlement the server says why', async () => {
    const ownerKey = await createKey(d.dataDir, 'olga@example.com', 'browser');
    const memberKey = await createKey(d.dataDir, 'max@example.com', 'script');
    const users = (await call(`${d.url}/api/ee/users`, { headers: { authorization: `Bearer ${ownerKey}` } })).json as Array<{ id: string; email: string }>;
    const max = users.find((u) => u.email === 'max@example.com')!.id;
    const olga = users.find((u) => u.email === 'olga@example.com')!.id;
    const user = async () => (await call(`${d.url}/api/ee/user?userId=${max}`, { headers: { authorization: `Bearer ${ownerKey}` } })).json;
    assert.equal((await repos(d, memberKey)).status, 200);
    const page = await newPage();
    try {
      await page.goto(`${d.url}/settings`);
      await signInWith(page, ownerKey);
      const row = page.locator(`#members-table tr[data-user-id="${max}"]`);
      await row.waitFor();
      assert.equal(await page.locator(`#members-table tr[data-user-id="${olga}"] button.suspend`).count(), 0, "no suspend button on the owner's own row");
      assert.match(await row.locator('.member-status').innerText(), /^Active$/);

      await row.locator('button.suspend').click();
      await row.locator('button.unsuspend').waitFor();
      assert.match(await row.locator('.member-status').innerText(), /^Suspended since /);
      assert.match(await page.locator('#members-status').innerText(), /Max is suspended/);
      assert.match(String(await activeText(page)), /^Unsuspend Max$/, 'focus stays on the (redrawn) button');
      const refused = await repos(d, memberKey);
      assert.equal(refused.status, 401, "suspended in the page, the member's key gets 401");
      assert.notEqual((await user()).suspendedAt, null);

      await page.fill(`#limit-${max}`, '5');
      await row.locator('button.set-limit').click();
      await page.locator('#members-status', { hasText: 'Max: 5 requests per day.' }).waitFor();
      assert.equal((await user()).dailyLimit, 5, 'the user object shows the limit');
      assert.equal(await page.inputValue(`#limit-${max}`), '5');
      assert.equal(await activeId(page), `limit-${max}`);

      await row.locator('button.unsuspend').click();
      await row.locator('button.suspend').waitFor();
      assert.equal((await repos(d, memberKey)).status, 200, 'active again');
      await page.fill(`#limit-${max}`, '');
      await page.press(`#limit-${max}`, 'Enter');
      await page.locator('#members-status', { hasText: 'the default daily limit applies' }).waitFor();
      assert.equal((await user()).dailyLimit, null);

      await setLicense(license(['scoped-access-tokens']));
      await page.reload();
      await page.locator('#members-unavailable').waitFor();
      assert.match(await page.locator('#members-unavailable').innerText(), /"org-management" entitlement/, "the server's message");
      assert.equal(await page.locator('#members-table').count(), 0);
      await page.locator('#keys-table').waitFor();
    } finally {
      await setLicense(license(['org-management']));
      await page.context().close();
    }
  });
});

describe('the settings page with anonymous access', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startTestDaemon();
  });
  after(async () => {
    await d?.cleanup();
  });

  test('not signed in, the page asks to sign in', async () => {
    const page = await newPage();
    try {
      await page.goto(`${d.url}/settings`);
      await page.waitForSelector('dialog#signin[open]');
      assert.match(await page.locator('#signin-help').innerText(), /Settings belong to a user/);
      await page.locator('dialog#signin button', { hasText: 'Cancel' }).click();
      await page.locator('#settings-signin', { hasText: 'once you are signed in' }).waitFor();
      assert.equal(await page.locator('#keys-table').count(), 0, 'the anonymous user has no keys');
      assert.equal(await page.locator('#account a.settings-link').count(), 0, 'no Settings link before signing in');
    } finally {
      await page.context().close();
    }
  });
});
