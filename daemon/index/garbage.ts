// The index's garbage: files no manifest names any more, deleted once no search can still
// open them (RETIRE_GRACE_MS): each repository's retired files (manifest.ts), and the
// compound shards no repository is a member of any more (pack-build.ts).

import { existsSync } from 'node:fs';
import { historyDataDir } from './data-dir.ts';
import { collectGarbage } from './manifest.ts';
import { collectPacks } from './pack-build.ts';

/** Deletes what the grace has passed for; `inUse` (absolute paths) a search of this process still reads. */
export function collectIndexGarbage(dataDir: string, inUse: ReadonlySet<string> = new Set(), now = Date.now()): void {
  collectGarbage(dataDir, inUse, now);
  collectPacks(dataDir, inUse, now);
  // The history indexes' data dir (historyDataDir) retires files the same way.
  const history = historyDataDir(dataDir);
  if (existsSync(history)) collectGarbage(history, inUse, now);
}
