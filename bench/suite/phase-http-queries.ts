// Search latency over HTTP, one client: what a user of the API waits for each query of
// the mix, next to the in-process figure of the search phase (the difference is the cost
// of the daemon's request path: HTTP, authentication, validation, shaping, JSON).
//
// A `trawl serve` child over the built data dir (anonymous access, no configuration file);
// one keep-alive connection; an untimed pass over the mix (worker start, shard mapping),
// then for each query the warm-up of the in-process phase (latency.ts, warmUp) and
// `iterations` timed requests in a row, each timed from the request's first byte written
// to the response's last byte read. The
// daemon's CPU over each query's timed requests gives its CPU per request.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { cpuMsBetween, mark, startServer, stopServer, waitHealthy, type Server } from './load.ts';
import { oneConnection, post } from './http-client.ts';
import { requestFor } from './latency.ts';
import { warmUp } from './warm-up.ts';
import { median, summarize } from './percentiles.ts';
import type { BenchQuery } from './queries.ts';
import type { HttpQueriesPhase, HttpQueryResult, Warmup } from './result.ts';

export interface HttpQueriesOptions {
  root: string;
  dataDir: string;
  work: string;
  iterations: number;
  warmup: Warmup;
}

const round4 = (x: number) => Math.round(x * 1e4) / 1e4;

const requestBody = (q: BenchQuery): string => JSON.stringify(requestFor(q));

export async function httpQueriesPhase(o: HttpQueriesOptions, queries: BenchQuery[], log: (s: string) => void): Promise<HttpQueriesPhase> {
  const cwd = join(o.work, 'serve-queries');
  mkdirSync(cwd, { recursive: true });
  let server: Server | undefined;
  const agent = oneConnection();
  try {
    server = await startServer('trawl', [join(o.root, 'bin', 'trawl.js'), 'serve', '--port', '0', '--log-level', 'silent', '--data-dir', o.dataDir], cwd);
    await waitHealthy(server.url);
    const url = new URL('/api/search', server.url);
    for (const q of queries) await post(agent, url, requestBody(q)).catch(() => undefined);
    const results: HttpQueryResult[] = [];
    for (const q of queries) {
      const body = requestBody(q);
      const result: HttpQueryResult = { name: q.name, samplesMs: [], latencyMs: null, serverCpuMsPerRequest: null, error: null };
      results.push(result);
      try {
        await warmUp(o.warmup, async () => {
          const warm = await post(agent, url, body);
          if (warm.status !== 200) throw new Error(`POST /api/search answered ${warm.status}`);
        });
        const from = mark([server]);
        for (let i = 0; i < o.iterations; i++) {
          const r = await post(agent, url, body);
          if (r.status !== 200) throw new Error(`POST /api/search answered ${r.status}`);
          result.samplesMs.push(round4(r.ms));
        }
        const cpu = cpuMsBetween(from, mark([server]), 'trawl');
        result.serverCpuMsPerRequest = cpu === null ? null : round4(cpu / o.iterations);
        result.samplesMs.sort((a, b) => a - b);
        result.latencyMs = summarize(result.samplesMs);
        log(`http    ${q.name}: p50 ${result.latencyMs.p50.toFixed(2)} ms, p99 ${result.latencyMs.p99.toFixed(2)} ms over HTTP`);
      } catch (err) {
        result.error = (err as Error).message;
        log(`http    ${q.name}: ERROR ${result.error}`);
      }
    }
    const p50s = results.flatMap((r) => (r.latencyMs ? [r.latencyMs.p50] : []));
    const all = results.flatMap((r) => r.samplesMs).sort((a, b) => a - b);
    return {
      iterations: o.iterations,
      queries: results,
      medianP50Ms: p50s.length ? median(p50s) : null,
      allSamplesMs: all.length ? summarize(all) : null,
    };
  } finally {
    agent.destroy();
    await stopServer(server);
  }
}
