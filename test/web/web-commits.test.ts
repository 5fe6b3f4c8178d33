// The commit page and the compare view end to end, in headless Chromium against a real
// daemon and a git repository made here: from a file's history to a commit (message,
// author, parents, a highlighted diff with old and new line numbers), on to its parent (a
// root commit, diffed against nothing), from blame to a commit, and two branches compared
// (the changed files, a rename, a large file collapsed); bad refs show the API's message.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../../bench/suite/browser.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { git, type TestRepo } from '../helpers/git.ts';
import { newTab } from '../helpers/web.ts';

// Line 3 sits inside a block comment that opens on line 1: only a hunk highlighted as a
// whole (not line by line) colours it as a comment.
const APP_V1 = [
  '/**',
  ' * Greets someone.',
  ' * Old wording here.',
  ' */',
  'export function greet(name: string): string {',
  '  return `Hello, ${name}`;',
  '}',
  '',
].join('\n');
const APP_V2 = APP_V1.replace('Old wording', 'New wording').replace('return `Hello', 'const greeting = `Hello').replace('}`;\n}', '}`;\n  return greeting;\n}');

const sha: Record<'root' | 'second' | 'feature', string> = { root: '', second: '', feature: '' };
const ANN = { author: 'Ann Author <ann@example.com>', date: '2024-05-01T10:00:00Z' };
const BOB = { author: 'Bob Builder <bob@example.com>', date: '2024-05-02T10:00:00Z' };

const tour = {
  name: 'tour',
  branches: ['feature'],
  build(repo: TestRepo) {
    sha.root = repo.commit({ 'src/app.ts': APP_V1, 'README.md': '# Tour\n' }, 'Start the tour', ANN);
    repo.tag('v1');
    sha.second = repo.commit({ 'src/app.ts': APP_V2 }, 'Reword the greeting\n\nThe comment says what greet does now.', BOB);
    repo.checkout('feature', true);
    git(repo.path, 'mv', 'README.md', 'docs-README.md');
    const big = `${Array.from({ length: 500 }, (_, i) => `export const value${i} = ${i};`).join('\n')}\n`;
    sha.feature = repo.commit({ 'src/feature.ts': 'export const enabled = true;', 'src/generated.ts': big }, 'Add the feature', BOB);
    repo.checkout('main');
  },
};

let browser: Browser;
let d: TestDaemon;
before(async () => {
  browser = await launchBrowser();
  d = await startTestDaemon({ extraRepos: [tour] });
});
after(async () => {
  await browser?.close();
  await d?.cleanup();
});

const newPage = () => newTab(browser);

describe('commit and compare pages', () => {
  test('history → commit (message, author, parents, highlighted diff) → its root parent', async () => {
    const page = await newPage();
    try {
      await page.goto(`${d.url}/tour/-/commits/main/src/app.ts`);
      await page.waitForSelector('.commits li');
      const first = page.locator('.commits a.sha').first();
      assert.equal(await first.getAttribute('href'), `/tour/-/commit/${sha.second}`);
      await Promise.all([page.waitForURL(`**/tour/-/commit/${sha.second}`), first.click()]);

      await page.locator('.commit-head h1', { hasText: 'Reword the greeting' }).waitFor();
      assert.equal(await page.locator('.commit-body').innerText(), 'The comment says what greet does now.');
      const meta = await page.locator('.commit-meta').innerText();
      assert.match(meta, /Bob Builder\s+<bob@example.com>/);
      assert.match(meta, /2024-05-02 10:00 UTC/);
      assert.equal(await page.locator('.commit-meta code.sha').innerText(), sha.second);
      assert.match(meta, /HEAD -> main/, 'refs of the commit');
      assert.deepEqual(await page.locator('.commit-meta .parents a').evaluateAll((as) => as.map((a) => a.getAttribute('href'))), [
        `/tour/-/commit/${sha.root}`,
      ]);

      // The diff: one modified file, +3 −2, drawn plain first and then highlighted.
      await page.locator('.diff-table span.tok-keyword', { hasText: 'const' }).first().waitFor();
      // textContent: the screen-reader words are in it, and CSS does not transform its case.
      assert.equal(await page.locator('.diff-summary').textContent(), '1 file changed +3 added lines, −2 removed lines');
      assert.equal(await page.locator('.diff-file .diff-status').textContent(), 'modified');
      const removed = page.locator('.diff-table tr.del').first();
      assert.equal(await removed.locator('.code').innerText(), ' * Old wording here.');
      assert.equal(await removed.locator('.tok-comment').innerText(), ' * Old wording here.', 'a removed line inside a block comment is coloured as one');
      assert.equal(await page.locator('.diff-table tr.add').first().locator('.tok-comment').innerText(), ' * New wording here.');
      assert.equal(await removed.locator('td.ln').first().innerText(), '3');
      assert.equal(await removed.locator('td.ln a').getAttribute('href'), `/tour/-/blob/${sha.root}/src/app.ts#L3`, 'old lines link to the parent');
      const added = page.locator('.diff-table tr.add', { hasText: 'return greeting' });
      assert.equal(await added.locator('td.ln a').getAttribute('href'), `/tour/-/blob/${sha.second}/src/app.ts#L7`, 'new lines link to the commit');
      assert.equal(await page.locator('.diff-table tr.hunk .code').innerText(), '@@ -1,7 +1,8 @@');

      // The parent: a root commit, every file added.
      await Promise.all([page.waitForURL(`**/tour/-/commit/${sha.root}`), page.locator('.commit-meta .parents a').click()]);
      await page.locator('.commit-head h1', { hasText: 'Start the tour' }).waitFor();
      assert.match(await page.locator('.commit-meta .parents').innerText(), /none/);
      assert.match(await page.locator('.commit-meta').innerText(), /tag: v1/);
      await page.locator('.diff-files li').first().waitFor();
      assert.deepEqual(await page.locator('.diff-file .diff-status').allTextContents(), ['added', 'added']);
      assert.deepEqual(await page.locator('.diff-files a').allInnerTexts(), ['README.md', 'src/app.ts']);
      assert.equal(await page.locator('.diff-table tr.del').count(), 0);
      await page.locator('.diff-table span.tok-keyword', { hasText: 'export' }).first().waitFor();
    } finally {
      await page.context().close();
    }
  });

  test('blame → the commit of a block', async () => {
    const page = await newPage();
    try {
      await page.goto(`${d.url}/tour/-/blame/main/src/app.ts`);
      const block = page.locator('td.blame.start a').first();
      await block.waitFor();
      assert.equal(await block.getAttribute('href'), `/tour/-/commit/${sha.root}`, 'line 1 is from the first commit');
      await Promise.all([page.waitForURL(`**/tour/-/commit/${sha.root}`), block.click()]);
      await page.locator('.commit-head h1', { hasText: 'Start the tour' }).waitFor();
    } finally {
      await page.context().close();
    }
  });

  test('compare two branches: the form, the changed files, a rename, a large file collapsed', async () => {
    const page = await newPage();
    try {
      await page.goto(`${d.url}/tour/-/compare`);
      // The form suggests the default branch (filled in as the base) and the tags it can see.
      await page.locator('#compare-refs option[value="v1"]').waitFor({ state: 'attached' });
      assert.equal(await page.locator('#compare-base').inputValue(), 'main');
      await page.fill('#compare-head', 'feature');
      await Promise.all([page.waitForURL('**/tour/-/compare/main...feature'), page.press('#compare-head', 'Enter')]);

      await page.locator('.diff-files li').first().waitFor();
      const files = await page.locator('.diff-files li').allTextContents();
      assert.deepEqual(
        files.map((f) => f.split(/\s+/).slice(0, 2).join(' ')),
        ['renamed README.md', 'added src/feature.ts', 'added src/generated.ts'],
      );
      assert.match(files[0]!, /README\.md → docs-README\.md/);
      assert.match(await page.locator('#diff-1 .diff-note').innerText(), /Renamed without changes/);
      assert.match(await page.locator('#diff-2').innerText(), /export const enabled = true;/);
      assert.equal(await page.locator('#diff-2 tr.note .code').innerText(), 'No newline at end of file');
      // 500 lines: collapsed until asked for.
      const big = page.locator('#diff-3');
      assert.equal(await big.locator('table').count(), 0);
      assert.match(await big.locator('.diff-note').innerText(), /large diff \(500 lines\)/);
      await big.getByRole('button', { name: 'Show the diff' }).click();
      await big.locator('tr.add', { hasText: 'value499' }).waitFor();
      assert.equal(await big.locator('tr.add').count(), 500);

      // Swapped: the same files the other way round.
      await Promise.all([page.waitForURL('**/tour/-/compare/feature...main'), page.locator('.compare-form a', { hasText: 'Swap' }).click()]);
      await page.locator('.diff-files li').first().waitFor();
      assert.deepEqual(await page.locator('.diff-file .diff-status').allTextContents(), ['renamed', 'deleted', 'deleted']);
    } finally {
      await page.context().close();
    }
  });

  test("an unknown commit or ref shows the API's message", async () => {
    const page = await newPage();
    try {
      await page.goto(`${d.url}/tour/-/commit/deadbeef0000`);
      assert.match(await page.locator('.notice.error').innerText(), /ref "deadbeef0000" does not resolve to a commit in tour/);
      await page.goto(`${d.url}/tour/-/compare/main...nope`);
      assert.match(await page.locator('.notice.error').innerText(), /ref "nope" does not resolve to a commit in tour/);
      assert.equal(await page.locator('#compare-head').inputValue(), 'nope', 'the form keeps the refs to fix them');
    } finally {
      await page.context().close();
    }
  });
});
