// Who owns a file that a process left behind (a lock, a temporary file): is that process
// still running, and is it still the same process? A pid alone is not enough: after a
// crash and a reboot, or on a busy machine, the pid of a dead trawl process can belong to
// an unrelated live one, which would hold its lock forever. On Linux a process is named
// by its pid and its start time (field 22 of /proc/PID/stat, in clock ticks since boot),
// which no other process shares while the machine is up.

import { lstatSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * USER_HZ: the unit of /proc's start times. Linux fixes it at 100 on every architecture
 * (it is the unit the kernel promises user space, whatever the internal tick rate).
 */
const TICKS_PER_SECOND = 100;

/** True when a process with this pid exists (ours, or another user's). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // exists, but belongs to another user
  }
}

/** The process's start time in clock ticks since boot, or undefined (no /proc, or no such process). */
export function processStartTicks(pid: number): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so fields are
  // counted from the last ")"; starttime is field 22, the 20th after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[19]);
  return Number.isInteger(ticks) ? ticks : undefined;
}

let bootSeconds: number | undefined | null = null;

/** When the process started, in ms since the epoch (to a second or so), or undefined off Linux. */
export function processStartedAt(pid: number): number | undefined {
  const ticks = processStartTicks(pid);
  if (ticks === undefined) return undefined;
  if (bootSeconds === null) {
    try {
      const btime = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'latin1'));
      bootSeconds = btime ? Number(btime[1]) : undefined;
    } catch {
      bootSeconds = undefined;
    }
  }
  return bootSeconds === undefined ? undefined : bootSeconds * 1000 + (ticks * 1000) / TICKS_PER_SECOND;
}

/**
 * True when the file (last modified at `mtimeMs`) that process `pid` made was left behind:
 * the process is gone, or the pid now belongs to a process that started after the file
 * was written (so it cannot be the writer). The start time is known to about a second
 * (boot time is given in whole seconds), hence the margin.
 */
export function leftBehind(pid: number, mtimeMs: number): boolean {
  if (!processAlive(pid)) return true;
  const started = processStartedAt(pid);
  return started !== undefined && started > mtimeMs + 2000;
}

/** Temporary names: `<final name>.tmp-<pid>` or `<final name>.tmp-<pid>-<hex>`. */
const TEMP = /\.tmp-(\d+)(?:-[0-9a-f]+)?$/;

/** The pid in a temporary file's name, or undefined when the name is not a temporary one. */
export function tempOwner(name: string): number | undefined {
  const m = TEMP.exec(name);
  return m ? Number(m[1]) : undefined;
}

/**
 * Removes the temporary files and directories in `dir` (those whose names start with
 * `prefix`) that their writers left behind (leftBehind): the leftovers of processes killed
 * mid-write. Temporary files of live writers are kept. Returns the names removed.
 */
export function removeLeftoverTemps(dir: string, prefix = ''): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return []; // no directory: nothing left over
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = tempOwner(name);
    if (pid === undefined) continue;
    const path = join(dir, name);
    const st = lstatSync(path, { throwIfNoEntry: false });
    if (!st || !leftBehind(pid, st.mtimeMs)) continue;
    rmSync(path, { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}
