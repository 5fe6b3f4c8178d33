// HTTP benchmark (issue 5): what trawl's HTTP layer costs on top of a bare uWebSockets.js
// server, with and without a search in the request, and how fast a large result streams.
//
//   node --import tsx bench/http.ts [--corpus DIR] [--data-dir DIR] [--duration S] [--connections N]
//        [--query Q] [--stream-query Q] [--out FILE] [--warmup S] [--rounds N] [--workers N]
//
// 1. The index: --data-dir when it holds one, else `trawl index CORPUS --no-symbols` into a
//    temporary data dir (default corpus: corpus/linux-6.1, scripts/fetch-linux.sh).
// 2. `trawl serve --port 0 --log-level silent --data-dir DIR` in a child process (no config
//    file: built-in defaults, anonymous access), ready when GET /api/health answers 200.
// 3. A selective query (default `kvm_mmu_zap_collapsible_spte`, a rare literal of the engine
//    benchmark: 5 matches in 5 files, 0.7 MB of content read; matches 100) is sent twice (the
//    first search starts the worker pool; it must find something), and GET /api/version
//    once. Both answers' bodies go to files and bench/bare-uws.ts serves exactly those bytes
//    (POST /api/search, GET /api/version; same Content-Type) from a second child process:
//    same native module, same Node + tsx process, but no routing, validation, auth, request
//    id, logging, metrics, search or JSON.
// 4. Two comparisons, each with the same procedure: autocannon (in this process) at
//    --connections (50) against each server: a --warmup (3 s) run each, then --rounds (2)
//    alternations trawl, bare, each --duration (15) seconds; medians.
//    a. Selective query: POST /api/search with the query. The ratio includes the search
//       (about 3 ms of server CPU per request on linux-6.1).
//    b. No search: GET /api/version, a system route (routing, request id, logging, metrics,
//       JSON; no auth, no search): the HTTP layer's overhead by itself.
//    Latency percentiles are computed from every 2xx response's time as autocannon measures
//    it (fractional ms); autocannon's own histogram, 1 ms resolution, is kept in the JSON.
// 5. Streaming: POST /api/stream_search with a large result (default `static`, matches
//    100000, contextLines 0) read with fetch: bytes, messages, time to first byte, total
//    time, MB/s; checked to end with a `final` message and `data: [DONE]`. One untimed run,
//    then 3; the same request to the blocking /api/search for comparison.
// 6. Per phase, the cores other processes kept busy (machine.ts foreignCores minus the two
//    servers' CPU), each server's cores and this process's (the load generator).
// Results: bench/results/<date>-issue5-http.json (keys `selective` and `noSearch`, same
// shape for their runs, medians and ratios) and .md beside it; the Markdown on stdout.
// The child processes, CPU accounting and the load run are bench/load.ts, shared with
// bench/auth.ts.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { shardsDir } from '../daemon/index/data-dir.ts';
import { manifestRepoName, readAllManifests } from '../daemon/index/manifest.ts';
import {
  autocannonVersion,
  childEnv,
  load,
  loadRun,
  log,
  mark,
  round2,
  startServer,
  stopOnSignal,
  stopServer,
  targetMedian,
  waitHealthy,
  type Load,
  type LoadRequest,
  type LoadRun,
  type Server,
  type TargetMedian,
} from './load.ts';
import { environment, settleIo, type Environment } from './machine.ts';
import { fmtBytes, fmtMs } from './report.ts';
import { afterFirstByte, readBody, streamOnce, type StreamRun } from './stream.ts';
import { median } from './stats.ts';
import { writeResultFiles } from './results-file.ts';

const ROOT = resolve(import.meta.dirname, '..');
const TRAWL = join(ROOT, 'bin', 'trawl.js');
const BARE = join(ROOT, 'bench', 'bare-uws.ts');

// --- The index ---------------------------------------------------------------------------

interface IndexInfo {
  dataDir: string;
  /** Built by this run (into a temporary dir, deleted at the end) or given with --data-dir. */
  built: boolean;
  corpus: string | null;
  buildSeconds: number | null;
  buildSummary: string | null;
  buildLoad: Load | null;
  repositories: string[];
  files: number;
  contentBytes: number;
  shards: number;
  indexBytes: number;
}

function describeIndex(dataDir: string): Pick<IndexInfo, 'repositories' | 'files' | 'contentBytes' | 'shards' | 'indexBytes'> {
  const manifests = readAllManifests(dataDir);
  let indexBytes = 0;
  for (const m of manifests) for (const s of m.shards) indexBytes += statSync(join(shardsDir(dataDir, m.repoId), s.file)).size;
  return {
    repositories: manifests.map(manifestRepoName),
    files: manifests.reduce((n, m) => n + m.files, 0),
    contentBytes: manifests.reduce((n, m) => n + m.contentBytes, 0),
    shards: manifests.reduce((n, m) => n + m.shards.length, 0),
    indexBytes,
  };
}

function buildIndex(corpus: string, dataDir: string): Pick<IndexInfo, 'buildSeconds' | 'buildSummary' | 'buildLoad'> {
  log(`indexing ${corpus} into ${dataDir} (trawl index --no-symbols)`);
  const from = mark([]);
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [TRAWL, 'index', corpus, '--no-symbols', '--data-dir', dataDir], { cwd: ROOT, env: childEnv(), encoding: 'utf8', maxBuffer: 64 << 20 });
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const buildLoad = load(from, mark([]));
  if (r.status !== 0) throw new Error(`trawl index failed (${r.status ?? r.signal}): ${r.stderr}`);
  const summary = r.stdout.trim();
  log(`  ${seconds.toFixed(1)} s: ${summary}`);
  return { buildSeconds: round2(seconds), buildSummary: summary, buildLoad };
}

/** A load comparison of trawl against the bare server: every run, the medians of the timed ones, their ratios. */
interface Comparison {
  /** The request both servers were sent, e.g. `POST /api/search`. */
  request: string;
  runs: LoadRun[];
  median: { trawl: TargetMedian; bare: TargetMedian };
  ratios: { requestsPerSecondBareOverTrawl: number | null; p50TrawlOverBare: number | null; p99TrawlOverBare: number | null };
}

/** A --warmup run against each server, then `rounds` alternations (trawl, bare) of `duration` seconds. */
async function compare(
  label: string,
  servers: Server[],
  request: LoadRequest,
  o: { warmup: number; rounds: number; duration: number; connections: number },
): Promise<Comparison> {
  const runs: LoadRun[] = [];
  log(`${label}: ${request.method} ${request.path}; autocannon: ${o.connections} connections, ${o.warmup} s warm-up each, then ${o.rounds} × (trawl, bare) of ${o.duration} s`);
  for (const s of servers) runs.push(await loadRun(s, servers, 0, request, o.warmup, o.connections));
  for (let i = 1; i <= o.rounds; i++) for (const s of servers) runs.push(await loadRun(s, servers, i, request, o.duration, o.connections));
  const timed = (name: string) => runs.filter((r) => r.target === name && r.round > 0);
  const median = { trawl: targetMedian(timed('trawl')), bare: targetMedian(timed('bare')) };
  const ratio = (a: number | null, b: number | null) => (a === null || b === null || b === 0 ? null : Math.round((a / b) * 100) / 100);
  return {
    request: `${request.method} ${request.path}`,
    runs,
    median,
    ratios: {
      requestsPerSecondBareOverTrawl: ratio(median.bare.requestsPerSecond, median.trawl.requestsPerSecond),
      p50TrawlOverBare: ratio(median.trawl.p50Ms, median.bare.p50Ms),
      p99TrawlOverBare: ratio(median.trawl.p99Ms, median.bare.p99Ms),
    },
  };
}

// --- Streaming ---------------------------------------------------------------------------

interface BlockingRun {
  run: number;
  status: number;
  bytes: number;
  matches: number | null;
  firstByteMs: number | null;
  totalMs: number;
  mbPerSecond: number;
  afterFirstByteMbPerSecond: number | null;
  load: Load;
}

async function blockingOnce(trawl: Server, body: string, run: number): Promise<BlockingRun> {
  const from = mark([trawl]);
  const t0 = performance.now();
  const res = await fetch(`${trawl.url}/api/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const parts: Uint8Array[] = [];
  const firstByteMs = await readBody(res, t0, (value) => parts.push(value));
  const totalMs = performance.now() - t0;
  const l = load(from, mark([trawl]));
  const buf = Buffer.concat(parts);
  let matches: number | null = null;
  try {
    matches = (JSON.parse(buf.toString('utf8')) as { stats?: { actualMatchCount?: number } }).stats?.actualMatchCount ?? null;
  } catch {
    // reported as no match count
  }
  const r: BlockingRun = {
    run,
    status: res.status,
    bytes: buf.length,
    matches,
    firstByteMs: firstByteMs === null ? null : round2(firstByteMs),
    totalMs: round2(totalMs),
    mbPerSecond: round2(buf.length / 1e6 / (totalMs / 1000)),
    afterFirstByteMbPerSecond: afterFirstByte(buf.length, firstByteMs, totalMs),
    load: l,
  };
  log(`  blocking run ${run}: ${r.status} ${fmtBytes(r.bytes)} in ${fmtMs(totalMs)} (${r.mbPerSecond.toFixed(1)} MB/s), first byte ${fmtMs(r.firstByteMs)}, ${matches ?? '?'} matches; trawl ${l.serverCores['trawl']?.toFixed(2) ?? '?'} cores, other ${l.foreignCores?.toFixed(2) ?? '?'}`);
  return r;
}

// --- Main --------------------------------------------------------------------------------

interface Result {
  date: string;
  environment: Environment;
  options: { duration: number; warmup: number; rounds: number; connections: number; workers: number | null; autocannon: string };
  index: IndexInfo;
  /** POST /api/search with the selective query: the ratios include the search. */
  selective: Comparison & {
    query: string;
    requestBody: string;
    responseBytes: number;
    actualMatchCount: number;
    totalMatchCount: number;
    files: number;
    /** The server's own search time (stats.duration) for the second check request, and for the first (cold) one. */
    searchMs: number;
    firstSearchMs: number;
  };
  /** GET /api/version (a system route: no auth, no search): the HTTP layer's overhead by itself. */
  noSearch: Comparison & {
    responseBytes: number;
    /** The body both servers send. */
    responseBody: string;
    contentType: string;
  };
  stream: {
    query: string;
    requestBody: string;
    runs: StreamRun[];
    median: { bytes: number; messages: number; firstByteMs: number | null; totalMs: number; mbPerSecond: number; afterFirstByteMbPerSecond: number | null };
    blocking: { runs: BlockingRun[]; median: { bytes: number; totalMs: number; firstByteMs: number | null; mbPerSecond: number; afterFirstByteMbPerSecond: number | null } };
  };
  /** Cores other processes kept busy per phase (the highest of the phase's runs). */
  foreignCores: Record<string, number | null>;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      corpus: { type: 'string' },
      'data-dir': { type: 'string' },
      duration: { type: 'string' },
      connections: { type: 'string' },
      query: { type: 'string' },
      'stream-query': { type: 'string' },
      out: { type: 'string' },
      warmup: { type: 'string' },
      rounds: { type: 'string' },
      workers: { type: 'string' },
    },
  });
  const positive = (name: string, text: string | undefined, fallback: number) => {
    const n = text === undefined ? fallback : Number(text);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got "${text}"`);
    return n;
  };
  const duration = positive('duration', values.duration, 15);
  const warmup = positive('warmup', values.warmup, 3);
  const rounds = positive('rounds', values.rounds, 2);
  const connections = positive('connections', values.connections, 50);
  const workers = values.workers === undefined ? null : positive('workers', values.workers, 1);
  const query = values.query ?? 'kvm_mmu_zap_collapsible_spte';
  const streamQuery = values['stream-query'] ?? 'static';
  const date = new Date().toISOString();
  const out = resolve(values.out ?? join(ROOT, 'bench', 'results', `${date.slice(0, 10)}-issue5-http.json`));

  const work = mkdtempSync(join(tmpdir(), 'trawl-bench-http-'));
  let trawl: Server | undefined;
  let bare: Server | undefined;
  const removeSignalHandlers = stopOnSignal(() => rmSync(work, { recursive: true, force: true }));
  try {
    // 1. The index.
    let index: IndexInfo;
    const given = values['data-dir'] === undefined ? undefined : resolve(values['data-dir']);
    if (given !== undefined && readAllManifests(given).length > 0) {
      log(`using the index in ${given}`);
      index = { dataDir: given, built: false, corpus: null, buildSeconds: null, buildSummary: null, buildLoad: null, ...describeIndex(given) };
    } else {
      if (given !== undefined) log(`no index in ${given}: building one into a temporary dir`);
      const corpus = resolve(values.corpus ?? join(ROOT, 'corpus', 'linux-6.1'));
      if (!existsSync(corpus)) throw new Error(`no corpus at ${corpus}: run scripts/fetch-linux.sh, or pass --corpus DIR or --data-dir DIR (with an index)`);
      const dataDir = join(work, 'data');
      index = { dataDir, built: true, corpus, ...buildIndex(corpus, dataDir), ...describeIndex(dataDir) };
    }
    if (index.files === 0) throw new Error(`the index in ${index.dataDir} holds no files`);
    log(`index: ${index.repositories.join(', ')}: ${index.files} files, ${fmtBytes(index.contentBytes)} of content, ${index.shards} shards, ${fmtBytes(index.indexBytes)}`);
    const waited = await settleIo();
    if (waited > 1) log(`waited ${waited.toFixed(0)} s for disk I/O to settle`);

    // 2. trawl serve (cwd: an empty dir, so that no ./trawl.json is picked up).
    const serveArgs = [TRAWL, 'serve', '--port', '0', '--log-level', 'silent', '--data-dir', index.dataDir, ...(workers ? ['--workers', String(workers)] : [])];
    trawl = await startServer('trawl', serveArgs, work);
    await waitHealthy(trawl.url);
    log(`trawl serve: ${trawl.url} (pid ${trawl.child.pid})`);

    // 3. The selective query, checked; its answer is the bare server's body.
    const requestBody = JSON.stringify({ query, matches: 100 });
    const ask = async () => {
      const res = await fetch(`${trawl!.url}/api/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: requestBody });
      const bytes = Buffer.from(await res.arrayBuffer());
      if (res.status !== 200) throw new Error(`POST /api/search ${requestBody}: status ${res.status}: ${bytes.toString('utf8').slice(0, 500)}`);
      const json = JSON.parse(bytes.toString('utf8')) as { stats: { actualMatchCount: number; totalMatchCount: number; duration: number }; files: unknown[] };
      return { bytes, json, contentType: res.headers.get('content-type') ?? '' };
    };
    // The first search starts the worker pool and maps the shards; the second is the figure.
    const cold = await ask();
    const { bytes: answer, json: parsed, contentType: answerType } = await ask();
    if (parsed.stats.actualMatchCount === 0) throw new Error(`the query ${query} finds nothing on this index: pass --query with one that does`);
    log(
      `selective query ${query}: ${parsed.stats.actualMatchCount} matches (${parsed.stats.totalMatchCount} total) in ${parsed.files.length} files, response ${fmtBytes(answer.length)}, ` +
        `search ${fmtMs(parsed.stats.duration / 1e6)} (first search ${fmtMs(cold.json.stats.duration / 1e6)})`,
    );
    const searchAnswer = { status: 200, contentType: answerType, bytes: answer };
    // GET /api/version, once: the body of the no-search comparison.
    const versionRes = await fetch(`${trawl.url}/api/version`);
    const version = { status: versionRes.status, contentType: versionRes.headers.get('content-type') ?? '', bytes: Buffer.from(await versionRes.arrayBuffer()) };
    if (version.status !== 200) throw new Error(`GET /api/version: status ${version.status}: ${version.bytes.toString('utf8').slice(0, 500)}`);
    log(`GET /api/version: ${version.bytes.toString('utf8')} (${version.bytes.length} bytes, ${version.contentType})`);
    const searchFile = join(work, 'answer.json');
    const versionFile = join(work, 'version.json');
    writeFileSync(searchFile, answer);
    writeFileSync(versionFile, version.bytes);
    bare = await startServer('bare', ['--import', 'tsx', BARE, searchFile, versionFile], ROOT);
    // The bare server must send the same status, Content-Type and bytes as trawl.
    const checkBare = async (what: string, init: RequestInit, path: string, expected: { status: number; contentType: string; bytes: Buffer }) => {
      const r = await fetch(`${bare!.url}${path}`, init);
      const bytes = Buffer.from(await r.arrayBuffer());
      const type = r.headers.get('content-type') ?? '';
      if (r.status !== expected.status || type !== expected.contentType || !bytes.equals(expected.bytes)) {
        throw new Error(`${what}: the bare server answered ${r.status} (${type}) with ${bytes.length} bytes, not trawl's ${expected.status} (${expected.contentType}) with ${expected.bytes.length}`);
      }
    };
    await checkBare('POST /api/search', { method: 'POST', headers: { 'content-type': 'application/json' }, body: requestBody }, '/api/search', searchAnswer);
    await checkBare('GET /api/version', {}, '/api/version', version);
    log(`bare uWebSockets.js server: ${bare.url} (pid ${bare.child.pid})`);

    // 4. Load, two comparisons: warm-up each, then alternate.
    const servers = [trawl, bare];
    const loadOptions = { warmup, rounds, duration, connections };
    const selectiveLoad = await compare('selective query', servers, { method: 'POST', path: '/api/search', body: requestBody }, loadOptions);
    const noSearchLoad = await compare('no search', servers, { method: 'GET', path: '/api/version' }, loadOptions);
    await stopServer(bare);
    bare = undefined;
    const selective: Result['selective'] = {
      query,
      requestBody,
      responseBytes: answer.length,
      actualMatchCount: parsed.stats.actualMatchCount,
      totalMatchCount: parsed.stats.totalMatchCount,
      files: parsed.files.length,
      searchMs: round2(parsed.stats.duration / 1e6),
      firstSearchMs: round2(cold.json.stats.duration / 1e6),
      ...selectiveLoad,
    };
    const noSearch: Result['noSearch'] = {
      responseBytes: version.bytes.length,
      responseBody: version.bytes.toString('utf8'),
      contentType: version.contentType,
      ...noSearchLoad,
    };

    // 5. Streaming.
    const streamBody = JSON.stringify({ query: streamQuery, matches: 100000, contextLines: 0 });
    log(`streaming ${streamBody}`);
    const streamRuns: StreamRun[] = [];
    for (let i = 0; i <= 3; i++) streamRuns.push(await streamOnce(trawl, streamBody, i));
    const timedStreams = streamRuns.filter((r) => r.run > 0);
    for (const r of streamRuns) {
      if (r.status !== 200 || !r.final || !r.endsWithDone || r.error) {
        throw new Error(`stream run ${r.run}: status ${r.status}, final ${r.final}, [DONE] last ${r.endsWithDone}, error ${r.error ?? 'none'}`);
      }
    }
    const streamBytes = median(timedStreams.map((r) => r.bytes));
    if (streamBytes < 10e6) log(`note: the stream is only ${fmtBytes(streamBytes)}; MB/s of a short stream says little (pick a --stream-query with more matches)`);
    const blockingRuns: BlockingRun[] = [];
    for (let i = 1; i <= 3; i++) blockingRuns.push(await blockingOnce(trawl, streamBody, i));
    for (const r of blockingRuns) if (r.status !== 200) throw new Error(`blocking run ${r.run}: status ${r.status}`);
    const medianOf = (xs: Array<number | null>) => {
      const v = xs.filter((x): x is number => x !== null);
      return v.length > 0 ? round2(median(v)) : null;
    };
    const firstBytes = (xs: Array<{ firstByteMs: number | null }>) => medianOf(xs.map((x) => x.firstByteMs));
    const stream: Result['stream'] = {
      query: streamQuery,
      requestBody: streamBody,
      runs: streamRuns,
      median: {
        bytes: streamBytes,
        messages: median(timedStreams.map((r) => r.messages)),
        firstByteMs: firstBytes(timedStreams),
        totalMs: round2(median(timedStreams.map((r) => r.totalMs))),
        mbPerSecond: round2(median(timedStreams.map((r) => r.mbPerSecond))),
        afterFirstByteMbPerSecond: medianOf(timedStreams.map((r) => r.afterFirstByteMbPerSecond)),
      },
      blocking: {
        runs: blockingRuns,
        median: {
          bytes: median(blockingRuns.map((r) => r.bytes)),
          totalMs: round2(median(blockingRuns.map((r) => r.totalMs))),
          firstByteMs: firstBytes(blockingRuns),
          mbPerSecond: round2(median(blockingRuns.map((r) => r.mbPerSecond))),
          afterFirstByteMbPerSecond: medianOf(blockingRuns.map((r) => r.afterFirstByteMbPerSecond)),
        },
      },
    };
    await stopServer(trawl);
    trawl = undefined;

    // 6. Report.
    const highest = (xs: Array<number | null>) => {
      const v = xs.filter((x): x is number => x !== null);
      return v.length > 0 ? Math.max(...v) : null;
    };
    const result: Result = {
      date,
      environment: environment(ROOT),
      options: { duration, warmup, rounds, connections, workers, autocannon: autocannonVersion(ROOT) },
      index,
      selective,
      noSearch,
      stream,
      foreignCores: {
        ...(index.buildLoad ? { index: index.buildLoad.foreignCores } : {}),
        warmup: highest([...selective.runs, ...noSearch.runs].filter((r) => r.round === 0).map((r) => r.load.foreignCores)),
        selective: highest(selective.runs.filter((r) => r.round > 0).map((r) => r.load.foreignCores)),
        noSearch: highest(noSearch.runs.filter((r) => r.round > 0).map((r) => r.load.foreignCores)),
        stream: highest(streamRuns.map((r) => r.load.foreignCores)),
        blocking: highest(blockingRuns.map((r) => r.load.foreignCores)),
      },
    };
    log(`wrote ${out} and ${writeResultFiles(out, result, markdown(result))}`);
  } finally {
    await stopServer(bare);
    await stopServer(trawl);
    rmSync(work, { recursive: true, force: true });
    removeSignalHandlers();
  }
}

// --- Markdown ----------------------------------------------------------------------------

function markdown(r: Result): string {
  const e = r.environment;
  const s = r.selective;
  const ix = r.index;
  const n = (x: number) => Math.round(x).toLocaleString('en-US');
  const x = (v: number | null) => (v === null || !Number.isFinite(v) ? '—' : `${v.toFixed(2)}×`);
  const mbs = (v: number | null) => (v === null ? '—' : v.toFixed(1));
  const cores = (v: number | null | undefined) => (v === null || v === undefined ? '?' : v.toFixed(2));
  const code = (t: string) => `\`${t.replace(/\|/g, '\\|').replace(/`/g, "'")}\``;
  const corpusName = ix.corpus ? basename(ix.corpus) : ix.repositories.join(', ');
  const ns = r.noSearch;
  const cpuMs = (v: number | null) => (v === null ? '—' : `${v.toFixed(3)} ms`);
  const aboutMs = (v: number | null) => (v === null ? '?' : v >= 1 ? v.toFixed(1) : v.toFixed(2));
  const loadRow = (c: Comparison, label: string, name: 'trawl' | 'bare') => {
    const m = c.median[name];
    const runs = c.runs.filter((run) => run.target === name && run.round > 0);
    return (
      `| ${label} | ${n(m.requestsPerSecond)} | ${fmtMs(m.p50Ms)} | ${fmtMs(m.p99Ms)} | ${m.non2xx} | ${m.errors}${m.timeouts ? ` (${m.timeouts} timeouts)` : ''} | ` +
      `${runs.map((run) => n(run.requestsPerSecond)).join(' / ')} | ${cpuMs(m.serverCpuMsPerRequest)} | ` +
      `${cores(median(runs.map((run) => run.load.serverCores[name] ?? 0)))} / ${cores(median(runs.map((run) => run.load.benchCores ?? 0)))} | ` +
      `${cores(Math.max(...runs.map((run) => run.load.foreignCores ?? 0)))} |`
    );
  };
  const st = r.stream;
  const sm = st.median;
  const bm = st.blocking.median;
  const last = st.runs[st.runs.length - 1]!;
  const indexLine = ix.built
    ? `built by this run in ${ix.buildSeconds?.toFixed(1)} s (\`trawl index --no-symbols\`, other processes ${cores(ix.buildLoad?.foreignCores)} cores)`
    : `given (\`--data-dir\`)`;
  const loadHeader = '| server | requests/s | p50 | p99 | non-2xx | errors | runs (req/s) | server CPU per request | cores: server / autocannon | other processes (cores) |';
  const loadDivider = '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|';
  const lines = [
    `### trawl ${e.trawlVersion}: HTTP layer on ${corpusName} — ${r.date.slice(0, 10)}`,
    '',
    `${e.machine.cpuModel}, ${e.machine.cores} cores, ${fmtBytes(e.machine.totalMemoryBytes)} RAM; Node ${e.node}; commit ${e.gitCommit}. ` +
      `Index: ${n(ix.files)} files, ${fmtBytes(ix.contentBytes)} of content, ${ix.shards} shard${ix.shards === 1 ? '' : 's'} (${fmtBytes(ix.indexBytes)}), ${indexLine}. ` +
      `\`trawl serve\` (built-in defaults, anonymous access, ${r.options.workers === null ? 'default workers' : `${r.options.workers} workers`}) and \`bench/bare-uws.ts\` each in its own Node process; ` +
      `autocannon ${r.options.autocannon} in the benchmark's process on loopback, ${r.options.connections} connections, keep-alive, no pipelining.`,
    '',
    `**Selective query** ${code(s.query)} (\`POST /api/search\`, matches=100): ${s.actualMatchCount} matches (${s.totalMatchCount} total) in ${s.files} files, ` +
      `a ${fmtBytes(s.responseBytes)} response body (search ${fmtMs(s.searchMs)} inside the server, \`stats.duration\` of one request alone); the bare server sends the same bytes. ` +
      `A ${r.options.warmup} s warm-up run each, then ${r.options.rounds} × (trawl, bare), ${r.options.duration} s each; medians of the ${r.options.rounds} runs. ` +
      `Latency: every 2xx response's time as autocannon measures it (send to last byte), fractional ms (autocannon's own 1 ms-resolution percentiles are in the JSON).`,
    '',
    loadHeader,
    loadDivider,
    loadRow(s, 'trawl, `POST /api/search`', 'trawl'),
    loadRow(s, 'bare uWebSockets.js, fixed body', 'bare'),
    '',
    `- Overhead of trawl's request handling including the search (about ${aboutMs(s.median.trawl.serverCpuMsPerRequest)} ms of server CPU per search; ` +
      `also routing, validation, auth step, JSON) over a bare handler: ` +
      `bare / trawl requests/s **${x(s.ratios.requestsPerSecondBareOverTrawl)}**, trawl / bare p50 **${x(s.ratios.p50TrawlOverBare)}**, p99 ${x(s.ratios.p99TrawlOverBare)}.`,
    `- Server CPU per request: trawl ${cpuMs(s.median.trawl.serverCpuMsPerRequest)}, bare ${cpuMs(s.median.bare.serverCpuMsPerRequest)} ` +
      `(the server process's CPU time, all threads, over the requests it completed).`,
    '',
    `**No search** (\`${ns.request}\`, a system route: routing, request id, logging, metrics, JSON; no auth, no search): ` +
      `a ${ns.responseBytes}-byte response body ${code(ns.responseBody)}; the bare server sends the same bytes with the same \`Content-Type\`. ` +
      `Same procedure: a ${r.options.warmup} s warm-up run each, then ${r.options.rounds} × (trawl, bare), ${r.options.duration} s each; medians.`,
    '',
    loadHeader,
    loadDivider,
    loadRow(ns, 'trawl, `GET /api/version`', 'trawl'),
    loadRow(ns, 'bare uWebSockets.js, fixed body', 'bare'),
    '',
    `- Overhead of trawl's HTTP layer alone (GET /api/version: routing, request id, logging, metrics, JSON) over a bare handler: ` +
      `bare / trawl requests/s **${x(ns.ratios.requestsPerSecondBareOverTrawl)}**, trawl / bare p50 **${x(ns.ratios.p50TrawlOverBare)}**, p99 ${x(ns.ratios.p99TrawlOverBare)}.`,
    `- Server CPU per request: trawl ${cpuMs(ns.median.trawl.serverCpuMsPerRequest)}, bare ${cpuMs(ns.median.bare.serverCpuMsPerRequest)}.`,
    '',
    `**Streaming** ${code(st.query)} (matches=100000, contextLines=0): ${fmtBytes(sm.bytes)}, ${n(sm.messages)} \`data:\` messages (${n(last.chunks)} \`chunk\`), ` +
      `${last.matches === null ? '?' : n(last.matches)} matches${last.isSearchExhaustive === false ? ' (not exhaustive)' : ''}; read with fetch in the benchmark's process; ` +
      `every run ended with a \`final\` message and \`data: [DONE]\`. One untimed run, then 3; medians. ` +
      `MB/s: bytes over the whole request (the search included); after the first byte: over the time from the first body byte to the end.`,
    '',
    '| endpoint | bytes | first byte | total | MB/s | runs (MB/s) | MB/s after the first byte | trawl cores | other processes (cores) |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|',
    `| \`POST /api/stream_search\` (SSE) | ${fmtBytes(sm.bytes)} | ${fmtMs(sm.firstByteMs)} | ${fmtMs(sm.totalMs)} | **${sm.mbPerSecond.toFixed(1)}** | ` +
      `${st.runs.filter((run) => run.run > 0).map((run) => run.mbPerSecond.toFixed(1)).join(' / ')} | ${mbs(sm.afterFirstByteMbPerSecond)} | ` +
      `${cores(median(st.runs.filter((run) => run.run > 0).map((run) => run.load.serverCores['trawl'] ?? 0)))} | ${cores(Math.max(...st.runs.filter((run) => run.run > 0).map((run) => run.load.foreignCores ?? 0)))} |`,
    `| \`POST /api/search\` (blocking, same request) | ${fmtBytes(bm.bytes)} | ${fmtMs(bm.firstByteMs)} | ${fmtMs(bm.totalMs)} | ${bm.mbPerSecond.toFixed(1)} | ` +
      `${st.blocking.runs.map((run) => run.mbPerSecond.toFixed(1)).join(' / ')} | ${mbs(bm.afterFirstByteMbPerSecond)} | ` +
      `${cores(median(st.blocking.runs.map((run) => run.load.serverCores['trawl'] ?? 0)))} | ${cores(Math.max(...st.blocking.runs.map((run) => run.load.foreignCores ?? 0)))} |`,
    '',
    `Other processes' CPU use (cores, the highest run of each phase; near 0: clean figures): ` +
      Object.entries(r.foreignCores).map(([k, v]) => `${k} ${cores(v)}`).join(', ') + '.',
    '',
  ];
  return lines.join('\n');
}

try {
  await main();
} catch (err) {
  log(`bench/http.ts: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
