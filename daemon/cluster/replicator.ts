// Brings this node's index in line with the placement (placement.ts), every heartbeat and
// whenever something changed here. For each repository's published index (published.ts):
//
// - The node that built it republishes its build if it is newer than the published one (a
//   publication lost with Redis, or a race). Once published, the build is one holder's
//   copy like any other: the shards the placement does not give the builder are dropped
//   when enough others hold them (below), so a repository larger than one machine ends
//   spread over the nodes. (A build in a cluster is therefore a full one: no node keeps a
//   whole previous build to build upon. A repository whose refs did not move is not built
//   at all: indexer.ts IndexOptions.current.)
// - A node that the placement names for some of its shards copies the files it lacks from
//   a live node that holds them (GET /_cluster/file: file names are unique in the whole
//   cluster, published.ts allocate, so a file of that name anywhere is that file), then
//   commits a manifest of the published generation naming only the shards it holds, marked
//   subset (manifest.ts): it serves them, and a build here later is a full one.
// - Shards it holds that the placement no longer names are dropped only once at least
//   replicationFactor other live nodes hold them at that generation: new owners copy
//   before old owners drop, so a node joining or leaving never leaves a shard without its
//   copies. A stale generation (superseded by a build elsewhere) is dropped at once: no
//   search asks for it.
// - A repository published as removed (a tombstone) is retired here.
// - Compound shards (pack-job.ts) are replicated like any shard: each member repository's
//   published manifest names the pack file, which the placement keys by its name alone, so
//   a node holds it once for all its members (in the packs directory) and commits each
//   member's manifest as it copies. A build of this node's that a copy of an older build
//   overtook (the copy was published while the build ran, published.ts) is published again
//   under a later generation: a copy never hides newer documents.
// - A published shard that no live node holds any more (every copy was on nodes that
//   died) cannot be copied: `rebuild` queues the repository's build again, once it has
//   been so for `orphanGraceMs` of this node's rounds (a node's view of the others'
//   holdings trails their publications by up to a heartbeat, and nodes restarting together
//   rejoin one by one: a build of Linux takes half a minute of a core, and each published
//   build, seen before its builder's holdings, once queued the next one, without end).
//
// Afterwards the node writes what it holds (holdings.ts), which the others read to send it
// searches and to judge whether they may drop their own copies.
//
// Every change to a repository's directory is made under the repository's lock, the one
// builds take (indexer.ts), so a copy and a build on the same node never meet.
//
// A round that found nothing left to do is not run again until something it reads moves:
// the cluster view (publications, nodes, holdings) or this node's index (index-version).
// With thousands of repositories a round is a walk over all of them; a quiet cluster pays
// it once, not every heartbeat. A round that left work (a copy failed, a build was asked
// for, an error) is run again at the next heartbeat.

import { existsSync, mkdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { shardsDir, syncFiles } from '../index/data-dir.ts';
import {
  commitManifest,
  loadManifest,
  readAllManifests,
  readIndexVersion,
  retireRepository,
  shardFiles,
  type LoadedManifest,
  type Manifest,
  type ManifestShard,
} from '../index/manifest.ts';
import { acquireLock } from '../runtime/lock-file.ts';
import type { Logger } from '../runtime/logger.ts';
import type { ClusterView } from './cluster-view.ts';
import type { ClusterCounters } from './counters.ts';
import { copyIndexFile } from './file-copy.ts';
import { holdingsOf } from './holdings.ts';
import type { PeerClient } from './peer-client.ts';
import type { PublishedIndex } from './published.ts';

export interface ReplicatorOptions {
  dataDir: string;
  view: ClusterView;
  peers: PeerClient;
  log: Logger;
  /** Queue a build of a repository whose published shards have no live holder. */
  rebuild(repoId: number): void;
  /** How long a copy of one file may take before it is tried from another holder. */
  copyTimeoutMs?: number;
  /** How long a published shard must have had no live holder, as this node saw it, before its repository is built again (the cluster's nodeTimeoutMs). */
  orphanGraceMs: number;
  /** Shards and bytes copied, copies that failed (/metrics). */
  counters: ClusterCounters;
}

/** What one round did (tests, logs). */
export interface RoundReport {
  copied: number;
  dropped: number;
  published: number;
  /** Nothing the round reads moved since a round that left nothing to do: it did not walk the index. */
  idle: boolean;
}

/** A node rebuilds nothing in its first this many orphan graces: the nodes of a cluster restarted together are then back. */
const STARTUP_GRACES = 3;

export class Replicator {
  #running: Promise<RoundReport> | undefined;
  #again = false;
  #stopped = false;
  /** What the last round that left nothing to do read (the view's and the index's versions); '' after one that did. */
  #settled = '';
  /** This node's manifests, by the index-version they were read at. */
  #local: { version: string; manifests: LoadedManifest[] } | undefined;
  /** Since when each published shard ("<repo>/<generation>/<file>") this node would rebuild has been seen without a live holder. */
  #orphans = new Map<string, number>();
  /** When this replicator started: nodes restarting together rejoin one by one (STARTUP_GRACES). */
  readonly #startedAt = Date.now();

  constructor(private readonly o: ReplicatorOptions) {}

  /** A round now, or right after the running one (rounds never overlap). */
  schedule(): Promise<RoundReport> {
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = (async () => {
      let total: RoundReport = { copied: 0, dropped: 0, published: 0, idle: true };
      do {
        this.#again = false;
        const r = await this.#round();
        total = { copied: total.copied + r.copied, dropped: total.dropped + r.dropped, published: total.published + r.published, idle: total.idle && r.idle };
      } while (this.#again && !this.#stopped);
      return total;
    })().finally(() => (this.#running = undefined));
    return this.#running;
  }

  /** Stops scheduling; waits for a running round. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#running?.catch(() => {});
  }

  /**
   * Publishes a manifest this node's build committed (indexer.ts onCommit). Its holdings
   * go first, so that a node reading the publication finds its builder holding it.
   */
  async publishBuild(m: Manifest | LoadedManifest): Promise<boolean> {
    await this.writeHoldings();
    if (await this.publishLocal(m)) return true;
    await this.o.view.published.refresh();
    const p = this.o.view.published.get(m.repoId);
    return p !== undefined && overtaken(m, p) ? this.#reclaim(m, p) : false;
  }

  /**
   * Publishes a copy of a published build into a compound shard made here (pack-job.ts),
   * over that build's generation only; false when another was published meanwhile.
   */
  async publishCopy(m: Manifest | LoadedManifest, source: PublishedIndex): Promise<boolean> {
    await this.writeHoldings();
    const { retired: _r, indexVersion: _v, subset: _s, copyOf: _c, ...manifest } = m as Manifest;
    const index: PublishedIndex = {
      repoId: m.repoId,
      generation: m.generation,
      builtBy: source.builtBy,
      content: source.content ?? source.generation,
      packedBy: this.o.view.self,
      manifest,
      publishedAt: new Date().toISOString(),
    };
    return this.o.view.published.publishOver(index, source.generation);
  }

  /** Publishes a whole build this node holds. */
  async publishLocal(m: Manifest | LoadedManifest): Promise<boolean> {
    if (m.version !== 2 || m.subset) return false;
    const { retired: _r, indexVersion: _v, subset: _s, copyOf: _c, ...manifest } = m as Manifest;
    const index: PublishedIndex = { repoId: m.repoId, generation: m.generation, builtBy: this.o.view.self, publishedAt: new Date().toISOString() };
    if (m.shards.length > 0) index.manifest = manifest;
    else index.deleted = true;
    return this.o.view.published.publish(index);
  }

  async #round(): Promise<RoundReport> {
    const report: RoundReport = { copied: 0, dropped: 0, published: 0, idle: true };
    const { view, dataDir, log } = this.o;
    /** Whether this round committed or retired a manifest here. */
    let changed = false;
    await view.refresh();
    const read = this.#manifests();
    const reading = `${view.version}|${read.version}`;
    if (reading === this.#settled) return report;
    report.idle = false;
    /** Whether this round leaves work for the next (then it runs however quiet the cluster). */
    let unsettled = false;
    const self = view.self;
    const live = view.live().map((n) => n.id);
    const local = new Map(read.manifests.map((m) => [m.repoId, m]));
    const placement = view.placement;
    const replicas = placement.replicas;

    /** Orphans seen this round: the others (their shard regained a holder, or a newer build replaced it) are forgotten. */
    const orphaned = new Set<string>();
    for (const p of view.published.all()) {
      if (this.#stopped) break;
      const mine = local.get(p.repoId);
      try {
        if (p.deleted || !p.manifest) {
          if (mine && mine.shards.length > 0 && mine.generation <= p.generation) {
            await this.#locked(p.repoId, () => retireRepository(dataDir, p.repoId));
            report.dropped += mine.shards.length;
            changed = true;
          }
          continue;
        }
        const whole = mine?.version === 2 && mine.subset !== true && mine.shards.length > 0;
        if (whole && isBuild(mine) && mine.generation > p.generation) {
          if (await this.publishLocal(mine)) report.published++;
          continue;
        }
        // A copy into a compound shard made here, newer than the published index: not yet
        // published over the build it copied (its job stopped before, or this view trails
        // the publication), or this view trails the source: left alone. A copy that lost
        // its race (another build was published over its source) is dropped below like a
        // stale generation.
        if (whole && mine.copyOf !== undefined && mine.generation > p.generation && p.generation <= mine.copyOf) {
          if (p.generation === mine.copyOf && (await this.publishCopy(mine, p))) report.published++;
          else unsettled = true;
          continue;
        }
        if (whole && overtaken(mine, p)) {
          if (await this.#reclaim(mine, p)) report.published++;
          else unsettled = true;
          continue;
        }
        const shards = p.manifest.shards;
        const atGeneration = mine?.generation === p.generation ? new Set(mine.shards.map((s) => s.file)) : new Set<string>();
        const wanted = shards.filter((s) => placement.owners(p.repoId, s.file).includes(self));
        // Held but no longer wanted: kept until enough others hold it.
        const extra = shards.filter((s) => atGeneration.has(s.file) && !wanted.includes(s));
        const keep = extra.filter((s) => view.holdings.holders(live, p.repoId, p.generation, s.file).filter((n) => n !== self).length < replicas);
        const missing = wanted.filter((s) => !atGeneration.has(s.file));
        for (const s of shards) {
          if (view.holdings.holders(live, p.repoId, p.generation, s.file).length > 0 || placement.owners(p.repoId, s.file)[0] !== self) continue;
          const key = `${p.repoId}/${p.generation}/${s.file}`;
          // Still orphaned at the next rounds (one a heartbeat while unsettled) until the grace has passed.
          unsettled = true;
          orphaned.add(key);
          const now = Date.now();
          const since = this.#orphans.get(key) ?? now;
          this.#orphans.set(key, since);
          if (now - since < this.o.orphanGraceMs || now - this.#startedAt < STARTUP_GRACES * this.o.orphanGraceMs) continue;
          this.#orphans.delete(key);
          log.warn({ repoId: p.repoId, shard: s.file }, 'no live node holds this shard any more: its repository is built again');
          this.o.rebuild(p.repoId);
          break;
        }
        if (missing.length === 0 && keep.length === extra.length && mine?.generation === p.generation) continue;
        const copied = await this.#copy(p, missing, live);
        report.copied += copied.length;
        if (copied.length < missing.length) unsettled = true;
        const held = shards.filter((s) => (atGeneration.has(s.file) && (wanted.includes(s) || keep.includes(s))) || copied.includes(s));
        const dropped = (mine?.shards.length ?? 0) - held.filter((s) => atGeneration.has(s.file)).length;
        await this.#locked(p.repoId, () => {
          const now = loadManifest(dataDir, p.repoId);
          const previous = now && !('unreadable' in now) ? now : undefined;
          // A build here committed meanwhile (a manifest other than the one this round read): the next round sees it.
          if (previous?.generation !== mine?.generation) return;
          changed = true;
          if (held.length === 0) {
            if (previous && previous.shards.length > 0) retireRepository(dataDir, p.repoId);
            return;
          }
          commitManifest(dataDir, { ...p.manifest!, version: 2, shards: held, subset: true }, previous);
        });
        if (dropped > 0) report.dropped += dropped;
        if (copied.length > 0)
          log.info({ repoId: p.repoId, generation: p.generation, shards: copied.map((s) => s.file) }, 'copied shards this node now serves');
      } catch (err) {
        unsettled = true;
        log.warn({ repoId: p.repoId, err: (err as Error).message }, 'replicating a repository failed; retried next round');
      }
    }
    for (const key of this.#orphans.keys()) if (!orphaned.has(key)) this.#orphans.delete(key);
    // A build of this node's that was never published (Redis lost it, or this node built
    // while Redis was away) is published now.
    for (const m of local.values()) {
      if (view.published.get(m.repoId) === undefined && m.version === 2 && m.subset !== true && m.shards.length > 0) {
        if (await this.publishLocal(m)) report.published++;
        else unsettled = true;
      }
    }
    // The manifests read at the start still hold unless this round changed some.
    await this.writeHoldings(changed ? undefined : local.values());
    // A round that changed something reads again (its own commits moved index-version).
    this.#settled = unsettled || this.#stopped ? '' : reading;
    return report;
  }

  /** This node's manifests, read again only when index-version moved (read before them: a commit between only makes the next call read again). */
  #manifests(): { version: string; manifests: LoadedManifest[] } {
    const version = readIndexVersion(this.o.dataDir);
    if (this.#local?.version !== version) this.#local = { version, manifests: readAllManifests(this.o.dataDir) };
    return this.#local;
  }

  /** Writes what this node holds (its manifests, read now when not given); tells the others when it changed. */
  async writeHoldings(manifests: Iterable<LoadedManifest> = this.#manifests().manifests): Promise<void> {
    const { view } = this.o;
    if (await view.holdings.write(holdingsOf(manifests))) {
      view.invalidate();
      await view.membership.holdingsChanged();
    }
  }

  /**
   * A build of this node's that a copy of an older build overtook: committed again under a
   * generation past the copy's and published; false when it could not be (the next round
   * tries again).
   */
  async #reclaim(mine: Manifest | LoadedManifest, p: PublishedIndex): Promise<boolean> {
    const { view, dataDir } = this.o;
    const generation = await view.published.allocate(mine.repoId, p.generation + 1);
    const next = await this.#locked(mine.repoId, () => {
      const now = loadManifest(dataDir, mine.repoId);
      if (!now || 'unreadable' in now || now.version !== 2 || now.generation !== mine.generation) return undefined;
      const { retired: _r, indexVersion: _v, fileBytes: _f, ...rest } = now;
      return commitManifest(dataDir, { ...rest, generation }, now);
    });
    if (!next) return false;
    this.o.log.info({ repoId: mine.repoId, generation }, 'a build overtaken by a copy of an older one is published again');
    await this.writeHoldings();
    return this.publishLocal(next);
  }

  /** Copies the files of `shards` that this node lacks, each from a live holder; the shards copied whole. */
  async #copy(p: PublishedIndex, shards: ManifestShard[], live: string[]): Promise<ManifestShard[]> {
    if (shards.length === 0) return [];
    const { view, dataDir } = this.o;
    const done: ManifestShard[] = [];
    const dirs = new Set<string>();
    await this.#locked(p.repoId, async () => {
      for (const s of shards) {
        const holders = view.holdings.holders(live, p.repoId, p.generation, s.file).filter((n) => n !== view.self);
        // (A compound shard's files are in the packs directory: another member's copy may have brought them.)
        const { path, membership, symbols } = shardFiles(dataDir, p.repoId, s);
        const paths = [path, ...(membership !== undefined ? [membership] : []), ...(symbols !== undefined ? [symbols] : [])].filter((f) => !existsSync(f));
        let ok = paths.length === 0;
        for (const node of holders) {
          if (ok) break;
          const url = view.urlOf(node);
          if (url === undefined) continue;
          try {
            for (const f of paths) {
              mkdirSync(dirname(f), { recursive: true });
              dirs.add(dirname(f));
              this.o.counters.copiedBytes.inc(
                await copyIndexFile(this.o.peers, { url, repoId: p.repoId, name: basename(f), path: f, timeoutMs: this.o.copyTimeoutMs ?? 10_000 }),
              );
            }
            ok = true;
            this.o.counters.copiedShards.inc();
          } catch (err) {
            this.o.counters.copyFailures.inc();
            this.o.log.warn({ repoId: p.repoId, shard: s.file, from: node, err: (err as Error).message }, 'copying a shard failed; trying another holder');
          }
        }
        if (ok) done.push(s);
      }
      for (const dir of dirs) await syncFiles(dir, []);
    });
    return done;
  }

  /** Runs `fn` under the repository's lock (the one builds take), making its directory first. */
  async #locked<T>(repoId: number, fn: () => T | Promise<T>): Promise<T> {
    const dir = shardsDir(this.o.dataDir, repoId);
    mkdirSync(dir, { recursive: true });
    const release = await acquireLock(join(dir, 'lock'), `repository ${repoId}`);
    try {
      return await fn();
    } finally {
      release();
    }
  }
}

/** A manifest of a build from git (not a copy into compound shards). */
function isBuild(m: Manifest | LoadedManifest): boolean {
  return m.version === 2 && m.shards.every((s) => s.member === undefined);
}

/** Whether a whole build here is newer than the copy of an older build published over it. */
function overtaken(mine: Manifest | LoadedManifest, p: PublishedIndex): boolean {
  return isBuild(mine) && mine.subset !== true && p.content !== undefined && mine.generation > p.content && mine.generation < p.generation;
}
