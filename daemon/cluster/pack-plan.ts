// Which published repositories a cluster copies into compound shards (pack-job.ts runs the
// copies). The leader plans when the build queue has run dry and the published index moved
// (cluster-sync.ts), with the rules one node follows (index/pack-merge.ts), read from the
// published manifests instead of the node's own:
//
// - a repository served from one shard of its own holding at most `below` bytes of content
//   (a build in a cluster is a full one, of its own: small ones are packed afterwards) is
//   packed, when there are two such or more, or one and a small pack of its size tier or
//   below to join;
// - the live members of packs that are small or mostly tombstoned (packsToMerge) are
//   copied into new packs with them;
// - so are those of the small packs the new pack would be merged with at the next plan
//   (packsToJoin): a plan does at once what two would. Builds are published one by one,
//   and the leader's view trails them, so the first plan after a listing may see some of
//   its repositories only: the next one then packs the rest with the first plan's pack,
//   instead of into a pack of their own of the same size that a third plan merges with it.
//   (A cluster restarted in that in-between state merged the two packs then, each of its
//   repositories at a new generation.)
//
// Only repositories whose shard a live node holds are planned: a job could not read the
// others, and a plan that keeps leaving some out would copy the rest again and again.
//
// The copies are cut into jobs of about `target` bytes of content each, in repository name
// order (the order a search takes them), so that the nodes share the work and each job
// builds about one pack.

import { createHash } from 'node:crypto';
import { packsToJoin, packsToMerge, SMALL_PACK_SHARE, tierOf } from '../index/pack-merge.ts';
import type { PublishedIndex } from './published.ts';

/** Repositories to copy into compound shards, each at the published generation the plan read (a job skips one published again since). */
export interface PackJob {
  pack: Array<{ repoId: number; generation: number }>;
}

interface Candidate {
  repoId: number;
  generation: number;
  name: string;
  bytes: number;
}

interface PublishedPack {
  file: string;
  contentBytes: number;
  liveBytes: number;
  live: Candidate[];
}

/** `readable`: whether a live node holds the repository's published shard (default: every one). */
export function planPacks(indexes: Iterable<PublishedIndex>, target: number, below: number, readable: (repoId: number) => boolean = () => true): PackJob[] {
  const loose: Candidate[] = [];
  const packs = new Map<string, PublishedPack>();
  for (const p of indexes) {
    const m = p.manifest;
    if (p.deleted || !m || m.shards.length !== 1 || m.symbolsPending || !readable(p.repoId)) continue;
    const entry = m.shards[0]!;
    const c: Candidate = { repoId: p.repoId, generation: p.generation, name: m.repo.name, bytes: entry.liveContentBytes };
    if (entry.member === undefined) {
      if (entry.liveContentBytes <= below && !entry.delta && entry.membership === undefined) loose.push(c);
      continue;
    }
    let pack = packs.get(entry.file);
    if (!pack) packs.set(entry.file, (pack = { file: entry.file, contentBytes: 0, liveBytes: 0, live: [] }));
    pack.contentBytes = Math.max(pack.contentBytes, entry.packBytes ?? 0, pack.liveBytes + c.bytes);
    pack.liveBytes += c.bytes;
    pack.live.push(c);
  }
  const all = [...packs.values()].sort((a, b) => (a.file < b.file ? -1 : 1));
  const picked = packsToMerge(all, target).map((i) => all[i]!);
  if (loose.length === 1 && picked.length === 0) {
    // One repository alone gains nothing from a pack of its own: it joins the smallest small
    // pack of its size tier or below (never one many times its size, which it would rewrite).
    const tier = tierOf(loose[0]!.bytes, target);
    const join = all.filter((p) => p.liveBytes < SMALL_PACK_SHARE * target && tierOf(p.liveBytes, target) <= tier).sort((a, b) => a.liveBytes - b.liveBytes)[0];
    if (!join) return [];
    picked.push(join);
  }
  if (loose.length === 0 && picked.length === 0) return [];
  // The new pack takes in the small packs the next plan would merge it with.
  const rest = all.filter((p) => !picked.includes(p));
  const planned = [...loose, ...picked.flatMap((p) => p.live)].reduce((n, c) => n + c.bytes, 0);
  for (const i of packsToJoin(planned, rest, target)) picked.push(rest[i]!);
  const items = [...loose, ...picked.flatMap((p) => p.live)].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.repoId - b.repoId));
  const jobs: PackJob[] = [];
  let bytes = 0;
  for (const c of items) {
    if (jobs.length === 0 || (bytes > 0 && bytes + c.bytes > target)) {
      jobs.push({ pack: [] });
      bytes = 0;
    }
    jobs[jobs.length - 1]!.pack.push({ repoId: c.repoId, generation: c.generation });
    bytes += c.bytes;
  }
  return jobs;
}

/** A job's id in the queue: the same plan queued twice is queued once. */
export function packJobId(job: PackJob): string {
  const h = createHash('sha256');
  for (const { repoId, generation } of job.pack) h.update(`${repoId}:${generation},`);
  return `pack-${h.digest('hex').slice(0, 24)}`;
}
