// The index's garbage: files no manifest names any more, deleted once no search can still
// open them (RETIRE_GRACE_MS): each repository's retired files (manifest.ts), and the
// compound shards no repository is a member of any more (pack-build.ts).

import { collectGarbage } from './manifest.ts';
import { collectPacks } from './pack-build.ts';

/** Deletes what the grace has passed for; `inUse` (absolute paths) a search of this process still reads. */
export function collectIndexGarbage(dataDir: string, inUse: ReadonlySet<string> = new Set(), now = Date.now()): void {
  collectGarbage(dataDir, inUse, now);
  collectPacks(dataDir, inUse, now);
}
