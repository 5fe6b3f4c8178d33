// `trawl bench run`, `trawl bench compare`, `trawl bench history` and `trawl bench webhooks` (bench/README.md): the benchmark suite
// operators run on every release. Progress goes to stderr, the report to stdout.

import { writeFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { compareChartSvg } from './chart.ts';
import { compareText } from './compare-text.ts';
import { parseClusters } from './cluster-figures.ts';
import { ONLY_PHASES, type ClusterShape, type OnlyPhase } from './result.ts';
import { compareResults } from './compare.ts';
import { readResultFile } from './result-file.ts';
import { benchRun, writeResult } from './run.ts';
import { BenchInputError, type RunOptions } from './run-plan.ts';
import { runText } from './run-text.ts';
import { UsageError } from '../../daemon/cli/usage.ts';
import { runnableModule } from '../../daemon/install-root.ts';

function positiveInt(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0 || n > 1_000_000) throw new UsageError(`${flag} must be a positive integer, got "${v}"`);
  return n;
}

function fraction(flag: string, v: string | undefined, percent: boolean): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  const max = percent ? 1000 : 1;
  if (v.trim() === '' || !Number.isFinite(n) || n <= 0 || n >= max) throw new UsageError(`${flag} must be a number above 0 and below ${max}, got "${v}"`);
  return percent ? n / 100 : n;
}

/** The options that may be given without a value, and the value they then take. */
const OPTIONAL_VALUES: Record<string, string> = { '--corpus-repos': '2000', '--tiny-repos': '20000' };

/** `--corpus-repos` and `--tiny-repos` given without a number (last, or before another option) get their default. */
export function withDefaultValues(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (const [i, a] of argv.entries()) {
    out.push(a);
    const next = argv[i + 1];
    if (a in OPTIONAL_VALUES && (next === undefined || next.startsWith('--'))) out.push(OPTIONAL_VALUES[a]!);
  }
  return out;
}

/** `trawl bench run`'s arguments: the run's options and the result file asked for. Throws UsageError. */
export function parseRunArgs(argv: string[]): { options: RunOptions; out: string | undefined } {
  const { values, positionals } = parseArgs({
    args: withDefaultValues(argv),
    allowPositionals: true,
    options: {
      corpus: { type: 'string' },
      queries: { type: 'string' },
      out: { type: 'string' },
      quick: { type: 'boolean' },
      iterations: { type: 'string' },
      'http-iterations': { type: 'string' },
      'index-runs': { type: 'string' },
      'http-seconds': { type: 'string' },
      connections: { type: 'string' },
      'stream-runs': { type: 'string' },
      'peer-runs': { type: 'string' },
      'peer-timeout': { type: 'string' },
      'no-peers': { type: 'boolean' },
      'no-symbols': { type: 'boolean' },
      auth: { type: 'boolean' },
      web: { type: 'boolean' },
      reindex: { type: 'boolean' },
      cluster: { type: 'boolean' },
      'cluster-nodes': { type: 'string' },
      only: { type: 'string' },
      distinct: { type: 'string' },
      cold: { type: 'boolean' },
      'corpus-repos': { type: 'string' },
      'tiny-repos': { type: 'string' },
      'many-dir': { type: 'string' },
      verbose: { type: 'boolean' },
    },
  });
  if (positionals.length > 0) throw new UsageError(`bench run takes no arguments, got "${positionals[0]}" (the corpus is --corpus DIR)`);
  if (values.corpus === undefined) throw new UsageError('bench run needs --corpus DIR (or --corpus linux)');
  // The cluster, viewer and many-repositories phases alone: each makes an index of its own; the others need the core phases' index.
  if (values.only !== undefined && !(ONLY_PHASES as readonly string[]).includes(values.only))
    throw new UsageError(`--only takes ${ONLY_PHASES.map((p) => `"${p}"`).join(', ')} (the phases that run without the core phases), got "${values.only}"`);
  const only = values.only as OnlyPhase | undefined;
  if (only && (values.auth || values.web || values.reindex))
    throw new UsageError(`--only ${only} runs that phase alone: --auth, --web and --reindex need the core phases`);
  if (only === 'viewer' && values.cluster) throw new UsageError('--only viewer runs the code viewer phase alone: drop --cluster');
  if (only === 'many-repos' && values.cluster) throw new UsageError('--only many-repos runs the many-repositories phase alone: drop --cluster');
  const many = values['corpus-repos'] !== undefined || values['tiny-repos'] !== undefined;
  if (only === 'many-repos' && !many) throw new UsageError('--only many-repos needs --corpus-repos N or --tiny-repos N (or both)');
  if ((only === 'cluster' || only === 'viewer') && many) throw new UsageError(`--only ${only} runs that phase alone: drop --corpus-repos and --tiny-repos`);
  if ((only === 'cluster' || only === 'viewer') && (values.cold || values.distinct !== undefined))
    throw new UsageError(`--only ${only} times no held-out identifiers: drop --cold and --distinct`);
  if (values['many-dir'] !== undefined && !many) throw new UsageError('--many-dir is for the many-repositories phase: add --corpus-repos N or --tiny-repos N');
  let clusters: ClusterShape[] | undefined;
  if (values['cluster-nodes'] !== undefined) {
    if (!values.cluster && only !== 'cluster') throw new UsageError('--cluster-nodes is for the cluster phase: add --cluster (or --only cluster)');
    try {
      clusters = parseClusters(values['cluster-nodes']);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  }
  const options: RunOptions = {
    corpus: values.corpus,
    queries: values.queries,
    quick: values.quick === true,
    iterations: positiveInt('--iterations', values.iterations),
    httpQueryIterations: positiveInt('--http-iterations', values['http-iterations']),
    indexRuns: positiveInt('--index-runs', values['index-runs']),
    httpSeconds: positiveInt('--http-seconds', values['http-seconds']),
    connections: positiveInt('--connections', values.connections),
    streamRuns: positiveInt('--stream-runs', values['stream-runs']),
    peerRuns: positiveInt('--peer-runs', values['peer-runs']),
    peerTimeoutSeconds: positiveInt('--peer-timeout', values['peer-timeout']),
    peers: values['no-peers'] !== true,
    symbols: values['no-symbols'] !== true,
    auth: values.auth === true,
    web: values.web === true,
    reindex: values.reindex === true,
    cluster: values.cluster === true || only === 'cluster',
    ...(clusters ? { clusters } : {}),
    ...(only ? { only } : {}),
    ...optional('distinct', positiveInt('--distinct', values.distinct)),
    ...(values.cold ? { cold: true } : {}),
    ...optional('corpusRepos', positiveInt('--corpus-repos', values['corpus-repos'])),
    ...optional('tinyRepos', positiveInt('--tiny-repos', values['tiny-repos'])),
    ...optional('manyDir', values['many-dir']),
  };
  return { options, out: values.out };
}

/** `{key: value}`, or nothing when the value is undefined. */
const optional = <K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> => (value === undefined ? {} : ({ [key]: value } as Record<K, V>));

async function run(argv: string[]): Promise<number> {
  const { options, out: outArg } = parseRunArgs(argv);
  const stamp = new Date().toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-');
  const out = outArg ?? `trawl-bench-${options.corpus === 'linux' ? 'linux' : basename(resolve(options.corpus)) || 'corpus'}-${stamp}.json`;
  const log = (s: string) => process.stderr.write(`${s}\n`);
  let result;
  try {
    result = await benchRun(options, log);
  } catch (err) {
    if (err instanceof BenchInputError) throw new UsageError(err.message);
    throw err;
  }
  writeResult(out, result);
  process.stdout.write(runText(result));
  log(`bench   result: ${out}`);
  return 0;
}

function compare(argv: string[]): number {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean' },
      chart: { type: 'string' },
      threshold: { type: 'string' },
      alpha: { type: 'string' },
      'single-threshold': { type: 'string' },
      verbose: { type: 'boolean' },
    },
  });
  if (positionals.length !== 2) throw new UsageError('bench compare needs two result files: OLD.json NEW.json');
  const [oldFile, newFile] = positionals as [string, string];
  const options = {
    threshold: fraction('--threshold', values.threshold, true),
    alpha: fraction('--alpha', values.alpha, false),
    singleThreshold: fraction('--single-threshold', values['single-threshold'], true),
  };
  const report = compareResults(readResultFile(oldFile), readResultFile(newFile), options);
  if (values.chart !== undefined) writeFileSync(values.chart, compareChartSvg(report));
  process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : compareText(report));
  return report.exitStatus;
}

export async function benchCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'run') return run(rest);
  if (sub === 'compare') return compare(rest);
  // The history index beside git (history-bench.ts): loaded only when asked for.
  // (An entry of its own, imported by its place in the install as the CLI imports the
  // suite: the suite's chunks do not take in the daemon's history service.)
  if (sub === 'history') {
    const m = (await import(runnableModule('bench/suite/history-bench.ts').href)) as { historyBench: (argv: string[]) => Promise<number> };
    return m.historyBench(rest);
  }
  // Push webhooks on many repositories (webhook-bench.ts).
  if (sub === 'webhooks') {
    const m = (await import(runnableModule('bench/suite/webhook-bench.ts').href)) as { webhookBench: (argv: string[]) => Promise<number> };
    return m.webhookBench(rest);
  }
  throw new UsageError(
    sub === undefined ? 'bench needs a subcommand: run, compare, history or webhooks' : `unknown bench subcommand "${sub}" (run, compare, history, webhooks)`,
  );
}
