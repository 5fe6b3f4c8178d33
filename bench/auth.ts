// Authentication and rate-limit benchmark (issue 6): what the auth + counting step of
// daemon/http/server.ts adds to a request, as a ratio against the same request with
// anonymous access (which skips the credential lookup and is never counted).
//
//   node --import tsx bench/auth.ts [--duration S] [--warmup S] [--rounds N] [--connections N]
//        [--query Q] [--workers N] [--micro-samples N] [--no-redis] [--out FILE]
//   node --import tsx bench/auth.ts --report RESULT.json    (rewrites RESULT.md, no run)
//
// 1. A small index: a copy of this repository's daemon/ (a snapshot, so that the index does
//    not change under the run while daemon/ is edited) indexed with `trawl index --name
//    daemon --no-symbols` into a temporary data dir. No Linux corpus: the step measured
//    does not depend on the index, and a small index keeps the search request cheap, so the
//    step is a visible share of it.
// 2. Identity, made the way an operator makes it: `trawl users add` and `trawl keys create`
//    (the key is the CLI's stdout); a scoped token (svst_, one hour of life: the run takes
//    minutes) for every repository of the index, written to the store with its keyed hash,
//    as test/rate-limit.test.ts does (the endpoint that issues one needs a license).
// 3. Two `trawl serve --workers 1` daemons on the same data dir, each with a config file:
//    anonymousAccess true, symbols false, rateLimit.requestsPerDay 1e9 (nothing is refused
//    in a run), rateLimit.store "embedded" (SQLite, one upsert per counted request) or the
//    URL of a private redis-server (no persistence) that this run starts on a free
//    loopback port. Without redis-server the Redis part is skipped with a note.
// 4. Variants of each request: anonymous (no header), API key as `Authorization: Bearer`,
//    API key as `X-Service-Api-Key`, scoped token (Bearer) on the embedded daemon;
//    anonymous and API key (Bearer) on the Redis daemon. Two requests:
//    - GET /api/repos: rate limited, no search; the auth + counting step is a large share.
//    - POST /api/search with a selective literal (default `credentialHash`, a few matches).
//    Before the load, each variant is sent once with fetch: 200, the same answer, and
//    X-RateLimit-Remaining present exactly on the authenticated variants.
// 5. autocannon (in this process, bench/load.ts) at --connections (10): a --warmup (3 s)
//    run per variant, then --rounds (3) rounds over all variants of --duration (10) s each,
//    each round starting one variant later than the previous (so that no variant always
//    runs right after the same neighbour or first after a request kind's switch); medians
//    of req/s, p50/p99 and the daemon's CPU ms per request (plus redis-server's for the
//    Redis daemon: the counting happens there too). Every response must be 2xx.
//    Counting proof: around each timed run of an authenticated variant, one GET /api/repos
//    with the same credential reads X-RateLimit-Remaining; the drop minus that request
//    must lie between the 2xx responses autocannon completed and the requests it wrote.
//    10 connections, not http.ts's 50: one daemon's JS thread is already saturated with
//    10 keep-alive connections on loopback (the two rates match within noise), and with
//    fewer requests queued the latency percentiles show the step rather than 50-deep
//    queueing; autocannon also takes less of the second core away from the daemon.
// 6. Ratios per variant against anonymous on the same daemon: req/s, p50, CPU per request,
//    and the CPU µs per request the step adds.
// 7. The step alone, in process (tinybench, before the daemons start): StoreAuthenticator
//    .authenticate + DailyRateLimiter.take for anonymous, an API key, a scoped token, with
//    the embedded and the Redis counter, and their parts; batches of 100 sequential calls
//    per sample (a single anonymous call is shorter than the timer's and await's overhead);
//    µs per call (median over samples) and this process's CPU µs per call.
// 8. Per phase the cores other processes kept busy (machine.ts foreignCores minus the
//    daemons and redis-server): near 0 means clean figures; rerun above 0.2. The machine
//    may be shared with test runs that come and go, so before each round and each
//    in-process step the run waits (boundedly) for other processes to go quiet.
// Results: bench/results/<date>-issue6-auth.json and .md beside it; the Markdown on stdout.

import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Bench } from 'tinybench';
import { StoreAuthenticator } from '../daemon/auth/authenticator.ts';
import { credentialHash, newScopedToken, SCOPED_TOKEN_LIFETIME_MS, serverSecret } from '../daemon/auth/credentials.ts';
import type { Credentials, Identity } from '../daemon/auth/identity.ts';
import { shardsDir } from '../daemon/index/data-dir.ts';
import { readAllManifests } from '../daemon/index/manifest.ts';
import { DailyRateLimiter } from '../daemon/ratelimit/daily-limiter.ts';
import { RedisRateCounter } from '../daemon/ratelimit/redis-counter.ts';
import { StoreRateCounter } from '../daemon/ratelimit/store-counter.ts';
import { openStore } from '../daemon/store/open.ts';
import {
  autocannonVersion,
  childEnv,
  cpuMsBetween,
  load,
  loadRunDetail,
  log,
  mark,
  ratio,
  round2,
  startServer,
  stopOnSignal,
  stopServer,
  targetMedian,
  track,
  waitHealthy,
  type LoadRequest,
  type LoadRun,
  type Proc,
  type Server,
  type TargetMedian,
} from './load.ts';
import { commandOutput, cpuMark, environment, foreignCores, settleIo, type Environment } from './machine.ts';
import { fmtBytes, fmtMs } from './report.ts';
import { median } from './stats.ts';
import { writeResultFiles } from './results-file.ts';

const ROOT = resolve(import.meta.dirname, '..');
const TRAWL = join(ROOT, 'bin', 'trawl.js');
const EMAIL = 'bench@example.com';
const LIMIT = 1_000_000_000;
/** Calls per tinybench sample in the in-process measurement. */
const BATCH = 100;

// --- Variants ----------------------------------------------------------------------------

type DaemonName = 'embedded' | 'redis';
type Credential = 'anonymous' | 'apiKeyBearer' | 'apiKeyHeader' | 'scopedToken';

interface Variant {
  /** `<daemon>/<credential>`, the key in the JSON. */
  id: string;
  daemon: DaemonName;
  credential: Credential;
  label: string;
  headers: Record<string, string>;
}

const CREDENTIAL_LABEL: Record<Credential, string> = {
  anonymous: 'anonymous (no credential)',
  apiKeyBearer: 'API key, `Authorization: Bearer`',
  apiKeyHeader: 'API key, `X-Service-Api-Key`',
  scopedToken: 'scoped token, `Authorization: Bearer`',
};

function variants(key: string, scoped: string, withRedis: boolean): Variant[] {
  const headersOf: Record<Credential, Record<string, string>> = {
    anonymous: {},
    apiKeyBearer: { authorization: `Bearer ${key}` },
    apiKeyHeader: { 'x-service-api-key': key },
    scopedToken: { authorization: `Bearer ${scoped}` },
  };
  const v = (daemon: DaemonName, credential: Credential): Variant => ({ id: `${daemon}/${credential}`, daemon, credential, label: CREDENTIAL_LABEL[credential], headers: headersOf[credential] });
  const out = [v('embedded', 'anonymous'), v('embedded', 'apiKeyBearer'), v('embedded', 'apiKeyHeader'), v('embedded', 'scopedToken')];
  if (withRedis) out.push(v('redis', 'anonymous'), v('redis', 'apiKeyBearer'));
  return out;
}

// --- redis-server ------------------------------------------------------------------------

interface RedisProc extends Proc {
  url: string;
  version: string | null;
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolvePort(port));
    });
  });
}

/**
 * A private redis-server on a free loopback port, no persistence (nothing but the counters
 * lives in it, and a snapshot fork in the middle of a run would disturb it). Ready when it
 * logs "Ready to accept connections"; a port taken between finding and binding it makes it
 * exit, and another port is tried. Null (with the reason logged) without redis-server.
 */
async function startRedis(): Promise<RedisProc | { skip: string }> {
  const version = commandOutput('redis-server', ['--version']);
  if (version === null) return { skip: 'redis-server is not installed (Debian package redis-server; scripts/setup.sh installs it)' };
  let last = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--loglevel', 'notice'];
    const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    track(child);
    const ready = await new Promise<boolean>((resolveReady) => {
      let out = '';
      const timer = setTimeout(() => done(false), 10_000);
      const done = (ok: boolean) => {
        clearTimeout(timer);
        if (!ok) child.kill('SIGKILL');
        child.stdout!.removeAllListeners('data');
        resolveReady(ok);
      };
      child.stdout!.setEncoding('utf8');
      child.stdout!.on('data', (s: string) => {
        out += s;
        if (out.includes('Ready to accept connections')) done(true);
      });
      child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
      child.once('exit', (code) => {
        last = `exited with ${code}: ${out.trim().split('\n').at(-1) ?? ''}`;
        done(false);
      });
      child.once('error', (err) => {
        last = err.message;
        done(false);
      });
    });
    if (ready) {
      child.stdout!.resume(); // keep draining its log so that it never blocks on a full pipe
      return { name: 'redis-server', child, url: `redis://127.0.0.1:${port}`, version: /v=(\S+)/.exec(version)?.[1] ?? version };
    }
  }
  return { skip: `redis-server did not start (${last})` };
}

// --- Other processes ---------------------------------------------------------------------

/** Seconds spent in waitForQuiet, logged and kept in the JSON. */
let quietWaitSeconds = 0;

/**
 * Waits (at most `maxSeconds`, then goes on) until other processes keep less than 0.2
 * cores busy over a 2 s window: the machine may be shared (test runs come and go), and on
 * 2 cores one busy process takes what the daemon and autocannon would get. `ours`: our
 * idle children, not counted as others. Before each round (30 s at most), the in-process
 * phase (30 s) and each of its steps (5 s); the load during the runs themselves is still
 * recorded (foreignCores), so a disturbed run shows.
 */
async function waitForQuiet(ours: Proc[], maxSeconds: number): Promise<void> {
  const start = performance.now();
  for (;;) {
    const from = mark(ours);
    await new Promise((r) => setTimeout(r, 2000));
    const f = load(from, mark(ours)).foreignCores;
    const waited = (performance.now() - start) / 1000;
    if (f === null || f < 0.2 || waited >= maxSeconds) {
      if (waited > 2.5) log(`  waited ${waited.toFixed(0)} s for other processes to go quiet${f !== null && f >= 0.2 ? ` (still ${f.toFixed(2)} cores: going on)` : ''}`);
      quietWaitSeconds += waited;
      return;
    }
  }
}

// --- Setup -------------------------------------------------------------------------------

/** Runs bin/trawl.js; its trimmed stdout, or an error with its stderr. */
function trawl(args: string[]): string {
  const r = spawnSync(process.execPath, [TRAWL, ...args], { cwd: ROOT, env: childEnv(), encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`trawl ${args.join(' ')} failed (${r.status ?? r.signal}): ${r.stderr}`);
  return r.stdout.trim();
}

interface IndexInfo {
  corpus: string;
  files: number;
  contentBytes: number;
  shards: number;
  indexBytes: number;
  buildSeconds: number;
  buildSummary: string;
}

function buildIndex(work: string, dataDir: string): IndexInfo {
  const corpus = join(work, 'corpus', 'daemon');
  cpSync(join(ROOT, 'daemon'), corpus, { recursive: true });
  log(`indexing a copy of daemon/ into ${dataDir}`);
  const start = process.hrtime.bigint();
  const summary = trawl(['index', corpus, '--name', 'daemon', '--no-symbols', '--data-dir', dataDir]);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  log(`  ${seconds.toFixed(1)} s: ${summary}`);
  const manifests = readAllManifests(dataDir);
  let indexBytes = 0;
  for (const m of manifests) for (const s of m.shards) indexBytes += statSync(join(shardsDir(dataDir, m.repoId), s.file)).size;
  return {
    corpus: 'daemon/ (a copy of this repository\'s)',
    files: manifests.reduce((n, m) => n + m.files, 0),
    contentBytes: manifests.reduce((n, m) => n + m.contentBytes, 0),
    shards: manifests.reduce((n, m) => n + m.shards.length, 0),
    indexBytes,
    buildSeconds: round2(seconds),
    buildSummary: summary,
  };
}

/** The user, its API key (from `trawl keys create`) and a scoped token for every repository. */
function makeCredentials(dataDir: string): { key: string; scopedToken: string; scopedTokenExpiresAt: string; repoIds: number[] } {
  log(trawl(['users', 'add', '--email', EMAIL, '--data-dir', dataDir]));
  const key = trawl(['keys', 'create', '--user', EMAIL, '--name', 'bench', '--data-dir', dataDir]);
  if (!/^svk_[0-9a-f]{64}$/.test(key)) throw new Error(`trawl keys create printed "${key.slice(0, 20)}...", not an API key`);
  const scopedToken = newScopedToken();
  const store = openStore(dataDir);
  try {
    const user = store.getUserByEmail(EMAIL);
    if (!user) throw new Error(`no user ${EMAIL} after trawl users add`);
    const repoIds = store.listRepos().map((r) => r.repoId);
    const now = new Date();
    const expiresAt = new Date(now.getTime() + SCOPED_TOKEN_LIFETIME_MS).toISOString();
    // Made with the key: the token works while the key does (auth/origin.ts).
    const apiKeyId = store.listApiKeys(user.id)[0]!.id;
    store.createScopedToken({ userId: user.id, apiKeyId, hash: credentialHash(serverSecret(dataDir), scopedToken), repoIds, expiresAt }, now.toISOString());
    log(`user ${EMAIL}: an API key (${key.slice(0, 12)}...) and a scoped token for repositories ${repoIds.join(', ')}, expiring ${expiresAt}`);
    return { key, scopedToken, scopedTokenExpiresAt: expiresAt, repoIds };
  } finally {
    store.close();
  }
}

function writeConfig(path: string, store: string): Record<string, unknown> {
  const config = { settings: { anonymousAccess: true, symbols: false, rateLimit: { requestsPerDay: LIMIT, store } } };
  writeFileSync(path, JSON.stringify(config, null, 2) + '\n');
  return config;
}

// --- The step alone, in process ----------------------------------------------------------

interface MicroTask {
  name: string;
  /** µs per call: the median sample (a batch of BATCH sequential calls) / BATCH. */
  usPerCall: number;
  /** µs per call: the mean sample / BATCH. */
  usPerCallMean: number;
  /** This process's CPU time (all threads) over the timed calls, per call. */
  cpuUsPerCall: number;
  calls: number;
  foreignCores: number | null;
}

async function measureStep(dataDir: string, key: string, scopedToken: string, redisProc: RedisProc | undefined, samples: number): Promise<MicroTask[]> {
  const redisUrl = redisProc?.url ?? null;
  const store = openStore(dataDir);
  const secret = serverSecret(dataDir);
  const authenticator = new StoreAuthenticator({ store, secret, anonymousAccess: true });
  const now = () => new Date();
  const embedded = new DailyRateLimiter({ counter: new StoreRateCounter(store), defaultLimit: LIMIT, now });
  const redisCounter = redisUrl ? await RedisRateCounter.connect(redisUrl) : null;
  const redis = redisCounter ? new DailyRateLimiter({ counter: redisCounter, defaultLimit: LIMIT, now }) : null;
  const anonymous: Credentials = {};
  const bearerKey: Credentials = { token: key, via: 'bearer' };
  const bearerScoped: Credentials = { token: scopedToken, via: 'bearer' };
  const keyIdentity: Identity = await authenticator.authenticate(bearerKey);
  // What server.ts does for a rate-limited route: authenticate, then take.
  const step = (limiter: DailyRateLimiter, c: Credentials) => async () => {
    await limiter.take(await authenticator.authenticate(c));
  };
  const tasks: Array<{ name: string; fn: () => unknown }> = [
    { name: 'anonymous: authenticate + take', fn: step(embedded, anonymous) },
    { name: 'API key: HMAC-SHA256 of the key alone (credentialHash)', fn: () => credentialHash(secret, key) },
    { name: 'API key: authenticate alone (HMAC, key and user lookups)', fn: () => authenticator.authenticate(bearerKey) },
    { name: 'embedded counter: take alone (one SQLite upsert)', fn: () => embedded.take(keyIdentity) },
    { name: 'API key: authenticate + take, embedded counter', fn: step(embedded, bearerKey) },
    { name: 'scoped token: authenticate + take, embedded counter', fn: step(embedded, bearerScoped) },
  ];
  if (redis) {
    tasks.push(
      { name: 'Redis counter: take alone (one Lua script over loopback)', fn: () => redis.take(keyIdentity) },
      { name: 'API key: authenticate + take, Redis counter', fn: step(redis, bearerKey) },
    );
  }
  const out: MicroTask[] = [];
  try {
    for (const t of tasks) {
      // CPU time is read around each batch, not around bench.run(): tinybench's own work
      // (bookkeeping, statistics) would otherwise dominate the cheap steps' figures.
      let cpuMicros = 0;
      const batch = async () => {
        const c0 = process.cpuUsage();
        for (let i = 0; i < BATCH; i++) await t.fn();
        const c = process.cpuUsage(c0);
        cpuMicros += c.user + c.system;
      };
      for (let i = 0; i < 20; i++) await batch(); // JIT, statement caches, the once-a-minute key touch
      cpuMicros = 0;
      await waitForQuiet(redisProc ? [redisProc] : [], 5);
      const bench = new Bench({ time: 0, iterations: samples, warmup: false, timestampProvider: 'hrtimeNow', throws: true });
      bench.add(t.name, batch);
      const m0 = mark(redisProc ? [redisProc] : []);
      await bench.run();
      const m1 = mark(redisProc ? [redisProc] : []);
      const r = bench.tasks[0]!.result;
      if (!('latency' in r)) throw new Error(`tinybench: ${t.name} ended in state ${r.state}`);
      const calls = samples * BATCH;
      const task: MicroTask = {
        name: t.name,
        usPerCall: Math.round((r.latency.p50 / BATCH) * 1e5) / 100,
        usPerCallMean: Math.round((r.latency.mean / BATCH) * 1e5) / 100,
        cpuUsPerCall: Math.round((cpuMicros / calls) * 100) / 100,
        calls,
        // redis-server works for this process here: not a foreign load.
        foreignCores: load(m0, m1).foreignCores,
      };
      log(`  ${t.name}: ${task.usPerCall} µs per call (mean ${task.usPerCallMean}), CPU ${task.cpuUsPerCall} µs per call, other processes ${task.foreignCores ?? '?'} cores`);
      out.push(task);
    }
  } finally {
    await redisCounter?.close();
    store.close();
  }
  return out;
}

// --- Load --------------------------------------------------------------------------------

interface CountCheck {
  /** X-RateLimit-Remaining of a GET /api/repos just before the run and just after it. */
  before: number;
  after: number;
  /** before - after - 1 (the request that read `after`): what the run counted. */
  counted: number;
  /** 2xx responses autocannon received, and requests it wrote. */
  completed: number;
  sent: number;
  ok: boolean;
}

interface VariantRun {
  variant: string;
  round: number;
  run: LoadRun;
  sent: number;
  /** redis-server's CPU ms per completed request (Redis daemon's variants). */
  redisCpuMsPerRequest: number | null;
  /** The daemon's and redis-server's CPU ms per completed request. */
  totalCpuMsPerRequest: number | null;
  countCheck: CountCheck | null;
}

interface VariantMedian extends TargetMedian {
  redisCpuMsPerRequest: number | null;
  totalCpuMsPerRequest: number | null;
}

interface VariantRatios {
  /** Against anonymous on the same daemon. */
  requestsPerSecond: number | null;
  p50: number | null;
  p99: number | null;
  /** Total CPU per request (daemon + redis-server). */
  cpuPerRequest: number | null;
  addedCpuUsPerRequest: number | null;
}

interface RequestResult {
  request: string;
  body?: string;
  responseBytes: number;
  /** POST /api/search: the answer's match counts. */
  matches?: { actual: number; total: number; files: number };
  runs: VariantRun[];
  median: Record<string, VariantMedian>;
  ratios: Record<string, VariantRatios>;
  countChecksOk: boolean;
}

async function remaining(daemon: Server, headers: Record<string, string>): Promise<number> {
  const r = await fetch(`${daemon.url}/api/repos`, { headers });
  await r.arrayBuffer();
  const v = r.headers.get('x-ratelimit-remaining');
  if (r.status !== 200 || v === null) throw new Error(`GET /api/repos on ${daemon.name}: status ${r.status}, X-RateLimit-Remaining ${v ?? 'absent'}`);
  return Number(v);
}

/** One fetch per variant: 200, X-RateLimit-Remaining exactly on the authenticated ones, the same body. */
async function checkVariants(request: LoadRequest, vs: Variant[], daemons: Record<string, Server>): Promise<{ responseBytes: number; json: unknown }> {
  let first: { bytes: number; json: unknown; shape: string } | undefined;
  for (const v of vs) {
    const init: RequestInit = { method: request.method, headers: { ...(request.body ? { 'content-type': 'application/json' } : {}), ...v.headers } };
    if (request.body) init.body = request.body;
    const r = await fetch(`${daemons[v.daemon]!.url}${request.path}`, init);
    const bytes = Buffer.from(await r.arrayBuffer());
    if (r.status !== 200) throw new Error(`${request.method} ${request.path} as ${v.id}: status ${r.status}: ${bytes.toString('utf8').slice(0, 300)}`);
    const counted = r.headers.get('x-ratelimit-remaining') !== null;
    if (counted !== (v.credential !== 'anonymous')) throw new Error(`${request.method} ${request.path} as ${v.id}: X-RateLimit-Remaining ${counted ? 'present' : 'absent'}`);
    const json = JSON.parse(bytes.toString('utf8')) as unknown;
    // Searches carry their duration and answers their daemon's address (web URLs): compare
    // what was found, not the bytes.
    const shape = JSON.stringify(json, (k, x: unknown) => (k === 'duration' || k === 'stats' ? undefined : x)).replaceAll(daemons[v.daemon]!.url, '<daemon>');
    if (first && shape !== first.shape) throw new Error(`${request.method} ${request.path} as ${v.id} answered differently from ${vs[0]!.id}`);
    first ??= { bytes: bytes.length, json, shape };
  }
  return { responseBytes: first!.bytes, json: first!.json };
}

async function measureRequest(
  label: string,
  request: LoadRequest,
  vs: Variant[],
  daemons: Record<string, Server>,
  procs: Proc[],
  o: { warmup: number; rounds: number; duration: number; connections: number },
): Promise<Omit<RequestResult, 'responseBytes' | 'matches'>> {
  log(`${label}: ${request.method} ${request.path}; autocannon ${o.connections} connections, ${o.warmup} s warm-up per variant, then ${o.rounds} rounds of ${vs.length} variants × ${o.duration} s`);
  const runs: VariantRun[] = [];
  const once = async (v: Variant, round: number, seconds: number) => {
    const daemon = daemons[v.daemon]!;
    const counted = v.credential !== 'anonymous';
    const before = counted && round > 0 ? await remaining(daemon, v.headers) : null;
    const d = await loadRunDetail(daemon, procs, round, { ...request, headers: v.headers }, seconds, o.connections, v.id);
    const { run } = d;
    if (run.non2xx > 0 || run.errors > 0 || run.timeouts > 0) {
      // A refused or failed request takes another path (a 401 skips the lookups, a 429 the
      // count): the figures would not be the step's.
      throw new Error(`${v.id} ${label}: ${run.non2xx} non-2xx (${JSON.stringify(run.statusCodes)}), ${run.errors} errors, ${run.timeouts} timeouts`);
    }
    let countCheck: CountCheck | null = null;
    if (before !== null) {
      const after = await remaining(daemon, v.headers);
      const completed = run.statusCodes['200'] ?? 0;
      const c = before - after - 1;
      countCheck = { before, after, counted: c, completed, sent: d.sent, ok: c >= completed && c <= d.sent };
      if (!countCheck.ok) log(`  COUNT CHECK FAILED: ${v.id} counted ${c}, autocannon completed ${completed} and wrote ${d.sent}`);
    }
    const redisMs = v.daemon === 'redis' ? cpuMsBetween(d.from, d.to, 'redis-server') : null;
    const perRequest = (ms: number | null) => (ms === null || run.requests === 0 ? null : Math.round((ms / run.requests) * 1e3) / 1e3);
    const redisCpuMsPerRequest = perRequest(redisMs);
    const totalCpuMsPerRequest =
      run.serverCpuMsPerRequest === null ? null : v.daemon === 'redis' ? (redisCpuMsPerRequest === null ? null : Math.round((run.serverCpuMsPerRequest + redisCpuMsPerRequest) * 1e3) / 1e3) : run.serverCpuMsPerRequest;
    runs.push({ variant: v.id, round, run, sent: d.sent, redisCpuMsPerRequest, totalCpuMsPerRequest, countCheck });
  };
  for (const v of vs) await once(v, 0, o.warmup);
  for (let i = 1; i <= o.rounds; i++) {
    await waitForQuiet(procs, 30);
    const shift = (i - 1) % vs.length;
    for (const v of [...vs.slice(shift), ...vs.slice(0, shift)]) await once(v, i, o.duration);
  }
  const med = (xs: Array<number | null>) => {
    const v = xs.filter((x): x is number => x !== null);
    return v.length === xs.length && v.length > 0 ? Math.round(median(v) * 1000) / 1000 : null;
  };
  const medians: Record<string, VariantMedian> = {};
  for (const v of vs) {
    const timed = runs.filter((r) => r.variant === v.id && r.round > 0);
    medians[v.id] = { ...targetMedian(timed.map((r) => r.run)), redisCpuMsPerRequest: med(timed.map((r) => r.redisCpuMsPerRequest)), totalCpuMsPerRequest: med(timed.map((r) => r.totalCpuMsPerRequest)) };
  }
  const ratios: Record<string, VariantRatios> = {};
  for (const v of vs) {
    if (v.credential === 'anonymous') continue;
    const m = medians[v.id]!;
    const a = medians[`${v.daemon}/anonymous`]!;
    ratios[v.id] = {
      requestsPerSecond: ratio(m.requestsPerSecond, a.requestsPerSecond),
      p50: ratio(m.p50Ms, a.p50Ms),
      p99: ratio(m.p99Ms, a.p99Ms),
      cpuPerRequest: ratio(m.totalCpuMsPerRequest, a.totalCpuMsPerRequest),
      addedCpuUsPerRequest: m.totalCpuMsPerRequest === null || a.totalCpuMsPerRequest === null ? null : Math.round((m.totalCpuMsPerRequest - a.totalCpuMsPerRequest) * 1e4) / 10,
    };
  }
  return { request: `${request.method} ${request.path}`, ...(request.body ? { body: request.body } : {}), runs, median: medians, ratios, countChecksOk: runs.every((r) => r.countCheck === null || r.countCheck.ok) };
}

function packageVersion(name: string): string {
  try {
    return (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

// --- Main --------------------------------------------------------------------------------

interface Result {
  date: string;
  environment: Environment;
  options: { duration: number; warmup: number; rounds: number; connections: number; workers: number; microSamples: number; microBatch: number; autocannon: string; tinybench: string };
  commands: string[];
  index: IndexInfo;
  config: Record<DaemonName, Record<string, unknown> | null>;
  redis: { version: string | null; url: string } | { skipped: string };
  credentials: { user: string; repoIds: number[]; scopedTokenExpiresAt: string };
  variants: Array<Omit<Variant, 'headers'> & { header: string | null }>;
  repos: RequestResult;
  search: RequestResult & { query: string };
  micro: MicroTask[];
  /** Cores other processes kept busy per phase (the highest of the phase's runs). */
  foreignCores: Record<string, number | null>;
  /** Seconds waited for other processes to go quiet (before each round and in-process step). */
  quietWaitSeconds: number;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string' },
      warmup: { type: 'string' },
      rounds: { type: 'string' },
      connections: { type: 'string' },
      query: { type: 'string' },
      workers: { type: 'string' },
      'micro-samples': { type: 'string' },
      'no-redis': { type: 'boolean' },
      out: { type: 'string' },
      report: { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(
      'node --import tsx bench/auth.ts [--duration S (10)] [--warmup S (3)] [--rounds N (3)] [--connections N (10)] ' +
        '[--query Q (credentialHash)] [--workers N (1)] [--micro-samples N (200)] [--no-redis] [--out FILE]\n' +
        'node --import tsx bench/auth.ts --report RESULT.json   (rewrites RESULT.md from the JSON, no run)\n',
    );
    return;
  }
  if (values.report !== undefined) {
    // The report's wording can change without a new run.
    const path = resolve(values.report);
    writeResultFiles(path, undefined, markdown(JSON.parse(readFileSync(path, 'utf8')) as Result));
    return;
  }
  const positive = (name: string, text: string | undefined, fallback: number) => {
    const n = text === undefined ? fallback : Number(text);
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got "${text}"`);
    return n;
  };
  const duration = positive('duration', values.duration, 10);
  const warmup = positive('warmup', values.warmup, 3);
  const rounds = positive('rounds', values.rounds, 3);
  const connections = positive('connections', values.connections, 10);
  const workers = positive('workers', values.workers, 1);
  const microSamples = positive('micro-samples', values['micro-samples'], 200);
  const query = values.query ?? 'credentialHash';
  const date = new Date().toISOString();
  const out = resolve(values.out ?? join(ROOT, 'bench', 'results', `${date.slice(0, 10)}-issue6-auth.json`));

  const work = mkdtempSync(join(tmpdir(), 'trawl-bench-auth-'));
  const dataDir = join(work, 'data');
  const removeSignalHandlers = stopOnSignal(() => rmSync(work, { recursive: true, force: true }));
  let redis: RedisProc | undefined;
  const daemons: Partial<Record<DaemonName, Server>> = {};
  const foreign: Record<string, number | null> = {};
  try {
    // 1-2. Index and identity.
    const setupFrom = cpuMark();
    const index = buildIndex(work, dataDir);
    const creds = makeCredentials(dataDir);

    // 3. redis-server and the config files.
    const started = values['no-redis'] ? { skip: '--no-redis' } : await startRedis();
    if ('skip' in started) log(`note: no Redis part: ${started.skip}`);
    else {
      redis = started;
      log(`redis-server ${redis.version}: ${redis.url} (pid ${redis.child.pid})`);
    }
    const configs: Result['config'] = {
      embedded: writeConfig(join(work, 'embedded.json'), 'embedded'),
      redis: redis ? writeConfig(join(work, 'redis.json'), redis.url) : null,
    };
    foreign.setup = (() => {
      const f = foreignCores(setupFrom, cpuMark());
      return f === null ? null : round2(f);
    })();
    const waited = await settleIo();
    if (waited > 1) log(`waited ${waited.toFixed(0)} s for disk I/O to settle`);

    // 7 (first, while nothing else of ours runs). The step alone, in process.
    log(`the step in process (tinybench, ${microSamples} samples of ${BATCH} calls each):`);
    await waitForQuiet(redis ? [redis] : [], 30);
    const micro = await measureStep(dataDir, creds.key, creds.scopedToken, redis, microSamples);
    foreign.micro = Math.max(...micro.map((m) => m.foreignCores ?? 0));

    // 3. The daemons (cwd: the work dir, which holds no trawl.json).
    const serveArgs = (name: DaemonName) => [TRAWL, 'serve', '--config', join(work, `${name}.json`), '--data-dir', dataDir, '--port', '0', '--log-level', 'silent', '--workers', String(workers)];
    for (const name of ['embedded', 'redis'] as const) {
      if (name === 'redis' && !redis) continue;
      const s = await startServer(name, serveArgs(name), work);
      daemons[name] = s;
      await waitHealthy(s.url);
      log(`trawl serve (${name} counter): ${s.url} (pid ${s.child.pid})`);
    }
    const procs: Proc[] = [daemons.embedded!, ...(daemons.redis ? [daemons.redis] : []), ...(redis ? [redis] : [])];
    const vs = variants(creds.key, creds.scopedToken, redis !== undefined);
    const byName = daemons as Record<string, Server>;

    // 4. The requests, checked once per variant.
    const reposRequest: LoadRequest = { method: 'GET', path: '/api/repos' };
    const searchBody = JSON.stringify({ query, matches: 100 });
    const searchRequest: LoadRequest = { method: 'POST', path: '/api/search', body: searchBody };
    const reposCheck = await checkVariants(reposRequest, vs, byName);
    // The first search of each daemon starts its worker and maps the shard.
    await checkVariants(searchRequest, vs, byName);
    const searchCheck = await checkVariants(searchRequest, vs, byName);
    const found = searchCheck.json as { stats: { actualMatchCount: number; totalMatchCount: number }; files: unknown[] };
    if (found.stats.actualMatchCount === 0) throw new Error(`the query ${query} finds nothing in daemon/: pass --query with one that does`);
    log(`GET /api/repos: ${reposCheck.responseBytes} bytes; POST /api/search ${searchBody}: ${found.stats.actualMatchCount} matches in ${found.files.length} files, ${fmtBytes(searchCheck.responseBytes)}`);
    log(`every variant answered 200 with the same result; X-RateLimit-Remaining on exactly the authenticated ones`);

    // 5. Load.
    const loadOptions = { warmup, rounds, duration, connections };
    const repos: RequestResult = { ...(await measureRequest('GET /api/repos', reposRequest, vs, byName, procs, loadOptions)), responseBytes: reposCheck.responseBytes };
    const search: Result['search'] = {
      ...(await measureRequest('POST /api/search', searchRequest, vs, byName, procs, loadOptions)),
      query,
      responseBytes: searchCheck.responseBytes,
      matches: { actual: found.stats.actualMatchCount, total: found.stats.totalMatchCount, files: found.files.length },
    };
    for (const d of Object.values(daemons)) await stopServer(d);
    await stopServer(redis);

    // 6. Report.
    const highest = (xs: Array<number | null>) => {
      const v = xs.filter((x): x is number => x !== null);
      return v.length > 0 ? Math.max(...v) : null;
    };
    foreign.warmup = highest([...repos.runs, ...search.runs].filter((r) => r.round === 0).map((r) => r.run.load.foreignCores));
    foreign.repos = highest(repos.runs.filter((r) => r.round > 0).map((r) => r.run.load.foreignCores));
    foreign.search = highest(search.runs.filter((r) => r.round > 0).map((r) => r.run.load.foreignCores));
    const rel = (p: string) => p.replace(`${work}/`, '<tmp>/');
    const result: Result = {
      date,
      environment: environment(ROOT),
      options: { duration, warmup, rounds, connections, workers, microSamples, microBatch: BATCH, autocannon: autocannonVersion(ROOT), tinybench: packageVersion('tinybench') },
      commands: [
        `node bin/trawl.js index <tmp>/corpus/daemon --name daemon --no-symbols --data-dir <tmp>/data`,
        `node bin/trawl.js users add --email ${EMAIL} --data-dir <tmp>/data`,
        `node bin/trawl.js keys create --user ${EMAIL} --name bench --data-dir <tmp>/data`,
        ...(redis ? [`redis-server --port PORT --bind 127.0.0.1 --save '' --appendonly no --daemonize no --loglevel notice`] : []),
        ...(['embedded', 'redis'] as const).filter((n) => daemons[n]).map((n) => `node ${serveArgs(n).map((a) => rel(a).replace(ROOT + '/', '')).join(' ')}`),
      ],
      index,
      config: configs,
      redis: redis ? { version: redis.version, url: redis.url } : { skipped: (started as { skip: string }).skip },
      credentials: { user: EMAIL, repoIds: creds.repoIds, scopedTokenExpiresAt: creds.scopedTokenExpiresAt },
      variants: vs.map(({ headers, ...v }) => ({ ...v, header: Object.keys(headers)[0] ?? null })),
      repos,
      search,
      micro,
      foreignCores: foreign,
      quietWaitSeconds: Math.round(quietWaitSeconds),
    };
    log(`wrote ${out} and ${writeResultFiles(out, result, markdown(result))}`);
    if (!repos.countChecksOk || !search.countChecksOk) {
      log('a count check failed (see the tables): the counter did not count what was sent');
      process.exitCode = 1;
    }
  } finally {
    for (const d of Object.values(daemons)) await stopServer(d);
    await stopServer(redis);
    rmSync(work, { recursive: true, force: true });
    removeSignalHandlers();
  }
}

// --- Markdown ----------------------------------------------------------------------------

function markdown(r: Result): string {
  const vs = r.variants;
  const e = r.environment;
  const ix = r.index;
  const n = (x: number) => Math.round(x).toLocaleString('en-US');
  const x = (v: number | null | undefined) => (v === null || v === undefined || !Number.isFinite(v) ? '—' : `${v.toFixed(2)}×`);
  const cores = (v: number | null | undefined) => (v === null || v === undefined ? '?' : v.toFixed(2));
  // CPU per request comes in whole µs (ms to 3 decimals): no false decimals.
  const us = (ms: number | null | undefined) => (ms === null || ms === undefined ? '—' : `${Math.round(ms * 1000)} µs`);
  const signedUs = (v: number | null | undefined) => (v === null || v === undefined ? '—' : `${v >= 0 ? '+' : '−'}${Math.abs(Math.round(v))} µs`);
  const withRedis = !('skipped' in r.redis);
  const daemonLabel = (d: DaemonName) => (d === 'embedded' ? 'embedded (SQLite)' : 'Redis');
  const table = (q: RequestResult) => {
    const rows = [
      '| credential | counter | requests/s | p50 | p99 | runs (req/s) | server CPU / request | req/s vs anonymous | CPU / request vs anonymous | added CPU / request | counted: check | cores: daemon / autocannon | other processes (cores) |',
      '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
    ];
    for (const v of vs) {
      const m = q.median[v.id]!;
      const ra = q.ratios[v.id];
      const runs = q.runs.filter((run) => run.variant === v.id && run.round > 0);
      const checks = runs.map((run) => run.countCheck).filter((c): c is CountCheck => c !== null);
      const check =
        checks.length === 0
          ? 'not counted'
          : `${checks.every((c) => c.ok) ? 'ok' : '**FAILED**'} (${n(checks.reduce((s, c) => s + c.counted, 0))} counted, ${n(checks.reduce((s, c) => s + c.completed, 0))} answered)`;
      const cpu = v.daemon === 'redis' ? `${us(m.totalCpuMsPerRequest)} (Redis ${us(m.redisCpuMsPerRequest)})` : us(m.totalCpuMsPerRequest);
      rows.push(
        `| ${v.label} | ${daemonLabel(v.daemon)} | ${n(m.requestsPerSecond)} | ${fmtMs(m.p50Ms)} | ${fmtMs(m.p99Ms)} | ${runs.map((run) => n(run.run.requestsPerSecond)).join(' / ')} | ` +
          `${cpu} | ${ra ? `**${x(ra.requestsPerSecond)}**` : '1'} | ${ra ? `**${x(ra.cpuPerRequest)}**` : '1'} | ${ra ? signedUs(ra.addedCpuUsPerRequest) : '—'} | ${check} | ` +
          `${cores(median(runs.map((run) => run.run.load.serverCores[v.daemon] ?? 0)))} / ${cores(median(runs.map((run) => run.run.load.benchCores ?? 0)))} | ` +
          `${cores(Math.max(...runs.map((run) => run.run.load.foreignCores ?? 0)))} |`,
      );
    }
    return rows;
  };
  const summary = (q: RequestResult) => {
    const lines: string[] = [];
    for (const v of vs) {
      const ra = q.ratios[v.id];
      if (!ra) continue;
      lines.push(
        `- ${v.label}, ${daemonLabel(v.daemon)} counter: ${x(ra.requestsPerSecond)} the anonymous requests/s, p50 ${x(ra.p50)}, p99 ${x(ra.p99)}, ` +
          `CPU per request ${x(ra.cpuPerRequest)} (${signedUs(ra.addedCpuUsPerRequest)}).`,
      );
    }
    return lines;
  };
  const micro = r.micro;
  const anon = micro[0]!;
  const microRows = micro.map((t) => `| ${t.name} | ${t.usPerCall.toFixed(2)} µs | ${t.usPerCallMean.toFixed(2)} µs | ${t.cpuUsPerCall.toFixed(2)} µs | ${t !== anon && t.name.includes('authenticate + take') ? `+${(t.usPerCall - anon.usPerCall).toFixed(2)} µs` : '—'} | ${cores(t.foreignCores)} |`);
  const s = r.search;
  const lines = [
    `### trawl ${e.trawlVersion}: authentication and rate-limit overhead — ${r.date.slice(0, 10)}`,
    '',
    `${e.machine.cpuModel}, ${e.machine.cores} cores, ${fmtBytes(e.machine.totalMemoryBytes)} RAM; Node ${e.node}; commit ${e.gitCommit}` +
      `${withRedis ? `; redis-server ${(r.redis as { version: string | null }).version ?? '?'}` : ''}. ` +
      `Index: ${n(ix.files)} files of ${ix.corpus}, ${fmtBytes(ix.contentBytes)} of content, ${ix.shards} shard${ix.shards === 1 ? '' : 's'} (${fmtBytes(ix.indexBytes)}). ` +
      `${withRedis ? 'Two' : 'One'} \`trawl serve --workers ${r.options.workers}\` on that data dir, each in its own Node process, configured with \`anonymousAccess: true\`, ` +
      `\`rateLimit.requestsPerDay: ${LIMIT.toExponential(0).replace('e+', 'e')}\` (nothing refused) and \`rateLimit.store\` \`"embedded"\` (SQLite in the data dir)` +
      `${withRedis ? ' or the URL of a private `redis-server` on loopback (no persistence)' : ` (no Redis part: ${(r.redis as { skipped: string }).skipped})`}. ` +
      `One user with an API key (\`trawl keys create\`) and a scoped token for the index's repository. ` +
      `autocannon ${r.options.autocannon} in the benchmark's process on loopback, ${r.options.connections} connections, keep-alive, no pipelining: ` +
      `a ${r.options.warmup} s warm-up run per variant, then ${r.options.rounds} rounds over all variants (each round starting one variant later), ${r.options.duration} s each; medians of the ${r.options.rounds} runs. ` +
      `Every response was 200. *Server CPU / request*: the daemon process's CPU time (all threads; with Redis, plus redis-server's) over the requests autocannon completed. ` +
      `*Counted: check*: X-RateLimit-Remaining read with the same credential before and after each timed run fell by at least the responses received and at most the requests written.`,
    '',
    `**\`GET /api/repos\`** (rate limited, no search: a ${r.repos.responseBytes}-byte answer listing the one repository; the auth + counting step is a large share of the request):`,
    '',
    ...table(r.repos),
    '',
    ...summary(r.repos),
    '',
    `**\`POST /api/search\`** ${'`'}${s.query}${'`'} (matches=100: ${s.matches!.actual} matches in ${s.matches!.files} files, a ${fmtBytes(s.responseBytes)} answer; the search included):`,
    '',
    ...table(s),
    '',
    ...summary(s),
    '',
    `**The step alone, in process** (tinybench ${r.options.tinybench}; \`StoreAuthenticator.authenticate\` and \`DailyRateLimiter.take\` as server.ts calls them, on the same data dir and Redis; ` +
      `${r.options.microSamples} samples of ${r.options.microBatch} sequential calls each, after ${20 * r.options.microBatch} untimed calls; µs per call = sample / ${r.options.microBatch}; CPU: this process's over the timed calls):`,
    '',
    '| step | median µs per call | mean | CPU per call | whole step: added to anonymous (median) | other processes (cores) |',
    '|---|--:|--:|--:|--:|--:|',
    ...microRows,
    '',
    `A hot loop: the same statements, hashes and objects over and over, in caches. Inside a daemon the step shares the thread and the caches with the rest ` +
      `of each request, so it adds more there (*added CPU / request* above; a CPU profile of the daemon, outside this benchmark, also showed the request's ` +
      `other store and file reads getting dearer once every request writes its counter). ` +
      `With Redis, part of each call is waiting for the answer (median above CPU); in the daemon, concurrent requests share those waits.`,
    '',
    `Other processes' CPU use (cores, the highest run of each phase; near 0: clean figures): ` + Object.entries(r.foreignCores).map(([k, v]) => `${k} ${cores(v)}`).join(', ') + '.',
    '',
  ];
  return lines.join('\n');
}

try {
  await main();
} catch (err) {
  log(`bench/auth.ts: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
