// The web UI's time to the first result (`--web`), asked on every release: headless Chromium (browser.ts) opens `/?q=<query>` for each query of the mix
// against `trawl serve` over the bench's data dir (no configuration: anonymous access) and
// reads what the page records (web/app/search-page.ts): when the frame that shows the first
// result started, and when the final message arrived, both in ms since navigation began,
// so they include the shell, the script, the session check, the streamed request and the
// rendering. Assets are cached after a warm-up load, as for a returning user; each page
// load is a new tab.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { load, mark } from './load.ts';
import { withServeAndBrowser } from './serve-browser.ts';
import { median } from './percentiles.ts';
import type { BenchQuery } from './queries.ts';
import type { WebPhase, WebQuery } from './result.ts';

export interface WebPhaseOptions {
  root: string;
  dataDir: string;
  work: string;
  runs: number;
}

const PAGE_TIMEOUT_MS = 60_000;

export async function webPhase(o: WebPhaseOptions, queries: BenchQuery[], log: (s: string) => void): Promise<WebPhase> {
  const cwd = join(o.work, 'web');
  mkdirSync(cwd, { recursive: true });
  return withServeAndBrowser(o.root, ['--data-dir', o.dataDir], cwd, async (server, browser) => {
    const chromium = browser.version();
    log(`web     Chromium ${chromium} against trawl serve at ${server.url}`);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    // Warm-up: the assets into the cache, the shards into memory.
    const warm = await context.newPage();
    await warm.goto(`${server.url}/?q=${encodeURIComponent(queries[0]!.query)}`);
    await warm.waitForSelector('details.stats', { timeout: PAGE_TIMEOUT_MS });
    await warm.close();
    const from = mark([server]);
    const results: WebQuery[] = [];
    for (const q of queries) {
      const row: WebQuery = { name: q.name, query: q.query, firstResultMsSamples: [], doneMsSamples: [], files: 0 };
      const params = new URLSearchParams({ q: q.query });
      if (q.regex) params.set('regex', '1');
      if (q.caseSensitive) params.set('case', '1');
      for (let i = 0; i < o.runs; i++) {
        const page = await context.newPage();
        try {
          await page.goto(`${server.url}/?${params}`);
          await page.waitForSelector('details.stats, #search-notice .error, #query-error p', { timeout: PAGE_TIMEOUT_MS });
          // A string, not a function: the page's CSP forbids what playwright would eval.
          const m = (await page.evaluate(`(() => {
            const list = document.getElementById('results');
            return { first: list.dataset.firstResultAt, done: list.dataset.doneAt, files: list.children.length };
          })()`)) as { first?: string; done?: string; files: number };
          if (m.done === undefined) throw new Error(`web: ${q.name}: the search did not finish in the page`);
          if (m.first !== undefined) row.firstResultMsSamples.push(Number(m.first));
          row.doneMsSamples.push(Number(m.done));
          row.files = m.files;
        } finally {
          await page.close();
        }
      }
      results.push(row);
      log(
        `web     ${q.name}: first result ${row.firstResultMsSamples.length ? `${median(row.firstResultMsSamples).toFixed(1)} ms` : '— (nothing found)'}, done ${median(row.doneMsSamples).toFixed(1)} ms, ${row.files} files`,
      );
    }
    // The daemon's CPU is subtracted; Chromium's processes are not (they are the client, as
    // autocannon is in the HTTP phase, but run outside this process): an upper bound.
    const cores = load(from, mark([server])).foreignCores;
    const withHits = results.filter((r) => r.firstResultMsSamples.length > 0);
    return {
      chromium,
      runs: o.runs,
      queries: results,
      medianFirstResultMs: withHits.length ? median(withHits.map((r) => median(r.firstResultMsSamples))) : null,
      medianDoneMs: median(results.map((r) => median(r.doneMsSamples))),
      foreignCores: cores,
    };
  });
}
