// The CPU time of a process and its descendants, from /proc (Linux): what a server made of
// several processes costs, PostgreSQL above all (one backend process per connection, each a
// child of the postmaster). A backend's time is in its own /proc/PID/stat while it runs and,
// once it exits and is waited for, in the postmaster's (cutime, cstime): counting both keeps
// the tree's total from falling when a pooled connection closes. The cluster phase (phase-cluster.ts) charges the cluster's PostgreSQL
// and Redis with it, apart from the nodes.

import { readdirSync, readFileSync } from 'node:fs';

/** The fields of /proc/PID/stat this module reads. */
export interface ProcStat {
  pid: number;
  ppid: number;
  /** utime + stime + cutime + cstime, in clock ticks: all threads of the process and its waited-for children. */
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
  // f[0] is field 3 (state); ppid is field 4, utime 14, stime 15, cutime 16, cstime 17.
  const f = text
    .slice(close + 2)
    .trim()
    .split(' ');
  const ppid = Number(f[1]);
  const utime = Number(f[11]);
  const stime = Number(f[12]);
  const cutime = Number(f[13]);
  const cstime = Number(f[14]);
  if (![pid, ppid, utime, stime, cutime, cstime].every(Number.isInteger)) return null;
  return { pid, ppid, ticks: utime + stime + cutime + cstime };
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

/** The CPU time of `pid` and its descendants, those waited for included, now, in clock ticks; null when it cannot be read. */
export function treeTicks(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  const stats = allProcStats();
  // The root is read again last: a child waited for while /proc was being listed is then in
  // the root's cutime, rather than in neither (counted twice at worst, never lost).
  try {
    const root = parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    if (root) return treeTicksOf([...stats.filter((s) => s.pid !== pid), root], pid);
  } catch {
    // gone: as listed
  }
  return treeTicksOf(stats, pid);
}
