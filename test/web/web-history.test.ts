// The search page with searches of an indexed history, in headless Chromium against a real
// daemon: a `rev:<commit>` result names the commit by its short id, and a `history:yes`
// result shows when the file held matches, each end a link to its commit's page.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../../bench/suite/browser.ts';
import { parseConfig } from '../../daemon/config/load.ts';
import { startDaemon, type Daemon } from '../../daemon/daemon.ts';
import { silentHttpLogger } from '../../daemon/http/logging.ts';
import { openStore } from '../../daemon/store/open.ts';
import { indexLocal, indexLocalHistory } from '../../daemon/sync/local-repos.ts';
import { tempDir } from '../helpers/corpus.ts';
import { TestRepo } from '../helpers/git.ts';
import { newTab } from '../helpers/web.ts';

const dir = tempDir('web-history');
let browser: Browser;
let daemon: Daemon;
const commits: string[] = [];

before(async () => {
  const repo = TestRepo.init(join(dir.path, 'app'));
  const day = (n: number) => ({ author: 'Test <test@example.com>', date: `2024-01-0${n}T12:00:00Z` });
  commits.push(repo.commit({ 'src/auth.c': 'int check(void) {\n  return 1; /* FIXME_security: trusts everyone */\n}\n' }, 'Add check', day(1)));
  commits.push(repo.commit({ 'README.md': '# app\n' }, 'Readme', day(2)));
  commits.push(repo.commit({ 'src/auth.c': 'int check(void) {\n  return verify();\n}\n' }, 'Fix check', day(3)));
  const data = join(dir.path, 'data');
  const store = openStore(data);
  try {
    const summary = await indexLocal(repo.path, { dataDir: data, store, workers: 1 });
    await indexLocalHistory(summary, { dataDir: data, workers: 1 });
  } finally {
    await store.close();
  }
  const config = parseConfig(JSON.stringify({ settings: { anonymousAccess: true } }), join(dir.path, 'trawl.json'));
  daemon = await startDaemon({ config, dataDir: data, host: '127.0.0.1', port: 0, logger: silentHttpLogger, workers: 1, sync: false });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await daemon?.close();
  dir.cleanup();
});

test('a history:yes result shows when the file held matches, with links to the commits', async () => {
  const page = await newTab(browser);
  await page.goto(`${daemon.url}/?q=${encodeURIComponent('history:yes FIXME_security')}`);
  const history = page.locator('.result .result-history');
  await history.first().waitFor();
  const text = await history.first().innerText();
  assert.match(text, /2 changes; held matches from [0-9a-f]{8} \(2024-01-01\) until [0-9a-f]{8} \(2024-01-03\)/);
  const links = await history
    .first()
    .locator('a.commit')
    .evaluateAll((as) => as.map((a) => a.getAttribute('href')));
  assert.deepEqual(links, [`/app/-/commit/${commits[0]}`, `/app/-/commit/${commits[2]}`]);
  await page.context().close();
});

test('a rev:<commit> result names the commit by its short id', async () => {
  const page = await newTab(browser);
  await page.goto(`${daemon.url}/?q=${encodeURIComponent(`FIXME_security rev:${commits[1]!.slice(0, 7)}`)}`);
  const branch = page.locator('.result .branch');
  await branch.first().waitFor();
  assert.equal(await branch.first().innerText(), commits[1]!.slice(0, 8));
  assert.equal(await branch.first().getAttribute('title'), commits[1]);
  await page.context().close();
});

test('a type:diff result names the changed file, linked to it at the commit', async () => {
  const page = await newTab(browser);
  await page.goto(`${daemon.url}/?q=${encodeURIComponent('type:diff FIXME_security')}`);
  const paths = page.locator('.result .diff-path');
  await paths.nth(1).waitFor();
  const found = await paths.evaluateAll((as) => as.map((a) => [a.textContent, a.getAttribute('href')]));
  // Newest first: the commit that removed the line, then the one that added it.
  assert.deepEqual(found, [
    ['src/auth.c', `/app/-/blob/${commits[2]}/src/auth.c`],
    ['src/auth.c', `/app/-/blob/${commits[0]}/src/auth.c`],
  ]);
  await page.context().close();
});
