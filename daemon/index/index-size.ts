// What an index serves, counted from its manifests alone (no shard is opened): for the
// metrics (http/metrics.ts) of a daemon serving it.

import { statSync } from 'node:fs';
import type { IndexView } from './index-health.ts';
import { namedPaths } from './manifest.ts';
import { SHARD_EXT } from './shard-format.ts';

export interface IndexSize {
  shards: number;
  bytes: number;
  files: number;
  contentBytes: number;
}

/** The index `view` holds now: its shard files and their bytes, its files and their content bytes. */
export function indexSize(view: IndexView): IndexSize {
  const out: IndexSize = { shards: 0, bytes: 0, files: 0, contentBytes: 0 };
  const dataDir = view.dataDir;
  // A compound shard is named by each of its repositories' manifests: counted once.
  const seen = new Set<string>();
  for (const m of view.current().manifests) {
    out.files += m.files;
    out.contentBytes += m.contentBytes;
    for (const { file, path } of namedPaths(dataDir, m)) {
      if (seen.has(path)) continue;
      seen.add(path);
      out.bytes += fileSize(path);
      if (file.endsWith(SHARD_EXT)) out.shards++;
    }
  }
  return out;
}

function fileSize(path: string): number {
  return statSync(path, { throwIfNoEntry: false })?.size ?? 0;
}
