// What a process holds, read from Linux's /proc: resident memory (anonymous and
// file-backed, the latter mostly the memory-mapped shards), open file descriptors and
// threads. For fault tests that check a daemon gives back what a burst took.

import { readdirSync, readFileSync } from 'node:fs';

export interface ProcStats {
  /** VmRSS, KiB. */
  rssKb: number;
  /** RssAnon (heaps, buffers), KiB. */
  anonKb: number;
  /** RssFile (mapped files: shards, code), KiB. */
  fileKb: number;
  fds: number;
  threads: number;
}

export function procStats(pid: number): ProcStats {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number => {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    if (!m) throw new Error(`/proc/${pid}/status has no ${field}`);
    return Number(m[1]);
  };
  return {
    rssKb: kb('VmRSS'),
    anonKb: kb('RssAnon'),
    fileKb: kb('RssFile'),
    fds: readdirSync(`/proc/${pid}/fd`).length,
    threads: readdirSync(`/proc/${pid}/task`).length,
  };
}

export function formatStats(s: ProcStats): string {
  const mb = (k: number) => `${(k / 1024).toFixed(1)} MiB`;
  return `rss ${mb(s.rssKb)} (anon ${mb(s.anonKb)}, file ${mb(s.fileKb)}), ${s.fds} fds, ${s.threads} threads`;
}
