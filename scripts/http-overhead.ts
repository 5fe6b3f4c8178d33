// `node --import tsx scripts/http-overhead.ts ROOT DATA_DIR KEY [SECONDS] [ROUNDS]`: the
// daemon's CPU per request on cheap requests (bench/suite/http-overhead.ts), anonymous and
// with an API key, plus RssAnon/RssFile idle and under a 16-connection search load, for a
// trawl checkout at ROOT serving DATA_DIR (the key: `trawl keys create`). Run it for two
// checkouts back to back on the same index to compare them: the cost of a change to the
// request path shows as a difference between the two.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { overheadRuns, NO_HIT_QUERY, type OverheadKind } from '../bench/suite/http-overhead.ts';
import { loadRunDetail, startServer, stopServer, waitHealthy } from '../bench/suite/load.ts';
import { sampleRss, sampleRssFor, type RssSample } from '../bench/suite/memory.ts';
import { median } from '../bench/suite/percentiles.ts';

const [root, dataDir, key, secondsArg, roundsArg] = process.argv.slice(2);
if (!root || !dataDir || !key) throw new Error('usage: http-overhead.ts ROOT DATA_DIR KEY [SECONDS] [ROUNDS]');
const seconds = Number(secondsArg ?? 5);
const rounds = Number(roundsArg ?? 3);
const cwd = join(tmpdir(), `trawl-http-overhead-${process.pid}`);
mkdirSync(cwd, { recursive: true });
const config = join(cwd, 'trawl.json');
writeFileSync(config, JSON.stringify({ settings: { anonymousAccess: true, rateLimit: { requestsPerDay: 1_000_000_000, store: 'embedded' } } }));
const auth = { authorization: `Bearer ${key}` };
const noHit = JSON.stringify({ query: NO_HIT_QUERY, matches: 100 });
const kinds: OverheadKind[] = [
  { name: 'version', request: { method: 'GET', path: '/api/version' } },
  { name: 'noHitSearch', request: { method: 'POST', path: '/api/search', body: noHit } },
  { name: 'noHitSearch', request: { method: 'POST', path: '/api/search', body: noHit, headers: auth } },
  { name: 'version', request: { method: 'GET', path: '/api/repos', headers: auth } },
];
const labels = ['GET /api/version', 'POST /api/search no hit, anonymous', 'POST /api/search no hit, API key', 'GET /api/repos, API key'];
const server = await startServer(
  'trawl',
  [join(root, 'bin', 'trawl.js'), 'serve', '--config', config, '--data-dir', dataDir, '--port', '0', '--log-level', 'info'],
  cwd,
);
try {
  await waitHealthy(server.url);
  const out = await overheadRuns(server, kinds, seconds, 16, rounds);
  for (const [i, o] of out.entries()) {
    console.log(
      `${labels[i]!.padEnd(40)} CPU/request ${o.serverCpuMsPerRequest?.toFixed(3)} ms (runs ${o.serverCpuMsPerRequestSamples.join(' ')})  ${Math.round(o.requestsPerSecond)} req/s  p50 ${o.latencyMs?.p50} p99 ${o.latencyMs?.p99} ms  non2xx ${o.non2xx} errors ${o.errors}`,
    );
  }
  const mb = (xs: RssSample[], k: keyof RssSample) => `${Math.round(median(xs.map((x) => x[k])) / 1e6)} MB`;
  const peak = (xs: RssSample[], k: keyof RssSample) => `${Math.round(Math.max(...xs.map((x) => x[k])) / 1e6)} MB`;
  const idle = await sampleRssFor(server.child.pid, 2000);
  console.log(`idle        RssAnon ${mb(idle, 'anon')}  RssFile ${mb(idle, 'file')}  VmRSS ${mb(idle, 'rss')}`);
  for (const [name, body] of [
    ['selective', JSON.stringify({ query: 'ext4_map_blocks', matches: 100 })],
    ['common', JSON.stringify({ query: 'return', matches: 100 })],
  ] as const) {
    const s = sampleRss(server.child.pid);
    const d = await loadRunDetail(
      server,
      [server],
      { method: 'POST', path: '/api/search', body },
      { round: 1, duration: seconds, connections: 16, label: name },
    );
    const load = s.stop();
    console.log(
      `load ${name.padEnd(9)} RssAnon ${mb(load, 'anon')} (peak ${peak(load, 'anon')})  RssFile ${mb(load, 'file')}  ${Math.round(d.run.requestsPerSecond)} req/s p99 ${d.run.latencyMs.p99} ms  CPU ${d.run.serverCpuMsPerRequest} ms/request`,
    );
  }
} finally {
  await stopServer(server);
}
