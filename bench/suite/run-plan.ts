// What a `trawl bench run` will do, settled before anything is measured: the corpus and
// query mix checked (a wrong argument fails in a second, not after an hour of indexing),
// the defaults of a full run or of --quick filled in, and the options the result file
// records.

import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { browserMissing } from './browser.ts';
import { DEFAULT_CLUSTERS } from './cluster-figures.ts';
import { FULL_WARMUP } from './latency.ts';
import type { ManySpec } from './many-repos-setup.ts';
import { dropCachesRefused } from './page-cache.ts';
import { loadQueries, type BenchQuery } from './queries.ts';
import type { BenchOptions, ClusterShape, OnlyPhase } from './result.ts';
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

/** The defaults of a full run and of --quick (a smoke test, on a small tree). */
const DEFAULTS = {
  full: {
    warmup: FULL_WARMUP,
    iterations: 200,
    httpQueryIterations: 50,
    indexRuns: 1,
    httpSeconds: 10,
    connections: 16,
    streamRuns: 9,
    streamWarmup: { runs: 6, ms: 2000 },
    peerRuns: 3,
    idleMs: 3000,
    overheadRounds: 2,
    authRounds: 2,
    webRuns: 5,
    commandRuns: 10,
    distinct: 200,
    manyLoadSeconds: 5,
    rgSample: 10,
  },
  quick: {
    warmup: { runs: 2, ms: 20 },
    iterations: 20,
    httpQueryIterations: 5,
    indexRuns: 1,
    httpSeconds: 3,
    connections: 8,
    streamRuns: 2,
    streamWarmup: { runs: 1, ms: 0 },
    peerRuns: 1,
    idleMs: 1000,
    overheadRounds: 1,
    authRounds: 1,
    webRuns: 2,
    commandRuns: 3,
    distinct: 30,
    manyLoadSeconds: 2,
    rgSample: 3,
  },
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

/** A path under the checkout as a relative one (how the result file names it). */
export const displayPath = (p: string) => (p.startsWith(`${ROOT}/`) ? relative(ROOT, p) : p);

/** A run's inputs, checked, and its options. */
export interface RunPlan {
  startedAt: string;
  /** The defaults in force: a full run's or --quick's. */
  d: (typeof DEFAULTS)['full'];
  /** The corpus's directory. */
  corpus: string;
  queries: BenchQuery[];
  /** The many-repositories phase's corpora (none: the phase does not run), and where they are kept. */
  manySpecs: ManySpec[];
  manyDir: string;
  /** The options the result records. */
  options: BenchOptions;
  /** Whether the cluster phase runs. */
  cluster: boolean;
}

/** Checks the run's inputs and fills in its options; throws BenchInputError. */
export async function planRun(o: RunOptions): Promise<RunPlan> {
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
  return { startedAt, d, corpus, queries, manySpecs, manyDir, options, cluster };
}
