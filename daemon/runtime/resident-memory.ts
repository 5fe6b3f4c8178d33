// A process's resident memory from /proc/PID/status (Linux), split the way that tells what
// it holds: RssAnon is what the process allocated (heaps, buffers, wasm memory), the figure
// a leak or an unbounded buffer grows; RssFile is mapped file pages that are resident (the
// daemon's shard files), which grow as searches touch the index and which the kernel drops
// when it needs the memory; RssShmem is shared memory (none expected). VmRSS is their sum,
// and mostly RssFile for a daemon that has searched a large index. Read by `trawl bench`
// (bench/suite/memory.ts) and by /metrics (http/metrics.ts).

import { readFileSync } from 'node:fs';

/** One reading, in bytes. */
export interface RssSample {
  rss: number;
  anon: number;
  file: number;
  shmem: number;
}

const field = (status: string, name: string): number | null => {
  const m = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status);
  return m ? Number(m[1]) * 1024 : null;
};

/** VmRSS, RssAnon, RssFile, RssShmem of a process; null when they cannot be read (not Linux, or the process is gone). */
export function rssOf(pid: number | undefined | 'self'): RssSample | null {
  if (pid === undefined) return null;
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return null;
  }
  const rss = field(status, 'VmRSS');
  const anon = field(status, 'RssAnon');
  const file = field(status, 'RssFile');
  if (rss === null || anon === null || file === null) return null;
  return { rss, anon, file, shmem: field(status, 'RssShmem') ?? 0 };
}
