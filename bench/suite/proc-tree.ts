// The CPU time of a process and its descendants, from /proc (Linux): what a server made of
// several processes costs, PostgreSQL above all (one backend process per connection, each a
// child of the postmaster, whose own /proc/PID/stat counts none of them until they exit and
// are waited for). The cluster phase (phase-cluster.ts) charges the cluster's PostgreSQL
// and Redis with it, apart from the nodes.

import { readdirSync, readFileSync } from 'node:fs';

/** The fields of /proc/PID/stat this module reads. */
export interface ProcStat {
  pid: number;
  ppid: number;
  /** utime + stime, in clock ticks (all threads of the process). */
  ticks: number;
}

/**
 * Parses one /proc/PID/stat line (proc(5)): `pid (comm) state ppid ... utime stime ...`.
 * The command name may hold spaces and parentheses, so fields are counted from the last
 * ")". Null when the text is not such a line.
 */
export function parseProcStat(text: string): ProcStat | null {
  const open = text.indexOf(' (');
  const close = text.lastIndexOf(')');
  if (open <= 0 || close < open) return null;
  const pid = Number(text.slice(0, open));
  // f[0] is field 3 (state); ppid is field 4, utime 14, stime 15.
  const f = text
    .slice(close + 2)
    .trim()
    .split(' ');
  const ppid = Number(f[1]);
  const utime = Number(f[11]);
  const stime = Number(f[12]);
  if (![pid, ppid, utime, stime].every(Number.isInteger)) return null;
  return { pid, ppid, ticks: utime + stime };
}

/** The ticks of `root` and of every process below it in `stats`; null when `root` is not among them. */
export function treeTicksOf(stats: readonly ProcStat[], root: number): number | null {
  const children = new Map<number, ProcStat[]>();
  let top: ProcStat | undefined;
  for (const s of stats) {
    if (s.pid === root) top = s;
    const list = children.get(s.ppid);
    if (list) list.push(s);
    else children.set(s.ppid, [s]);
  }
  if (top === undefined) return null;
  let total = 0;
  const stack = [top];
  const seen = new Set<number>();
  while (stack.length > 0) {
    const s = stack.pop()!;
    if (seen.has(s.pid)) continue;
    seen.add(s.pid);
    total += s.ticks;
    stack.push(...(children.get(s.pid) ?? []));
  }
  return total;
}

/** Every process's stat now (those that exit while being read are left out); empty off Linux. */
export function allProcStats(): ProcStat[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const out: ProcStat[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const s = parseProcStat(readFileSync(`/proc/${name}/stat`, 'utf8'));
      if (s) out.push(s);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** utime + stime of `pid` and its descendants now, in clock ticks; null when it cannot be read. */
export function treeTicks(pid: number | undefined): number | null {
  return pid === undefined ? null : treeTicksOf(allProcStats(), pid);
}
