// The search page with type:commit, in headless Chromium against a real daemon whose
// repositories have history indexes: each result is a commit (short id and first line
// linked to its page, repository, author, date) with its matching message lines.

import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../../bench/suite/browser.ts';
import { syncHistory } from '../../daemon/history/history-index.ts';
import { readAllManifests } from '../../daemon/index/manifest.ts';
import { tempDir } from '../helpers/corpus.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { git } from '../helpers/git.ts';
import { newTab } from '../helpers/web.ts';

const dir = tempDir('web-commits-search');
const dataDir = join(dir.path, 'data');
let browser: Browser;
let d: TestDaemon;

before(async () => {
  d = await startTestDaemon({
    dataDir,
    prepare: async () => {
      for (const m of readAllManifests(dataDir)) {
        if (m.version !== 2 || m.repo === undefined) continue;
        await syncHistory({ enabled: true, dataDir, repoId: m.repoId, repo: m.repo, gitDir: m.repo.source, refs: m.refs, workers: 1 });
      }
    },
  });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await d?.cleanup();
  dir.cleanup();
});

test('a type:commit search lists the matching commits, each linked to its commit page', async () => {
  const page = await newTab(browser);
  await page.goto(`${d.url}/?q=${encodeURIComponent('type:commit "first widgets"')}`);
  await page.waitForSelector('details.stats');
  const results = page.locator('.result.commit-result');
  assert.equal(await results.count(), 1);
  const id = git(d.repoPath, 'log', '--format=%H', '--grep=first widgets', 'main').trim();
  const link = results.first().locator('a.path');
  assert.equal(await link.textContent(), `${id.slice(0, 10)} Initial import`);
  assert.equal(await link.getAttribute('href'), `${d.url}/widgets/-/commit/${id}`);
  assert.equal(await results.first().locator('.repo').textContent(), 'widgets');
  assert.equal(await results.first().locator('.author').textContent(), 'Test');
  assert.equal(await results.first().locator('tr.hit mark').textContent(), 'first widgets');
  await link.click();
  await page.waitForURL(`${d.url}/widgets/-/commit/${id}`);
});
