// A `trawl serve` child started for a measurement, timed as an operator restarting it
// waits: from the spawn to its "listening on" line, and to GET /readyz answering 200 (every
// repository's shards loaded: http/readiness.ts), polled every READY_POLL_MS.

import { join } from 'node:path';
import { startServer, stopServer, type Server } from './load.ts';

const READY_POLL_MS = 10;

export interface ReadyServer {
  server: Server;
  /** Spawn to the "listening on" line. */
  listeningMs: number;
  /** Spawn to the first 200 from GET /readyz. */
  readyMs: number;
}

export interface ServeOptions {
  root: string;
  dataDir: string;
  /** A configuration file; none: the built-in defaults (anonymous access). */
  config?: string;
  /** An empty working directory of its own (so that no ./trawl.json is picked up). */
  cwd: string;
  /** How long readiness may take before this gives up. */
  timeoutMs?: number;
}

export async function serveUntilReady(o: ServeOptions): Promise<ReadyServer> {
  const args = [
    join(o.root, 'bin', 'trawl.js'),
    'serve',
    '--port',
    '0',
    '--log-level',
    'silent',
    '--data-dir',
    o.dataDir,
    ...(o.config ? ['--config', o.config] : []),
  ];
  const started = performance.now();
  const server = await startServer('trawl', args, o.cwd);
  const listeningMs = performance.now() - started;
  const deadline = started + (o.timeoutMs ?? 600_000);
  let last = '';
  try {
    for (;;) {
      try {
        const r = await fetch(`${server.url}/readyz`);
        last = `${r.status} ${await r.text()}`;
        if (r.status === 200) return { server, listeningMs, readyMs: performance.now() - started };
      } catch (err) {
        last = (err as Error).message;
      }
      if (server.child.exitCode !== null || server.child.signalCode !== null)
        throw new Error(`trawl serve exited before it was ready; stderr:\n${server.stderr()}`);
      if (performance.now() > deadline)
        throw new Error(`GET /readyz did not answer 200 within ${Math.round((o.timeoutMs ?? 600_000) / 1000)} s (last: ${last.slice(0, 300)})`);
      await new Promise((r) => setTimeout(r, READY_POLL_MS));
    }
  } catch (err) {
    await stopServer(server);
    throw err;
  }
}
