// `trawl bench run`: one benchmark of this checkout on one corpus, phase by phase —
// corpus identity, indexing, whole `trawl` commands as processes (--help, search, sync),
// search latency in process, the daemon over HTTP (memory, load, streaming, each query of
// the mix repeated), held-out identifiers each sent once (the headline), then the peers —
// into one result file (result.ts). Five phases run when asked for: authentication and
// rate limiting (--auth), the web UI's first result (--web), branches and incremental
// re-indexing (--reindex), many repositories (--corpus-repos, --tiny-repos), one daemon
// against clusters of 1, 2 and 4 nodes (--cluster); `--only cluster`, `--only viewer` and
// `--only many-repos` run one alone (each makes an index of its own, so it needs none of
// the others), for a result without the core phases. Everything runs in a temporary work
// dir that is removed at the end, also on Ctrl-C; the many-repositories corpora are kept
// under --many-dir for the next run.

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, release, tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { corpusIdentity } from './corpus.ts';
import { stopOnSignal } from './load.ts';
import { cpuMark, environment, foreignCores } from './machine.ts';
import { loadQueries, type BenchQuery } from './queries.ts';
import { writeFileAtomic } from '../../daemon/index/data-dir.ts';
import { browserMissing } from './browser.ts';
import { authPhase } from './phase-auth.ts';
import { httpPhase } from './phase-http.ts';
import { httpQueriesPhase } from './phase-http-queries.ts';
import { commandsPhase } from './phase-commands.ts';
import { indexPhase } from './phase-index.ts';
import { csearchIndexIn, peersPhase } from './phase-peers.ts';
import { reindexPhase } from './phase-reindex.ts';
import { rankingPhase } from './phase-ranking.ts';
import { searchPhase } from './phase-search.ts';
import { FULL_WARMUP } from './latency.ts';
import { webPhase } from './phase-web.ts';
import { viewerPhase } from './phase-viewer.ts';
import { clusterPhase } from './phase-cluster.ts';
import { distinctPeers, distinctPhase } from './phase-distinct.ts';
import { DISTINCT_SEED } from './distinct-latency.ts';
import { manyReposPhase } from './phase-many-repos.ts';
import type { ManySpec } from './many-repos-setup.ts';
import { dropCachesRefused } from './page-cache.ts';
import { DEFAULT_CLUSTERS } from './cluster-figures.ts';
import { RESULT_FORMAT, type AnyBenchResult, type BenchEnvironment, type BenchOptions, type ClusterPhase, type ClusterShape, type CorePhases, type ManyReposPhase, type OnlyPhase, type ResultBase } from './result.ts';
import { median } from './percentiles.ts';
import { INSTALL_ROOT } from '../../daemon/install-root.ts';

export const ROOT = INSTALL_ROOT;
/** `--corpus linux`: the tree scripts/fetch-linux.sh extracts. */
export const LINUX_CORPUS = join(ROOT, 'corpus', 'linux-6.1');

export interface RunOptions {
  /** `linux` or a directory. */
  corpus: string;
  queries?: string;
  quick: boolean;
  iterations?: number;
  httpQueryIterations?: number;
  indexRuns?: number;
  httpSeconds?: number;
  connections?: number;
  streamRuns?: number;
  peerRuns?: number;
  peerTimeoutSeconds?: number;
  peers: boolean;
  symbols: boolean;
  /** The opt-in phases. */
  auth?: boolean;
  web?: boolean;
  reindex?: boolean;
  cluster?: boolean;
  /** The cluster phase's clusters (default DEFAULT_CLUSTERS). */
  clusters?: ClusterShape[];
  /** Only this phase, none of the core ones (`--only cluster`, `--only viewer`, `--only many-repos`). */
  only?: OnlyPhase;
  /** Held-out identifiers timed once each (default 200; --quick 30). */
  distinct?: number;
  /** Also time them after dropping the page cache. */
  cold?: boolean;
  /** The many-repositories phase: repositories cut from the corpus, and tiny ones. */
  corpusRepos?: number;
  tinyRepos?: number;
  /** Where its corpora are kept between runs (default MANY_DIR). */
  manyDir?: string;
}

/** `--many-dir`'s default: beside the Linux corpus. */
export const MANY_DIR = join(ROOT, 'corpus', 'many');

/** The defaults of a full run and of --quick (a smoke test: under a minute on a small tree). */
const DEFAULTS = {
  full: { warmup: FULL_WARMUP, iterations: 200, httpQueryIterations: 50, indexRuns: 1, httpSeconds: 10, connections: 16, streamRuns: 9, streamWarmup: { runs: 6, ms: 2000 }, peerRuns: 3, idleMs: 3000, overheadRounds: 2, authRounds: 2, webRuns: 5, commandRuns: 10, distinct: 200, manyLoadSeconds: 5, rgSample: 10 },
  quick: { warmup: { runs: 2, ms: 20 }, iterations: 20, httpQueryIterations: 5, indexRuns: 1, httpSeconds: 3, connections: 8, streamRuns: 2, streamWarmup: { runs: 1, ms: 0 }, peerRuns: 1, idleMs: 1000, overheadRounds: 1, authRounds: 1, webRuns: 2, commandRuns: 3, distinct: 30, manyLoadSeconds: 2, rgSample: 3 },
};

export class BenchInputError extends Error {}

export function resolveCorpus(arg: string): string {
  if (arg === 'linux') {
    if (!existsSync(join(LINUX_CORPUS, '.trawl-corpus-complete'))) {
      throw new BenchInputError(`the Linux corpus is not at ${relative(process.cwd(), LINUX_CORPUS) || '.'}: run scripts/fetch-linux.sh first`);
    }
    return LINUX_CORPUS;
  }
  const dir = resolve(arg);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new BenchInputError(`--corpus ${arg}: not a directory`);
  return dir;
}

/** The hand-judged ranking queries of a corpus (phase-ranking.ts), if it has some. */
export function judgedQueries(corpusArg: string): string | undefined {
  return corpusArg === 'linux' ? join(ROOT, 'bench', 'queries', 'linux-judged.json') : undefined;
}

export function defaultQueries(corpusArg: string): string {
  return join(ROOT, 'bench', 'queries', corpusArg === 'linux' ? 'linux.json' : 'default.json');
}

/** The query sent over and over in the HTTP phase, and the one streamed. */
export function httpQueries(queries: BenchQuery[]): { search: BenchQuery; stream: BenchQuery } {
  const search = queries.find((q) => q.http === 'search') ?? queries[0]!;
  const stream = queries.find((q) => q.http === 'stream') ?? queries.find((q) => q.kind === 'common-literal') ?? queries[0]!;
  return { search, stream };
}

function packageVersion(name: string): string {
  try {
    return (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

const displayPath = (p: string) => (p.startsWith(ROOT + '/') ? relative(ROOT, p) : p);

export async function benchRun(o: RunOptions, log: (s: string) => void): Promise<AnyBenchResult> {
  const startedAt = new Date().toISOString();
  const d = o.quick ? DEFAULTS.quick : DEFAULTS.full;
  const corpus = resolveCorpus(o.corpus);
  const queriesFile = resolve(o.queries ?? defaultQueries(o.corpus));
  if (!existsSync(queriesFile)) throw new BenchInputError(`--queries ${o.queries}: no such file`);
  let queries: BenchQuery[];
  try {
    queries = loadQueries(queriesFile);
  } catch (err) {
    throw new BenchInputError((err as Error).message);
  }
  if (o.web) {
    // Before the long run, not after it.
    const missing = await browserMissing();
    if (missing) throw new BenchInputError(`--web: ${missing}`);
  }
  if (o.cold) {
    const refused = dropCachesRefused();
    if (refused) throw new BenchInputError(refused);
  }
  const manySpecs: ManySpec[] = [
    ...(o.corpusRepos !== undefined ? [{ kind: 'cut' as const, count: o.corpusRepos }] : []),
    ...(o.tinyRepos !== undefined ? [{ kind: 'tiny' as const, count: o.tinyRepos }] : []),
  ];
  const manyDir = resolve(o.manyDir ?? MANY_DIR);
  const options: BenchOptions = {
    corpus: o.corpus,
    queries: displayPath(queriesFile),
    queriesSha256: createHash('sha256').update(readFileSync(queriesFile)).digest('hex'),
    quick: o.quick,
    iterations: o.iterations ?? d.iterations,
    workers: availableParallelism(),
    indexRuns: o.indexRuns ?? d.indexRuns,
    symbols: o.symbols,
    httpSeconds: o.httpSeconds ?? d.httpSeconds,
    httpConnections: o.connections ?? d.connections,
    streamRuns: o.streamRuns ?? d.streamRuns,
    streamWarmup: d.streamWarmup,
    httpQueryIterations: o.httpQueryIterations ?? d.httpQueryIterations,
    warmup: d.warmup,
    peerRuns: o.peers ? (o.peerRuns ?? d.peerRuns) : 0,
    peerTimeoutSeconds: o.peerTimeoutSeconds ?? 300,
    ...(o.only === 'cluster' || o.only === 'viewer' ? {} : { distinct: o.distinct ?? d.distinct }),
    ...(o.cold ? { cold: true } : {}),
    ...(o.corpusRepos !== undefined ? { corpusRepos: o.corpusRepos } : {}),
    ...(o.tinyRepos !== undefined ? { tinyRepos: o.tinyRepos } : {}),
    ...(manySpecs.length > 0 ? { manyDir: displayPath(manyDir) } : {}),
  };
  const cluster = o.cluster === true || o.only === 'cluster';
  if (o.only) options.only = o.only;
  if (cluster) options.clusters = o.clusters ?? DEFAULT_CLUSTERS;
  const env = environment(ROOT);
  const environmentInfo: BenchEnvironment = { ...env, kernel: release(), tinybench: packageVersion('tinybench'), autocannon: packageVersion('autocannon') };
  const notes: string[] = [];

  const work = mkdtempSync(join(tmpdir(), 'trawl-bench-'));
  const cleanup = () => rmSync(work, { recursive: true, force: true });
  const unhook = stopOnSignal(cleanup);
  try {
    log(`bench   ${displayPath(corpus)}, ${queries.length} queries from ${options.queries}${o.quick ? ' (quick)' : ''}; work dir ${work}`);
    // bin/trawl.js runs the sources through tsx when dist/ is older than them (and says so
    // in TRAWL_FROM_SOURCES, which the processes this one starts inherit): slower to
    // start and ~80 MB more RssAnon in the daemon (2026-11-25: two runs measured that way
    // after an edit without a compile), which is not what a release runs.
    if (process.env.TRAWL_FROM_SOURCES === '1') {
      const stale = 'the compiled build (dist/) is older than the sources: every trawl process of this run ran the TypeScript through tsx (slower start, more memory); run ./scripts/setup.sh or node scripts/compile.js first';
      notes.push(stale);
      log(`bench   WARNING: ${stale}`);
    }
    let mark = cpuMark();
    const phaseCores = () => {
      const now = cpuMark();
      const cores = foreignCores(mark, now);
      mark = now;
      return cores === null ? null : Math.round(cores * 100) / 100;
    };
    const id = corpusIdentity(corpus);
    const git = existsSync(join(corpus, '.git'));
    const corpusCores = phaseCores();
    log(`corpus  ${id.files} files, ${(id.totalBytes / 1e6).toFixed(1)} MB, sha256 ${id.sha256.slice(0, 12)} (${id.seconds.toFixed(1)} s)${git ? '; a git repository: every branch is indexed' : ''}`);
    if (id.files === 0) throw new BenchInputError(`--corpus ${o.corpus}: the directory holds no files`);

    // After every other phase: its servers would disturb none of them, and none of theirs it.
    const runCluster = async (): Promise<ClusterPhase | undefined> => {
      if (!cluster) return undefined;
      const c = await clusterPhase(
        { root: ROOT, corpus, work, clusters: options.clusters!, iterations: options.httpQueryIterations!, warmup: options.warmup!, seconds: options.httpSeconds, connections: options.httpConnections, symbols: o.symbols, idleMs: d.idleMs },
        queries,
        log,
      );
      notes.push(...c.notes);
      return c.phase;
    };
    const base = (): ResultBase => ({
      format: RESULT_FORMAT,
      startedAt,
      finishedAt: new Date().toISOString(),
      options,
      environment: environmentInfo,
      corpus: { name: id.name, path: id.path, files: id.files, totalBytes: id.totalBytes, sha256: id.sha256, git },
      notes,
    });
    if (o.only === 'cluster') {
      const clusterResult = await runCluster();
      return { ...base(), ...(clusterResult ? { cluster: clusterResult } : {}) };
    }
    if (o.only === 'viewer') return { ...base(), viewer: await viewerPhase({ root: ROOT, work, runs: d.webRuns }, log) };
    // After the core and opt-in phases, before the cluster's.
    const runManyRepos = async (): Promise<ManyReposPhase | undefined> => {
      if (manySpecs.length === 0) return undefined;
      const m = await manyReposPhase(
        {
          root: ROOT,
          corpusArg: o.corpus,
          corpus,
          cacheDir: manyDir,
          work,
          specs: manySpecs,
          distinct: options.distinct!,
          warmup: options.warmup!,
          loadSeconds: d.manyLoadSeconds,
          idleMs: d.idleMs,
          rgSample: d.rgSample,
          cold: o.cold === true,
          symbols: o.symbols,
          peers: o.peers,
          peerTimeoutSeconds: options.peerTimeoutSeconds,
          seed: DISTINCT_SEED,
        },
        log,
      );
      notes.push(...m.notes);
      return m.phase;
    };
    if (o.only === 'many-repos') {
      const manyRepos = await runManyRepos();
      if (!o.peers) notes.push('peers skipped (--no-peers)');
      return { ...base(), ...(manyRepos ? { manyRepos } : {}) };
    }

    const indexing = await indexPhase({ root: ROOT, corpus, corpusBytes: id.totalBytes, git, symbols: o.symbols, runs: options.indexRuns, work }, log);
    const indexCores = phaseCores();
    const last = indexing.runs.at(-1)!;
    if (last.files === 0) throw new BenchInputError(`--corpus ${o.corpus}: trawl indexed no file (all binary, too large or ignored?)`);
    if (o.symbols && last.symbolCount === 0) notes.push('no symbol was extracted (universal-ctags missing, or no supported language): sym: queries find nothing');

    // Its own foreign cores, like the opt-in phases: a new key in foreignCores would make
    // every older result file invalid.
    const { phase: commands, staleRuns } = await commandsPhase({ root: ROOT, corpus, work, runs: d.commandRuns, symbols: o.symbols }, queries, log);
    phaseCores();
    if (!commands.search) notes.push('the query mix has no literal that is a plain identifier: `trawl search` was not timed');
    if (staleRuns > 0) {
      const stale = `${staleRuns} process(es) of the whole-process timings started while the compiled build was older than the sources (edited during the run): they ran through tsx, so those figures are not a release's`;
      notes.push(stale);
      log(`bench   WARNING: ${stale}`);
    }

    const search = await searchPhase(indexing.dataDir, queries, options.iterations, options.warmup!, log);
    const searchCores = phaseCores();
    for (const q of search.queries) if (q.error) notes.push(`query ${q.name} failed: ${q.error}`);
    const judged = judgedQueries(o.corpus);
    if (judged) notes.push((await rankingPhase(indexing.dataDir, judged, log)).line);

    const hq = httpQueries(queries);
    const http = await httpPhase(
      {
        root: ROOT,
        dataDir: indexing.dataDir,
        work,
        searchQuery: hq.search.query,
        streamQuery: hq.stream.query,
        seconds: options.httpSeconds,
        connections: options.httpConnections,
        streamRuns: options.streamRuns,
        streamWarmup: options.streamWarmup!,
        idleMs: d.idleMs,
        overheadRounds: d.overheadRounds,
      },
      log,
    );
    phaseCores(); // the daemon's CPU is not foreign: http.foreignCores subtracts it
    const overHttp = await httpQueriesPhase({ root: ROOT, dataDir: indexing.dataDir, work, iterations: options.httpQueryIterations!, warmup: options.warmup! }, queries, log);
    phaseCores();
    for (const q of overHttp.queries) if (q.error) notes.push(`query ${q.name} failed over HTTP: ${q.error}`);
    const distinctRun = await distinctPhase(
      { root: ROOT, corpus, dataDir: indexing.dataDir, work, count: options.distinct!, warmup: options.warmup!, cold: o.cold === true, seed: DISTINCT_SEED },
      queries,
      log,
      notes,
    );
    phaseCores(); // the phase records its own foreign cores
    const distinct = distinctRun?.phase;
    if (distinct && distinct.identifiers.errors > 0) notes.push(`distinct identifiers: ${distinct.identifiers.errors} requests failed (${distinct.identifiers.firstError})`);
    if (http.memory.idleSamplesBytes.length === 0) notes.push('memory: /proc/<pid>/status is not readable here (not Linux?): no RSS samples');

    const auth = o.auth
      ? await authPhase({ root: ROOT, dataDir: indexing.dataDir, work, seconds: options.httpSeconds, connections: options.httpConnections, rounds: d.authRounds }, log)
      : undefined;
    const web = o.web ? await webPhase({ root: ROOT, dataDir: indexing.dataDir, work, runs: d.webRuns }, queries, log) : undefined;
    const viewer = o.web ? await viewerPhase({ root: ROOT, work, runs: d.webRuns }, log) : undefined;
    phaseCores(); // each opt-in phase records its own foreign cores

    const peers = o.peers
      ? await peersPhase(
          { corpus, corpusBytes: id.totalBytes, work, runs: options.peerRuns, timeoutSeconds: options.peerTimeoutSeconds, versions: { rg: env.ripgrep, csearch: env.codesearch } },
          queries,
          search.queries,
          log,
        )
      : [];
    if (distinctRun && o.peers) {
      const csearchIndex = peers.find((p) => p.peer === 'csearch')?.index ? csearchIndexIn(work) : undefined;
      distinctPeers(distinctRun.phase, distinctRun.msByRequest, { corpus, csearchIndex, rgSample: d.rgSample, timeoutSeconds: options.peerTimeoutSeconds }, log);
    }
    const peersCores = phaseCores();
    const reindex = o.reindex ? await reindexPhase({ root: ROOT, corpus, work, runs: options.indexRuns, corpusBytes: id.totalBytes }, log) : undefined;
    const manyRepos = await runManyRepos();
    const clusterResult = await runCluster();
    for (const p of peers) if (!p.available) notes.push(`${p.peer}: ${p.note}`);
    if (!o.peers) notes.push('peers skipped (--no-peers)');
    if (git) notes.push('the corpus is a git repository: trawl indexed the committed trees of every branch, the peers searched the work tree');

    const p50s = search.queries.flatMap((q) => (q.latencyMs ? [q.latencyMs.p50] : []));
    const indexSeconds = indexing.runs.map((r) => r.seconds);
    const core: CorePhases = {
      indexing: { runs: indexing.runs },
      commands,
      search,
      http: { search: http.search, stream: http.stream, overhead: http.overhead },
      httpQueries: overHttp,
      ...(distinct ? { distinct } : {}),
      memory: http.memory,
      peers,
      foreignCores: { corpus: corpusCores, indexing: indexCores, search: searchCores, http: http.foreignCores, peers: o.peers ? peersCores : null },
      summary: {
        distinctP50Ms: distinct?.identifiers.latencyMs?.p50 ?? null,
        distinctP90Ms: distinct?.identifiers.latencyMs?.p90 ?? null,
        distinctP99Ms: distinct?.identifiers.latencyMs?.p99 ?? null,
        searchMedianP50Ms: p50s.length ? median(p50s) : null,
        indexSeconds: median(indexSeconds),
        indexMbPerSecond: median(indexing.runs.map((r) => r.mbPerSecond)),
        httpRequestsPerSecond: http.search.requestsPerSecond,
        streamMbPerSecond: http.stream.mbPerSecondSamples.length ? median(http.stream.mbPerSecondSamples) : null,
      },
    };
    return {
      ...base(),
      ...core,
      ...(reindex ? { reindex } : {}),
      ...(auth ? { auth } : {}),
      ...(web ? { web } : {}),
      ...(viewer ? { viewer } : {}),
      ...(manyRepos ? { manyRepos } : {}),
      ...(clusterResult ? { cluster: clusterResult } : {}),
    };
  } finally {
    unhook();
    cleanup();
  }
}

/** Writes the result atomically (a crash leaves no half-written file). */
export function writeResult(path: string, result: AnyBenchResult): void {
  mkdirSync(dirname(resolve(path)), { recursive: true });
  writeFileAtomic(resolve(path), formatResultJson(result));
}

/**
 * Indented JSON with every array of numbers on one line: a committed result stays
 * readable and diffable without one line per sample.
 */
export function formatResultJson(result: AnyBenchResult): string {
  return (
    JSON.stringify(result, null, 2).replace(/\[\s*(-?\d[\d.e+-]*(?:,\s*-?\d[\d.e+-]*)*)\s*\]/g, (_, nums: string) => `[${nums.split(/,\s*/).join(', ')}]`) + '\n'
  );
}
