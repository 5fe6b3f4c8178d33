// `--corpus-repos N`, `--tiny-repos N`: trawl on many small repositories, the shape of a
// company's installation, beside csearch and rg on the same files. For each corpus
// (many-repos-setup.ts makes it, or finds it made):
//
//   1. `trawl sync` into an empty data dir (spawn to exit, peak RSS), then cindex over the
//      same repositories; disk I/O settled before each;
//   2. a `trawl serve` over that data dir (serve-ready.ts): spawn to GET /readyz 200, its
//      first search; then one client, one connection, every request sent once
//      (distinct-latency.ts): a warm-up on other identifiers, then each query kind of
//      many-repos-queries.ts in turn;
//   3. its RssAnon and VmRSS idle for a while right after the queries, and RssAnon again
//      once SETTLE_MS have passed since them (the daemon collects after a few quiet
//      seconds), each against the corpus's bytes;
//   4. one selective literal (a warm-up identifier) at LOAD_CONNECTIONS connections for a
//      few seconds (load.ts, after a 1 s warm-up run), RssAnon's peak meanwhile;
//   5. a one-line change, CHANGE_RUNS times: a line with a new token committed to one
//      repository, `trawl sync` started beside the daemon, the token searched every
//      CHANGE_POLL_MS: the time from the sync's spawn to the first answer that finds it
//      (the median of the runs, each run's kept);
//   6. the daemon stopped, the peers: csearch on every query of the kinds it can run, one
//      whole process each (CSEARCHINDEX: the cindex of 1), rg on the first few of each;
//   7. with --cold, a daemon started anew, the page cache dropped once it is ready, its
//      first search and further identifiers (distinct-latency.ts coldIdentifiers).

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { buildCindex, runTimed } from './build.ts';
import { corpusIdentity } from './corpus.ts';
import { client, coldIdentifiers, describeLatency, eachOnceDetail, identifiersAfterReady, searchBody, type Client } from './distinct-latency.ts';
import { corpusIdentifiers } from './identifiers.ts';
import { childEnv, loadRunDetail, round2, stopServer, track } from './load.ts';
import { cpuMark, foreignCores, settleIo } from './machine.ts';
import { commitOneLine, ensureManyCorpus, makeView, manyCorpusName, type ManySpec } from './many-repos-setup.ts';
import { manyReposQueries, type KindQueries } from './many-repos-queries.ts';
import { sampleRss, sampleRssFor } from './memory.ts';
import { median } from './percentiles.ts';
import type { ManyReposCorpus, ManyReposPhase, ManyReposQueries, Warmup } from './result.ts';
import { peerKind, peerLine } from './peer-kinds.ts';
import { serveUntilReady } from './serve-ready.ts';
import { seededRandom } from './stats.ts';
import { post } from './http-client.ts';
import { formatBytes } from '../../daemon/cli/format.ts';

export interface ManyReposOptions {
  root: string;
  /** The run's corpus (the tree cut into repositories) as given and as a directory. */
  corpusArg: string;
  corpus: string;
  /** Where the corpora are kept between runs (`--many-dir`). */
  cacheDir: string;
  work: string;
  specs: ManySpec[];
  /** Identifiers timed; the other kinds get a quarter as many (many-repos-queries.ts). */
  distinct: number;
  warmup: Warmup;
  /** Seconds of the load run (after a 1 s warm-up run). */
  loadSeconds: number;
  /** How long RSS is sampled while idle. */
  idleMs: number;
  /** rg's sample: the first this many identifiers, and a third as many of each other kind. */
  rgSample: number;
  cold: boolean;
  symbols: boolean;
  peers: boolean;
  peerTimeoutSeconds: number;
  seed: number;
}

/** Connections of the load run. */
export const LOAD_CONNECTIONS = 8;
const CHANGE_POLL_MS = 20;
/** When the settled idle memory is sampled: this long after the last request (past daemon.ts's QUIET_MS and TRIM_AFTER_MS). */
const SETTLE_MS = 6000;
/** One-line changes measured, one after the other (the median is reported). */
const CHANGE_RUNS = 3;

/** Bytes and count of the files under `dir` (the data dir's shards: whatever their format). */
function filesUnder(dir: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  if (!existsSync(dir)) return { bytes, files };
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    bytes += statSync(join(e.parentPath, e.name)).size;
    files++;
  }
  return { bytes, files };
}

/** `sync done: 2000 indexed, 0 up to date, 0 failed, …` (sync-command.ts). */
export function syncCounts(stdout: string): { indexed: number; failed: number } | null {
  const m = /sync done: (\d+) indexed, \d+ up to date, (\d+) failed/.exec(stdout);
  return m ? { indexed: Number(m[1]), failed: Number(m[2]) } : null;
}

export async function manyReposPhase(o: ManyReposOptions, log: (s: string) => void): Promise<{ phase: ManyReposPhase; notes: string[] }> {
  const notes: string[] = [];
  const corpora: ManyReposCorpus[] = [];
  for (const spec of o.specs) corpora.push(await measureCorpus(o, spec, log, notes));
  return { phase: { seed: o.seed, corpora }, notes };
}

async function measureCorpus(o: ManyReposOptions, spec: ManySpec, log: (s: string) => void, notes: string[]): Promise<ManyReposCorpus> {
  const name = manyCorpusName(spec, o.corpusArg, o.corpus);
  const label = `many    ${name}`;
  const dir = join(o.cacheDir, name);
  log(`${label}: ${spec.kind === 'cut' ? `${spec.count} repositories cut from ${o.corpus}` : `${spec.count} tiny repositories`} in ${dir}`);
  const { made, madeSeconds } = await ensureManyCorpus(spec, o.corpus, dir);
  log(
    `${label}: ${made.repos} repositories, ${made.files} files, ${formatBytes(made.bytes)} (${madeSeconds === null ? 'made by an earlier run' : `made in ${madeSeconds.toFixed(1)} s`})`,
  );
  const id = corpusIdentity(made.dir, (rel) => !rel.startsWith('.'));
  const work = join(o.work, `many-${name}`);
  const view = makeView(made, work, o.seed, o.symbols);
  const candidates = corpusIdentifiers(made.dir);
  const { sets, kinds } = manyReposQueries(candidates, made.repos, { count: o.distinct, warmup: o.warmup, cold: o.cold, seed: o.seed });
  const cpuFrom = cpuMark();

  // 1. The index, and the peer's.
  await settleIo();
  const dataDir = join(work, 'data');
  const synced = runTimed(
    process.execPath,
    [join(o.root, 'bin', 'trawl.js'), 'sync', '--config', view.syncConfig, '--data-dir', dataDir],
    childEnv(),
    join(work, 'sync.rss'),
  );
  const counts = syncCounts(synced.stdout);
  if (!counts) throw new Error(`${label}: trawl sync said no "sync done" line:\n${synced.stdout.slice(-2000)}`);
  if (counts.failed > 0 || counts.indexed !== view.repos.length)
    notes.push(`${name}: trawl sync indexed ${counts.indexed} of the ${view.repos.length} repositories (${counts.failed} failed)`);
  // The index: every repository's own files and the compound shards (packs).
  const own = filesUnder(join(dataDir, 'shards'));
  const packs = filesUnder(join(dataDir, 'packs'));
  const index = { files: own.files + packs.files, bytes: own.bytes + packs.bytes };
  const sync = { seconds: round4(synced.seconds), peakRssBytes: synced.peakRssBytes, ...counts, indexBytes: index.bytes, indexFiles: index.files };
  log(
    `${label}: trawl sync ${sync.seconds.toFixed(1)} s, ${sync.indexed} indexed, ${sync.failed} failed; ${index.files} index files, ${formatBytes(index.bytes)}`,
  );
  let cindex: ManyReposCorpus['cindex'] = null;
  let csearchIndex: string | undefined;
  if (o.peers) {
    await settleIo();
    const built = buildCindex(made.dir, made.bytes, join(work, 'csindex'), work);
    if (built) {
      csearchIndex = built.indexPath;
      cindex = { seconds: round4(built.seconds), peakRssBytes: built.peakRssBytes, indexBytes: built.indexBytes };
      log(`${label}: cindex ${built.seconds.toFixed(1)} s, index ${formatBytes(built.indexBytes)}`);
    } else notes.push(`${name}: cindex is not installed: no csearch figures`);
  }

  // 2-5. The daemon.
  const cwd = join(work, 'serve');
  mkdirSync(cwd, { recursive: true });
  const serve = () => serveUntilReady({ root: o.root, dataDir, config: view.serveConfig, cwd });
  const ready = await serve();
  const c = client(ready.server.url);
  let measured: Omit<ManyReposCorpus, 'name' | 'kind' | 'repos' | 'files' | 'bytes' | 'sha256' | 'madeSeconds' | 'sync' | 'cindex' | 'foreignCores' | 'cold'>;
  const byRequest = new Map<KindQueries, Array<number | null>>();
  try {
    const warm = await identifiersAfterReady(ready, c, sets, { warmup: o.warmup, log, label });
    const queries: ManyReposQueries[] = [];
    for (const k of kinds) {
      let latency = warm.identifiers;
      let ms = warm.msByRequest;
      if (k.kind !== 'identifier') {
        ({ latency, msByRequest: ms } = await eachOnceDetail(c, k.requests));
        log(`${label}: ${k.kind.padEnd(10)} ${describeLatency(latency)}`);
      }
      byRequest.set(k, ms);
      queries.push({ kind: k.kind, ...latency, csearch: null, rg: null });
    }
    const pid = ready.server.child.pid;
    const lastRequest = performance.now();
    const idle = await sampleRssFor(pid, o.idleMs);
    // And once the daemon has settled: its threads collect their heaps after a few quiet
    // seconds (daemon.ts IdleCollector), which the samples right after the queries precede.
    await new Promise((r) => setTimeout(r, Math.max(0, lastRequest + SETTLE_MS - performance.now())));
    const settled = await sampleRssFor(pid, o.idleMs);
    const loadQuery = sets.warmup[0]!;
    const request = { method: 'POST' as const, path: '/api/search', body: searchBody(loadQuery) };
    await loadRunDetail(ready.server, [ready.server], request, { round: 0, duration: 1, connections: LOAD_CONNECTIONS, label: 'warm-up' });
    const rss = sampleRss(pid);
    const detail = await loadRunDetail(ready.server, [ready.server], request, {
      round: 1,
      duration: o.loadSeconds,
      connections: LOAD_CONNECTIONS,
      label: 'many',
    });
    const loaded = rss.stop();
    const r = detail.run;
    const anonIdle = idle.length ? median(idle.map((x) => x.anon)) : null;
    const anonSettled = settled.length ? median(settled.map((x) => x.anon)) : null;
    measured = {
      start: warm.start,
      warmup: warm.warmup,
      queries,
      load: {
        query: loadQuery,
        connections: LOAD_CONNECTIONS,
        seconds: r.seconds,
        requestsPerSecond: round2(detail.latenciesMs.length / r.seconds),
        latencyMs: { p50: r.latencyMs.p50, p99: r.latencyMs.p99 },
        non2xx: r.non2xx,
        errors: r.errors + r.timeouts,
        serverCpuMsPerRequest: r.serverCpuMsPerRequest,
      },
      memory: {
        idleAnonBytes: anonIdle,
        idleRssBytes: idle.length ? median(idle.map((x) => x.rss)) : null,
        loadAnonPeakBytes: loaded.length ? Math.max(...loaded.map((x) => x.anon)) : null,
        anonPerByte: anonIdle === null ? null : round4(anonIdle / made.bytes),
        settledAnonBytes: anonSettled,
        settledAnonPerByte: anonSettled === null ? null : round4(anonSettled / made.bytes),
      },
      change: await changeSearchable(o, { path: view.changePath, repo: view.changeRepo, syncConfig: view.syncConfig, dataDir, client: c, label }, log),
    };
  } finally {
    c.agent.destroy();
    await stopServer(ready.server);
  }

  // 6. The peers, the daemon stopped.
  if (o.peers) {
    for (const q of measured.queries) {
      const k = kinds.find((x) => x.kind === q.kind)!;
      if (!k.peer) continue;
      const ms = byRequest.get(k)!;
      q.csearch = peerKind('csearch', k.peer, ms, { take: k.peer.length, corpus: made.dir, csearchIndex, timeoutSeconds: o.peerTimeoutSeconds });
      q.rg = peerKind('rg', k.peer, ms, {
        take: k.kind === 'identifier' ? o.rgSample : Math.max(1, Math.round(o.rgSample / 3)),
        corpus: made.dir,
        timeoutSeconds: o.peerTimeoutSeconds,
      });
      log(`${label}: ${q.kind.padEnd(10)} csearch ${peerLine(q.csearch)}; rg ${peerLine(q.rg)}`);
    }
  }

  // 7. Cold.
  const cold = o.cold ? await coldIdentifiers(serve, sets.cold, log, label) : undefined;
  const cores = foreignCores(cpuFrom, cpuMark());
  return {
    name,
    kind: spec.kind,
    repos: made.repos,
    files: id.files,
    bytes: id.totalBytes,
    sha256: id.sha256,
    madeSeconds: madeSeconds === null ? null : round4(madeSeconds),
    sync,
    cindex,
    ...measured,
    ...(cold ? { cold } : {}),
    foreignCores: cores === null ? null : round2(cores),
  };
}

const round4 = (x: number) => Math.round(x * 1e4) / 1e4;

/**
 * Step 5, CHANGE_RUNS times: a line with a new token committed to the repository at `path`,
 * then `trawl sync` started beside the daemon, and the token searched every CHANGE_POLL_MS
 * until found. One run is one sample of a noisy machine: the median is the figure.
 */
/** Where a change is made, synced and searched. */
interface ChangeTarget {
  /** The repository's working copy, committed to. */
  path: string;
  /** Its name in the index. */
  repo: string;
  /** The sync's configuration file. */
  syncConfig: string;
  dataDir: string;
  /** The running daemon's client, searching for the change. */
  client: Client;
  label: string;
}

async function changeSearchable(o: ManyReposOptions, t: ChangeTarget, log: (s: string) => void): Promise<ManyReposCorpus['change']> {
  const { repo, label } = t;
  const random = seededRandom(o.seed + 2);
  const runs: Array<{ file: string; token: string; searchableMs: number | null; syncSeconds: number; polls: number }> = [];
  for (let k = 0; k < CHANGE_RUNS; k++) {
    const token = `trawl_bench_change_${Math.floor(random() * 2 ** 32)
      .toString(16)
      .padStart(8, '0')}`;
    const run = await changeOnce(o, t, token);
    log(
      `${label}: one line changed in ${repo}/${run.file} (run ${k + 1} of ${CHANGE_RUNS}): searchable ${run.searchableMs === null ? 'NOT after the sync ended' : `${run.searchableMs} ms`} after \`trawl sync\` started (the sync took ${run.syncSeconds.toFixed(2)} s, ${run.polls} searches)`,
    );
    runs.push(run);
  }
  const found = runs.map((r) => r.searchableMs);
  return {
    repo,
    file: runs[0]!.file,
    token: runs[0]!.token,
    // Not found in a run (the sync ended without it) counts as not found.
    searchableMs: found.includes(null) ? null : median(found as number[]),
    searchableSamplesMs: found,
    syncSeconds: round4(median(runs.map((r) => r.syncSeconds))),
    polls: runs.reduce((n, r) => n + r.polls, 0),
  };
}

/** One change: committed, synced, searched until found (or the sync ended without it). */
async function changeOnce(
  o: ManyReposOptions,
  t: ChangeTarget,
  token: string,
): Promise<{ file: string; token: string; searchableMs: number | null; syncSeconds: number; polls: number }> {
  const { path, syncConfig, dataDir, client: c, label } = t;
  const file = await commitOneLine(path, token);
  const started = performance.now();
  const child = spawn(process.execPath, [join(o.root, 'bin', 'trawl.js'), 'sync', '--config', syncConfig, '--data-dir', dataDir], {
    env: childEnv(),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  track(child);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr = (stderr + s).slice(-4096)));
  let exitedAt: number | undefined;
  const exited = new Promise<number | null>((resolve) =>
    child.once('close', (code) => {
      exitedAt = performance.now();
      resolve(code);
    }),
  );
  const url = new URL('/api/search', c.url);
  const body = JSON.stringify({ query: token, matches: 1, isCaseSensitivityEnabled: true });
  let searchableMs: number | null = null;
  let polls = 0;
  for (;;) {
    const done = exitedAt !== undefined;
    const a = await post(c.agent, url, body, true);
    polls++;
    if (a.status === 200 && (JSON.parse(a.text!) as { stats: { actualMatchCount: number } }).stats.actualMatchCount > 0) {
      searchableMs = Math.round(performance.now() - started);
      break;
    }
    if (done) break; // the sync had ended before this search was sent, and it did not find the token
    await new Promise((r) => setTimeout(r, CHANGE_POLL_MS));
  }
  const code = await exited;
  if (code !== 0) throw new Error(`${label}: trawl sync after the one-line change exited with ${code}: ${stderr.trim().slice(-1000)}`);
  return { file, token, searchableMs, syncSeconds: round4((exitedAt! - started) / 1000), polls };
}
