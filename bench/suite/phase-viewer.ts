// The code viewer on a long file (part of `--web`; alone: `--only viewer`): headless
// Chromium (browser.ts) opens a 200,000-line TypeScript file (big-file.ts) at #L150000 in
// the file view of `trawl serve`, and reads when the page first drew line 150,000 inside
// the viewer's visible part (web/app/file-page.ts data-landed-at, ms since navigation
// began: shell, scripts, the file's 10 MB, CodeMirror's document, the scroll). Then, on
// the open page, a jump to line 1 and back to 150,000 by the address (hashchange to drawn).
// Assets are cached after a warm-up load, as for a returning user; each load is a new tab.
// The file is its own data directory, so the phase needs no corpus index.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { indexLocal } from '../../daemon/sync/local-repos.ts';
import { bigSource } from './big-file.ts';
import { median } from './percentiles.ts';
import { withServeAndBrowser } from './serve-browser.ts';
import type { ViewerPhase } from './result.ts';

export interface ViewerPhaseOptions {
  root: string;
  work: string;
  runs: number;
}

export const VIEWER_LINES = 200_000;
export const VIEWER_TARGET_LINE = 150_000;
const PAGE_TIMEOUT_MS = 60_000;
/** The file is 10.2 MB: over the default limit for an indexed file (2 MiB), as a generated file would be. */
const MAX_FILE_SIZE = 16 * 1024 * 1024;

export async function viewerPhase(o: ViewerPhaseOptions, log: (s: string) => void): Promise<ViewerPhase> {
  const dir = join(o.work, 'viewer');
  const repo = join(dir, 'big');
  mkdirSync(join(repo, 'gen'), { recursive: true });
  const source = bigSource(VIEWER_LINES);
  writeFileSync(join(repo, 'gen', 'big.ts'), source);
  const dataDir = join(dir, 'data');
  await indexLocal(repo, { dataDir, name: 'big', maxFileSize: MAX_FILE_SIZE, symbols: true });
  const config = join(dir, 'trawl.json');
  writeFileSync(config, JSON.stringify({ settings: { anonymousAccess: true, maxFileSize: MAX_FILE_SIZE, symbols: true } }));
  return withServeAndBrowser(o.root, ['--data-dir', dataDir, '--config', config], dir, async (server, browser) => {
    const chromium = browser.version();
    const url = `${server.url}/big/-/blob/HEAD/gen/big.ts`;
    log(`viewer  Chromium ${chromium}: ${VIEWER_LINES.toLocaleString('en-US')} lines (${(source.length / 1e6).toFixed(1)} MB) at ${url}`);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const landed = async (page: import('playwright-core').Page, line: number): Promise<number> => {
      // A string, not a function: the page's CSP forbids what playwright would eval.
      await page.locator(`main[data-landed-line="${line}"][data-landed-at]`).waitFor({ timeout: PAGE_TIMEOUT_MS });
      return Number(await page.getAttribute('main', 'data-landed-at'));
    };
    const warm = await context.newPage();
    await warm.goto(`${url}#L${VIEWER_TARGET_LINE}`);
    await landed(warm, VIEWER_TARGET_LINE);
    await warm.close();
    const openMsSamples: number[] = [];
    const jumpMsSamples: number[] = [];
    let drawnLines = 0;
    for (let i = 0; i < o.runs; i++) {
      const page = await context.newPage();
      try {
        await page.goto(`${url}#L${VIEWER_TARGET_LINE}`);
        openMsSamples.push(await landed(page, VIEWER_TARGET_LINE));
        drawnLines = await page.locator('.cm-line').count();
        for (const line of [1, VIEWER_TARGET_LINE]) {
          const before = Number(await page.evaluate(`(() => { const t = performance.now(); location.hash = '#L${line}'; return t; })()`));
          jumpMsSamples.push((await landed(page, line)) - before);
        }
      } finally {
        await page.close();
      }
    }
    const result: ViewerPhase = {
      chromium,
      lines: VIEWER_LINES,
      bytes: source.length,
      targetLine: VIEWER_TARGET_LINE,
      runs: o.runs,
      openMsSamples,
      jumpMsSamples,
      medianOpenMs: median(openMsSamples),
      medianJumpMs: median(jumpMsSamples),
      drawnLines,
    };
    log(
      `viewer  open at line ${VIEWER_TARGET_LINE.toLocaleString('en-US')}: median ${result.medianOpenMs.toFixed(0)} ms (max ${Math.max(...openMsSamples).toFixed(0)}); jump: median ${result.medianJumpMs.toFixed(0)} ms; ${drawnLines} lines in the page`,
    );
    return result;
  });
}
