// The web UI end to end, in headless Chromium against a real daemon on loopback: type a
// query, watch the results stream in from /api/stream_search, open a result and land on
// its highlighted line; a bad query shows the parser's error under the box; a search
// stopped at its match limit says so; the keyboard works; and, without anonymous access,
// the sign-in dialog turns an API key into a browser session whose requests are not
// counted against the rate limit.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { keysCommand, usersCommand } from '../../daemon/cli/users-command.ts';
import { launchBrowser } from '../../bench/suite/browser.ts';
import { call, startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { activeId, activeText, newTab, signInWith } from '../helpers/web.ts';

/** A TypeScript file whose match is far down, so landing on it needs a scroll. */
function cartSource(): string {
  const lines = ['// A shopping cart.', 'export interface Item {', '  sku: string;', '  price: number;', '}', ''];
  for (let i = 0; i < 60; i++) lines.push(`const filler${i} = ${i}; // padding so the match is below the fold`);
  lines.push(
    'export class Cart {',
    '  private items: Item[] = [];',
    '  checkoutTotal(): number {',
    '    return this.items.reduce((n, i) => n + i.price, 0);',
    '  }',
    '}',
    '',
  );
  return lines.join('\n');
}
const CART_MATCH_LINE = 6 + 60 + 3; // "  checkoutTotal(): number {"

const shop = {
  name: 'shop',
  build(repo: import('../helpers/git.ts').TestRepo) {
    repo.commit({ 'lib/cart.ts': cartSource(), 'lib/price.ts': 'export const checkoutFee = 3;\n' }, 'Cart');
  },
};

let browser: Browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
});

/** A new API key of the user, made with the CLI: the key and its id (for revoking it). */
async function createKey(dataDir: string, email: string): Promise<{ key: string; id: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l), now: () => new Date() };
  assert.equal(await keysCommand(['create', '--user', email, '--name', 'browser', '--data-dir', dataDir], io), 0);
  return { key: out.at(-1)!, id: /key (key_[0-9a-f]{24})/.exec(err.at(-1)!)![1]! };
}

const quietIo = { out: () => {}, err: () => {}, now: () => new Date() };

const newPage = () => newTab(browser);

describe('web UI with anonymous access', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startTestDaemon({ extraRepos: [shop] });
  });
  after(async () => {
    await d?.cleanup();
  });

  test('type a query, results stream in, open one and land on the highlighted line', async () => {
    const page = await newPage();
    try {
      await page.goto(`${d.url}/`);
      await page.waitForSelector('#q');
      // "/" focuses the box from anywhere on the page.
      await page.focus('a.logo');
      assert.notEqual(await activeId(page), 'q');
      await page.keyboard.press('/');
      assert.equal(await activeId(page), 'q');
      await page.keyboard.type('checkoutTotal');
      const streamed = page.waitForResponse((r) => r.url().endsWith('/api/stream_search'));
      await page.keyboard.press('Enter');
      const res = await streamed;
      assert.match(res.headers()['content-type'] ?? '', /^text\/event-stream/, 'results come from the streaming endpoint');
      assert.equal(res.headers()['x-ratelimit-limit'], undefined, 'anonymous browser use is not counted');
      await page.waitForSelector('.result');
      assert.equal(new URL(page.url()).search, '?q=checkoutTotal', 'the query is in the address');

      const first = page.locator('.result').first();
      assert.equal(await first.locator('.path').innerText(), 'lib/cart.ts');
      assert.equal(await first.locator('.repo').innerText(), 'shop');
      assert.equal(await first.locator('.branch').innerText(), 'main');
      assert.deepEqual(await first.locator('mark').allInnerTexts(), ['checkoutTotal'], 'the match is highlighted');
      assert.equal(await first.locator('tr.hit .ln').innerText(), String(CART_MATCH_LINE));
      await page.waitForSelector('details.stats');
      assert.match(await page.locator('#search-status').innerText(), /^1 match in 1 file$/);
      assert.match(await page.locator('details.stats summary').innerText(), /candidate files/);
      assert.equal(await page.locator('[data-stat="actualMatchCount"]').textContent(), '1', 'the statistics table (collapsed) holds the real counts');
      assert.equal(await page.locator('#truncated').count(), 0, 'an exhaustive search has no truncation notice');

      // Open the result: the file view at its webUrl, the matched line marked and in view.
      await first.locator('.path').click();
      await page.waitForSelector('.cm-line.cm-target');
      const url = new URL(page.url());
      assert.equal(url.pathname, '/shop/-/blob/main/lib/cart.ts');
      assert.equal(url.hash, `#L${CART_MATCH_LINE}`);
      assert.equal(await page.locator('.cm-line.cm-target').getAttribute('data-line'), String(CART_MATCH_LINE));
      assert.deepEqual(await page.locator('.cm-line.cm-hit').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-line'))), [String(CART_MATCH_LINE)]);
      assert.deepEqual(await page.locator('.cm-match').allInnerTexts(), ['checkoutTotal'], 'the exact match range is marked');
      assert.ok(await page.locator('.cm-line.cm-target').isVisible());
      const box = await page.locator('.cm-line.cm-target').boundingBox();
      assert.ok(box && box.y > 0 && box.y < 800, `the target line is on screen (y=${box?.y})`);
      // Syntax highlighting (once the grammar's chunk has loaded) and line numbers as links.
      await page.waitForSelector('main[data-language="typescript"]');
      await page.locator('.cm-line.cm-target .tok-definition', { hasText: 'checkoutTotal' }).waitFor();
      assert.equal(await page.locator(`.cm-line-links a[href="#L${CART_MATCH_LINE}"]`).innerText(), String(CART_MATCH_LINE));
      // The outline lists the symbols and jumps to them (the whole symbol marked).
      await page.waitForSelector('.outline li a');
      const outline = await page.locator('.outline li').allInnerTexts();
      assert.ok(outline.some((s) => s.includes('Cart')) && outline.some((s) => s.includes('checkoutTotal')), outline.join(' | '));
      await page.locator('.outline a', { hasText: 'Item' }).first().click();
      await page.locator('.cm-line.cm-target[data-line="2"]').waitFor();
      assert.match(String(await page.evaluate('location.hash')), /^#L2(-L5)?$/);
      assert.ok((await page.locator('.cm-line.cm-target').count()) >= 1);
      // Back at the top, the first lines are drawn (only lines in view are).
      assert.equal(await page.locator('.cm-line[data-line="2"] .tok-keyword').first().innerText(), 'export');
      assert.equal(await page.locator('.cm-line').first().locator('.tok-comment').innerText(), '// A shopping cart.');
      assert.equal(await page.locator('.cm-line-links a[href="#L1"]').innerText(), '1');

      // Blame and history of the file.
      await page.locator('.tabs a', { hasText: 'Blame' }).click();
      await page.waitForSelector('td.blame.start a');
      assert.match(await page.locator('td.blame.start').first().innerText(), /Cart/);
      await page.locator('.tabs a', { hasText: 'History' }).click();
      await page.waitForSelector('.commits li');
      assert.equal(await page.locator('.commits li').count(), 1);
      assert.match(await page.locator('.commits .msg').innerText(), /^Cart$/);
    } finally {
      await page.context().close();
    }
  });

  test("a bad query shows the parser's error inline", async () => {
    const page = await newPage();
    try {
      await page.goto(`${d.url}/`);
      await page.fill('#q', 'case:yes widget case:no');
      await page.press('#q', 'Enter');
      await page.waitForSelector('#query-error p');
      const message = await page.locator('#query-error p').innerText();
      assert.match(message, /conflicting case:yes at column 1 and case:no at column 17/);
      assert.equal(await page.getAttribute('#q', 'aria-invalid'), 'true');
      assert.equal(await page.locator('#query-error .caret-at').innerText(), 'c', 'the caret sits under column 1');
      assert.equal(await page.locator('.result').count(), 0);
      // A regex that does not compile, with the regex toggle on.
      await page.fill('#q', 'widget(');
      await page.check('#opt-regex');
      await page.locator('#query-error', { hasText: /invalid regular expression/ }).waitFor();
      // Typing clears the error.
      await page.fill('#q', 'widget');
      assert.equal(await page.getAttribute('#q', 'aria-invalid'), null);
    } finally {
      await page.context().close();
    }
  });

  test('a search stopped at its match limit says the results are truncated', async () => {
    const page = await newPage();
    try {
      await page.goto(`${d.url}/?q=widget&matches=1`);
      await page.waitForSelector('#truncated');
      const notice = await page.locator('#truncated').innerText();
      assert.match(notice, /Results are truncated: the search stopped at the limit of 1 matches/);
      assert.equal(await page.locator('.result').count(), 1);
      const more = page.locator('#truncated a');
      assert.equal(await more.getAttribute('href'), '/?q=widget&matches=10');
      // Links are plain links (full page loads): wait for the new page before looking, or
      // the old page's statistics would answer.
      await Promise.all([page.waitForURL(/matches=10$/), more.click()]);
      await page.waitForSelector('details.stats');
      assert.ok((await page.locator('.result').count()) > 1);
      assert.equal(await page.locator('#truncated').count(), 0, 'ten matches are enough for all of them');
    } finally {
      await page.context().close();
    }
  });

  test('arrows move through results and Enter opens one; back returns to the search', async () => {
    const page = await newPage();
    try {
      await page.goto(`${d.url}/?q=widget_count`);
      await page.waitForSelector('details.stats');
      const paths = await page.locator('.result .path').allInnerTexts();
      assert.ok(paths.length >= 2, paths.join(', '));
      await page.focus('#q');
      await page.keyboard.press('ArrowDown');
      assert.equal(await activeText(page), paths[0]);
      await page.keyboard.press('ArrowDown');
      assert.equal(await activeText(page), paths[1]);
      await page.keyboard.press('ArrowUp');
      await page.keyboard.press('ArrowUp');
      assert.equal(await activeId(page), 'q', 'up from the first result is the box');
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('Enter');
      await page.waitForSelector('.cm-line.cm-target');
      assert.ok(page.url().includes(`/-/blob/main/${paths[0]}`), page.url());
      await page.goBack();
      await page.waitForSelector('.result');
      assert.equal(await page.inputValue('#q'), 'widget_count');
    } finally {
      await page.context().close();
    }
  });

  test('the repository page, a folder, and a path that is not a page', async () => {
    const page = await newPage();
    try {
      await page.goto(`${d.url}/widgets`);
      await page.waitForSelector('.tree li');
      assert.deepEqual(await page.locator('.tree li').allInnerTexts(), ['▸src/', '·README.txt', '·logo.bin']);
      await Promise.all([page.waitForURL(/\/-\/tree\/main\/src$/), page.locator('.tree a', { hasText: 'src' }).click()]);
      await page.waitForSelector('.tree li');
      await page.locator('.tree a', { hasText: 'widget.c' }).click();
      await page.waitForSelector('.cm-line');
      assert.match(await page.locator('.cm-line').first().innerText(), /int widget_count\(void\) \{/);
      await page.goto(`${d.url}/widgets/-/blob/main/logo.bin`);
      await page.waitForSelector('.notice');
      assert.match(await page.locator('.notice').innerText(), /^Binary file/);
      assert.equal(await page.locator('.cm-editor').count(), 0);
      // With anonymous access on, signing in is optional: the dialog can be cancelled.
      await page.locator('#account button', { hasText: 'Sign in' }).click();
      await page.waitForSelector('dialog#signin[open]');
      await page.keyboard.press('Escape');
      await page.waitForSelector('dialog#signin', { state: 'detached' });
      await page.locator('#account button', { hasText: 'Sign in' }).click();
      await page.locator('dialog#signin button', { hasText: 'Cancel' }).click();
      await page.waitForSelector('dialog#signin', { state: 'detached' });
      await page.goto(`${d.url}/widgets/-/blob/main/no/such.c`);
      await page.waitForSelector('.notice.error');
      assert.match(await page.locator('.notice.error').innerText(), /no\/such\.c/);
      await page.goto(`${d.url}/widgets/-/bogus/main/x`);
      await page.waitForSelector('h1');
      assert.equal(await page.locator('h1').innerText(), 'Not found');
    } finally {
      await page.context().close();
    }
  });

  test('a signed-in session whose key was revoked falls back to anonymous access without asking', async () => {
    assert.equal(await usersCommand(['add', '--email', 'bo@example.com', '--name', 'Bo', '--data-dir', d.dataDir], quietIo), 0);
    const { key, id } = await createKey(d.dataDir, 'bo@example.com');
    const page = await newPage();
    try {
      await page.goto(`${d.url}/`);
      await page.locator('#account button', { hasText: 'Sign in' }).click();
      await signInWith(page, key);
      await page.locator('#account', { hasText: 'Bo' }).waitFor();
      assert.equal(await keysCommand(['revoke', id, '--data-dir', d.dataDir], quietIo), 0);
      // The search goes out with the stale session and its CSRF token and is refused; the
      // session check drops both cookies and the search is repeated anonymously.
      // The page sends the session check first and the search right after; on a slow
      // machine the check's answer (which drops the cookies) could reach the browser before
      // the search left, and the search would then go out anonymous at once ([200]), a
      // different case. The check is held until the search has left, so this test always
      // exercises the stale-session path it is about.
      const searchLeft = new Promise<void>((resolve) =>
        page.on('request', (r) => {
          if (r.url().endsWith('/api/stream_search')) resolve();
        }),
      );
      await page.route('**/api/session', async (route) => {
        if (route.request().method() === 'GET') await searchLeft;
        await route.continue();
      });
      const answers: number[] = [];
      page.on('response', (r) => {
        if (r.url().endsWith('/api/stream_search')) answers.push(r.status());
      });
      await page.goto(`${d.url}/?q=widget_count`);
      await page.waitForSelector('details.stats');
      assert.ok((await page.locator('.result').count()) > 0);
      assert.deepEqual(answers, [401, 200]);
      assert.equal(await page.locator('dialog#signin').count(), 0, 'nobody is asked for a key');
      await page.locator('#account button', { hasText: 'Sign in' }).waitFor();
      assert.deepEqual(
        (await page.context().cookies()).map((c) => c.name),
        [],
      );
    } finally {
      await page.context().close();
    }
  });

  test('the shell and assets: security headers, caching, gzip, and a 404 for API-style requests', async () => {
    const shell = await call(`${d.url}/some/repo/-/blob/main/x.c`, { headers: { accept: 'text/html' } });
    assert.equal(shell.status, 200);
    assert.match(shell.headers.get('content-security-policy') ?? '', /script-src 'self'/);
    assert.equal(shell.headers.get('x-frame-options'), 'DENY');
    const script = /<script type="module" src="([^"]+)"/.exec(shell.text)![1]!;
    const js = await fetch(`${d.url}${script}`, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(js.status, 200);
    assert.match(js.headers.get('cache-control') ?? '', /immutable/);
    assert.match(js.headers.get('content-type') ?? '', /^text\/javascript/);
    const etag = js.headers.get('etag')!;
    assert.equal((await fetch(`${d.url}${script}`, { headers: { 'if-none-match': etag } })).status, 304);
    assert.equal((await call(`${d.url}/-/static/app.0000.js`)).status, 404);
    const json = await call(`${d.url}/nowhere`, { headers: { accept: 'application/json' } });
    assert.equal(json.status, 404);
    assert.equal(json.json.errorCode, 'NOT_FOUND');
    assert.equal((await call(`${d.url}/api/nowhere`, { headers: { accept: 'text/html' } })).json.errorCode, 'NOT_FOUND', '/api/ is never the shell');
  });
});

describe('web UI sign-in without anonymous access', () => {
  let d: TestDaemon;
  let key: string;
  before(async () => {
    d = await startTestDaemon({ settings: { anonymousAccess: false } });
    assert.equal(await usersCommand(['add', '--email', 'ada@example.com', '--name', 'Ada', '--data-dir', d.dataDir], quietIo), 0);
    assert.equal(await usersCommand(['limit', 'ada@example.com', '2', '--data-dir', d.dataDir], quietIo), 0);
    key = (await createKey(d.dataDir, 'ada@example.com')).key;
  });
  after(async () => {
    await d?.cleanup();
  });

  test('an API key entered once signs the browser session in; its searches are not counted', async () => {
    const page = await newPage();
    try {
      await page.goto(`${d.url}/?q=widget_secret_sauce`);
      await page.waitForSelector('dialog#signin[open]');
      assert.equal(await page.locator('dialog#signin button', { hasText: 'Cancel' }).count(), 0, 'without anonymous access there is nothing to go back to');
      await page.keyboard.press('Escape');
      assert.equal(await page.locator('dialog#signin[open]').count(), 1, 'Escape does not close it');
      assert.equal(await activeId(page), 'signin-key');
      await page.fill('#signin-key', `svk_${'0'.repeat(64)}`);
      await page.press('#signin-key', 'Enter');
      await page.locator('#signin-error', { hasText: /\S/ }).waitFor();
      assert.match(await page.locator('#signin-error').innerText(), /not valid/);
      await page.fill('#signin-key', key);
      await page.press('#signin-key', 'Enter');
      // Signed in, the search in the address runs, and private repositories are visible.
      await page.waitForSelector('details.stats');
      assert.equal(await page.locator('dialog#signin').count(), 0);
      assert.equal(await page.locator('.result .repo').innerText(), 'secret');
      assert.match(await page.locator('#account').innerText(), /Ada/);
      assert.equal(await page.evaluate("document.cookie.includes('trawl_session')"), false, 'the session cookie is HttpOnly');

      // More searches than the daily limit of 2: browser use never counts.
      for (const q of ['widget', 'main', 'return', 'widget_count']) {
        const done = page.waitForResponse((r) => r.url().endsWith('/api/stream_search'));
        await page.fill('#q', q);
        await page.press('#q', 'Enter');
        const r = await done;
        assert.equal(r.status(), 200);
        assert.equal(r.headers()['x-ratelimit-limit'], undefined);
        await page.waitForSelector('details.stats');
      }
      // The key itself still has its whole day: the browser used none of it.
      const api = await call(`${d.url}/api/repos`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(api.status, 200);
      assert.equal(api.headers.get('x-ratelimit-remaining'), '1');

      // The session lasts for the browser session: a reload needs no key. The page reads
      // its CSRF token from the trawl_csrf cookie, so the search in the address goes out
      // at once, before the session check answers (both start in the same task).
      const cookies = await page.context().cookies();
      assert.equal(cookies.find((c) => c.name === 'trawl_session')?.httpOnly, true);
      const csrf = cookies.find((c) => c.name === 'trawl_csrf');
      assert.equal(csrf?.httpOnly, false, 'the page may read the CSRF cookie');
      const order: string[] = [];
      page.on('request', (r) => order.push(`sent ${new URL(r.url()).pathname}`));
      page.on('requestfinished', (r) => order.push(`answered ${new URL(r.url()).pathname}`));
      const reloaded = page.waitForRequest((r) => r.url().endsWith('/api/stream_search'));
      await page.reload();
      assert.equal((await reloaded).headers()['x-csrf-token'], csrf!.value);
      await page.waitForSelector('details.stats');
      assert.equal(await page.locator('dialog#signin').count(), 0);
      assert.ok(order.indexOf('sent /api/stream_search') < order.indexOf('answered /api/session'), order.join(', '));
      // ...and a new browser (context) asks again.
      const other = await newPage();
      try {
        await other.goto(`${d.url}/`);
        await other.waitForSelector('dialog#signin[open]');
      } finally {
        await other.context().close();
      }
      // Signing out ends it.
      await page.locator('#account button', { hasText: 'Sign out' }).click();
      await page.waitForSelector('dialog#signin[open]');
    } finally {
      await page.context().close();
    }
  });

  test('a session whose key was revoked asks for a key again, then runs the search', async () => {
    const shortLived = await createKey(d.dataDir, 'ada@example.com');
    const page = await newPage();
    try {
      await page.goto(`${d.url}/`);
      await signInWith(page, shortLived.key);
      await page.waitForSelector('#account button');
      assert.equal(await keysCommand(['revoke', shortLived.id, '--data-dir', d.dataDir], quietIo), 0);
      // The stale cookies go out with the search, which is refused; the session check drops
      // them, and without anonymous access the dialog asks for a key.
      await page.goto(`${d.url}/?q=widget_secret_sauce`);
      await page.waitForSelector('dialog#signin[open]');
      assert.deepEqual(
        (await page.context().cookies()).map((c) => c.name),
        [],
        'both cookies are dropped',
      );
      await signInWith(page, key);
      // The refused search is repeated with the new session.
      await page.waitForSelector('details.stats');
      assert.equal(await page.locator('.result .repo').innerText(), 'secret');
    } finally {
      await page.context().close();
    }
  });

  test("the session cookie alone is refused without the page's CSRF token", async () => {
    const page = await newPage();
    try {
      await page.goto(`${d.url}/`);
      await signInWith(page, key);
      await page.waitForSelector('#account button');
      // A request made with the cookie but not through the page's API client.
      const status =
        await page.evaluate(`fetch('/api/search', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ query: 'widget', matches: 1 }) })
        .then(async (r) => [r.status, (await r.json()).errorCode])`);
      assert.deepEqual(status, [403, 'INVALID_CSRF_TOKEN']);
    } finally {
      await page.context().close();
    }
  });
});
