// The file view's code viewer and code navigation, end to end in headless Chromium against a
// real daemon: a 200,000-line file opens at line 150,000 with only a screenful of lines in
// the page (how fast is the web benchmark's question, bench/suite/phase-web.ts, not this
// test's); exact match ranges and #L ranges are marked; shift-click on a line number
// extends the range; CodeMirror's search opens on Ctrl-F; the grammar is loaded on demand,
// by the file page and not by the search page; and clicking a name offers "Go to
// definition" (one definition: opened at once, in another repository) and "Find
// references" (a side panel across repositories, the file's own first).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../../bench/suite/browser.ts';
import { bigSource } from '../../bench/suite/big-file.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { newTab } from '../helpers/web.ts';

const BIG_LINES = 200_000;

const cart = [
  '// A shopping cart.',
  "import { computeFee } from 'billing';",
  '',
  'export class Cart {',
  '  private items: number[] = [];',
  '  checkoutTotal(): number {',
  '    const sum = this.items.reduce((n, i) => n + i, 0);',
  '    return sum + computeFee(sum);',
  '  }',
  '}',
  ...Array.from({ length: 40 }, (_, i) => `export const shelf${i} = ${i};`),
  '',
].join('\n');

let browser: Browser;
let d: TestDaemon;
/** The commit of shop's one version: the file view at a commit id rather than a branch. */
let shopCommit = '';
before(async () => {
  browser = await launchBrowser();
  d = await startTestDaemon({
    settings: { maxFileSize: 32 * 1024 * 1024 },
    extraRepos: [
      { name: 'shop', build: (r) => void (shopCommit = r.commit({ 'lib/cart.ts': cart }, 'Cart')) },
      {
        name: 'billing',
        build: (r) =>
          void r.commit(
            {
              'src/fee.ts': 'export function computeFee(amount: number): number {\n  return Math.round(amount * 0.03);\n}\n',
              'src/use.ts': "import { computeFee } from './fee';\nexport const sample = computeFee(100);\n",
            },
            'Fees',
          ),
      },
      { name: 'big', build: (r) => void r.commit({ 'gen/big.ts': bigSource(BIG_LINES) }, 'Generated') },
    ],
  });
});
after(async () => {
  await browser?.close();
  await d?.cleanup();
});

const newPage = () => newTab(browser, {}, 20_000);

describe('the code viewer', () => {
  test('a 200,000-line file opens at line 150,000 and draws only what is in view', async () => {
    const page = await newPage();
    try {
      await page.goto(`${d.url}/big/-/blob/main/gen/big.ts#L150000`);
      await page.waitForSelector('main[data-landed-at]');
      assert.equal(await page.getAttribute('main', 'data-landed-line'), '150000');
      const target = page.locator('.cm-line.cm-target');
      assert.equal(await target.getAttribute('data-line'), '150000');
      assert.equal(await target.innerText(), '} // line 150000');
      assert.ok(await target.isVisible());
      assert.match(await page.locator('.file-meta').innerText(), /^200,000 lines · TypeScript/);
      const drawn = await page.locator('.cm-line').count();
      assert.ok(drawn > 10 && drawn < 2_000, `${drawn} lines in the page`);
      // A jump by the address lands again, far away.
      await page.evaluate("location.hash = '#L12'");
      await page.locator('.cm-line.cm-target[data-line="12"]').waitFor();
      await page.waitForSelector('main[data-landed-line="12"][data-landed-at]');
      assert.equal(await page.locator('.cm-line', { hasText: '// line 150000' }).count(), 0, 'line 150,000 is no longer drawn');
    } finally {
      await page.context().close();
    }
  });

  test('exact match ranges and #L ranges are marked; shift-click extends the range; Ctrl-F searches', async () => {
    const page = await newPage();
    try {
      await page.goto(`${d.url}/shop/-/blob/main/lib/cart.ts?hl=6:3-6:16,8:18-8:28#L6-L8`);
      await page.waitForSelector('main[data-landed-at]');
      assert.deepEqual(await page.locator('.cm-match').allInnerTexts(), ['checkoutTotal', 'computeFee']);
      assert.deepEqual(await page.locator('.cm-line.cm-target').evaluateAll((ls) => ls.map((l) => l.getAttribute('data-line'))), ['6', '7', '8']);
      assert.deepEqual(await page.locator('.cm-line.cm-hit').evaluateAll((ls) => ls.map((l) => l.getAttribute('data-line'))), ['6', '8']);
      await page.locator('.cm-line-links a[href="#L10"]').click({ modifiers: ['Shift'] });
      await page.locator('.cm-line.cm-target[data-line="10"]').waitFor();
      assert.equal(await page.evaluate('location.hash'), '#L6-L10');
      assert.equal(await page.locator('.cm-line.cm-target').count(), 5);
      // A plain click on a number is a link to that line.
      await page.locator('.cm-line-links a[href="#L2"]').click();
      await page.locator('.cm-line.cm-target[data-line="2"]').waitFor();
      assert.equal(await page.locator('.cm-line.cm-target').count(), 1);
      // CodeMirror's search: the browser's cannot see lines that are not drawn.
      await page.locator('.cm-content').focus();
      await page.keyboard.press('Control+f');
      await page.locator('.cm-search input[name="search"]').waitFor();
    } finally {
      await page.context().close();
    }
  });

  test('grammars load on demand: the file page fetches one, the search page none of its chunks', async () => {
    const page = await newPage();
    try {
      const fetched: string[] = [];
      page.on('request', (r) => {
        if (r.url().includes('/-/static/') && r.url().endsWith('.js')) fetched.push(new URL(r.url()).pathname);
      });
      await page.goto(`${d.url}/?q=checkoutTotal`);
      await page.waitForSelector('details.stats');
      const searchScripts = new Set(fetched);
      await page.locator('.result .path').first().click();
      await page.waitForSelector('main[data-language="typescript"]');
      const more = fetched.filter((u) => !searchScripts.has(u));
      assert.ok(more.length >= 2, `the file page loads the viewer and the grammar (${more.join(', ')})`);
      assert.ok(searchScripts.size < fetched.length, 'the search page did not load them');
    } finally {
      await page.context().close();
    }
  });
});

describe('code navigation', () => {
  test('go to definition opens the one definition, in another repository', async () => {
    const page = await newPage();
    try {
      await page.goto(`${d.url}/shop/-/blob/main/lib/cart.ts`);
      await page.waitForSelector('main[data-language="typescript"]');
      await page
        .locator('.cm-line', { hasText: 'return sum + computeFee(sum);' })
        .locator('span', { hasText: /^computeFee$/ })
        .click();
      await page.locator('#nav-menu button', { hasText: 'Go to definition' }).click();
      await page.waitForURL(/\/billing\/-\/blob\/main\/src\/fee\.ts/);
      await page.waitForSelector('main[data-landed-at]');
      assert.equal(new URL(page.url()).hash, '#L1');
      assert.deepEqual(await page.locator('.cm-match').allInnerTexts(), ['computeFee']);
    } finally {
      await page.context().close();
    }
  });

  test('navigation works on the file view at any ref (a commit id)', async () => {
    const page = await newPage();
    try {
      await page.goto(`${d.url}/shop/-/blob/${shopCommit}/lib/cart.ts`);
      await page.waitForSelector('main[data-language="typescript"]');
      await page
        .locator('.cm-line', { hasText: 'return sum + computeFee(sum);' })
        .locator('span', { hasText: /^computeFee$/ })
        .click();
      await page.locator('#nav-menu button', { hasText: 'Find references' }).click();
      await page.locator('#nav-panel .nav-files').waitFor();
      assert.match(await page.locator('#nav-panel [role="status"]').innerText(), /^5 references in 3 files, from the indexed branches/);
      // A keyword is not a name: clicking it offers nothing.
      await page.locator('.cm-line', { hasText: 'return sum + computeFee(sum);' }).locator('.tok-keyword', { hasText: 'return' }).click();
      assert.equal(await page.locator('#nav-menu').count(), 0);
    } finally {
      await page.context().close();
    }
  });

  test('find references lists every repository in the side panel, this one first; Escape closes the menu', async () => {
    const page = await newPage();
    try {
      await page.goto(`${d.url}/shop/-/blob/main/lib/cart.ts`);
      await page.waitForSelector('main[data-language="typescript"]');
      const name = page.locator('.cm-line', { hasText: 'return sum + computeFee(sum);' }).locator('span', { hasText: /^computeFee$/ });
      await name.click();
      await page.locator('#nav-menu').waitFor();
      await page.keyboard.press('Escape');
      await page.locator('#nav-menu').waitFor({ state: 'detached' });
      await name.click();
      await page.locator('#nav-menu button', { hasText: 'Find references' }).click();
      await page.locator('#nav-panel .nav-files').waitFor();
      assert.ok(await page.locator('.outline').isHidden(), "the panel takes the outline's place");
      const files = await page.locator('#nav-panel .nav-file').allInnerTexts();
      assert.equal(files[0], 'shop lib/cart.ts', files.join(' | '));
      assert.ok(files.includes('billing src/fee.ts') && files.includes('billing src/use.ts'), files.join(' | '));
      assert.match(await page.locator('#nav-panel [role="status"]').innerText(), /^5 references in 3 files/);
      // A reference in another file opens it at the line, the name marked.
      await page.locator('#nav-panel a', { hasText: 'sample = computeFee(100)' }).click();
      await page.waitForURL(/\/billing\/-\/blob\/main\/src\/use\.ts.*#L2$/);
      await page.waitForSelector('main[data-landed-at]');
      assert.deepEqual(await page.locator('.cm-match').allInnerTexts(), ['computeFee']);
      // Closing the panel brings the outline back.
      await page.goBack();
      await page.waitForSelector('main[data-language="typescript"]');
      await name.click();
      await page.locator('#nav-menu button', { hasText: 'Find references' }).click();
      await page.locator('#nav-panel .nav-files').waitFor();
      await page.locator('#nav-panel button[aria-label="Close the panel"]').click();
      assert.ok(await page.locator('.outline').isVisible());
      assert.ok(await page.locator('#nav-panel').isHidden());
    } finally {
      await page.context().close();
    }
  });
});
