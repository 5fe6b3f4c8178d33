// How long a process's threads ran on a core and how long they waited for one while
// runnable, from /proc/PID/task/TID/schedstat (Linux; the scheduler's statistics, present
// when the kernel has CONFIG_SCHED_INFO, as Debian's has). The cluster phase
// (phase-cluster.ts) reads it around the one-client mix: on a machine with fewer cores than
// the nodes' busy threads, a request's time is partly its threads waiting their turn, which
// CPU time does not show.

import { readdirSync, readFileSync } from 'node:fs';

export interface SchedTimes {
  /** Nanoseconds on a core. */
  runNs: number;
  /** Nanoseconds runnable, waiting on a run queue. */
  waitNs: number;
}

/**
 * Parses a schedstat line (the kernel's Documentation/scheduler/sched-stats: "time spent on
 * the cpu, time spent waiting on a runqueue, timeslices run", the times in nanoseconds).
 * Null when the text is not such a line.
 */
export function parseSchedStat(text: string): SchedTimes | null {
  const f = text.trim().split(/\s+/);
  if (f.length !== 3 || !f.every((x) => /^\d+$/.test(x))) return null;
  return { runNs: Number(f[0]), waitNs: Number(f[1]) };
}

/** The sums over every thread of `pid` now; null when the process or its statistics cannot be read. Threads that ended are not counted. */
export function processSchedTimes(pid: number): SchedTimes | null {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return null;
  }
  const sum: SchedTimes = { runNs: 0, waitNs: 0 };
  let read = 0;
  for (const tid of tasks) {
    try {
      const t = parseSchedStat(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8'));
      if (!t) continue;
      sum.runNs += t.runNs;
      sum.waitNs += t.waitNs;
      read++;
    } catch {
      // the thread ended meanwhile
    }
  }
  return read > 0 ? sum : null;
}

/**
 * Between two readings of the same processes, per request they answered meanwhile: their
 * threads' milliseconds on a core and milliseconds runnable but waiting for one, summed over
 * the threads. Null when a reading is missing or no request was answered.
 */
export function schedPerRequest(
  before: ReadonlyArray<SchedTimes | null>,
  after: ReadonlyArray<SchedTimes | null>,
  requests: number,
): { cpuMsPerRequest: number; waitMsPerRequest: number } | null {
  if (requests <= 0 || before.length === 0 || before.length !== after.length) return null;
  let run = 0;
  let wait = 0;
  for (let i = 0; i < before.length; i++) {
    const a = before[i];
    const b = after[i];
    if (!a || !b) return null;
    run += b.runNs - a.runNs;
    wait += b.waitNs - a.waitNs;
  }
  const ms4 = (ns: number) => Math.round((ns / 1e6 / requests) * 1e4) / 1e4;
  return { cpuMsPerRequest: ms4(run), waitMsPerRequest: ms4(wait) };
}
