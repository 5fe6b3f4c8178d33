// Accessibility of the web UI's pages, checked by axe-core (the engine behind most
// accessibility audits) inside headless Chromium: the search page with results and with a
// parse error, the file view, blame, history, a folder, a commit, a compare view and its
// form, the sign-in dialog, and the settings page. Any
// violation of serious or critical impact fails, with its rule and the offending markup.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from '../../bench/suite/browser.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { newUserKey } from '../helpers/cli-users.ts';
import { installLicense, testLicensor } from '../helpers/license.ts';
import { signInWith } from '../helpers/web.ts';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ html: string }>;
}

let browser: Browser;
let d: TestDaemon;
let closed: TestDaemon;
before(async () => {
  browser = await launchBrowser();
  d = await startTestDaemon();
  closed = await startTestDaemon({ settings: { anonymousAccess: false } });
});
after(async () => {
  await browser?.close();
  await d?.cleanup();
  await closed?.cleanup();
});

/** axe's serious and critical findings on the page as it is now. */
async function audit(page: Page): Promise<string[]> {
  // The shell's CSP allows no inline script: the context bypasses it for axe only.
  await page.addScriptTag({ content: AXE });
  const violations = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)`)) as Violation[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help} — ${v.nodes
          .slice(0, 3)
          .map((n) => n.html)
          .join(' | ')}`,
    );
}

async function page(): Promise<Page> {
  const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1200, height: 800 } });
  const p = await context.newPage();
  p.setDefaultTimeout(15_000);
  return p;
}

test('search, error, file, blame, history and folder pages have no serious accessibility violations', async () => {
  const p = await page();
  try {
    const pages: Array<[string, string, string]> = [
      ['search with results', `${d.url}/?q=widget&matches=2`, '#truncated'],
      ['file view', `${d.url}/widgets/-/blob/main/src/widget.c?hl=1#L1`, '.outline li'],
      ['blame', `${d.url}/widgets/-/blame/main/src/main.c`, 'td.blame.start'],
      ['history', `${d.url}/widgets/-/commits/main/src/main.c`, '.commits li'],
      ['folder', `${d.url}/widgets/-/tree/main/src`, '.tree li'],
    ];
    for (const [what, url, ready] of pages) {
      await p.goto(url);
      await p.waitForSelector(ready);
      assert.deepEqual(await audit(p), [], what);
    }
    await p.goto(`${d.url}/`);
    await p.fill('#q', 'case:yes a case:no');
    await p.press('#q', 'Enter');
    await p.waitForSelector('#query-error p');
    await p.locator('details.syntax summary').click();
    assert.deepEqual(await audit(p), [], 'search page with a parse error and the syntax help open');
  } finally {
    await p.context().close();
  }
});

test('the file view with its grammar, the navigation menu and panel, the repository page and a missing page have no serious accessibility violations', async () => {
  const p = await page();
  try {
    await p.goto(`${d.url}/widgets/-/blob/main/src/widget.c?hl=1:5-1:17#L1`);
    await p.waitForSelector('main[data-language][data-landed-at]');
    await p.waitForSelector('.outline li');
    assert.deepEqual(await audit(p), [], 'file view, highlighted');
    await p
      .locator('.cm-line', { hasText: 'widget_count' })
      .first()
      .locator('span', { hasText: /^widget_count$/ })
      .first()
      .click();
    await p.waitForSelector('#nav-menu');
    assert.deepEqual(await audit(p), [], 'the navigation menu');
    await p.locator('#nav-menu button', { hasText: 'Find references' }).click();
    await p.waitForSelector('#nav-panel .nav-files');
    assert.deepEqual(await audit(p), [], 'the references panel');
    await p.locator('.cm-content').focus();
    await p.keyboard.press('Control+f');
    await p.waitForSelector('.cm-search');
    assert.deepEqual(await audit(p), [], "the viewer's search panel");
    for (const [what, url, ready] of [
      ['repository', `${d.url}/widgets`, '.tree li'],
      ['not found', `${d.url}/widgets/-/nowhere/x`, 'main h1'],
    ]) {
      await p.goto(url!);
      await p.waitForSelector(ready!);
      assert.deepEqual(await audit(p), [], what);
    }
  } finally {
    await p.context().close();
  }
});

test('the commit page and the compare view (form and diff) have no serious accessibility violations', async () => {
  const p = await page();
  try {
    // Waiting for a keyword: the diff is audited highlighted (token colours on diff rows).
    const pages: Array<[string, string, string]> = [
      ['commit', `${d.url}/widgets/-/commit/main~1`, '.diff-table .tok-keyword'],
      ['compare', `${d.url}/widgets/-/compare/v1.0...dev`, '.diff-table .tok-keyword'],
      ['compare form', `${d.url}/widgets/-/compare`, '#compare-refs option'],
    ];
    for (const [what, url, ready] of pages) {
      await p.goto(url);
      await p.locator(ready).first().waitFor({ state: 'attached' });
      assert.deepEqual(await audit(p), [], what);
    }
  } finally {
    await p.context().close();
  }
});

test('the sign-in dialog has no serious accessibility violations', async () => {
  const p = await page();
  try {
    await p.goto(`${closed.url}/`);
    await p.waitForSelector('dialog#signin[open]');
    await p.fill('#signin-key', 'not a key');
    await p.press('#signin-key', 'Enter');
    await p.locator('#signin-error', { hasText: /\S/ }).waitFor();
    assert.deepEqual(await audit(p), []);
  } finally {
    await p.context().close();
  }
});

test('the settings page (keys, a new key, the confirmation, members) has no serious accessibility violations', async () => {
  // Its own daemon: an owner, a member and a license with org-management, so that the
  // members table is drawn too.
  const licensor = testLicensor('L-a11y');
  const s = await startTestDaemon({ settings: { anonymousAccess: false }, config: { license: { publicKeys: [licensor.publicPem] } } });
  const p = await page();
  try {
    const where = ['--data-dir', s.dataDir];
    const owner = await newUserKey('olga@example.com', where, 'owner');
    await newUserKey('max@example.com', where);
    await installLicense(s.dataDir, licensor.sign(['org-management']));
    await p.goto(`${s.url}/settings`);
    await signInWith(p, owner);
    await p.waitForSelector('#members-table tbody tr');
    await p.waitForSelector('#keys-table tbody tr');
    assert.deepEqual(await audit(p), [], 'keys and members');
    await p.fill('#key-name', 'a11y');
    await p.press('#key-name', 'Enter');
    await p.waitForSelector('#new-key-value');
    assert.deepEqual(await audit(p), [], 'with the new key shown');
    await p.locator('#keys-table button.revoke').first().click();
    await p.waitForSelector('dialog#confirm[open]');
    assert.deepEqual(await audit(p), [], 'the confirmation');
  } finally {
    await p.context().close();
    await s.cleanup();
  }
});
