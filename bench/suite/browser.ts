// Headless Chromium for the web phase of `trawl bench run` (phase-web.ts) and the web UI's
// end-to-end tests: Debian's chromium (installed by scripts/setup.sh) driven by
// playwright-core, which never downloads a browser of its own. playwright-core is a
// development dependency, loaded only when a browser is launched, so that the rest of the
// product runs without it. The flags keep Chromium off the network (this machine has none
// beyond loopback: without them it retries Google's hosts at every start) and work as root
// in a container.
//
// Wait with locators (`locator(sel, { hasText }).waitFor()`), never `page.waitForFunction`:
// playwright evaluates its predicate with `eval` in the page, and after a first poll that
// comes out false the UI's CSP (script-src 'self') throws EvalError. The test then passes
// or fails by timing, which is how it failed in CI.

import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';

export const CHROMIUM = process.env.TRAWL_CHROMIUM ?? '/usr/bin/chromium';

/** Why no browser can be launched here, or null when one can. */
export async function browserMissing(): Promise<string | null> {
  if (!existsSync(CHROMIUM)) return `no Chromium at ${CHROMIUM}: run ./scripts/setup.sh (it installs Debian's chromium) or set TRAWL_CHROMIUM`;
  try {
    await import('playwright-core');
  } catch {
    return 'playwright-core is not installed (a development dependency: npm install in a checkout)';
  }
  return null;
}

export async function launchBrowser(): Promise<Browser> {
  const missing = await browserMissing();
  if (missing) throw new Error(missing);
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}
