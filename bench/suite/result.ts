// The result file of `trawl bench run` (format "trawl-bench/1"), read back by
// `trawl bench compare`. Its JSON Schema is bench/result.schema.json; bench/METHOD.md says
// what each figure means. Every figure keeps its raw samples so that a comparison can
// judge a change on the distributions rather than on two medians.
//
// Units are in the names: ...Ms milliseconds, ...Bytes bytes, ...Seconds seconds,
// mbPerSecond 10^6 bytes per second. A figure that could not be measured is null (with a
// note saying why), never a made-up number.

import type { Summary } from './percentiles.ts';
import type { SearchStats } from '../../daemon/search/types.ts';

export const RESULT_FORMAT = 'trawl-bench/1';

export interface BenchEnvironment {
  machine: { cpuModel: string; cores: number; totalMemoryBytes: number; platform: string };
  node: string;
  /** The operating system's kernel release (os.release()). */
  kernel: string;
  trawlVersion: string;
  /** `git rev-parse HEAD`, "+uncommitted" when the work tree differs; "uncommitted" without a commit. */
  gitCommit: string;
  /** First line of `rg --version`; null when not installed. */
  ripgrep: string | null;
  /** The Debian package version of codesearch; null when not installed. */
  codesearch: string | null;
  tinybench: string;
  autocannon: string;
}

export interface BenchOptions {
  /** The corpus as given (`linux` or a directory). */
  corpus: string;
  /** The query file used, relative to the project root when inside it. */
  queries: string;
  /** sha256 of the query file's bytes: two runs compare query by query only with the same mix. */
  queriesSha256: string;
  quick: boolean;
  /** Timed runs per query (tinybench iterations). */
  iterations: number;
  /** Search threads of the in-process searcher and of the daemon (their default: the cores). */
  workers: number;
  /** Index builds (each into an empty data dir). */
  indexRuns: number;
  /** Symbols extracted (C scanner and universal-ctags): needed by sym: queries. */
  symbols: boolean;
  /** Seconds of the HTTP load run, and its connections. */
  httpSeconds: number;
  httpConnections: number;
  /** Timed streaming requests. */
  streamRuns: number;
  /** Untimed streaming requests before them: at least `runs` and at least `ms`; absent in results from before it (one warm-up stream). */
  streamWarmup?: Warmup;
  /** Timed requests per query over HTTP, one client; absent in results before it was measured. */
  httpQueryIterations?: number;
  /** Untimed runs of each query before its timed ones, in process and over HTTP alike (latency.ts, warmUp); absent in results from before it (one warm-up run). */
  warmup?: Warmup;
  /** Runs per query of each peer; 0 when peers were skipped. */
  peerRuns: number;
  peerTimeoutSeconds: number;
  /** `--only cluster` / `--only viewer`: that phase alone (the core phases' fields are then absent). Absent in a run of every phase. */
  only?: OnlyPhase;
  /** The cluster phase's clusters (`--cluster-nodes`); absent without the phase. */
  clusters?: ClusterShape[];
  /** Runs before the clusters named their replication: the node counts alone (`--cluster-nodes`). */
  clusterNodes?: number[];
  /** Held-out identifiers timed once each (`--distinct`); absent in results before it was measured. */
  distinct?: number;
  /** `--cold`: the distinct identifiers also timed after the page cache was dropped. */
  cold?: boolean;
  /** `--corpus-repos N`: repositories cut from the corpus for the many-repositories phase. */
  corpusRepos?: number;
  /** `--tiny-repos N`: synthetic tiny repositories for the many-repositories phase. */
  tinyRepos?: number;
  /** `--many-dir`: where the many-repositories corpora are kept between runs. */
  manyDir?: string;
}

/** At least `runs` runs and at least `ms` milliseconds. */
export interface Warmup {
  runs: number;
  ms: number;
}

export interface CorpusInfo {
  name: string;
  /** Absolute path at the time of the run. */
  path: string;
  /** Regular files (symlinks and .git directories excluded). */
  files: number;
  totalBytes: number;
  /** sha256 over each file in byte order of its path: path NUL size NUL bytes. */
  sha256: string;
  /** Indexed as a git repository (every branch) rather than as a directory. */
  git: boolean;
}

export interface IndexRun {
  seconds: number;
  mbPerSecond: number;
  /** Peak RSS of the `trawl index` process (GNU time %M, else the process's own maxRSS). */
  peakRssBytes: number | null;
  /** Bytes of the shard files (content included). */
  indexBytes: number;
  /** Bytes of the files that were indexed (not those skipped as binary or too large). */
  contentBytes: number;
  /** indexBytes / contentBytes. */
  sizeRatio: number;
  files: number;
  skipped: number;
  shards: number;
  symbolCount: number | null;
  /**
   * Seconds from spawn until the content was committed, searchable (a build whose symbols
   * came after: indexer.ts symbolsLater); = seconds when the build ended with its content
   * (symbols inline or none). Null: not told. Absent in results written before it was measured.
   */
  contentSeconds?: number | null;
}

/** p50, p95, p99 (linear interpolation between closest ranks), mean, min, max. */
export type Percentiles = Summary;

export interface QueryResult {
  name: string;
  query: string;
  kind: string;
  /** The mix the query came with (bench/queries/*.json "set"). */
  set: string;
  regex: boolean;
  caseSensitive: boolean;
  /** The request's `matches`: the match limit asked for, not the number returned (that is in stats). */
  matches: number;
  /** Every timed run (ascending: tinybench keeps them sorted). */
  samplesMs: number[];
  /** Over samplesMs; null when the query failed. */
  latencyMs: Percentiles | null;
  /** The search stats of the last timed run: what the engine did (docs/http-api.md, "stats"). */
  stats: SearchStats | null;
  isSearchExhaustive: boolean | null;
  error: string | null;
}

export interface SearchPhase {
  /** The first search of the run: worker pool start and shard mapping. */
  coldStartMs: number | null;
  queries: QueryResult[];
}

export interface HttpSearch {
  /** The request body sent over and over (POST /api/search). */
  query: string;
  seconds: number;
  connections: number;
  /** Completed 2xx responses over the run's seconds. */
  requestsPerSecond: number;
  /** Completed responses in each second of the run. */
  perSecondSamples: number[];
  /** Over every 2xx response. */
  latencyMs: Percentiles | null;
  /** Every 2xx response's time (ms, 3 decimals), in order of arrival. */
  samplesMs: number[];
  non2xx: number;
  errors: number;
  timeouts: number;
  /** The daemon's CPU time per completed request. */
  serverCpuMsPerRequest: number | null;
}

/** One query of the mix over HTTP, one client (phase-http-queries.ts). */
export interface HttpQueryResult {
  name: string;
  /** Every timed request, first byte sent to last byte read (ms, ascending). */
  samplesMs: number[];
  latencyMs: Percentiles | null;
  /** The daemon's CPU time per timed request. */
  serverCpuMsPerRequest: number | null;
  error: string | null;
}

export interface HttpQueriesPhase {
  /** Timed requests per query. */
  iterations: number;
  queries: HttpQueryResult[];
  /** Median over the queries of each one's p50. */
  medianP50Ms: number | null;
  /** Over every timed request of every query: the mix's p99 is allSamplesMs.p99. */
  allSamplesMs: Percentiles | null;
}

export interface StreamRun {
  bytes: number;
  messages: number;
  matches: number | null;
  firstByteMs: number | null;
  /** Time to the first results (stream.ts); absent in results from before it. */
  firstResultMs?: number | null;
  totalMs: number;
  mbPerSecond: number;
}

export interface HttpStream {
  query: string;
  /** The request's `matches`: the match limit asked for, not the number returned (that is in stats). */
  matches: number;
  /** Timed runs (an untimed one comes first). */
  runs: StreamRun[];
  mbPerSecondSamples: number[];
  firstByteMsSamples: number[];
  /** Absent in results from before it. */
  firstResultMsSamples?: number[];
}

export interface MemoryPhase {
  /** The daemon's VmRSS every 100 ms for a while after the warm-up searches, nothing in flight. */
  idleSamplesBytes: number[];
  /** The daemon's VmRSS every 100 ms during the /api/search load run. */
  loadSamplesBytes: number[];
  idleMedianBytes: number | null;
  loadMedianBytes: number | null;
  loadPeakBytes: number | null;
  /**
   * The same samples split (/proc/PID/status): RssAnon, what the daemon allocated (heaps,
   * buffers, wasm memory), and RssFile, mapped shard pages the kernel can drop. Absent in
   * files written before they were measured, which have VmRSS only.
   */
  idleAnonSamplesBytes?: number[];
  loadAnonSamplesBytes?: number[];
  idleFileSamplesBytes?: number[];
  loadFileSamplesBytes?: number[];
  idleAnonMedianBytes?: number | null;
  loadAnonMedianBytes?: number | null;
  loadAnonPeakBytes?: number | null;
  idleFileMedianBytes?: number | null;
  loadFileMedianBytes?: number | null;
}

/** One cheap request of the HTTP phase under load: what the HTTP layer costs (http-overhead.ts). */
export interface HttpOverhead {
  name: 'version' | 'noHitSearch';
  /** e.g. "GET /api/version". */
  request: string;
  connections: number;
  /** Of the timed runs, pooled. */
  seconds: number;
  requestsPerSecond: number;
  perSecondSamples: number[];
  /** Over every 2xx response (no samples kept: tens of thousands a second). */
  latencyMs: Percentiles | null;
  non2xx: number;
  /** Errors and timeouts. */
  errors: number;
  /** The daemon's CPU time per completed request, over every timed run. */
  serverCpuMsPerRequest: number | null;
  /** The same, per timed run. */
  serverCpuMsPerRequestSamples: number[];
}

export interface PeerQuery {
  name: string;
  command: string[];
  samplesMs: number[];
  medianMs: number | null;
  /** peer median / trawl p50: how many times faster trawl is. */
  ratioToTrawl: number | null;
  timedOut: boolean;
  error: string | null;
}

export interface PeerResult {
  peer: 'rg' | 'csearch';
  available: boolean;
  version: string | null;
  note: string | null;
  /** csearch's index (cindex), built in the same run; null for rg. */
  index: { seconds: number; mbPerSecond: number; indexBytes: number; peakRssBytes: number | null } | null;
  queries: PeerQuery[];
  /** Over the queries both ran: median of the peer's medians, of trawl's p50, and their ratio. */
  medianMs: number | null;
  trawlMedianP50Ms: number | null;
  ratio: number | null;
}

/** One kind of `trawl index` run of the re-indexing phase (phase-reindex.ts). */
export interface ReindexBuild {
  /** Wall seconds of each run, spawn to exit (Node start-up included). */
  secondsSamples: number[];
  /** Peak RSS of the last run (GNU time %M); null without /usr/bin/time. */
  peakRssBytes: number | null;
  /** The live index after the last run: the shard, membership and symbols files the manifests name. */
  indexBytes: number;
  /** Of which branch lists: the shards' branches sections, or the membership files that replace them. */
  branchListBytes: number;
  /** Bytes of the files the live index holds (its manifests' content bytes); absent in results from before it. */
  contentBytes?: number;
}

/** Wall seconds of each timed run of one `trawl` command, spawn to exit (Node's start-up included). */
export interface CommandRuns {
  secondsSamples: number[];
}

/** `--reindex`: the corpus as a git repository, with branches and an incremental run. */
export interface ReindexPhase {
  /** Branches of the `branches` build, main included. */
  branches: number;
  /** Files each branch changes. */
  changedFilesPerBranch: number;
  builds: { full: ReindexBuild; branches: ReindexBuild; unchanged: ReindexBuild; oneFile: ReindexBuild };
  /** Bytes of the corpus's files, which the repository commits: full builds' MB/s are over them. Absent in results from before it. */
  corpusBytes?: number;
  /**
   * `trawl sync` of a configuration naming the repository: `first` into an empty data dir
   * (main only, a full build), then `oneLine` after each commit on main that appends one
   * line to one file. Absent in results from before it.
   */
  sync?: { first: CommandRuns; oneLine: CommandRuns };
  foreignCores: number | null;
}

/** The search timing's index: the corpus's first text files, about 45 MB of content (phase-commands.ts). */
export interface SmallIndex {
  files: number;
  contentBytes: number;
  /** The live index: the files its manifest names. */
  indexBytes: number;
  symbols: boolean;
  /** Of its `trawl index`, spawn to exit. */
  seconds: number;
}

/** `trawl search LITERAL` over the small index, the CLI searching the data dir in process. */
export interface CommandSearch extends CommandRuns {
  /** The mix's first plain-identifier literal with a match in the small index (else its first). */
  query: string;
  /** Searched with --case (the query's own case sensitivity). */
  caseSensitive: boolean;
  /** Its matches in the small index (absent in results before they were recorded). */
  matches?: number;
  index: SmallIndex;
}

/** Whole-process timings of `trawl` commands, against targets.ts (phase-commands.ts). */
export interface CommandsPhase {
  /** Timed runs of each command (after one untimed run of help and search). */
  runs: number;
  help: CommandRuns;
  /** null when the query mix has no literal that is a plain identifier. */
  search: CommandSearch | null;
  /** `trawl sync` of a git repository of `files` of the corpus's text files: its first sync, then after each one-file commit. */
  sync: { files: number; first: CommandRuns; oneFile: CommandRuns };
  foreignCores: number | null;
}

/** One variant of the same request in the auth phase, every round pooled. */
export interface AuthVariant {
  name: 'anonymous' | 'apiKey';
  requestsPerSecond: number;
  perSecondSamples: number[];
  latencyMs: Percentiles | null;
  samplesMs: number[];
  non2xx: number;
  errors: number;
  timeouts: number;
  serverCpuMsPerRequest: number | null;
}

/** `--auth`: what identifying and counting a caller costs a request (phase-auth.ts). */
export interface AuthPhase {
  /** The request both variants send, e.g. "GET /api/repos". */
  request: string;
  /** Seconds of each timed run, its connections, and the alternations of the two variants. */
  seconds: number;
  connections: number;
  rounds: number;
  variants: AuthVariant[];
  /** The API key's daemon CPU per request minus anonymous's, in µs: what the step adds. */
  stepCpuUsPerRequest: number | null;
  foreignCores: number | null;
}

export interface WebQuery {
  name: string;
  query: string;
  /** Per page load: when the frame that showed the first result started, ms after navigation began; none when nothing was found. */
  firstResultMsSamples: number[];
  /** Per page load: when the final message arrived, ms after navigation began. */
  doneMsSamples: number[];
  /** Result files on the page. */
  files: number;
}

/** `--web`: the web UI's time to the first result, in headless Chromium (phase-web.ts). */
export interface WebPhase {
  chromium: string;
  /** Page loads per query. */
  runs: number;
  queries: WebQuery[];
  /** Median over the queries that found something of each one's median first result. */
  medianFirstResultMs: number | null;
  /** Median over every query of each one's median time to the final message. */
  medianDoneMs: number | null;
  foreignCores: number | null;
}

/**
 * `--web` (and `--only viewer`): the file view on a 200,000-line file in headless Chromium
 * (phase-viewer.ts). Times are ms: opening is from navigation to line `targetLine` drawn in
 * view; a jump is from setting the address's #L to that line drawn.
 */
export interface ViewerPhase {
  chromium: string;
  lines: number;
  bytes: number;
  targetLine: number;
  /** Page loads. */
  runs: number;
  openMsSamples: number[];
  /** Two per page load: to line 1, then back to targetLine. */
  jumpMsSamples: number[];
  medianOpenMs: number;
  medianJumpMs: number;
  /** Lines in the page's DOM after opening (the viewer draws what is in view). */
  drawnLines: number;
}

/** The phases that run without the core phases' index (`--only`). */
export type OnlyPhase = 'cluster' | 'viewer' | 'many-repos';
export const ONLY_PHASES: readonly OnlyPhase[] = ['cluster', 'viewer', 'many-repos'];

/** What every result has, whichever phases ran. */
export interface ResultBase {
  format: typeof RESULT_FORMAT;
  startedAt: string;
  finishedAt: string;
  options: BenchOptions;
  environment: BenchEnvironment;
  corpus: CorpusInfo;
  notes: string[];
  /** The opt-in phases, present when asked for (--reindex, --auth, --web, --cluster). */
  reindex?: ReindexPhase;
  auth?: AuthPhase;
  web?: WebPhase;
  /** With --web, or alone with --only viewer; absent in results written before it was measured. */
  viewer?: ViewerPhase;
  cluster?: ClusterPhase;
  /** `--corpus-repos`, `--tiny-repos` (or alone with --only many-repos). */
  manyRepos?: ManyReposPhase;
}

/** The phases every run has, unless it ran the cluster phase alone (`--only cluster`). */
export interface CorePhases {
  indexing: { runs: IndexRun[] };
  /** Whole-process timings; absent in results written before they were measured. */
  commands?: CommandsPhase;
  search: SearchPhase;
  /** `overhead`: absent in files written before it was measured. */
  http: { search: HttpSearch; stream: HttpStream; overhead?: HttpOverhead[] };
  /** Absent in results written before it was measured. */
  httpQueries?: HttpQueriesPhase;
  /** The headline latency: held-out identifiers, each sent once. Absent in results written before it was measured. */
  distinct?: DistinctPhase;
  memory: MemoryPhase;
  peers: PeerResult[];
  /** Cores other processes kept busy during each phase (0: clean figures); null off Linux. */
  foreignCores: Record<'corpus' | 'indexing' | 'search' | 'http' | 'peers', number | null>;
  summary: {
    /** Held-out identifiers over HTTP, each sent once after a warm-up on others: p50, p90, p99 (distinct.identifiers). Absent in results before it was measured. */
    distinctP50Ms?: number | null;
    distinctP90Ms?: number | null;
    distinctP99Ms?: number | null;
    /** Repeated queries: median over the mix's queries of each query's p50, each timed after many runs of itself. */
    searchMedianP50Ms: number | null;
    indexSeconds: number | null;
    indexMbPerSecond: number | null;
    httpRequestsPerSecond: number;
    streamMbPerSecond: number | null;
  };
}

/** A run of every core phase (and the opt-in ones asked for): what `trawl bench run` writes by default. */
export interface BenchResult extends ResultBase, CorePhases {}

/** Any result file: a run of every core phase, or of the cluster phase alone (`--only cluster`). */
export type AnyBenchResult = ResultBase & Partial<CorePhases>;

/** Whether a result has the core phases (it was not a `--only cluster` run). */
export function hasCorePhases(r: AnyBenchResult): r is BenchResult {
  return (
    r.search !== undefined &&
    r.indexing !== undefined &&
    r.http !== undefined &&
    r.memory !== undefined &&
    r.peers !== undefined &&
    r.foreignCores !== undefined &&
    r.summary !== undefined
  );
}

/**
 * `--cluster`: the same query mix against one daemon without a cluster section
 * (the baseline) and against clusters of N nodes on a private PostgreSQL and Redis, every
 * configuration syncing the corpus as one git repository (phase-cluster.ts).
 */
export interface ClusterPhase {
  /** The node count of each cluster measured, in order (a count may come twice, at another replication: configurations). */
  nodeCounts: number[];
  /** Seconds to make the corpus a git repository (one commit on main), which every configuration syncs. */
  repositorySeconds: number;
  /** Search threads of each node and of the baseline (`trawl serve --workers`). */
  workersPerNode: number;
  /** One client: timed requests per query, after `warmup`. */
  iterations: number;
  warmup: Warmup;
  /** Seconds of the load, untimed, on each configuration before its one client (absent in runs before it was done: their nodes were measured cold). */
  warmSeconds?: number;
  /** The load run: connections spread over the nodes, for `seconds` after a warm-up run. */
  connections: number;
  seconds: number;
  /** The baseline first (kind "plain"), then one per cluster measured. */
  configurations: ClusterConfiguration[];
  /** The most other processes kept busy during a timed run (this process, the nodes, PostgreSQL and Redis not counted). */
  foreignCores: number | null;
}

/** A cluster the phase measures (`--cluster-nodes`): its nodes and its replication factor. */
export interface ClusterShape {
  nodes: number;
  replicationFactor: number;
}

export interface ClusterConfiguration {
  /** "plain": one `trawl serve` without a cluster section; "cluster": `nodes` nodes. */
  kind: 'plain' | 'cluster';
  nodes: number;
  /** cluster.replicationFactor; null for the plain daemon. */
  replicationFactor: number | null;
  /**
   * Seconds until the index was searchable everywhere: the plain daemon's `trawl sync`; a
   * cluster's nodes from their start until every node saw every shard on each node placed
   * for it, symbols included (the leader's listing, the build, publication, the copies).
   */
  readySeconds: number;
  /** The (published) index: shards and bytes (shard, membership and symbols files). */
  shards: number;
  indexBytes: number;
  perNode: ClusterNodeFigures[];
  queries: ClusterQuery[];
  /** Median over the queries of each query's p50. */
  medianP50Ms: number | null;
  /** Median over the queries of (this configuration's p50 − the plain daemon's p50, as ClusterQuery.overheadMs takes it); null for the plain daemon. */
  overheadMs: number | null;
  /**
   * Median over the queries of (this p50 − the p50 of as many nodes that each hold every
   * shard, where no search asks another node): the fan-out's cost apart from the nodes'
   * sharing of the machine (cluster-figures.ts sameNodesOverheads). Null where the phase did
   * not measure that control, for the control itself and for the plain daemon; absent in
   * runs before it was measured.
   */
  sameNodesOverheadMs?: number | null;
  /**
   * During the one-client mix (warm-ups and answer checks included; the interleaved
   * daemon's requests not), per request the nodes answered: their threads' time on a core
   * and their time runnable but waiting for one, summed over the threads
   * (/proc/PID/task/TID/schedstat: sched-stat.ts). Null where the statistics could not be
   * read; absent in runs before it was measured.
   */
  oneClient?: { cpuMsPerRequest: number; waitMsPerRequest: number } | null;
  load: ClusterLoad;
  /** Answers through a node that differ from the plain daemon's (should be none): query, node, both answers. */
  mismatches: string[];
}

/** One node of a configuration (the plain daemon is one). */
export interface ClusterNodeFigures {
  id: string;
  /** Shards it held at the published generation, as the cluster counts them (GET /api/cluster). */
  shards: number;
  /** Bytes of the index files its manifest names. */
  indexBytes: number;
  /** Its whole data dir (retired files not yet collected included). */
  dataDirBytes: number;
  /** VmRSS, RssAnon, RssFile: medians while idle after the one-client pass. */
  idleRssBytes: number | null;
  idleAnonBytes: number | null;
  idleFileBytes: number | null;
  /** Peaks during the load run. */
  loadRssPeakBytes: number | null;
  loadAnonPeakBytes: number | null;
  /** CPU ms it spent during the load run. */
  loadCpuMs: number | null;
  /** 2xx responses of the load run it answered as the node the client reached. */
  loadRequests: number;
}

export interface ClusterQuery {
  name: string;
  /** Every timed request (ms, ascending), the nodes taking turns. */
  samplesMs: number[];
  latencyMs: Percentiles | null;
  error: string | null;
  /**
   * This p50 − the plain daemon's p50: the daemon's requests interleaved with these where
   * `referenceP50Ms` is present, else its own earlier measurement; null for the plain daemon
   * or when either failed.
   */
  overheadMs: number | null;
  /** The plain daemon's p50 over the requests paired with these, in the same window (mix-latency.ts reference); absent where it was measured alone first (runs before this was done, the plain daemon itself). */
  referenceP50Ms?: number | null;
}

export interface ClusterLoad {
  seconds: number;
  /** Responses completed (any status). */
  requests: number;
  /** 2xx responses per second. */
  requestsPerSecond: number;
  perSecondSamples: number[];
  /** Over every 2xx response. */
  latencyMs: Percentiles | null;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** The nodes' CPU time (user + system, every thread) over the run / requests completed. */
  cpuMsPerRequest: number | null;
  /** The same per whole second of the run. */
  cpuMsPerRequestSamples: number[];
  /** PostgreSQL's and Redis's CPU time (every process of each) / requests completed; null for the plain daemon. */
  supportCpuMsPerRequest: number | null;
  /** Cores the load generator (this process) used. */
  loadGeneratorCores: number | null;
  foreignCores: number | null;
}

/** Order statistics of requests each sent once (percentiles.ts quantile). */
export interface DistinctSummary {
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

/** Requests each sent once by one client, one after the other (distinct-latency.ts). */
export interface DistinctLatency {
  /** What was sent, in order: a search's query, or a GET's path. */
  queries: string[];
  /** Each answered request's time, first byte written to last byte read (ms), in the order sent. */
  samplesMs: number[];
  latencyMs: DistinctSummary | null;
  /** Median of the answers' stats.duration (the daemon's search, without HTTP), in ms; null for requests that are not searches. */
  serverDurationP50Ms: number | null;
  /** Searches that found at least one match; null for requests that are not searches. */
  found: number | null;
  /** Requests not answered 200, and the first one's status and text. */
  errors: number;
  firstError: string | null;
}

/** A daemon started for a measurement (serve-ready.ts), and its first search once ready. */
export interface DaemonStart {
  /** Spawn of `trawl serve` to its "listening on" line, and to GET /readyz answering 200. */
  listeningMs: number;
  readyMs: number;
  /** The first search after ready: a held-out identifier sent nowhere else. */
  firstSearch: string;
  firstSearchMs: number | null;
}

/** `--cold`: a daemon started anew, the page cache dropped once it was ready, then held-out identifiers it had not been sent. */
export interface ColdPass extends DaemonStart {
  identifiers: DistinctLatency;
}

/** The untimed searches of other identifiers before the timed ones. */
export interface DistinctWarmup {
  requests: number;
  ms: number;
}

/** The headline latency of a run on one corpus (phase-distinct.ts). */
export interface DistinctPhase {
  /** Seed of the draw (identifiers.ts). */
  seed: number;
  /** Identifiers found in the corpus: the pool the sets were drawn from. */
  candidates: number;
  start: DaemonStart;
  warmup: DistinctWarmup;
  identifiers: DistinctLatency;
  /** The peers on the same identifiers (csearch every one, rg the first few), after the peers phase; absent with --no-peers, null when not installed. */
  csearch?: PeerKind | null;
  rg?: PeerKind | null;
  cold?: ColdPass;
  foreignCores: number | null;
}

/** The query kinds of the many-repositories phase. */
export type ManyReposKind = 'identifier' | 'noHit' | 'repo' | 'lang' | 'sym' | 'reposPage';

/** A peer on the queries of one kind, each query once as a whole process. */
export interface PeerKind {
  /** The queries it ran (all of the kind for csearch, the first few for rg). */
  queries: number;
  /** Spawn to exit, in the order run (a failed run has none). */
  samplesMs: number[];
  medianMs: number | null;
  /** trawl's median over the same queries. */
  trawlMedianMs: number | null;
  /** medianMs / trawlMedianMs: how many times faster trawl is. */
  ratio: number | null;
  errors: number;
  firstError: string | null;
}

export interface ManyReposQueries extends DistinctLatency {
  kind: ManyReposKind;
  /** null: the kind has no peer equivalent, or the peer is not installed. */
  csearch: PeerKind | null;
  rg: PeerKind | null;
}

/** One corpus of many repositories (phase-many-repos.ts). */
export interface ManyReposCorpus {
  /** e.g. "linux-2000", "tiny-20000": its directory under options.manyDir. */
  name: string;
  /** cut: one repository per directory of the corpus (many-repos.ts cutTree); tiny: synthetic. */
  kind: 'cut' | 'tiny';
  repos: number;
  files: number;
  /** Bytes of the repositories' files. */
  bytes: number;
  /** corpus.ts's hash over the repositories' files (their .git directories excluded). */
  sha256: string;
  /** Seconds it took to make; null when it was found made by an earlier run. */
  madeSeconds: number | null;
  /** `trawl sync` into an empty data dir: spawn to exit, its peak RSS, what it said, and the index it left (files under shards/). */
  sync: { seconds: number; peakRssBytes: number | null; indexed: number; failed: number; indexBytes: number; indexFiles: number };
  /** cindex over the same repositories; null when not installed. */
  cindex: { seconds: number; peakRssBytes: number | null; indexBytes: number } | null;
  start: DaemonStart;
  warmup: DistinctWarmup;
  /** Each kind's queries, each sent once. */
  queries: ManyReposQueries[];
  /** One selective literal at `connections` connections for `seconds` (autocannon). */
  load: {
    query: string;
    connections: number;
    seconds: number;
    requestsPerSecond: number;
    latencyMs: { p50: number | null; p99: number | null };
    non2xx: number;
    errors: number;
    serverCpuMsPerRequest: number | null;
  };
  /**
   * The daemon's RssAnon and VmRSS idle right after the searches (medians), RssAnon's peak
   * under the load; anonPerByte: that idle RssAnon / bytes. settledAnonBytes: RssAnon idle
   * once the daemon has collected after the searches (absent in older results), and its
   * ratio. Null off Linux.
   */
  memory: {
    idleAnonBytes: number | null;
    idleRssBytes: number | null;
    loadAnonPeakBytes: number | null;
    anonPerByte: number | null;
    settledAnonBytes?: number | null;
    settledAnonPerByte?: number | null;
  };
  /**
   * A line with a new token committed to one repository, then `trawl sync` beside the
   * daemon: spawn of the sync to the token's first search hit. Taken a few times in a row:
   * searchableMs and syncSeconds are the medians, searchableSamplesMs each run's (absent in
   * results of one run), file and token the first run's, polls all runs' searches.
   */
  change: {
    repo: string;
    file: string;
    token: string;
    searchableMs: number | null;
    searchableSamplesMs?: Array<number | null>;
    syncSeconds: number;
    polls: number;
  };
  cold?: ColdPass;
  /** Cores other processes kept busy over the corpus's measurements. */
  foreignCores: number | null;
}

export interface ManyReposPhase {
  seed: number;
  corpora: ManyReposCorpus[];
}
