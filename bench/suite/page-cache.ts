// `--cold`: the kernel's page cache emptied, so that a search reads its shards from the
// disk as after a reboot or on a machine whose memory other work took. Writing 3 to
// /proc/sys/vm/drop_caches drops clean cached pages and reclaimable slab objects (dentries,
// inodes) for the whole machine; dirty pages are written first (`sync`). Linux only, and
// only a user allowed to write that file (root).

import { spawnSync } from 'node:child_process';
import { accessSync, constants, writeFileSync } from 'node:fs';

export const DROP_CACHES = '/proc/sys/vm/drop_caches';

/** Why the page cache cannot be dropped here; null when it can. */
export function dropCachesRefused(path = DROP_CACHES): string | null {
  try {
    accessSync(path, constants.W_OK);
    return null;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT'
      ? `--cold empties the page cache through ${path}, which does not exist here (not Linux?)`
      : `--cold empties the page cache by writing to ${path}, which this user may not write (${code}): run the bench as root`;
  }
}

/** Writes dirty pages out, then drops the page cache, dentries and inodes. */
export function dropPageCache(path = DROP_CACHES): void {
  spawnSync('sync', { stdio: 'ignore' });
  writeFileSync(path, '3\n');
}
