// What the web UI's end-to-end tests share: a new tab in its own context (its own cookies),
// the focused element, and signing in through the page's dialog. The root tsconfig has no
// DOM types, so what runs in the page is passed as strings; read bench/suite/browser.ts
// for why the tests wait with locators and never with page.waitForFunction.

import type { Browser, BrowserContextOptions, Page } from 'playwright-core';

/** A tab in a new context, 1200×800, each wait timing out after `timeoutMs`. */
export async function newTab(browser: Browser, options: BrowserContextOptions = {}, timeoutMs = 15_000): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1200, height: 800 }, ...options });
  const page = await context.newPage();
  page.setDefaultTimeout(timeoutMs);
  return page;
}

export const activeId = (page: Page) => page.evaluate('document.activeElement?.id');
export const activeText = (page: Page) => page.evaluate('document.activeElement?.textContent');

/**
 * The id of the focused element once it is `id`, or whatever holds focus after `ms`: for focus
 * the page moves in a later frame, which a loaded machine may not have drawn yet.
 */
export async function activeIdOnce(page: Page, id: string, ms = 5000): Promise<unknown> {
  await page.waitForFunction(`document.activeElement?.id === ${JSON.stringify(id)}`, undefined, { timeout: ms }).catch(() => {});
  return activeId(page);
}

/** Signs in through the sign-in dialog (open, or about to open) with an API key. */
export async function signInWith(page: Page, key: string): Promise<void> {
  await page.waitForSelector('dialog#signin[open]');
  await page.fill('#signin-key', key);
  await page.press('#signin-key', 'Enter');
  await page.waitForSelector('dialog#signin', { state: 'detached' });
}
