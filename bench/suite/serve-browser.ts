// `trawl serve` in a child process and headless Chromium beside it, for the phases that
// drive the web UI (phase-web.ts, phase-viewer.ts): both started, the daemon healthy, and
// both stopped however the phase ends (also when Chromium fails to start).

import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { launchBrowser } from './browser.ts';
import { startServer, stopServer, waitHealthy, type Server } from './load.ts';

/** Runs `trawl serve --port 0 --log-level silent ARGS` in `cwd` (the project at `root`), then `run` with it (its URL, its process for CPU accounting) and a browser. */
export async function withServeAndBrowser<T>(root: string, args: string[], cwd: string, run: (server: Server, browser: Browser) => Promise<T>): Promise<T> {
  const server = await startServer('trawl', [join(root, 'bin', 'trawl.js'), 'serve', '--port', '0', '--log-level', 'silent', ...args], cwd);
  const browser = await launchBrowser().catch(async (err: unknown) => {
    await stopServer(server);
    throw err;
  });
  try {
    await waitHealthy(server.url);
    return await run(server, browser);
  } finally {
    await browser.close();
    await stopServer(server);
  }
}
