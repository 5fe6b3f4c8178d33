// Headless Chromium for the web UI's end-to-end tests: Debian's chromium (installed by
// scripts/setup.sh) driven by playwright-core, which never downloads a browser of its own.
// The flags keep Chromium off the network (this machine has none beyond loopback: without
// them it retries Google's hosts at every start) and work as root in a container.
//
// Wait with locators (`locator(sel, { hasText }).waitFor()`), never `page.waitForFunction`:
// playwright evaluates its predicate with `eval` in the page, and after a first poll that
// comes out false the UI's CSP (script-src 'self') throws EvalError. The test then passes
// or fails by timing, which is how it failed in CI.

import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = process.env.TRAWL_CHROMIUM ?? '/usr/bin/chromium';

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`no Chromium at ${CHROMIUM}: run ./scripts/setup.sh (it installs Debian's chromium) or set TRAWL_CHROMIUM`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
}
