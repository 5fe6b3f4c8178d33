// What a data dir's live index holds: the files its manifests name. A build leaves files it
// replaced on disk for a grace period (manifest.ts: a search that started before still
// reads them), so summing every file in the shard directories would count them twice.

import { statSync } from 'node:fs';
import { readAllManifests, shardFiles } from '../../daemon/index/manifest.ts';
import { Shard } from '../../daemon/index/shard-reader.ts';

export interface LiveIndex {
  /** Bytes of the shard, membership and symbols files the manifests name. */
  indexBytes: number;
  /** Of which branch lists: the shards' branches sections, or the membership files that replace them. */
  branchListBytes: number;
  /** Files indexed, and their bytes (the manifests' live documents). */
  files: number;
  contentBytes: number;
}

export function liveIndex(dataDir: string): LiveIndex {
  let indexBytes = 0;
  let branchListBytes = 0;
  let files = 0;
  let contentBytes = 0;
  // A compound shard is named by each of its repositories' manifests: counted once.
  const seen = new Set<string>();
  for (const m of readAllManifests(dataDir)) {
    files += m.files;
    contentBytes += m.contentBytes;
    for (const s of m.shards) {
      const { path, symbols, membership } = shardFiles(dataDir, m.repoId, s);
      if (seen.has(path)) continue;
      seen.add(path);
      indexBytes += statSync(path).size;
      if (symbols) indexBytes += statSync(symbols).size;
      if (membership) {
        const bytes = statSync(membership).size;
        indexBytes += bytes;
        branchListBytes += bytes;
      } else {
        branchListBytes += Shard.open(path).sectionBytes.get('branches') ?? 0;
      }
    }
  }
  return { indexBytes, branchListBytes, files, contentBytes };
}
