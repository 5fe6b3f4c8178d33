// The daemon over HTTP, started by the bench on loopback (`trawl serve --port 0` over the
// built data dir, anonymous access, no configuration file):
//   1. memory when idle: RSS every 100 ms for a while after the warm-up searches;
//   2. POST /api/search with one selective query, autocannon for `seconds` at
//      `connections` after a short warm-up run: requests per second (and per each second:
//      the samples a comparison judges), every response's latency, the daemon's CPU per
//      request, and its RSS every 100 ms meanwhile (memory under load);
//   3. POST /api/stream_search with a large result (matches 100000): untimed runs (at
//      least `streamWarmup.runs` and `streamWarmup.ms`: the workers' streaming path, which
//      no blocking search runs, reaches its speed after a few streams: with one warm-up the
//      timed runs kept rising, and a daemon's first streams ran several times slower than
//      its later ones),
//      then `streamRuns` timed ones, each after a collection of the client's heap:
//      MB/s, time to first byte and to first results. The client is a process of its own
//      (stream-child.ts), not this one, which holds autocannon and the other phases;
//   4. what the HTTP layer costs: the daemon's CPU per request on cheap requests
//      (http-overhead.ts), `overheadRounds` alternations of half the load run's seconds.
// Memory is read as VmRSS and split into RssAnon and RssFile (memory.ts).

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { cpuMsBetween, loadRunDetail, startServer, stopServer, waitHealthy, type Server } from './load.ts';
import { median, summarize } from './percentiles.ts';
import type { StreamRun } from './stream.ts';
import { nodeArgsFor } from '../../daemon/runtime/ts-worker.ts';
import { INSTALL_ROOT } from '../../daemon/install-root.ts';
import { spawn } from 'node:child_process';
import { overheadRuns, OVERHEAD_KINDS } from './http-overhead.ts';
import { sampleRss, sampleRssFor, type RssSample } from './memory.ts';
import type { HttpOverhead, HttpSearch, HttpStream, MemoryPhase, Warmup } from './result.ts';

export interface HttpPhaseOptions {
  root: string;
  dataDir: string;
  work: string;
  searchQuery: string;
  streamQuery: string;
  seconds: number;
  connections: number;
  streamRuns: number;
  streamWarmup: Warmup;
  idleMs: number;
  overheadRounds: number;
}

export interface HttpPhase {
  search: HttpSearch;
  stream: HttpStream;
  memory: MemoryPhase;
  overhead: HttpOverhead[];
  /** Cores other processes kept busy (the daemon's and this process's CPU not counted). */
  foreignCores: number | null;
}

const STREAM_MATCHES = 100_000;
const round3 = (x: number) => Math.round(x * 1000) / 1000;

async function post(server: Server, path: string, body: string): Promise<{ status: number; text: string }> {
  const r = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: r.status, text: await r.text() };
}

export async function httpPhase(o: HttpPhaseOptions, log: (s: string) => void): Promise<HttpPhase> {
  // An empty working directory, so that no ./trawl.json is picked up.
  const cwd = join(o.work, 'serve');
  mkdirSync(cwd, { recursive: true });
  const server = await startServer('trawl', [join(o.root, 'bin', 'trawl.js'), 'serve', '--port', '0', '--log-level', 'silent', '--data-dir', o.dataDir], cwd);
  try {
    await waitHealthy(server.url);
    const pid = server.child.pid;
    log(`http    trawl serve at ${server.url} (pid ${pid})`);
    const searchBody = JSON.stringify({ query: o.searchQuery, matches: 100 });
    const streamBody = JSON.stringify({ query: o.streamQuery, matches: STREAM_MATCHES, contextLines: 0 });
    // Warm-up: the first search starts the worker pool and maps the shards.
    for (const body of [searchBody, streamBody]) {
      const r = await post(server, '/api/search', body);
      if (r.status !== 200) throw new Error(`POST /api/search ${body} answered ${r.status}: ${r.text.slice(0, 300)}`);
    }

    const idle = await sampleRssFor(pid, o.idleMs);

    const request = { method: 'POST' as const, path: '/api/search', body: searchBody };
    await loadRunDetail(server, [server], request, { round: 0, duration: 1, connections: o.connections, label: 'warm-up' });
    const rss = sampleRss(pid);
    const detail = await loadRunDetail(server, [server], request, { round: 1, duration: o.seconds, connections: o.connections, label: 'search' });
    const load = rss.stop();
    const run = detail.run;
    if (run.requests === 0) throw new Error(`POST /api/search completed no request in ${o.seconds} s`);
    const samplesMs = Array.from(detail.latenciesMs, round3);
    const latency = samplesMs.length > 0 ? summarize(samplesMs) : null;
    const cpuMs = cpuMsBetween(detail.from, detail.to, 'trawl');
    const ok = samplesMs.length;
    const search: HttpSearch = {
      query: o.searchQuery,
      seconds: run.seconds,
      connections: o.connections,
      requestsPerSecond: Math.round((ok / run.seconds) * 10) / 10,
      perSecondSamples: detail.perSecond,
      latencyMs: latency,
      samplesMs,
      non2xx: run.non2xx,
      errors: run.errors,
      timeouts: run.timeouts,
      serverCpuMsPerRequest: cpuMs === null || ok === 0 ? null : round3(cpuMs / ok),
    };

    const streamRuns = (await streamClient(server, streamBody, o.streamWarmup, o.streamRuns)).map((r) => ({
      bytes: r.bytes,
      messages: r.messages,
      matches: r.matches,
      firstByteMs: r.firstByteMs,
      firstResultMs: r.firstResultMs,
      totalMs: r.totalMs,
      mbPerSecond: r.mbPerSecond,
    }));
    const stream: HttpStream = {
      query: o.streamQuery,
      matches: STREAM_MATCHES,
      runs: streamRuns,
      mbPerSecondSamples: streamRuns.map((r) => r.mbPerSecond),
      firstByteMsSamples: streamRuns.flatMap((r) => (r.firstByteMs === null ? [] : [r.firstByteMs])),
      firstResultMsSamples: streamRuns.flatMap((r) => (r.firstResultMs === null ? [] : [r.firstResultMs])),
    };

    const overhead = await overheadRuns(server, OVERHEAD_KINDS, Math.max(1, Math.round(o.seconds / 2)), o.connections, o.overheadRounds);

    return { search, stream, memory: memoryPhase(idle, load), overhead, foreignCores: run.load.foreignCores };
  } finally {
    await stopServer(server);
  }
}

function memoryPhase(idle: RssSample[], load: RssSample[]): MemoryPhase {
  const pick = (samples: RssSample[], k: keyof RssSample) => samples.map((x) => x[k]);
  const med = (xs: number[]) => (xs.length ? median(xs) : null);
  const peak = (xs: number[]) => (xs.length ? Math.max(...xs) : null);
  const [idleRss, loadRss] = [pick(idle, 'rss'), pick(load, 'rss')];
  const [idleAnon, loadAnon] = [pick(idle, 'anon'), pick(load, 'anon')];
  const [idleFile, loadFile] = [pick(idle, 'file'), pick(load, 'file')];
  return {
    idleSamplesBytes: idleRss,
    loadSamplesBytes: loadRss,
    idleMedianBytes: med(idleRss),
    loadMedianBytes: med(loadRss),
    loadPeakBytes: peak(loadRss),
    idleAnonSamplesBytes: idleAnon,
    loadAnonSamplesBytes: loadAnon,
    idleFileSamplesBytes: idleFile,
    loadFileSamplesBytes: loadFile,
    idleAnonMedianBytes: med(idleAnon),
    loadAnonMedianBytes: med(loadAnon),
    loadAnonPeakBytes: peak(loadAnon),
    idleFileMedianBytes: med(idleFile),
    loadFileMedianBytes: med(loadFile),
  };
}

/**
 * The stream runs, read by a client process of its own (stream-child.ts): its warm-up, then
 * `runs` timed streams. Its run lines go to this process's stderr (the log); a stream that
 * is not whole, or the client failing, fails the phase.
 */
function streamClient(server: Server, body: string, warmup: Warmup, runs: number): Promise<StreamRun[]> {
  const args = [
    '--url',
    server.url,
    '--pid',
    String(server.child.pid ?? ''),
    '--body',
    body,
    '--warmup-runs',
    String(warmup.runs),
    '--warmup-ms',
    String(warmup.ms),
    '--runs',
    String(runs),
  ];
  const child = spawn(process.execPath, [...nodeArgsFor('bench/suite/stream-child.ts'), ...args], { cwd: INSTALL_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (s: string) => (out += s));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (code !== 0) return reject(new Error(`the stream client (stream-child.ts) exited with ${code ?? signal}`));
      try {
        resolve(JSON.parse(out) as StreamRun[]);
      } catch (err) {
        reject(new Error(`the stream client (stream-child.ts) printed no runs: ${(err as Error).message}`));
      }
    });
  });
}
