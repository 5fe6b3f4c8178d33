// Index builds, each in a child process with a fresh output location: trawl's
// (`node bin/trawl.js index`, content only with --no-symbols, or with symbols, the
// default) and cindex's on the same tree, wall time and peak RSS.

import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readAllManifests } from '../../daemon/index/manifest.ts';
import { liveIndex } from './live-index.ts';
import { msSince } from './machine.ts';
import { nodeArgsFor } from '../../daemon/runtime/ts-worker.ts';

/** The fallback measured child when GNU time is missing (it reports its own peak RSS). */
const INDEX_CHILD = 'bench/suite/index-child.ts';

const GNU_TIME = '/usr/bin/time';

export interface Timed {
  command: string[];
  seconds: number;
  /** Peak resident set of the child, from GNU time's %M; null without it. */
  peakRssBytes: number | null;
  stdout: string;
}

/** Runs a command to completion, through GNU time when present; throws when it fails. */
export function runTimed(cmd: string, args: string[], env: NodeJS.ProcessEnv, rssFile: string): Timed {
  const viaTime = existsSync(GNU_TIME);
  const [exe, argv] = viaTime ? [GNU_TIME, ['-o', rssFile, '-f', '%M', cmd, ...args]] : [cmd, args];
  const start = process.hrtime.bigint();
  const r = spawnSync(exe, argv, { env, encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'pipe'] });
  const seconds = msSince(start) / 1000;
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${[cmd, ...args].join(' ')} exited with ${r.status}: ${r.stderr.trim().slice(-2000)}`);
  const peakRssBytes = viaTime ? Number(readFileSync(rssFile, 'utf8').trim().split('\n').pop()) * 1024 : null;
  rmSync(rssFile, { force: true });
  return { command: [cmd, ...args], seconds, peakRssBytes, stdout: r.stdout };
}

export interface TrawlBuild extends Timed {
  /** false: built with --no-symbols (content only, like cindex). */
  symbols: boolean;
  /** Symbol definitions extracted, from the index summary line (0 for --no-symbols). */
  symbolCount: number | null;
  /** Files ctags failed or timed out on (indexed without symbols), from the summary line. */
  symbolFailures: number | null;
  /** Seconds from spawn until the content was searchable (IndexRun.contentSeconds). */
  contentSeconds: number | null;
  files: number;
  skipped: number;
  contentBytes: number;
  shards: number;
  /** Sum of the shard files' sizes (content included). */
  indexBytes: number;
  /** indexBytes / contentBytes. */
  sizeRatio: number;
  /** Corpus bytes per second of wall time, in MB (10^6). */
  mbPerSecond: number;
}

/**
 * `… 4,619,582 symbols (taken from the previous index for 70,000 files, ctags failed on 3
 * files), …` in `trawl index`'s summary line (index-command.ts summaryLine; either note may
 * be absent).
 */
export function symbolsFromSummaryLine(line: string): { symbolCount: number | null; symbolFailures: number | null } {
  const m = /([\d,]+) symbols(?: \(([^)]*)\))?/.exec(line);
  if (!m) return { symbolCount: null, symbolFailures: null };
  const n = (s: string | undefined) => (s === undefined ? 0 : Number(s.replace(/,/g, '')));
  return { symbolCount: n(m[1]), symbolFailures: n(/ctags failed on ([\d,]+) files?/.exec(m[2] ?? '')?.[1]) };
}

/**
 * How long before the process ended its content was committed: `N s (content searchable
 * after M s)` in the summary line says N - M (0 without it: the content came last).
 */
function contentLeadFromSummaryLine(line: string): number | null {
  const m = /([\d.]+) s(?: \(content searchable after ([\d.]+) s\))?, [\d.]+ MB\/s/.exec(line);
  if (!m) return null;
  return m[2] === undefined ? 0 : Math.max(0, Number(m[1]) - Number(m[2]));
}

export interface TrawlBuildOptions {
  /** The checkout whose bin/trawl.js builds. */
  root: string;
  corpus: string;
  /** The corpus's bytes, for the build's MB/s. */
  totalBytes: number;
  dataDir: string;
  /** Where the build's peak RSS is written. */
  tmp: string;
  symbols: boolean;
  /** More `trawl index` options (e.g. `--branches *` for a git corpus). */
  extraArgs?: string[];
}

export function buildTrawl({ root, corpus, totalBytes, dataDir, tmp, symbols, extraArgs = [] }: TrawlBuildOptions): TrawlBuild {
  let timed: Timed;
  let counts: { symbolCount: number | null; symbolFailures: number | null };
  let lead: number | null;
  const flag = [...(symbols ? [] : ['--no-symbols']), ...extraArgs];
  if (existsSync(GNU_TIME)) {
    timed = runTimed(process.execPath, [join(root, 'bin/trawl.js'), 'index', corpus, '--data-dir', dataDir, ...flag], process.env, join(tmp, 'trawl.rss'));
    counts = symbolsFromSummaryLine(timed.stdout);
    lead = contentLeadFromSummaryLine(timed.stdout);
  } else {
    timed = runTimed(process.execPath, [...nodeArgsFor(INDEX_CHILD), corpus, dataDir, ...flag], process.env, join(tmp, 'trawl.rss'));
    const child = JSON.parse(timed.stdout) as {
      maxRssKiB: number;
      summary: { symbols: number; symbolFailures: number; seconds: number; contentSeconds?: number };
    };
    timed.peakRssBytes = child.maxRssKiB * 1024;
    counts = { symbolCount: child.summary.symbols, symbolFailures: child.summary.symbolFailures };
    lead = child.summary.contentSeconds === undefined ? 0 : child.summary.seconds - child.summary.contentSeconds;
  }
  const manifests = readAllManifests(dataDir);
  // The files the manifests name: a build whose symbols came after its content leaves the
  // content-only shards it retired on disk for a grace period (manifest.ts), not the index.
  const { indexBytes } = liveIndex(dataDir);
  const contentBytes = manifests.reduce((n, m) => n + m.contentBytes, 0);
  return {
    ...timed,
    stdout: timed.stdout.trim(),
    symbols,
    ...counts,
    contentSeconds: lead === null ? null : Math.max(0, timed.seconds - lead),
    files: manifests.reduce((n, m) => n + m.files, 0),
    skipped: manifests.reduce((n, m) => n + m.skipped, 0),
    contentBytes,
    shards: manifests.reduce((n, m) => n + m.shards.length, 0),
    indexBytes,
    sizeRatio: indexBytes / contentBytes,
    mbPerSecond: totalBytes / 1e6 / timed.seconds,
  };
}

export interface CindexBuild extends Timed {
  indexPath: string;
  indexBytes: number;
  mbPerSecond: number;
}

/** cindex into a fresh CSEARCHINDEX file; null when cindex is not installed. */
export function buildCindex(corpus: string, totalBytes: number, indexFile: string, tmp: string): CindexBuild | null {
  if (spawnSync('cindex', ['-help'], { stdio: 'ignore' }).error) return null;
  rmSync(indexFile, { force: true });
  const timed = runTimed('cindex', [corpus], { ...process.env, CSEARCHINDEX: indexFile }, join(tmp, 'cindex.rss'));
  return { ...timed, stdout: timed.stdout.trim(), indexPath: indexFile, indexBytes: statSync(indexFile).size, mbPerSecond: totalBytes / 1e6 / timed.seconds };
}
