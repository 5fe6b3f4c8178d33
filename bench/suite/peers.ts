// The peers, run as child processes on the same tree: ripgrep (no index) and codesearch's
// csearch (over the cindex built in the same run). Both print every match; their stdout
// goes to /dev/null. Each query runs `runs` times; the median is what is compared.
// A query runs as its peer pattern (queries.ts); queries without one (sym:, lang:,
// negation, AND of terms) are not run and have no entry in the results.

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { BenchQuery } from './queries.ts';
import { msSince } from './machine.ts';
import { median } from './percentiles.ts';

export type PeerName = 'rg' | 'csearch';

export interface PeerQueryResult {
  name: string;
  command: string[];
  samplesMs: number[];
  medianMs: number;
  /** Exit status of the first run (0: matches, 1: none, for both tools). */
  status: number | null;
  /** Some run hit the time limit: its sample is the limit, so the median is a lower bound. */
  timedOut: boolean;
  error?: string;
}

export interface PeerResults {
  peer: PeerName;
  available: boolean;
  note?: string;
  queries: PeerQueryResult[];
}

/** RE2 syntax (Go's regexp, csearch's) for a literal. */
export function escapeRe2(literal: string): string {
  return literal.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');
}

/** The peer's command line for a query; null when the query has no peer equivalent. */
export function peerCommand(peer: PeerName, q: BenchQuery, corpus: string): string[] | null {
  const p = q.peer;
  if (!p) return null;
  const root = p.path === undefined ? corpus : join(corpus, p.path);
  const globs = (p.extensions ?? []).flatMap((e) => ['-g', `*.${e}`]);
  if (peer === 'rg') {
    return ['rg', '-n', '--no-ignore', '--hidden', '-g', '!.git', ...globs, p.caseSensitive ? '-s' : '-i', ...(p.regex ? [] : ['-F']), '-e', p.pattern, root];
  }
  // cindex records absolute paths; -f keeps the files whose path matches.
  const ext = p.extensions?.length ? `.*\\.(${p.extensions.map(escapeRe2).join('|')})$` : '';
  const files = p.path === undefined && !ext ? [] : ['-f', `${p.path === undefined ? '' : `^${escapeRe2(`${root}/`)}`}${ext}`];
  return ['csearch', '-n', ...(p.caseSensitive ? [] : ['-i']), ...files, p.regex ? p.pattern : escapeRe2(p.pattern)];
}

function installed(cmd: string): boolean {
  return !spawnSync(cmd, ['--version'], { stdio: 'ignore' }).error;
}

export function measurePeer(
  peer: PeerName,
  queries: BenchQuery[],
  opts: { corpus: string; csearchIndex?: string; runs: number; timeoutMs: number },
  log: (s: string) => void,
): PeerResults {
  if (!installed(peer)) return { peer, available: false, note: `${peer} is not installed`, queries: [] };
  if (peer === 'csearch' && !opts.csearchIndex) return { peer, available: false, note: 'no cindex index was built', queries: [] };
  const env = peer === 'csearch' ? { ...process.env, CSEARCHINDEX: opts.csearchIndex } : process.env;
  const results: PeerQueryResult[] = [];
  for (const q of queries) {
    const command = peerCommand(peer, q, opts.corpus);
    if (!command) continue; // no peer equivalent
    const r: PeerQueryResult = { name: q.name, command, samplesMs: [], medianMs: NaN, status: null, timedOut: false };
    for (let i = 0; i < opts.runs; i++) {
      const start = process.hrtime.bigint();
      const p = spawnSync(command[0]!, command.slice(1), { env, stdio: ['ignore', 'ignore', 'pipe'], timeout: opts.timeoutMs, encoding: 'utf8' });
      const ms = msSince(start);
      if (p.error && (p.error as NodeJS.ErrnoException).code !== 'ETIMEDOUT') {
        r.error = p.error.message;
        break;
      }
      if (p.signal === 'SIGTERM' || (p.error as NodeJS.ErrnoException | undefined)?.code === 'ETIMEDOUT') {
        r.timedOut = true;
        r.samplesMs.push(opts.timeoutMs);
        continue;
      }
      // 1 is "no match" for both, unless something was said on stderr (csearch exits 1 on a bad pattern).
      if (p.status !== 0 && (p.status !== 1 || p.stderr.trim() !== '')) {
        r.error = `exit ${p.status}: ${p.stderr.trim().slice(-500)}`;
        break;
      }
      r.status ??= p.status;
      r.samplesMs.push(ms);
    }
    if (r.samplesMs.length > 0 && !r.error) r.medianMs = median(r.samplesMs);
    log(`${peer.padEnd(8)}${q.name}: ${r.error ? `ERROR ${r.error}` : `median ${r.medianMs.toFixed(1)} ms${r.timedOut ? ' (timed out)' : ''}`}`);
    results.push(r);
  }
  return { peer, available: true, queries: results };
}
