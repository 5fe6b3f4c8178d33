// A pack job (pack-plan.ts): copies published repositories' documents into compound shards
// on this node, commits each repository there, and publishes the copies. Any node takes
// one from the queue (jobs.ts); the sources need not be here.
//
// - Sources. Each repository's published shard (one of its own, or its member of a pack) is
//   read from this node's index when its manifest names that file (hard-linked into a
//   staging directory, so that the collector removing it meanwhile takes nothing from the
//   job), else copied from a live node that holds it (file-copy.ts). A source opened here
//   is checked whole (Shard.open without shared checks). A repository whose source no live
//   node holds is left out. A job any of whose repositories was published again since the
//   plan copies nothing: the leader plans again from the new publication.
// - Building. The documents are copied with their branch lists and definitions (pack-merge.ts
//   memberFiles); no git repository is read and no ctags runs. The packs' generation comes
//   from the cluster's counter (published.ts allocatePack), each repository's new
//   generation from its own (allocate).
// - Commit and publication. Each repository is committed here as a whole index (this node
//   holds every file it names) unless a build of it here is newer than the source; then
//   published over the source's generation only (publishOver): a build published meanwhile
//   keeps its place, and the copy here is dropped by the replicator like any stale
//   generation. The publication keeps the builder (`builtBy`: the node with the git
//   mirror that browsing reads) and names the copy's content (`content`) and this node
//   (`packedBy`). The replicator then places the pack like any shard, by its name.
//
// Killed at any point: what was published serves, a pack file no manifest names is
// collected (pack-build.ts collectPacks), the staging directory is removed as a leftover
// temporary (runtime/left-behind.ts).

import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { packsDir, shardsDir } from '../index/data-dir.ts';
import { commitManifest, loadManifest, memberEntry, shardFiles, type LoadedManifest, type Manifest, type ManifestShard } from '../index/manifest.ts';
import { buildPacks, type PackItem, type PackOptions } from '../index/pack-build.ts';
import { memberFiles } from '../index/pack-merge.ts';
import { Shard } from '../index/shard-reader.ts';
import { tryLock } from '../runtime/lock-file.ts';
import type { Logger } from '../runtime/logger.ts';
import type { ClusterView } from './cluster-view.ts';
import { copyIndexFile } from './file-copy.ts';
import type { PackJob } from './pack-plan.ts';
import type { PeerClient } from './peer-client.ts';
import type { PublishedIndex } from './published.ts';

export interface PackJobOptions {
  dataDir: string;
  view: ClusterView;
  peers: PeerClient;
  log: Logger;
  /** How the packs are built (the target size, limits, symbols). */
  build: Omit<PackOptions, 'dataDir' | 'generation'>;
  /** Publishes a copy committed here over the generation it copied (Replicator.publishCopy). */
  publish(m: Manifest, source: PublishedIndex): Promise<boolean>;
  /** How long a copy of one source file may take before it is tried from another holder. */
  copyTimeoutMs?: number;
}

export interface PackJobReport {
  /** Repositories copied into packs and published there. */
  packed: number;
  /** Repositories left where they were (published again since the plan, no source, a build or copy here meanwhile). */
  skipped: number;
}

interface Source {
  published: PublishedIndex;
  entry: ManifestShard;
  path: string;
  symbols?: string;
  membership?: string;
}

export async function runPackJob(job: PackJob, o: PackJobOptions): Promise<PackJobReport> {
  const { view, dataDir, log } = o;
  await view.refresh();
  // A plan holds for the published index it read. Once one of its repositories is published
  // again (built anew, or copied by another job), what is left of it may be a pack the plan
  // never meant: one repository alone, which the next plan merges again. That publication
  // moved the index, so the leader plans again from it; this job copies nothing.
  const moved = job.pack.filter(({ repoId, generation }) => view.published.get(repoId)?.generation !== generation).length;
  if (moved > 0) {
    log.info({ repos: job.pack.length, moved }, 'a compound shard plan is out of date (some of its repositories were published again since): nothing copied');
    return { packed: 0, skipped: job.pack.length };
  }
  const dir = packsDir(dataDir);
  mkdirSync(dir, { recursive: true });
  const staging = join(dir, `sources.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  mkdirSync(staging);
  try {
    const sources: Source[] = [];
    const staged = new Map<string, string>();
    for (const { repoId, generation } of job.pack) {
      const p = view.published.get(repoId);
      if (!p?.manifest || p.deleted || p.generation !== generation || p.manifest.shards.length !== 1 || p.manifest.symbolsPending) continue;
      try {
        const source = await stage(o, p, p.manifest.shards[0]!, staging, staged);
        if (source) sources.push(source);
        else log.warn({ repoId, generation }, 'no live node holds the shard to pack: the repository stays where it is');
      } catch (err) {
        log.warn({ repoId, generation, err: (err as Error).message }, 'the shard to pack could not be read: the repository stays where it is');
      }
    }
    const generations = new Map<number, number>();
    for (const s of sources) {
      const local = loadManifest(dataDir, s.published.repoId);
      const least = Math.max(s.published.generation, local && !('unreadable' in local) ? local.generation : 0) + 1;
      generations.set(s.published.repoId, await view.published.allocate(s.published.repoId, least));
    }
    const committed: Array<{ manifest: Manifest; source: PublishedIndex }> = [];
    const items: PackItem[] = [];
    for (const s of sources) {
      const shard = Shard.open(s.path, {
        ...(s.membership !== undefined ? { membership: s.membership } : {}),
        ...(s.symbols !== undefined ? { symbols: s.symbols } : {}),
      });
      const member = s.entry.member ?? 0;
      const m = s.published.manifest!;
      items.push({
        repoId: s.published.repoId,
        repo: m.repo,
        refs: m.refs,
        files: memberFiles(shard, member, s),
        bytes: s.entry.liveContentBytes,
        skipped: shard.members[member]!.skipped,
        commit: (file, k, built, batch) => {
          const manifest = commitCopy(dataDir, s.published, generations.get(s.published.repoId)!, memberEntry(file, k, built), batch);
          committed.push({ manifest, source: s.published });
          return undefined;
        },
      });
    }
    const outcomes = await buildPacks(items, { ...o.build, dataDir, generation: (least) => view.published.allocatePack(least) });
    for (const out of outcomes)
      if ('error' in out) log.info({ repoId: out.candidate.repoId, err: out.error }, 'a repository was not packed: it stays where it is');
    let packed = 0;
    for (const { manifest, source } of committed) if (await o.publish(manifest, source)) packed++;
    log.info({ packed, skipped: job.pack.length - packed }, 'repositories copied into compound shards');
    return { packed, skipped: job.pack.length - packed };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** The source's files in the staging directory (linked from this node's index, or copied from a holder); undefined when no live node holds them. */
async function stage(o: PackJobOptions, p: PublishedIndex, entry: ManifestShard, staging: string, staged: Map<string, string>): Promise<Source | undefined> {
  const { view, dataDir } = o;
  const local = loadManifest(dataDir, p.repoId);
  const here = local && !('unreadable' in local) && local.version === 2 && local.shards.some((s) => s.file === entry.file && s.member === entry.member);
  const files = shardFiles(dataDir, p.repoId, entry);
  const wanted = [files.path, ...(files.membership !== undefined ? [files.membership] : []), ...(files.symbols !== undefined ? [files.symbols] : [])];
  // A pack's files have names unique in the cluster; a shard of a repository's own, in its repository.
  const stagedName = (f: string): string => (entry.member !== undefined ? basename(f) : `${p.repoId}-${basename(f)}`);
  const linked = wanted.every((f) => staged.has(stagedName(f)) || (here && link(f, staging, stagedName(f), staged)));
  if (!linked) {
    const live = view.live().map((n) => n.id);
    const holders = view.holdings.holders(live, p.repoId, p.generation, entry.file).filter((n) => n !== view.self);
    let ok = false;
    for (const node of holders) {
      const url = view.urlOf(node);
      if (url === undefined) continue;
      try {
        for (const f of wanted) {
          const name = stagedName(f);
          if (staged.has(name)) continue;
          await copyIndexFile(o.peers, { url, repoId: p.repoId, name: basename(f), path: join(staging, name), timeoutMs: o.copyTimeoutMs ?? 10_000 });
          staged.set(name, join(staging, name));
        }
        ok = true;
        break;
      } catch (err) {
        o.log.warn({ repoId: p.repoId, shard: entry.file, from: node, err: (err as Error).message }, 'copying a shard to pack failed; trying another holder');
      }
    }
    if (!ok) return undefined;
  }
  const at = (f: string | undefined): string | undefined => (f === undefined ? undefined : staged.get(stagedName(f)));
  const source: Source = { published: p, entry, path: at(files.path)! };
  const membership = at(files.membership);
  const symbols = at(files.symbols);
  if (membership !== undefined) source.membership = membership;
  if (symbols !== undefined) source.symbols = symbols;
  return source;
}

/** Links `path` into the staging directory (once per name); false when it cannot be (gone meanwhile, another file system). */
function link(path: string, staging: string, name: string, staged: Map<string, string>): boolean {
  if (staged.has(name)) return true;
  try {
    linkSync(path, join(staging, name));
    staged.set(name, join(staging, name));
    return true;
  } catch {
    return false;
  }
}

/**
 * Commits a repository as member of a pack built here, under its lock (a build or a copy
 * of the replicator's holding it leaves it where it is), unless a build here is newer than
 * the source.
 */
function commitCopy(dataDir: string, source: PublishedIndex, generation: number, entry: ManifestShard, batch: Parameters<PackItem['commit']>[3]): Manifest {
  const lock = join(shardsDir(dataDir, source.repoId), 'lock');
  mkdirSync(shardsDir(dataDir, source.repoId), { recursive: true });
  if (!tryLock(lock)) throw new Error('its index here is being changed: it stays where it is');
  try {
    const now = loadManifest(dataDir, source.repoId);
    const previous: LoadedManifest | undefined = now && !('unreadable' in now) ? now : undefined;
    if (previous && previous.version === 2 && previous.subset !== true && previous.generation > source.generation)
      throw new Error('a newer build of it is here');
    const { fileBytes: _f, ...m } = source.manifest!;
    return commitManifest(
      dataDir,
      { ...m, version: 2, generation, baseGeneration: generation, shards: [entry], copyOf: source.generation },
      previous,
      Date.now(),
      batch,
    );
  } finally {
    rmSync(lock, { force: true });
  }
}
