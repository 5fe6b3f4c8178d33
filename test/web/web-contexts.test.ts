// The search box's context selector and the settings page's default context, end to end in
// headless Chromium against a real daemon on loopback without anonymous access: a member's
// default context is preselected and limits their search; choosing another context with the
// keyboard runs the search again there, and the address keeps it (back returns to the one
// before); "All repositories" searches everywhere; the settings page saves another default.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from '../../bench/suite/browser.ts';
import { call, startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { newUserKey } from '../helpers/cli-users.ts';
import { activeId, newTab, signInWith } from '../helpers/web.ts';

let browser: Browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

/** The repositories of the results on screen, once the search has ended. */
async function shownRepos(page: Page): Promise<string[]> {
  await page.waitForSelector('#results[data-done-at]');
  return [...new Set(await page.locator('.result .repo').allInnerTexts())].sort();
}

describe('search contexts in the web UI', () => {
  let d: TestDaemon;
  let key: string;
  before(async () => {
    d = await startTestDaemon({
      settings: { anonymousAccess: false },
      config: {
        contexts: {
          'just-secret': { description: 'The vault', include: { repos: ['secret'] } },
          'just-widgets': { description: 'The widgets', include: { repos: ['widgets'] } },
        },
      },
    });
    key = await newUserKey('max@example.com', ['--data-dir', d.dataDir]);
    const set = await call(`${d.url}/api/default_context`, { method: 'PUT', json: { context: 'just-widgets' }, headers: { authorization: `Bearer ${key}` } });
    assert.equal(set.status, 200, set.text);
  });
  after(async () => {
    await d?.cleanup();
  });

  test('the default is preselected and applies; another context chosen with the keyboard runs the search there', async () => {
    const page = await newTab(browser);
    try {
      await page.goto(`${d.url}/?q=widget`);
      await signInWith(page, key);
      await page.waitForSelector('#context option[value="just-secret"]', { state: 'attached' });
      assert.equal(await page.locator('#context').inputValue(), 'just-widgets', "the member's default is preselected");
      assert.equal(await page.locator('#context option[value="just-widgets"]').innerText(), 'just-widgets (your default)');
      assert.equal(await page.locator('#context option[value="just-secret"]').getAttribute('title'), 'The vault');
      assert.equal(await page.locator('label[for="context"]').innerText(), 'Search context', 'the selector has a label');
      assert.deepEqual(await shownRepos(page), ['widgets'], 'the default context limits the search');

      // From the query box, Tab reaches the selector; the arrows choose another context.
      await page.focus('#q');
      await page.keyboard.press('Tab');
      assert.equal(await activeId(page), 'context');
      const searched = page.waitForResponse((r) => r.url().endsWith('/api/stream_search'));
      await page.keyboard.press('ArrowUp');
      const request = (await searched).request();
      assert.equal(JSON.parse(request.postData() ?? '{}').context, 'just-secret', 'the chosen context goes with the search');
      assert.deepEqual(await shownRepos(page), ['secret']);
      assert.equal(new URL(page.url()).searchParams.get('context'), 'just-secret', 'the address keeps the choice');

      const everywhere = page.waitForResponse((r) => r.url().endsWith('/api/stream_search'));
      await page.keyboard.press('ArrowUp');
      assert.equal(await page.locator('#context').inputValue(), 'global');
      assert.equal(JSON.parse((await everywhere).request().postData() ?? '{}').context, 'global');
      assert.deepEqual(await shownRepos(page), ['secret', 'widgets'], 'all repositories');

      // Back: the previous search, and its context shown again.
      const again = page.waitForResponse((r) => r.url().endsWith('/api/stream_search'));
      await page.goBack();
      await again;
      assert.equal(new URL(page.url()).searchParams.get('context'), 'just-secret');
      assert.equal(await page.locator('#context').inputValue(), 'just-secret');
      assert.deepEqual(await shownRepos(page), ['secret']);

      // A context: in the query is the query's own.
      await page.goto(`${d.url}/?q=${encodeURIComponent('widget context:just-widgets')}&context=just-secret`);
      assert.deepEqual(await shownRepos(page), ['widgets']);
    } finally {
      await page.context().close();
    }
  });

  test('the settings page sets the default context', async () => {
    const page = await newTab(browser);
    try {
      await page.goto(`${d.url}/settings`);
      await signInWith(page, key);
      await page.waitForSelector('#default-context:not([disabled])');
      assert.equal(await page.locator('#default-context').inputValue(), 'just-widgets');
      await page.selectOption('#default-context', 'just-secret');
      await page.click('#default-context-form button[type=submit]');
      await page.waitForSelector('#default-context-status:has-text("Saved")');
      const now = await call(`${d.url}/api/default_context`, { headers: { authorization: `Bearer ${key}` } });
      assert.deepEqual(now.json, { context: 'just-secret' });
      await page.selectOption('#default-context', '');
      await page.click('#default-context-form button[type=submit]');
      await page.waitForSelector('#default-context-status:has-text("every repository")');
      assert.deepEqual((await call(`${d.url}/api/default_context`, { headers: { authorization: `Bearer ${key}` } })).json, { context: null });
    } finally {
      await page.context().close();
    }
  });
});
