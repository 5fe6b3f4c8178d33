// Who is in the cluster: every node beats its heart in Redis (keys.ts) and reads everyone
// else's at the same pace. A node whose last heartbeat is older than nodeTimeoutMs is dead;
// its shards are then served by their other replicas and copied to the node placement
// names next (placement.ts, replicator.ts). Times are Redis's clock (TIME, inside the
// scripts), so the nodes' own clocks may disagree without anyone being taken for dead.
//
// A node's record (hash <name>:node:<id>):
//   url           where the other nodes reach it (--advertise; its listen address by default)
//   state         "serving", or "leaving" once it is stopping (placement no longer gives it
//                 shards; it serves what it holds until the others have copied it)
//   startedAt     ISO 8601
//   version       trawl's version
//   holdsVersion  changes whenever its holdings do (holdings.ts): readers re-read them then
//
// Nodes dead for longer than FORGET_MS are removed from the set (a node that comes back
// later simply joins again).
//
// When Redis cannot be reached, a node keeps the last membership it read (and keeps
// serving); the others will take it for dead once its heartbeats stop arriving.
//
// `trawl cluster status` reads the membership without joining it (observe): no record, no
// heartbeat, every node judged by its last heartbeat alone.

import type { Redis } from 'ioredis';
import type { ClusterKeys } from './redis-keys.ts';

export type NodeState = 'serving' | 'leaving';

export interface NodeInfo {
  id: string;
  url: string;
  state: NodeState;
  startedAt: string;
  version: string;
  /** Changes whenever the node's holdings do. */
  holdsVersion: string;
  /** Its last heartbeat (ms since the epoch, Redis's clock). */
  heartbeatAt: number;
  /** Whether that heartbeat is recent enough. */
  live: boolean;
}

/** Node ids: what --node-id accepts. */
export const NODE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The id of a reader that is no node (observe): NODE_ID matches no empty id. */
export const OBSERVER = '';

/** A node dead for this long is dropped from the membership. */
const FORGET_MS = 3_600_000;

// KEYS[1] nodes, KEYS[2] this node's record; ARGV[1] node id, ARGV[2..] record fields and
// values. Returns Redis's time in ms.
const BEAT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now, ARGV[1])
if #ARGV > 1 then redis.call('HSET', KEYS[2], unpack(ARGV, 2)) end
return now
`;

// KEYS[1] nodes; ARGV[1] forget after (ms). Returns { now, id1, beat1, id2, beat2, ... }.
const READ = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]))
local out = { now }
local all = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
for i = 1, #all do out[#out + 1] = all[i] end
return out
`;

type Scripted = Redis & {
  trawlBeat(nodes: string, record: string, ...args: string[]): Promise<number>;
  trawlRead(nodes: string, forgetMs: number): Promise<Array<string | number>>;
};

export interface MembershipOptions {
  redis: Redis;
  keys: ClusterKeys;
  self: { id: string; url: string; version: string };
  heartbeatMs: number;
  nodeTimeoutMs: number;
  /** Told when the live nodes, their states or their holdings change (after the read that saw it). */
  onChange?: (nodes: NodeInfo[]) => void;
  /** Told when a heartbeat or read fails (at most once per outage). */
  onError?: (err: Error) => void;
}

export class Membership {
  #nodes: NodeInfo[] = [];
  #state: NodeState = 'serving';
  readonly #startedAt = new Date().toISOString();
  #holdsVersion = '0';
  #timer: NodeJS.Timeout | undefined;
  #beating: Promise<void> | undefined;
  #failing = false;
  #readAt = 0;
  readonly #redis: Scripted;

  private constructor(
    private readonly options: MembershipOptions,
    /** Reads only (observe): beats no heart, writes no record. */
    private readonly observing = false,
  ) {
    this.#redis = options.redis as Scripted;
    this.#redis.defineCommand('trawlBeat', { numberOfKeys: 2, lua: BEAT });
    this.#redis.defineCommand('trawlRead', { numberOfKeys: 1, lua: READ });
  }

  /** Joins: writes this node's record and first heartbeat, reads the others, then beats every heartbeatMs. */
  static async join(options: MembershipOptions): Promise<Membership> {
    if (!NODE_ID.test(options.self.id))
      throw new Error(`node id "${options.self.id}" must be a letter or digit followed by up to 63 letters, digits, ".", "_" or "-"`);
    const m = new Membership(options);
    await m.#beat(true);
    m.#timer = setInterval(() => void m.beat(), options.heartbeatMs);
    m.#timer.unref();
    return m;
  }

  /**
   * Reads the membership without joining it (trawl cluster status). beat() reads it again;
   * nothing else of a Membership is for an observer.
   */
  static async observe(options: Pick<MembershipOptions, 'redis' | 'keys' | 'nodeTimeoutMs'>): Promise<Membership> {
    const m = new Membership({ ...options, self: { id: OBSERVER, url: '', version: '' }, heartbeatMs: 0 }, true);
    await m.#beat(false);
    return m;
  }

  get id(): string {
    return this.options.self.id;
  }

  /** Every node known, dead ones too (live false), by id. */
  nodes(): NodeInfo[] {
    return this.#nodes;
  }

  /** The live nodes, by id. */
  live(): NodeInfo[] {
    return this.#nodes.filter((n) => n.live);
  }

  node(id: string): NodeInfo | undefined {
    return this.#nodes.find((n) => n.id === id);
  }

  /** Redis's clock at the last read (ms since the epoch): how old a heartbeat is, whatever this machine's clock says. */
  get readAt(): number {
    return this.#readAt;
  }

  /** A heartbeat and a read now (one at a time: a call during one joins it). */
  beat(): Promise<void> {
    this.#beating ??= this.#beat(false)
      .catch((err: unknown) => {
        if (!this.#failing) this.options.onError?.(err as Error);
        this.#failing = true;
      })
      .finally(() => (this.#beating = undefined));
    return this.#beating;
  }

  /** Sets this node's state ("leaving" when it stops) and tells the others at once. */
  async setState(state: NodeState): Promise<void> {
    this.#state = state;
    await this.beat();
  }

  /** Marks this node's holdings changed, so that the others re-read them (holdings.ts). */
  async holdingsChanged(): Promise<void> {
    this.#holdsVersion = `${Date.now()}-${Math.random().toString(36).slice(2, 8)}`;
    // A beat already on its way carries the old version: the new one goes in a beat of its own.
    await this.#beating;
    await this.beat();
    await this.options.redis.publish(this.options.keys.events, 'holds');
  }

  /** Stops beating and removes this node from the membership (a clean stop: nobody waits for its timeout). */
  async leave(): Promise<void> {
    this.stop();
    await this.#beating?.catch(() => {});
    const { redis, keys, self } = this.options;
    await redis.multi().zrem(keys.nodes, self.id).del(keys.node(self.id)).del(keys.holds(self.id)).publish(keys.events, 'nodes').exec();
  }

  /** Stops beating (a crash's equivalent for tests; leave() for a clean stop). */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  async #beat(first: boolean): Promise<void> {
    const { keys, self, nodeTimeoutMs } = this.options;
    if (!this.observing) {
      const record = ['url', self.url, 'state', this.#state, 'startedAt', this.#startedAt, 'version', self.version, 'holdsVersion', this.#holdsVersion];
      await this.#redis.trawlBeat(keys.nodes, keys.node(self.id), self.id, ...record);
      if (first) await this.options.redis.publish(keys.events, 'nodes');
    }
    const read = await this.#redis.trawlRead(keys.nodes, FORGET_MS);
    const now = Number(read[0]);
    const beats = new Map<string, number>();
    for (let i = 1; i + 1 < read.length; i += 2) beats.set(String(read[i]), Number(read[i + 1]));
    const ids = [...beats.keys()].sort();
    const pipeline = this.options.redis.pipeline();
    for (const id of ids) pipeline.hgetall(keys.node(id));
    const records = ids.length === 0 ? [] : ((await pipeline.exec()) ?? []);
    const nodes: NodeInfo[] = [];
    ids.forEach((id, i) => {
      const [err, raw] = records[i] ?? [new Error('no reply'), undefined];
      const r = (err ? {} : raw) as Record<string, string>;
      // A record removed by a leave() racing this read: the node is gone.
      if (r.url === undefined && id !== self.id) return;
      const heartbeatAt = beats.get(id)!;
      nodes.push({
        id,
        url: r.url ?? self.url,
        state: r.state === 'leaving' ? 'leaving' : 'serving',
        startedAt: r.startedAt ?? '',
        version: r.version ?? '',
        holdsVersion: r.holdsVersion ?? '0',
        heartbeatAt,
        // This node is live in its own eyes, whatever Redis says.
        live: id === self.id || now - heartbeatAt <= nodeTimeoutMs,
      });
    });
    this.#failing = false;
    const before = signature(this.#nodes);
    this.#nodes = nodes;
    this.#readAt = now;
    if (signature(nodes) !== before) this.options.onChange?.(nodes);
  }
}

/** What a change of membership is: who is live, in which state, with which holdings. */
function signature(nodes: NodeInfo[]): string {
  return nodes.map((n) => `${n.id}:${n.live ? 1 : 0}:${n.state}:${n.holdsVersion}:${n.url}`).join(',');
}
