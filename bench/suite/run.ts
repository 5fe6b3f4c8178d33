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

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { release, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { corpusIdentity, type CorpusIdentity } from './corpus.ts';
import { stopOnSignal } from './load.ts';
import { cpuMark, environment, foreignCores, type Environment } from './machine.ts';
import type { BenchQuery } from './queries.ts';
import { writeFileAtomic } from '../../daemon/index/data-dir.ts';
import { authPhase } from './phase-auth.ts';
import { httpPhase } from './phase-http.ts';
import { httpQueriesPhase } from './phase-http-queries.ts';
import { commandsPhase } from './phase-commands.ts';
import { indexPhase } from './phase-index.ts';
import { csearchIndexIn, peersPhase } from './phase-peers.ts';
import { reindexPhase } from './phase-reindex.ts';
import { rankingPhase } from './phase-ranking.ts';
import { searchPhase } from './phase-search.ts';
import { webPhase } from './phase-web.ts';
import { viewerPhase } from './phase-viewer.ts';
import { clusterPhase } from './phase-cluster.ts';
import { distinctPeers, distinctPhase } from './phase-distinct.ts';
import { DISTINCT_SEED } from './distinct-latency.ts';
import { manyReposPhase } from './phase-many-repos.ts';
import { BenchInputError, displayPath, judgedQueries, planRun, ROOT, type RunOptions, type RunPlan } from './run-plan.ts';
import {
  RESULT_FORMAT,
  type AnyBenchResult,
  type BenchEnvironment,
  type ClusterPhase,
  type CorePhases,
  type ManyReposPhase,
  type ResultBase,
  type SearchPhase,
} from './result.ts';
import { median } from './percentiles.ts';

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

/** A run under way: what its phases share. */
interface Run {
  o: RunOptions;
  plan: RunPlan;
  /** The temporary work dir, removed at the end. */
  work: string;
  id: CorpusIdentity;
  /** The corpus is a git repository: every branch is indexed. */
  git: boolean;
  env: Environment;
  /** The result's notes, added to by every phase. */
  notes: string[];
  log: (s: string) => void;
  /** The other processes' cores since the previous call (null: not measurable here). */
  phaseCores: () => number | null;
}

export async function benchRun(o: RunOptions, log: (s: string) => void): Promise<AnyBenchResult> {
  const plan = await planRun(o);
  const { corpus, queries, options } = plan;
  const env = environment(ROOT);
  const environmentInfo: BenchEnvironment = { ...env, kernel: release(), tinybench: packageVersion('tinybench'), autocannon: packageVersion('autocannon') };
  const notes: string[] = [];

  const work = mkdtempSync(join(tmpdir(), 'trawl-bench-'));
  const cleanup = () => rmSync(work, { recursive: true, force: true });
  const unhook = stopOnSignal(cleanup);
  try {
    log(`bench   ${displayPath(corpus)}, ${queries.length} queries from ${options.queries}${o.quick ? ' (quick)' : ''}; work dir ${work}`);
    // bin/trawl.js runs the sources through tsx when dist/ is older than them (and says so
    // in TRAWL_FROM_SOURCES, which the processes this one starts inherit): slower to start
    // and larger in memory, which is not what a release runs.
    if (process.env.TRAWL_FROM_SOURCES === '1') {
      const stale =
        'the compiled build (dist/) is older than the sources: every trawl process of this run ran the TypeScript through tsx (slower start, more memory); run ./scripts/setup.sh or node scripts/compile.js first';
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
    log(
      `corpus  ${id.files} files, ${(id.totalBytes / 1e6).toFixed(1)} MB, sha256 ${id.sha256.slice(0, 12)} (${id.seconds.toFixed(1)} s)${git ? '; a git repository: every branch is indexed' : ''}`,
    );
    if (id.files === 0) throw new BenchInputError(`--corpus ${o.corpus}: the directory holds no files`);

    const run: Run = { o, plan, work, id, git, env, notes, log, phaseCores };
    const base = (): ResultBase => ({
      format: RESULT_FORMAT,
      startedAt: plan.startedAt,
      finishedAt: new Date().toISOString(),
      options,
      environment: environmentInfo,
      corpus: { name: id.name, path: id.path, files: id.files, totalBytes: id.totalBytes, sha256: id.sha256, git },
      notes,
    });
    if (o.only === 'cluster') {
      const clusterResult = await runCluster(run);
      return { ...base(), ...(clusterResult ? { cluster: clusterResult } : {}) };
    }
    if (o.only === 'viewer') return { ...base(), viewer: await viewerPhase({ root: ROOT, work, runs: plan.d.webRuns }, log) };
    if (o.only === 'many-repos') {
      const manyRepos = await runManyRepos(run);
      if (!o.peers) notes.push('peers skipped (--no-peers)');
      return { ...base(), ...(manyRepos ? { manyRepos } : {}) };
    }
    const phases = await everyPhase(run, corpusCores);
    return { ...base(), ...phases };
  } finally {
    unhook();
    cleanup();
  }
}

/** The cluster phase, when asked for. After every other phase: its servers would disturb none of them, and none of theirs it. */
async function runCluster({ o, plan, work, notes, log }: Run): Promise<ClusterPhase | undefined> {
  if (!plan.cluster) return undefined;
  const { options, d } = plan;
  const c = await clusterPhase(
    {
      root: ROOT,
      corpus: plan.corpus,
      work,
      clusters: options.clusters!,
      iterations: options.httpQueryIterations!,
      warmup: options.warmup!,
      seconds: options.httpSeconds,
      connections: options.httpConnections,
      symbols: o.symbols,
      idleMs: d.idleMs,
    },
    plan.queries,
    log,
  );
  notes.push(...c.notes);
  return c.phase;
}

/** The many-repositories phase, when asked for: after the core and opt-in phases, before the cluster's. */
async function runManyRepos({ o, plan, work, notes, log }: Run): Promise<ManyReposPhase | undefined> {
  if (plan.manySpecs.length === 0) return undefined;
  const { options, d } = plan;
  const m = await manyReposPhase(
    {
      root: ROOT,
      corpusArg: o.corpus,
      corpus: plan.corpus,
      cacheDir: plan.manyDir,
      work,
      specs: plan.manySpecs,
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
}

/** What a run of the core phases adds to the result: those, and the opt-in phases asked for. */
type Phases = CorePhases & Pick<ResultBase, 'reindex' | 'auth' | 'web' | 'viewer' | 'manyRepos' | 'cluster'>;

/** The core phases, then the opt-in ones, in the order that keeps each from disturbing the next. */
async function everyPhase(run: Run, corpusCores: number | null): Promise<Phases> {
  const { o, plan, work, id, git, notes, log, phaseCores } = run;
  const { indexing, indexCores, commands } = await indexAndCommands(run);
  const served = await searchAndServe(run, indexing.dataDir);
  const { search, http, distinctRun } = served;
  const distinct = distinctRun?.phase;

  const auth = o.auth
    ? await authPhase(
        {
          root: ROOT,
          dataDir: indexing.dataDir,
          work,
          seconds: plan.options.httpSeconds,
          connections: plan.options.httpConnections,
          rounds: plan.d.authRounds,
        },
        log,
      )
    : undefined;
  const web = o.web ? await webPhase({ root: ROOT, dataDir: indexing.dataDir, work, runs: plan.d.webRuns }, plan.queries, log) : undefined;
  const viewer = o.web ? await viewerPhase({ root: ROOT, work, runs: plan.d.webRuns }, log) : undefined;
  phaseCores(); // each opt-in phase records its own foreign cores

  const peers = await runPeers(run, search, distinctRun);
  const peersCores = phaseCores();
  const reindex = o.reindex
    ? await reindexPhase({ root: ROOT, corpus: plan.corpus, work, runs: plan.options.indexRuns, corpusBytes: id.totalBytes }, log)
    : undefined;
  const manyRepos = await runManyRepos(run);
  const clusterResult = await runCluster(run);
  for (const p of peers) if (!p.available) notes.push(`${p.peer}: ${p.note}`);
  if (!o.peers) notes.push('peers skipped (--no-peers)');
  if (git) notes.push('the corpus is a git repository: trawl indexed the committed trees of every branch, the peers searched the work tree');

  const p50s = search.queries.flatMap((q) => (q.latencyMs ? [q.latencyMs.p50] : []));
  const core: CorePhases = {
    indexing: { runs: indexing.runs },
    commands,
    search,
    http: { search: http.search, stream: http.stream, overhead: http.overhead },
    httpQueries: served.overHttp,
    ...(distinct ? { distinct } : {}),
    memory: http.memory,
    peers,
    foreignCores: { corpus: corpusCores, indexing: indexCores, search: served.searchCores, http: http.foreignCores, peers: o.peers ? peersCores : null },
    summary: {
      distinctP50Ms: distinct?.identifiers.latencyMs?.p50 ?? null,
      distinctP90Ms: distinct?.identifiers.latencyMs?.p90 ?? null,
      distinctP99Ms: distinct?.identifiers.latencyMs?.p99 ?? null,
      searchMedianP50Ms: p50s.length ? median(p50s) : null,
      indexSeconds: median(indexing.runs.map((r) => r.seconds)),
      indexMbPerSecond: median(indexing.runs.map((r) => r.mbPerSecond)),
      httpRequestsPerSecond: http.search.requestsPerSecond,
      streamMbPerSecond: http.stream.mbPerSecondSamples.length ? median(http.stream.mbPerSecondSamples) : null,
    },
  };
  return {
    ...core,
    ...(reindex ? { reindex } : {}),
    ...(auth ? { auth } : {}),
    ...(web ? { web } : {}),
    ...(viewer ? { viewer } : {}),
    ...(manyRepos ? { manyRepos } : {}),
    ...(clusterResult ? { cluster: clusterResult } : {}),
  };
}

/** The index the other phases search, and whole `trawl` commands timed as processes. */
async function indexAndCommands({ o, plan, work, id, git, notes, log, phaseCores }: Run) {
  const indexing = await indexPhase(
    { root: ROOT, corpus: plan.corpus, corpusBytes: id.totalBytes, git, symbols: o.symbols, runs: plan.options.indexRuns, work },
    log,
  );
  const indexCores = phaseCores();
  const last = indexing.runs.at(-1)!;
  if (last.files === 0) throw new BenchInputError(`--corpus ${o.corpus}: trawl indexed no file (all binary, too large or ignored?)`);
  if (o.symbols && last.symbolCount === 0) notes.push('no symbol was extracted (universal-ctags missing, or no supported language): sym: queries find nothing');

  // Its own foreign cores, like the opt-in phases: a new key in foreignCores would make
  // every older result file invalid.
  const { phase: commands, staleRuns } = await commandsPhase(
    { root: ROOT, corpus: plan.corpus, work, runs: plan.d.commandRuns, symbols: o.symbols },
    plan.queries,
    log,
  );
  phaseCores();
  if (!commands.search) notes.push('the query mix has no literal that is a plain identifier: `trawl search` was not timed');
  if (staleRuns > 0) {
    const stale = `${staleRuns} process(es) of the whole-process timings started while the compiled build was older than the sources (edited during the run): they ran through tsx, so those figures are not a release's`;
    notes.push(stale);
    log(`bench   WARNING: ${stale}`);
  }
  return { indexing, indexCores, commands };
}

/** Search in process, the ranking, then the daemon over HTTP: its load and stream, the mix's queries, the held-out identifiers. */
async function searchAndServe({ o, plan, work, notes, log, phaseCores }: Run, dataDir: string) {
  const { options, queries, d } = plan;
  const search = await searchPhase(dataDir, queries, options.iterations, options.warmup!, log);
  const searchCores = phaseCores();
  for (const q of search.queries) if (q.error) notes.push(`query ${q.name} failed: ${q.error}`);
  const judged = judgedQueries(o.corpus);
  if (judged) notes.push((await rankingPhase(dataDir, judged, log)).line);

  const hq = httpQueries(queries);
  const http = await httpPhase(
    {
      root: ROOT,
      dataDir,
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
  const overHttp = await httpQueriesPhase({ root: ROOT, dataDir, work, iterations: options.httpQueryIterations!, warmup: options.warmup! }, queries, log);
  phaseCores();
  for (const q of overHttp.queries) if (q.error) notes.push(`query ${q.name} failed over HTTP: ${q.error}`);
  const distinctRun = await distinctPhase(
    { root: ROOT, corpus: plan.corpus, dataDir, work, count: options.distinct!, warmup: options.warmup!, cold: o.cold === true, seed: DISTINCT_SEED },
    queries,
    log,
    notes,
  );
  phaseCores(); // the phase records its own foreign cores
  const distinct = distinctRun?.phase;
  if (distinct && distinct.identifiers.errors > 0)
    notes.push(`distinct identifiers: ${distinct.identifiers.errors} requests failed (${distinct.identifiers.firstError})`);
  if (http.memory.idleSamplesBytes.length === 0) notes.push('memory: /proc/<pid>/status is not readable here (not Linux?): no RSS samples');
  return { search, searchCores, http, overHttp, distinctRun };
}

/** The peers on the mix's queries, and on the held-out identifiers. */
async function runPeers({ o, plan, work, id, env, log }: Run, search: SearchPhase, distinctRun: Awaited<ReturnType<typeof distinctPhase>>) {
  const { options, d } = plan;
  const peers = o.peers
    ? await peersPhase(
        {
          corpus: plan.corpus,
          corpusBytes: id.totalBytes,
          work,
          runs: options.peerRuns,
          timeoutSeconds: options.peerTimeoutSeconds,
          versions: { rg: env.ripgrep, csearch: env.codesearch },
        },
        plan.queries,
        search.queries,
        log,
      )
    : [];
  if (distinctRun && o.peers) {
    const csearchIndex = peers.find((p) => p.peer === 'csearch')?.index ? csearchIndexIn(work) : undefined;
    distinctPeers(
      distinctRun.phase,
      distinctRun.msByRequest,
      { corpus: plan.corpus, csearchIndex, rgSample: d.rgSample, timeoutSeconds: options.peerTimeoutSeconds },
      log,
    );
  }
  return peers;
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
  return `${JSON.stringify(result, null, 2).replace(/\[\s*(-?\d[\d.e+-]*(?:,\s*-?\d[\d.e+-]*)*)\s*\]/g, (_, nums: string) => `[${nums.split(/,\s*/).join(', ')}]`)}\n`;
}
