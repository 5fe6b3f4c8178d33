// The search page shows results in the order the API ranks them, and what the reader is
// looking at does not move as better results stream in (web/app/ranked-list.ts), in
// headless Chromium against a real daemon.
//
// The corpus (test/helpers/rank-corpus.ts) streams in shard order, which is the opposite of
// its rank order: several messages, the last holding the files that rank first. To see what
// the page does with each message, the page talks to the daemon through a loopback proxy
// that holds a stream's messages back and lets the test release them one by one (playwright's
// route.fulfill cannot stream a body).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from '../../bench/suite/browser.ts';
import type { StreamedFile } from '../../daemon/search/types.ts';
import { call, startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { ALPHA_FILES, fileId, OMEGA_FILES, pageRequest, RANK_QUERY, rankRepos } from '../helpers/rank-corpus.ts';
import { newTab } from '../helpers/web.ts';

const MATCHES = 1000;
const TOTAL = ALPHA_FILES + OMEGA_FILES;

/** A stream the proxy holds: the daemon's messages, sent to the page as the test releases them. */
class HeldStream {
  private sent = 0;
  /** The `data:` messages parsed, with their index among all messages (keep-alive comments included). */
  readonly data: Array<{ at: number; type: string; files?: StreamedFile[] }> = [];

  constructor(
    readonly messages: string[],
    private readonly res: ServerResponse,
  ) {
    messages.forEach((m, at) => {
      if (m.startsWith('data: {')) this.data.push({ at, ...(JSON.parse(m.slice(6)) as { type: string; files?: StreamedFile[] }) });
    });
  }

  /** Sends the messages before `end` (all that are left when undefined). */
  release(end = this.messages.length): void {
    while (this.sent < end) this.res.write(this.messages[this.sent++]!);
    if (this.sent === this.messages.length) this.res.end();
  }
}

/** Request headers not to pass on (the proxy's own connection's, and the body's encoding, which fetch redoes). */
const HOP_REQUEST = new Set(['host', 'connection', 'keep-alive', 'content-length', 'transfer-encoding', 'accept-encoding']);
/** Response headers not to pass on: fetch has decoded the body, and the proxy frames it itself. */
const HOP_RESPONSE = new Set(['connection', 'keep-alive', 'content-length', 'transfer-encoding', 'content-encoding', 'set-cookie']);

/** A loopback proxy to the daemon that holds each POST /api/stream_search's messages back (HeldStream). */
class HoldingProxy {
  readonly server: Server;
  private readonly streams: HeldStream[] = [];
  private waiting: ((s: HeldStream) => void) | undefined;

  constructor(private readonly target: string) {
    this.server = createServer((req, res) => {
      res.on('error', () => {}); // the page left (a new search, a closed page): nothing to tell
      this.handle(req, res).catch((err: unknown) => res.destroy(err as Error));
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  /** The next stream the page asks for, once the daemon has sent all of it. */
  nextStream(): Promise<HeldStream> {
    const s = this.streams.shift();
    return s ? Promise.resolve(s) : new Promise((resolve) => (this.waiting = resolve));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body: Buffer[] = [];
    for await (const c of req) body.push(c as Buffer);
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !HOP_REQUEST.has(k)) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
    const up = await fetch(`${this.target}${req.url}`, {
      method: req.method!,
      headers,
      body: body.length > 0 ? Buffer.concat(body) : null,
      redirect: 'manual',
    });
    const out: Record<string, string | string[]> = {};
    up.headers.forEach((v, k) => {
      if (!HOP_RESPONSE.has(k)) out[k] = v;
    });
    const cookies = up.headers.getSetCookie();
    if (cookies.length > 0) out['set-cookie'] = cookies;
    const text = Buffer.from(await up.arrayBuffer());
    if (req.url !== '/api/stream_search' || up.status !== 200) {
      res.writeHead(up.status, out).end(text);
      return;
    }
    res.writeHead(200, out).flushHeaders();
    // Each message is a line and a blank line (docs/http-api.md section 12).
    const held = new HeldStream(text.toString('utf8').split(/(?<=\n\n)/), res);
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting) waiting(held);
    else this.streams.push(held);
  }
}

let browser: Browser;
let d: TestDaemon;
let proxy: HoldingProxy;
let base: string;
/** POST /api/search's files for the page's request, in its order. */
let ranked: string[];

before(async () => {
  browser = await launchBrowser();
  d = await startTestDaemon({ extraRepos: rankRepos });
  proxy = new HoldingProxy(d.url);
  base = await proxy.listen();
  const r = await call(`${d.url}/api/search`, { json: pageRequest(RANK_QUERY, MATCHES) });
  assert.equal(r.status, 200);
  assert.equal(r.json.isSearchExhaustive, true, 'the stream holds the same files as /api/search');
  ranked = (r.json.files as StreamedFile[]).map(fileId);
  assert.equal(ranked.length, TOTAL);
});
after(async () => {
  await proxy?.close();
  await d?.cleanup();
  await browser?.close();
});

const newPage = () => newTab(browser);

/** The results on the page, in display order, as `repository/path`. */
function shown(page: Page): Promise<string[]> {
  // A string: the page's CSP forbids what playwright would eval for a function.
  return page.evaluate(
    `[...document.querySelectorAll('#results > li')].map((li) => li.querySelector('.repo').textContent + '/' + li.querySelector('.path').textContent)`,
  ) as Promise<string[]>;
}

/** Waits until the page shows `n` results. */
async function showing(page: Page, n: number): Promise<void> {
  await page
    .locator('#results > li')
    .nth(n - 1)
    .waitFor({ state: 'attached' });
  assert.equal(await page.locator('#results > li').count(), n);
}

/**
 * The held stream's messages split where the files that rank first begin: `early` ends
 * before the first message holding one of the top OMEGA_FILES files of the ranking.
 */
function splitAtBest(s: HeldStream): { early: number; earlyFiles: string[]; lateFiles: string[] } {
  const best = new Set(ranked.slice(0, OMEGA_FILES));
  const chunks = s.data.filter((m) => m.type === 'chunk');
  const first = chunks.find((m) => m.files!.some((f) => best.has(fileId(f))))!;
  const earlyFiles = chunks.filter((m) => m.at < first.at).flatMap((m) => m.files!.map(fileId));
  const lateFiles = chunks.filter((m) => m.at >= first.at).flatMap((m) => m.files!.map(fileId));
  return { early: first.at, earlyFiles, lateFiles };
}

describe('search results in rank order', () => {
  test('the stream comes in several messages, out of rank order (else the tests below show nothing)', async () => {
    const page = await newPage();
    try {
      const streamed = proxy.nextStream();
      await page.goto(`${base}/?q=${RANK_QUERY}&matches=${MATCHES}`);
      const s = await streamed;
      s.release();
      const chunks = s.data.filter((m) => m.type === 'chunk');
      assert.ok(chunks.length > 1, `${chunks.length} chunk messages`);
      const order = chunks.flatMap((m) => m.files!.map(fileId));
      assert.deepEqual([...order].sort(), [...ranked].sort(), 'the same files as /api/search');
      assert.notDeepEqual(order, ranked, 'the stream order is not the rank order');
      const { earlyFiles, lateFiles } = splitAtBest(s);
      assert.ok(earlyFiles.length >= 100 && lateFiles.length > 0, `${earlyFiles.length} files before the best ones, ${lateFiles.length} with and after them`);
      await page.waitForSelector('details.stats');
    } finally {
      await page.context().close();
    }
  });

  /** Opens the search and lets through the messages before the best files; resolves once the page shows them. */
  async function openWithEarlyFiles(page: Page) {
    const streamed = proxy.nextStream();
    await page.goto(`${base}/?q=${RANK_QUERY}&matches=${MATCHES}`);
    const s = await streamed;
    const { early, earlyFiles } = splitAtBest(s);
    s.release(early);
    await showing(page, earlyFiles.length);
    return { s, earlyFiles };
  }

  test('the page shows the files in /api/search order, better ones arriving later put first', async () => {
    const page = await newPage();
    try {
      const { s, earlyFiles } = await openWithEarlyFiles(page);
      assert.deepEqual(
        await shown(page),
        ranked.filter((id) => earlyFiles.includes(id)),
        'what has come so far, ranked',
      );
      // The page is at its top: the better results that come now go first, in view.
      s.release();
      await page.waitForSelector('details.stats');
      assert.deepEqual(await shown(page), ranked);
      assert.equal(await page.evaluate('window.scrollY'), 0);
      assert.deepEqual(
        await page.evaluate(`[...document.querySelectorAll('#results > li')].map((li) => li.dataset.index)`),
        ranked.map((_, i) => String(i)),
        'data-index counts the results in display order',
      );
      assert.match(await page.locator('#search-status').innerText(), new RegExp(` in ${TOTAL} files$`));
      assert.notEqual(
        await page.evaluate('document.getElementById("results").dataset.firstResultAt'),
        undefined,
        'the bench reads when the first result was drawn',
      );
      // Keyboard moves follow the display order: ↓ from the box is the best file.
      await page.focus('#q');
      await page.keyboard.press('ArrowDown');
      assert.equal(
        await page.evaluate(`document.activeElement.closest('li').querySelector('.repo').textContent + '/' + document.activeElement.textContent`),
        ranked[0],
      );
      await page.keyboard.press('ArrowDown');
      assert.equal(await page.evaluate(`document.activeElement.closest('li').dataset.index`), '1');
    } finally {
      await page.context().close();
    }
  });

  test('a result the reader scrolled to stays where it is on screen while better ones are inserted above it', async () => {
    const page = await newPage();
    try {
      const { s } = await openWithEarlyFiles(page);
      // The reader scrolls down to a result in the middle of those shown and reads it.
      const anchor = (await shown(page))[60]!;
      await page.evaluate(`document.querySelectorAll('#results > li')[60].scrollIntoView({ block: 'center' })`);
      const where = `(() => {
        const li = [...document.querySelectorAll('#results > li')].find((li) => li.querySelector('.repo').textContent + '/' + li.querySelector('.path').textContent === ${JSON.stringify(anchor)});
        return { top: li.getBoundingClientRect().top, index: Number(li.dataset.index), scrollY: window.scrollY };
      })()`;
      const before = (await page.evaluate(where)) as { top: number; index: number; scrollY: number };
      assert.ok(before.scrollY > 0 && before.top > 0 && before.top < 800, `the result is on screen, the page scrolled (${JSON.stringify(before)})`);

      s.release();
      await page.waitForSelector('details.stats');
      assert.deepEqual(await shown(page), ranked);
      const after = (await page.evaluate(where)) as { top: number; index: number; scrollY: number };
      // Results were inserted above it (else nothing could have moved it)...
      assert.ok(after.index > before.index, `its index went from ${before.index} to ${after.index}`);
      assert.ok(after.scrollY > before.scrollY, 'the page scrolled by what was inserted above');
      // ...and it did not move on screen.
      assert.ok(Math.abs(after.top - before.top) <= 1, `it stayed at y=${before.top} (now ${after.top})`);
    } finally {
      await page.context().close();
    }
  });
});
