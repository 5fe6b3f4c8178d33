// A small filesystem of its own for disk-full tests: a tmpfs mounted on a directory (root
// only; the tests that need one skip without it), filled to the last byte with a filler file
// and emptied again by deleting it.

import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export interface Tmpfs {
  path: string;
  /** Bytes still free. */
  free(): number;
  /**
   * Writes a filler file until only `leave` bytes (rounded down to whole pages) are free;
   * 0 fills it to the last byte. Returns the filler's path.
   */
  fill(leave?: number): string;
  /** Deletes the fillers: the space is back. */
  empty(): void;
  unmount(): void;
}

/** Mounts a tmpfs of `mib` MiB on `path` (created), or returns the reason it cannot. */
export function mountTmpfs(path: string, mib: number): Tmpfs | string {
  mkdirSync(path, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${mib}m,mode=0700`, 'tmpfs', path], { stdio: 'pipe' });
  } catch (err) {
    return `cannot mount a tmpfs (${(err as Error).message.split('\n')[0]}): run as root`;
  }
  const fillers: string[] = [];
  const free = (): number => {
    const s = statfsSync(path);
    return s.bavail * s.bsize;
  };
  return {
    path,
    free,
    fill(leave = 0): string {
      const file = join(path, `filler-${fillers.length}`);
      fillers.push(file);
      const fd = openSync(file, 'w');
      try {
        // Big pieces first, then one page at a time up to the last one.
        for (const piece of [1 << 20, 4096]) {
          const buf = Buffer.alloc(piece, 0x5a);
          while (free() - piece >= leave) {
            try {
              writeSync(fd, buf);
            } catch (err) {
              if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
              break;
            }
          }
        }
        if (leave === 0) {
          // What is left is less than a page: a byte at a time until the system refuses.
          const one = Buffer.alloc(1, 0x5a);
          for (;;) {
            try {
              writeSync(fd, one);
            } catch (err) {
              if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
              break;
            }
          }
        }
      } finally {
        closeSync(fd);
      }
      return file;
    },
    empty(): void {
      for (const f of fillers.splice(0)) rmSync(f, { force: true });
    },
    unmount(): void {
      try {
        execFileSync('umount', [path], { stdio: 'pipe' });
      } catch {
        // Still busy (a process that has not exited yet): detach it now, freed when unused.
        execFileSync('umount', ['-l', path], { stdio: 'pipe' });
      }
    },
  };
}
