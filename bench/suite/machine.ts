// What the numbers were measured on: the machine, the runtime, and the versions of
// trawl and of the peers.

import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, totalmem } from 'node:os';

export interface Environment {
  machine: { cpuModel: string; cores: number; totalMemoryBytes: number; platform: string };
  node: string;
  trawlVersion: string;
  /** `git rev-parse HEAD`, with "+uncommitted" when the work tree differs; "uncommitted" with no commit. */
  gitCommit: string;
  ripgrep: string | null;
  codesearch: string | null;
}

/** The stdout of a command, trimmed; null when it cannot run or fails. */
export function commandOutput(cmd: string, args: string[], cwd?: string): string | null {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

function cpuModel(): string {
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (m) return m[1]!.trim();
  } catch {
    // not Linux: fall through to os.cpus()
  }
  return cpus()[0]?.model ?? 'unknown';
}

/**
 * Where a run's reports are written: not what runs. `trawl bench run > bench/results/X.md`
 * creates its report before the run starts, which made every such run "uncommitted".
 */
const RESULTS_DIR = 'bench/results';

/** HEAD, "+uncommitted" when a file that can change what runs differs from it (anything but RESULTS_DIR). */
export function gitCommit(root: string): string {
  const head = commandOutput('git', ['rev-parse', 'HEAD'], root);
  const status = commandOutput('git', ['status', '--porcelain', '--untracked-files=normal', '--', '.', `:(exclude)${RESULTS_DIR}`], root);
  const dirty = (status ?? '') !== '';
  if (!head) return 'uncommitted';
  return dirty ? `${head}+uncommitted` : head;
}

export function environment(root: string): Environment {
  const pkg = JSON.parse(readFileSync(`${root}/package.json`, 'utf8')) as { version: string };
  return {
    machine: { cpuModel: cpuModel(), cores: availableParallelism(), totalMemoryBytes: totalmem(), platform: `${process.platform}-${process.arch}` },
    node: process.version,
    trawlVersion: pkg.version,
    gitCommit: gitCommit(root),
    ripgrep: commandOutput('rg', ['--version'])?.split('\n')[0] ?? null,
    codesearch: commandOutput('dpkg-query', ['-W', '-f', '${Version}', 'codesearch']),
  };
}

/** Milliseconds elapsed since `start` (a process.hrtime.bigint() reading). */
export function msSince(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** CPU time counters at one instant (Linux /proc, in clock ticks). */
export interface CpuMark {
  at: bigint;
  /** Busy ticks of the whole machine, all cores. */
  busy: number;
  /** Ticks of this process (all threads) and of its waited-for children. */
  own: number;
}

/** Clock ticks per second of /proc's CPU times: USER_HZ, 100 on every Linux architecture Node runs on. */
export const TICKS_PER_SECOND = 100;

/** utime, stime, cutime, cstime of a process (fields 14-17 of proc(5)), in clock ticks; null when unreadable. */
function procTimes(pid: number | 'self'): [number, number, number, number] | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the command name in parentheses, which may hold spaces; f[0] is field 3.
    const f = s
      .slice(s.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    return [f[11]!, f[12]!, f[13]!, f[14]!];
  } catch {
    return null;
  }
}

/** utime + stime of a process (all threads), in clock ticks; null when it cannot be read. */
export function processTicks(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  const t = procTimes(pid);
  return t === null ? null : t[0] + t[1];
}

export function cpuMark(): CpuMark | null {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already in user)
    const busy = cpu[0]! + cpu[1]! + cpu[2]! + cpu[5]! + cpu[6]! + (cpu[7] ?? 0);
    const self = procTimes('self');
    if (self === null) return null;
    // This process and its waited-for children.
    const own = self[0] + self[1] + self[2] + self[3];
    return { at: process.hrtime.bigint(), busy, own };
  } catch {
    return null;
  }
}

/**
 * Cores kept busy on average by other processes between two marks: a measure of how much
 * the machine was shared during a phase (0 on an idle machine). Null off Linux.
 */
export function foreignCores(from: CpuMark | null, to: CpuMark | null): number | null {
  if (!from || !to) return null;
  const seconds = Number(to.at - from.at) / 1e9;
  if (seconds <= 0) return null;
  const foreign = to.busy - from.busy - (to.own - from.own);
  return Math.max(0, foreign / TICKS_PER_SECOND / seconds);
}

/** The I/O pressure of the last 10 s (PSI "some avg10", a percentage); null without PSI. */
function ioPressureAvg10(): number | null {
  try {
    const m = /^some avg10=([\d.]+)/m.exec(readFileSync('/proc/pressure/io', 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/**
 * Lets the disk go quiet before a timed phase: `sync`, then waits (at most `maxSeconds`)
 * until the I/O pressure of the last 10 s is below 1 %. Writes of the previous phase
 * (a whole index) otherwise stall the next one's I/O: cindex right after trawl's build
 * with symbols was markedly slower than on a quiet disk. Returns the seconds waited.
 */
export async function settleIo(maxSeconds = 60): Promise<number> {
  const start = performance.now();
  spawnSync('sync', { stdio: 'ignore' });
  for (;;) {
    const p = ioPressureAvg10();
    const waited = (performance.now() - start) / 1000;
    if (p === null || p < 1 || waited >= maxSeconds) return waited;
    await new Promise((r) => setTimeout(r, 1000));
  }
}
