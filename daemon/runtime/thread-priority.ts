// The threads that do bulk work (search workers, query planners, index builders) run at a
// lower scheduling priority than the thread of the event loop that serves requests. On a
// machine whose cores they keep busy, the event loop would otherwise wait for a core
// behind them: every request's parsing, admission, merging and writing, a health check
// included, would queue behind a costly search. Niced, they give the event loop a core as
// soon as it has work, and among them a caller's cheap search still gets its share of the
// workers' time (search-worker.ts). Measured in docs/security-and-faults.md.

import { getPriority, setPriority } from 'node:os';

/** How much lower: the nice value added to the thread's own. */
export const BULK_WORK_NICE = 10;

/** The nice value of the lowest priority: for work that may wait behind everything else (index/section-scrub.ts). */
export const LOWEST_NICE = 19;

/**
 * Lowers the priority of the calling thread by `by` (default BULK_WORK_NICE). Linux keeps a priority per
 * thread (who = 0 names the calling thread); elsewhere it is the whole process's, so nothing
 * is done there. Lowering a priority needs no privilege; a refusal (a sandbox) leaves the
 * thread as it was.
 */
export function lowerThisThreadsPriority(by = BULK_WORK_NICE): void {
  if (process.platform !== 'linux') return;
  try {
    setPriority(0, Math.min(LOWEST_NICE, getPriority(0) + by));
  } catch {
    // Left at the process's priority.
  }
}
