// Screenshots of the web UI for the README (docs/web-search.png, docs/web-file.png): indexes
// a corpus into a temporary data directory, starts a daemon on loopback with anonymous
// access, and has headless Chromium (daemon/bench/browser.ts) run a search and open its
// first result. Usage:
//   node --import tsx scripts/web-screenshots.ts [--corpus DIR] [--name NAME] [--query Q] [--out DIR]
// Default corpus: this project's own git repository, under the name "trawl".

import { mkdirSync, rmSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parseConfig } from '../daemon/config/load.ts';
import { startDaemon } from '../daemon/daemon.ts';
import { silentHttpLogger } from '../daemon/http/logging.ts';
import { indexLocal } from '../daemon/sync/local-repos.ts';
import { launchBrowser } from '../daemon/bench/browser.ts';

const { values } = parseArgs({
  options: {
    corpus: { type: 'string', default: '.' },
    name: { type: 'string', default: 'trawl' },
    query: { type: 'string', default: 'ServiceError file:^daemon/http/ lang:typescript' },
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
    await page.screenshot({ path: join(out, 'web-search.png') });
    await page.locator('.result .code-table tr.hit .ln a').first().click();
    await page.waitForSelector('tr.target');
    await page.waitForSelector('.outline li, .outline .status:not(:empty)');
    await page.screenshot({ path: join(out, 'web-file.png') });
    process.stderr.write(`wrote ${join(out, 'web-search.png')} and ${join(out, 'web-file.png')}\n`);
  } finally {
    await browser.close();
    await daemon.close();
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
