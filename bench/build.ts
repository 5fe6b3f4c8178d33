// Index builds, each in a child process with a fresh output location: trawl's
// (`node bin/trawl.js index`) and cindex's on the same tree, wall time and peak RSS.

import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readAllManifests, shardsDir } from '../daemon/index/data-dir.ts';
import { SHARD_EXT } from '../daemon/index/shard-format.ts';
import { msSince } from './stats.ts';

const GNU_TIME = '/usr/bin/time';

interface Timed {
  command: string[];
  seconds: number;
  /** Peak resident set of the child, from GNU time's %M; null without it. */
  peakRssBytes: number | null;
  stdout: string;
}

/** Runs a command to completion, through GNU time when present; throws when it fails. */
function runTimed(cmd: string, args: string[], env: NodeJS.ProcessEnv, rssFile: string): Timed {
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

export function buildTrawl(root: string, corpus: string, totalBytes: number, dataDir: string, tmp: string): TrawlBuild {
  let timed: Timed;
  if (existsSync(GNU_TIME)) {
    timed = runTimed(process.execPath, [join(root, 'bin/trawl.js'), 'index', corpus, '--data-dir', dataDir], process.env, join(tmp, 'trawl.rss'));
  } else {
    timed = runTimed(process.execPath, ['--import', 'tsx', join(root, 'bench/index-child.ts'), corpus, dataDir], process.env, join(tmp, 'trawl.rss'));
    timed.peakRssBytes = (JSON.parse(timed.stdout) as { maxRssKiB: number }).maxRssKiB * 1024;
  }
  const manifests = readAllManifests(dataDir);
  let indexBytes = 0;
  for (const m of manifests) {
    const dir = shardsDir(dataDir, m.repoId);
    for (const f of readdirSync(dir)) if (f.endsWith(SHARD_EXT)) indexBytes += statSync(join(dir, f)).size;
  }
  const contentBytes = manifests.reduce((n, m) => n + m.contentBytes, 0);
  return {
    ...timed,
    stdout: timed.stdout.trim(),
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
