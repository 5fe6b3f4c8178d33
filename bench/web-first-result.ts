// Time to the first result on screen in the web UI: headless Chromium (test/helpers/
// browser.ts) opens `/?q=<query>` for each query of a mix against a daemon on loopback and
// reads what the page records (web/app/search-page.ts): when the frame that shows the
// first result started, and when the final message arrived, both in ms since navigation
// began, so they include the shell, the script, the session check, the streamed request
// and the rendering. Assets are cached after the first load, as for a returning user; each
// run is a new tab. Usage:
//   node --import tsx bench/web-first-result.ts [--corpus DIR] [--queries FILE] [--runs N] [--out FILE.json]
// Default: corpus/linux-6.1 (scripts/fetch-linux.sh) with bench/queries/linux.json, 5 runs.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parseConfig } from '../daemon/config/load.ts';
import { startDaemon } from '../daemon/daemon.ts';
import { silentHttpLogger } from '../daemon/http/logging.ts';
import { indexPath } from '../daemon/index/indexer.ts';
import { registerLocal } from '../daemon/sync/local-repos.ts';
import { openStore } from '../daemon/store/open.ts';
import { launchBrowser } from '../test/helpers/browser.ts';
import { environment } from './machine.ts';
import { loadQueries } from './queries.ts';
import { summarize } from './stats.ts';

const ROOT = resolve(import.meta.dirname, '..');
const { values } = parseArgs({
  options: {
    corpus: { type: 'string', default: join(ROOT, 'corpus/linux-6.1') },
    queries: { type: 'string', default: join(ROOT, 'bench/queries/linux.json') },
    runs: { type: 'string', default: '5' },
    out: { type: 'string' },
  },
});
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer, got ${values.runs}`);
const queries = loadQueries(resolve(values.queries!));
const corpus = resolve(values.corpus!);

const tmp = mkdtempSync(join(tmpdir(), 'trawl-web-bench-'));
try {
  const dataDir = join(tmp, 'data');
  const store = openStore(dataDir);
  const t0 = Date.now();
  try {
    await indexPath(corpus, { dataDir, symbols: true, register: registerLocal(store) });
  } finally {
    store.close();
  }
  process.stderr.write(`indexed ${corpus} in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
  const config = parseConfig(JSON.stringify({ settings: { anonymousAccess: true, symbols: true } }), join(tmp, 'trawl.json'));
  const daemon = await startDaemon({ config, dataDir, host: '127.0.0.1', port: 0, logger: silentHttpLogger, sync: false });
  const browser = await launchBrowser();
  const chromium = browser.version();
  const rows: Array<{ name: string; query: string; firstResultMs: number[]; doneMs: number[]; daemonMs: number[]; files: number }> = [];
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    // Warm-up: assets into the cache, shards into memory.
    const warm = await context.newPage();
    await warm.goto(`${daemon.url}/?q=warmup`);
    await warm.waitForSelector('details.stats', { timeout: 60_000 });
    await warm.close();
    for (const q of queries) {
      const row = { name: q.name, query: q.query, firstResultMs: [] as number[], doneMs: [] as number[], daemonMs: [] as number[], files: 0 };
      const params = new URLSearchParams({ q: q.query });
      if (q.regex) params.set('regex', '1');
      if (q.caseSensitive) params.set('case', '1');
      for (let i = 0; i < runs; i++) {
        const page = await context.newPage();
        await page.goto(`${daemon.url}/?${params}`);
        await page.waitForSelector('details.stats, #search-notice .error, #query-error p', { timeout: 60_000 });
        const m = (await page.evaluate(`(() => {
          const list = document.getElementById('results');
          const cell = document.querySelector('[data-stat="duration"]');
          return { first: list.dataset.firstResultAt, done: list.dataset.doneAt, files: list.children.length, durationNs: cell ? cell.dataset.value : null };
        })()`)) as { first?: string; done?: string; files: number; durationNs: string | null };
        if (m.done === undefined) throw new Error(`${q.name}: the search did not finish in the page`);
        if (m.first !== undefined) row.firstResultMs.push(Number(m.first));
        row.doneMs.push(Number(m.done));
        row.files = m.files;
        if (m.durationNs) row.daemonMs.push(Number(m.durationNs) / 1e6);
        await page.close();
      }
      rows.push(row);
      const s = row.firstResultMs.length ? summarize(row.firstResultMs).p50.toFixed(1) : '-';
      process.stderr.write(`${q.name}: first result p50 ${s} ms, done p50 ${summarize(row.doneMs).p50.toFixed(1)} ms, ${row.files} files\n`);
    }
  } finally {
    await browser.close();
    await daemon.close();
  }
  const withHits = rows.filter((r) => r.firstResultMs.length > 0);
  const medianOf = (xs: number[]) => summarize(xs).p50;
  const result = {
    format: 'trawl-web-first-result/1',
    date: new Date().toISOString(),
    environment: { ...environment(ROOT), chromium },
    corpus,
    queries: resolve(values.queries!),
    runs,
    summary: {
      medianFirstResultP50Ms: medianOf(withHits.map((r) => medianOf(r.firstResultMs))),
      medianDoneP50Ms: medianOf(rows.map((r) => medianOf(r.doneMs))),
      medianDaemonP50Ms: medianOf(rows.filter((r) => r.daemonMs.length).map((r) => medianOf(r.daemonMs))),
    },
    rows,
  };
  const text = `${JSON.stringify(result, null, 2)}\n`;
  if (values.out) writeFileSync(values.out, text);
  else process.stdout.write(text);
  process.stderr.write(`median over queries: first result ${result.summary.medianFirstResultP50Ms.toFixed(1)} ms, done ${result.summary.medianDoneP50Ms.toFixed(1)} ms after navigation; daemon ${result.summary.medianDaemonP50Ms.toFixed(1)} ms\n`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
