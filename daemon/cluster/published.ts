// The cluster's index catalog: for every repository, the index its last build committed
// (the builder's manifest, published by the node that built it), in Redis (keys.ts):
//
//   <name>:indexes          hash: repository id → PublishedIndex as JSON
//   <name>:indexes:seq      counter, raised by every publication
//   <name>:indexes:changed  sorted set: repository id → the seq of its last publication
//   <name>:generation:<id>  the highest generation handed out for the repository (allocate)
//
// Readers load the hash once and then only what changed since the seq they saw (one
// ZRANGEBYSCORE), so that a cluster of many repositories does not re-read them all on
// every change.
//
// Publication is compare-and-set on the generation: a build is published only when its
// generation is above the published one, so a slow build that a later one overtook never
// replaces it. Generations come from allocate(): each build of a repository, on whichever
// node, gets generations no other build of it got, so a file name (g<gen>-<n>.trawl)
// stands for one content in the whole cluster, and a node that holds a file of that name
// holds that file (the replicator copies only what it lacks).
//
// A removed repository is published as a tombstone (deleted: true) with a generation past
// the last, so that a late publication of an older build does not bring it back.
//
// Small repositories are copied into compound shards after they are built (pack-job.ts):
// such a copy is published under a generation of its own with `content`, the generation
// of the build whose documents it holds. It is published only over that very build
// (publishOver), never over a newer one; a build that finished meanwhile but lost the
// race to publish is published again over the copy (replicator.ts). Pack file names come
// from their own counter (<name>:generation:packs), so a pack name too stands for one
// content in the whole cluster.

import type { Redis } from 'ioredis';
import type { Manifest } from '../index/manifest.ts';
import type { ClusterKeys } from './redis-keys.ts';

/** A repository's current index as the cluster knows it. */
export interface PublishedIndex {
  repoId: number;
  generation: number;
  /** The node that built it from git (holds its mirror, and all of its files while it is live unless `packedBy`). */
  builtBy: string;
  /** A copy of another generation's documents into a compound shard: that generation (its content's). */
  content?: number;
  /** The node that made the copy (holds its compound shard while it is live). */
  packedBy?: string;
  /** The builder's manifest without its own bookkeeping (retired files, index-version); absent for a tombstone. */
  manifest?: Omit<Manifest, 'retired' | 'indexVersion' | 'subset'>;
  /** The repository was removed: every node retires its index. */
  deleted?: true;
  /** ISO 8601 */
  publishedAt: string;
}

// KEYS: indexes, indexes:seq, indexes:changed; ARGV: repo id, generation, JSON.
// Returns the new seq, or 0 when the published generation is not below this one.
const PUBLISH = `
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current then
  if tonumber(cjson.decode(current).generation) >= tonumber(ARGV[2]) then return 0 end
end
local seq = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[3], seq, ARGV[1])
return seq
`;

// KEYS: generation:<id>; ARGV: the least generation the builder may use. Reserves two
// (a build's and its symbols pass's) and returns the first.
const ALLOCATE = `
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
local g = math.max(last + 1, tonumber(ARGV[1]))
redis.call('SET', KEYS[1], g + 1)
return g
`;

// KEYS: indexes, indexes:seq, indexes:changed; ARGV: repo id, the generation that must be
// published now, JSON. Returns the new seq, or 0 when another generation is published.
const PUBLISH_OVER = `
local current = redis.call('HGET', KEYS[1], ARGV[1])
if not current then return 0 end
if tonumber(cjson.decode(current).generation) ~= tonumber(ARGV[2]) then return 0 end
local seq = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('ZADD', KEYS[3], seq, ARGV[1])
return seq
`;

type Scripted = Redis & {
  trawlPublish(indexes: string, seq: string, changed: string, repoId: string, generation: number, json: string): Promise<number>;
  trawlPublishOver(indexes: string, seq: string, changed: string, repoId: string, generation: number, json: string): Promise<number>;
  trawlAllocate(key: string, least: number): Promise<number>;
};

export class PublishedIndexes {
  readonly #redis: Scripted;
  readonly #byRepo = new Map<number, PublishedIndex>();
  #seq = -1;
  #loading: Promise<boolean> | undefined;

  constructor(
    redis: Redis,
    private readonly keys: ClusterKeys,
  ) {
    this.#redis = redis as Scripted;
    this.#redis.defineCommand('trawlPublish', { numberOfKeys: 3, lua: PUBLISH });
    this.#redis.defineCommand('trawlAllocate', { numberOfKeys: 1, lua: ALLOCATE });
    this.#redis.defineCommand('trawlPublishOver', { numberOfKeys: 3, lua: PUBLISH_OVER });
  }

  /** The publication counter as last read: it moves with every publication. */
  get seq(): number {
    return this.#seq;
  }

  /** Every repository's published index, tombstones included, as last read (refresh). */
  all(): IterableIterator<PublishedIndex> {
    return this.#byRepo.values();
  }

  get(repoId: number): PublishedIndex | undefined {
    return this.#byRepo.get(repoId);
  }

  /** The generation a new build of the repository starts at: past `least` and every one handed out before. */
  allocate(repoId: number, least: number): Promise<number> {
    return this.#redis.trawlAllocate(`${this.keys.name}:generation:${repoId}`, least);
  }

  /** The generation of the next compound shards a node builds: past `least` and every one handed out before. */
  allocatePack(least: number): Promise<number> {
    return this.#redis.trawlAllocate(`${this.keys.name}:generation:packs`, least);
  }

  /** Publishes an index; false when an index of the same or a later generation is published already. */
  async publish(index: PublishedIndex): Promise<boolean> {
    const seq = await this.#redis.trawlPublish(
      this.keys.indexes,
      `${this.keys.indexes}:seq`,
      `${this.keys.indexes}:changed`,
      String(index.repoId),
      index.generation,
      JSON.stringify(index),
    );
    return this.#published(index, seq);
  }

  /** Publishes an index in place of generation `over` only (a copy of that build's documents); false when another is published. */
  async publishOver(index: PublishedIndex, over: number): Promise<boolean> {
    const seq = await this.#redis.trawlPublishOver(
      this.keys.indexes,
      `${this.keys.indexes}:seq`,
      `${this.keys.indexes}:changed`,
      String(index.repoId),
      over,
      JSON.stringify(index),
    );
    return this.#published(index, seq);
  }

  async #published(index: PublishedIndex, seq: number): Promise<boolean> {
    if (seq === 0) return false;
    await this.#redis.publish(this.keys.events, `index:${index.repoId}`);
    return true;
  }

  /**
   * Reads what changed since the last read (everything, the first time); true when
   * something did. One read at a time: a call during one joins it.
   */
  refresh(): Promise<boolean> {
    this.#loading ??= this.#refresh().finally(() => (this.#loading = undefined));
    return this.#loading;
  }

  async #refresh(): Promise<boolean> {
    const seqKey = `${this.keys.indexes}:seq`;
    const seq = Number((await this.#redis.get(seqKey)) ?? 0);
    if (seq === this.#seq) return false;
    if (this.#seq < 0 || seq < this.#seq) {
      // First read, or Redis lost its data (the counter went back): everything again.
      const all = await this.#redis.hgetall(this.keys.indexes);
      this.#byRepo.clear();
      for (const json of Object.values(all)) this.#add(json);
      this.#seq = seq;
      return true;
    }
    const changed = await this.#redis.zrangebyscore(`${this.keys.indexes}:changed`, `(${this.#seq}`, '+inf');
    if (changed.length > 0) {
      const values = await this.#redis.hmget(this.keys.indexes, ...changed);
      for (const json of values) if (json !== null) this.#add(json);
    }
    this.#seq = seq;
    return changed.length > 0;
  }

  #add(json: string): void {
    const index = JSON.parse(json) as PublishedIndex;
    this.#byRepo.set(index.repoId, index);
  }
}
