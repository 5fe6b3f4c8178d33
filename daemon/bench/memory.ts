// A process's resident memory, read from /proc (Linux): what the daemon holds with the
// corpus loaded. VmRSS counts the mapped shard pages that are resident, so it grows as
// searches touch the index and shrinks when the kernel reclaims clean pages.

import { readFileSync } from 'node:fs';

/** VmRSS of a process in bytes; null when it cannot be read (not Linux, or the process is gone). */
export function rssBytes(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** Samples a process's RSS every `everyMs` until stopped; stop() returns the samples. */
export function sampleRss(pid: number | undefined, everyMs = 100): { stop: () => number[] } {
  const samples: number[] = [];
  const take = () => {
    const v = rssBytes(pid);
    if (v !== null) samples.push(v);
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      take();
      return samples;
    },
  };
}

/** Samples RSS for `ms` milliseconds. */
export async function sampleRssFor(pid: number | undefined, ms: number, everyMs = 100): Promise<number[]> {
  const s = sampleRss(pid, everyMs);
  await new Promise((r) => setTimeout(r, ms));
  return s.stop();
}
