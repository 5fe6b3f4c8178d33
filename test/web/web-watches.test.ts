// Watches in the web UI. In Node: the page's event-stream reader (web/app/sse.ts) with
// ids, event names, comments and events split across reads, and the "Watch this query"
// address (web/app/watch-link.ts). End to end in headless Chromium against a real daemon on
// loopback without anonymous access: a member searches, follows "Watch this query" to the
// settings page's form, filled in with the query and its flags; a URL the server refuses
// shows its message; the watch is made with a URL and its signing secret is shown once,
// and a change POSTed there carries that secret's signature; the watch's changes, open,
// show a line committed and indexed while the page is open (over the stream), linked to
// the file view, and then its removal; deleted after a confirmation, it is gone. axe-core
// audits the section with the secret and with the changes shown.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from '../../bench/suite/browser.ts';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { sseEvents, sseMessages } from '../../web/app/sse.ts';
import { draftFromUrl, watchUrl } from '../../web/app/watch-link.ts';
import { call, startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { newUserKey } from '../helpers/cli-users.ts';
import type { TestRepo } from '../helpers/git.ts';
import { until } from '../helpers/haystack.ts';
import { activeId, activeIdOnce, newTab, signInWith } from '../helpers/web.ts';
import { hookReceiver } from '../helpers/hook-receiver.ts';

/** A body that arrives in the given pieces. */
function body(pieces: string[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(c) {
      for (const p of pieces) c.enqueue(enc.encode(p));
      c.close();
    },
  });
}

async function all<T>(gen: AsyncGenerator<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of gen) out.push(x);
  return out;
}

test('sseEvents: names, ids, comments, multi-line data and events split across reads', async () => {
  const signal = new AbortController().signal;
  const events = await all(
    sseEvents(
      body([': watching\n\n', 'id: 7\nevent: watch.ma', 'tches\ndata: {"a":', '1}\r\n\r\n', ': keep-alive\n\ndata: x\ndata: y\n\n', 'retry: 5\n\n']),
      signal,
    ),
  );
  assert.deepEqual(events, [
    { event: 'watch.matches', id: '7', data: '{"a":1}' },
    // The id carries over; the event name does not.
    { event: 'message', id: '7', data: 'x\ny' },
  ]);
  // The search stream's reader, on top of it: JSON messages up to [DONE].
  assert.deepEqual(await all(sseMessages(body(['data: {"type":"chunk"}\n\n', 'data: [DONE]\n\n', 'data: {"late":1}\n\n']), signal)), [{ type: 'chunk' }]);
});

test('"Watch this query": the address carries the query, its flags and a chosen context, under names of its own', () => {
  const url = watchUrl({ query: ' spin_lock lang:c ', regex: true, caseSensitive: false, context: 'kernel' });
  assert.equal(url, '/settings?watch=context%3Akernel+spin_lock+lang%3Ac&watch-regex=1#watches');
  const u = new URL(url, 'http://x');
  assert.equal(u.searchParams.get('q'), null, "not the header's search box");
  assert.deepEqual(draftFromUrl(u), { name: 'context:kernel spin_lock lang:c', query: 'context:kernel spin_lock lang:c', regex: true, caseSensitive: false });
  // A query naming its context keeps it; the selector's is not added.
  assert.match(watchUrl({ query: 'context:a x', regex: false, caseSensitive: true, context: 'b' }), /^\/settings\?watch=context%3Aa\+x&watch-case=1#watches$/);
  assert.equal(draftFromUrl(new URL('http://x/settings')), undefined);
  assert.equal(draftFromUrl(new URL('http://x/settings?watch=%20')), undefined);
  assert.equal(
    draftFromUrl(new URL(`http://x/settings?watch=${'é'.repeat(150)}`))!.name,
    'é'.repeat(100),
    'the name starts as the query, cut to 100 characters',
  );
});

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe's serious and critical findings on the page as it is now. */
async function audit(page: Page): Promise<string[]> {
  await page.addScriptTag({ content: AXE });
  const found = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)`)) as Array<{
    id: string;
    impact: string | null;
    nodes: Array<{ html: string }>;
  }>;
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => n.html).join(' | ')}`);
}

describe('watches in the page', () => {
  let browser: Browser;
  let d: TestDaemon;
  let notes: TestRepo;
  before(async () => {
    browser = await launchBrowser();
    d = await startTestDaemon({
      secret: false,
      settings: { anonymousAccess: false, watches: { allowPrivateUrls: true, retryBaseMs: 50, retryMaxMs: 200 } },
      extraRepos: [
        {
          name: 'notes',
          build(repo) {
            notes = repo;
            repo.commit({ 'todo.md': '# todo\n\nnothing yet\n' });
          },
        },
      ],
    });
  });
  after(async () => {
    await browser?.close();
    await d?.cleanup();
  });

  test('a watch made from a search in the page: its secret once, a change streamed in and linked, its removal, then deleted', async () => {
    const key = await newUserKey('wanda@example.com', ['--data-dir', d.dataDir]);
    const hook = await hookReceiver();
    const page = await newTab(browser, { bypassCSP: true });
    const reindex = () => indexLocal(notes.path, { dataDir: d.dataDir, symbols: false });
    try {
      await page.goto(`${d.url}/?q=${encodeURIComponent('webwatch_marker')}&case=1`);
      await signInWith(page, key);
      await page.locator('#search-status', { hasText: 'No results.' }).waitFor();
      await page.click('#watch-query');
      await page.waitForURL(/\/settings\?watch=webwatch_marker&watch-case=1#watches$/);
      await page.locator('#watch-create-title', { hasText: 'Watch this query' }).waitFor();
      assert.equal(await page.inputValue('#watch-query'), 'webwatch_marker');
      assert.equal(await page.inputValue('#watch-name'), 'webwatch_marker');
      assert.equal(await page.isChecked('#watch-case'), true);
      assert.equal(await page.isChecked('#watch-regex'), false);
      assert.equal(await activeIdOnce(page, 'watch-name'), 'watch-name', 'focus lands on the name');
      assert.equal(await page.inputValue('#q'), '', "the header's search box is not filled");
      await page.locator('#watches-none').waitFor();

      // The server's refusal, as the page shows API errors.
      await page.fill('#watch-name', 'markers');
      await page.fill('#watch-url', 'ftp://example.com/');
      await page.press('#watch-name', 'Enter');
      await page.locator('#watch-create-error', { hasText: 'The watch could not be created: url must be http or https, got ftp' }).waitFor();
      assert.equal(await page.getAttribute('#watch-create-error', 'role'), 'alert');

      await page.fill('#watch-url', hook.url);
      await page.click('.watch-create button[type=submit]');
      await page.locator('#watch-secret-value').waitFor();
      const secret = await page.inputValue('#watch-secret-value');
      assert.match(secret, /^whsec_/);
      assert.equal(await activeId(page), 'watch-secret-value');
      assert.match(await page.locator('#watch-secret-note').innerText(), /will not be shown again/);
      assert.ok(!page.url().includes('watch='), 'the address no longer asks for a new watch');
      const row = page.locator('#watches-table tbody tr', { hasText: 'markers' });
      await row.waitFor();
      assert.deepEqual(await page.locator('#watches-table thead th').allInnerTexts(), [
        'Name',
        'Query',
        'URL',
        'Delivered',
        'Dead letters',
        'Last changed',
        'Actions',
      ]);
      assert.match(await row.innerText(), /webwatch_marker \(case-sensitive\)/);

      await row.locator('button.show-changes').click();
      await page.locator('#watch-events-none').waitFor();
      await page.locator('#watch-changes-status', { hasText: 'Live' }).waitFor();
      assert.equal(await row.locator('button.show-changes').getAttribute('aria-expanded'), 'true');

      // A line committed and indexed while the page is open: streamed in.
      const added = notes.commit({ 'todo.md': '# todo\n\nnothing yet\nwebwatch_marker: ship it\n' });
      await reindex();
      const first = page.locator('#watch-events li.watch-event').first();
      await first.locator('tr.add', { hasText: 'webwatch_marker: ship it' }).waitFor();
      assert.equal(await page.locator('#watch-events-none').count(), 0);
      assert.equal(await first.locator('tr.add a').getAttribute('href'), `/notes/-/blob/${added}/todo.md?hl=4#L4`);
      assert.equal(await first.locator('a.sha').getAttribute('href'), `/notes/-/commit/${added}`);
      await page.locator('#watch-changes-status', { hasText: 'A new change in notes: 1 added, 0 removed.' }).waitFor();
      await row.locator('td.watch-last time').waitFor();
      // The change POSTed to the URL is signed with the secret the page showed.
      await until('the change POSTed', () => hook.got.length >= 1, 20_000);
      assert.equal(hook.got[0]!.headers['x-trawl-signature-256'], `sha256=${createHmac('sha256', secret).update(hook.got[0]!.body).digest('hex')}`);

      // The line goes: its removal arrives on top, linked to the file's history.
      const removed = notes.commit({ 'todo.md': '# todo\n\nnothing yet\n' });
      await reindex();
      await page.locator('#watch-events li.watch-event').nth(1).waitFor();
      const newest = page.locator('#watch-events li.watch-event').first();
      assert.equal(await newest.locator('tr.del a').getAttribute('href'), `/notes/-/commits/${removed}/todo.md`);
      assert.match(await newest.locator('tr.del').innerText(), /webwatch_marker: ship it/);
      assert.deepEqual(await audit(page), [], 'the watches, a new secret and the changes shown');
      await page.click('#watch-secret-done');
      assert.equal(await page.locator('#watch-secret-value').count(), 0);
      assert.ok(!(await page.content()).includes(secret), 'once done, the secret is gone from the page');

      // Opened again (a new page), the changes are read from the list, newest first, with how their POSTs went.
      await until(
        'both delivered',
        async () => (await call(`${d.url}/api/watches`, { headers: { authorization: `Bearer ${key}` } })).json[0].delivered === 2,
        20_000,
      );
      await page.goto(`${d.url}/settings`);
      await row.locator('td.watch-delivered', { hasText: '2' }).waitFor();
      await row.locator('button.show-changes').click();
      await page.locator('#watch-events li.watch-event').nth(1).waitFor();
      assert.match(await page.locator('#watch-events li.watch-event').first().innerText(), /−1[\s\S]*delivered \(1 attempt\)/);
      assert.equal(await page.locator('#watch-events li.watch-event').first().locator('tr.del').count(), 1);

      // Deleted after a confirmation: the row, its changes and the watch are gone.
      await row.locator('button.delete-watch').click();
      await page.waitForSelector('dialog#confirm[open]');
      assert.match(await page.locator('#confirm-title').innerText(), /Delete the watch “markers”\?/);
      await page.click('#confirm-yes');
      await page.locator('#watches-none').waitFor();
      assert.equal(await page.locator('#watch-changes').count(), 0, 'its changes are closed');
      assert.match(await page.locator('#watches-status').innerText(), /The watch “markers” is deleted/);
      assert.deepEqual((await call(`${d.url}/api/watches`, { headers: { authorization: `Bearer ${key}` } })).json, []);
    } finally {
      await page.context().close();
      await hook.close();
    }
  });
});
