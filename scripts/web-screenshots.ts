// Screenshots of the web UI for the README and docs/web-ui.md: indexes a corpus into a
// temporary data directory, starts a daemon on loopback with anonymous access, and has
// headless Chromium (bench/suite/browser.ts) run a search (web-search.png), open its first
// result (web-file.png), find the references of a name there (web-navigation.png), open a
// commit (web-commit.png), and sign in to the settings page and create a key
// (web-settings.png; the key shown is made for the screenshot and dies with it). Usage:
//   node --import tsx scripts/web-screenshots.ts [--corpus DIR] [--name NAME] [--query Q]
//     [--name-to-find NAME] [--commit REF] [--out DIR]
// Default corpus: this project's own git repository, under the name "trawl".

import { mkdirSync, rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parseConfig } from '../daemon/config/load.ts';
import { startDaemon } from '../daemon/daemon.ts';
import { silentHttpLogger } from '../daemon/http/logging.ts';
import { indexLocal } from '../daemon/sync/local-repos.ts';
import { launchBrowser } from '../bench/suite/browser.ts';
import { keysCommand, usersCommand } from '../daemon/cli/users-command.ts';

const { values } = parseArgs({
  options: {
    corpus: { type: 'string', default: '.' },
    name: { type: 'string', default: 'trawl' },
    query: { type: 'string', default: 'ServiceError file:^daemon/http/ lang:typescript' },
    'name-to-find': { type: 'string', default: 'ServiceError' },
    // A small commit of this repository's history (the event-loop-lag timer).
    commit: { type: 'string', default: 'd0519cf' },
    out: { type: 'string', default: 'docs' },
  },
});
const corpus = resolve(values.corpus!);
const out = resolve(values.out!);
mkdirSync(out, { recursive: true });
const tmp = mkdtempSync(join(tmpdir(), 'trawl-shots-'));
try {
  const dataDir = join(tmp, 'data');
  const started = Date.now();
  await indexLocal(corpus, { dataDir, symbols: true, name: values.name! });
  process.stderr.write(`indexed ${corpus} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  const config = parseConfig(JSON.stringify({ settings: { anonymousAccess: true, symbols: true } }), join(tmp, 'trawl.json'));
  const daemon = await startDaemon({ config, dataDir, host: '127.0.0.1', port: 0, logger: silentHttpLogger, sync: false });
  const browser = await launchBrowser();
  try {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 820 }, deviceScaleFactor: 1 })).newPage();
    await page.goto(`${daemon.url}/?q=${encodeURIComponent(values.query!)}`);
    await page.waitForSelector('details.stats');
    await page.locator('#q').blur();
    await page.evaluate('window.scrollTo(0, 0)');
    const shot = async (name: string) => {
      await page.screenshot({ path: join(out, name) });
      process.stderr.write(`wrote ${join(out, name)}\n`);
    };
    await shot('web-search.png');
    await page.locator('.result .code-table tr.hit .ln a').first().click();
    await page.waitForSelector('main[data-language][data-landed-at]');
    await page.waitForSelector('.outline li, .outline .status:not(:empty)');
    await shot('web-file.png');
    const name = values['name-to-find']!;
    await page
      .locator('.cm-line span', { hasText: new RegExp(`^${name}$`) })
      .first()
      .click();
    await page.locator('#nav-menu button', { hasText: 'Find references' }).click();
    await page.waitForSelector('#nav-panel .nav-files');
    await shot('web-navigation.png');
    await page.goto(`${daemon.url}/${values.name}/-/commit/${encodeURIComponent(values.commit!)}`);
    await page.locator('.diff-table .tok-keyword').first().waitFor();
    await shot('web-commit.png');
    // The settings page needs a signed-in user: one made for the screenshot, in this data dir.
    const io = { out: (l: string) => lines.push(l), err: () => {}, now: () => new Date() };
    const lines: string[] = [];
    await usersCommand(['add', '--email', 'ada@example.com', '--name', 'Ada Lovelace', '--role', 'owner', '--data-dir', dataDir], io);
    await keysCommand(['create', '--user', 'ada@example.com', '--name', 'laptop', '--data-dir', dataDir], io);
    const key = lines.at(-1)!;
    await page.goto(`${daemon.url}/settings`);
    await page.waitForSelector('dialog#signin[open]');
    await page.fill('#signin-key', key);
    await page.press('#signin-key', 'Enter');
    await page.waitForSelector('#keys-table tbody tr');
    await page.fill('#key-name', 'ci-pipeline');
    await page.press('#key-name', 'Enter');
    await page.waitForSelector('#new-key-value');
    await shot('web-settings.png');
  } finally {
    await browser.close();
    await daemon.close();
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
