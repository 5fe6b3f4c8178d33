// One `trawl` command in a child process, timed as an operator waits for it: from spawn to
// exit, Node's start-up included (`node bin/trawl.js ARGS`, the compiled build when it is
// current). No GNU time in between: its own fork and exec would be a visible share of a
// start-up figure.

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { msSince } from './machine.ts';
import { nodeArgsFor } from '../../daemon/runtime/ts-worker.ts';

/** The process that times a command (started by path: an entry point of the compiled build). */
const STOPWATCH = 'bench/suite/stopwatch-child.ts';

/** Runs `trawl ARGS` to completion; its stdout; throws when it fails. */
function run(root: string, args: string[]): { seconds: number; stdout: string } {
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [join(root, 'bin', 'trawl.js'), ...args], { encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'pipe'] });
  const seconds = msSince(start) / 1000;
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`trawl ${args.join(' ')} exited with ${r.status}: ${r.stderr.trim().slice(-2000)}`);
  return { seconds, stdout: r.stdout };
}

/**
 * Wall seconds of `trawl ARGS`, spawn to exit, to 0.1 ms, timed by a small child process
 * (stopwatch-child.ts) so that the figure does not carry the cost of forking this one.
 * Its stdout is not kept: a run whose output matters goes through run().
 */
export function timeTrawl(root: string, args: string[]): number {
  const r = spawnSync(process.execPath, [...nodeArgsFor(STOPWATCH), process.execPath, join(root, 'bin', 'trawl.js'), ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (r.error) throw r.error;
  let timed: { seconds: number; status: number | string; stderr: string };
  try {
    timed = JSON.parse(r.stdout) as typeof timed;
  } catch {
    throw new Error(`the stopwatch failed (${r.status}): ${r.stderr.trim().slice(-2000)}`);
  }
  if (timed.status !== 0) throw new Error(`trawl ${args.join(' ')} exited with ${timed.status}: ${timed.stderr.trim()}`);
  return Math.round(timed.seconds * 1e4) / 1e4;
}

/**
 * Throws unless `trawl search` finds `token` in the data dir: a sync timed after a change
 * counts only if the change is searchable when it returns.
 */
export function assertSearchable(root: string, dataDir: string, token: string): void {
  if (matchCount(root, dataDir, token, true) === 0) throw new Error(`${token} is not searchable in ${dataDir} after the sync that indexed it`);
}

/** Matches of a literal `trawl search` in the data dir. */
export function matchCount(root: string, dataDir: string, literal: string, caseSensitive: boolean): number {
  const res = JSON.parse(run(root, ['search', literal, ...(caseSensitive ? ['--case'] : []), '--json', '--data-dir', dataDir]).stdout) as {
    stats: { actualMatchCount: number };
  };
  return res.stats.actualMatchCount;
}

/**
 * The check bin/trawl.js makes before running the compiled build (scripts/compile.js
 * isFresh): false, and a command started now runs the sources through tsx, whose start-up
 * alone is more than `trawl --help` takes. Sources edited during a run (a checkout someone
 * works in) turn a whole-process figure into tsx's. Loaded from the checkout at run time,
 * not bundled into dist/: it dates the build against its own file.
 */
export async function freshCheck(root: string): Promise<() => boolean> {
  const compile = (await import(pathToFileURL(join(root, 'scripts', 'compile.js')).href)) as { isFresh(root: string): boolean };
  return () => compile.isFresh(root);
}
