// Which node lists the connections (cluster-sync.ts): one at a time holds the key
// <name>:leader (ClusterKeys.leader), a string naming it, with an expiry of ttlMs (default
// three heartbeats). Every heartbeat each node runs one script: the holder renews its
// expiry (compare-and-renew: only while the key still names it), anyone else takes the key
// when it is free (SET NX PX). close() deletes the key if it still names this node
// (compare-and-delete), so the next node takes over at its next heartbeat rather than
// after the expiry; a node that dies simply stops renewing and loses the key when it
// expires.
//
// A holder that cannot renew (Redis unreachable, or slow) stops counting itself leader
// one heartbeat before its key can expire (measured from when it sent its last successful
// renewal, so before the server's own expiry), whether or not the failing command has
// returned: two nodes never both think they lead, clocks running at the same rate.

import type { Redis } from 'ioredis';
import type { Logger } from '../runtime/logger.ts';
import { closeRedis, connectRedis } from '../runtime/redis-client.ts';

// KEYS: leader; ARGV: id, ttl ms. 1 when `id` holds the key now (renewed or taken), else 0.
const CAMPAIGN = `
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
if holder then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])
return 1
`;

// KEYS: leader; ARGV: id. Deletes the key if it names `id`.
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

export interface LeaderOptions {
  /** A connection (the caller's: left open by close()) or a URL (connected here, closed by close()). */
  redis: Redis | string;
  /** ClusterKeys.leader. */
  key: string;
  /** This node's id. */
  id: string;
  /** What the key's holder leads, as the logs name it ('the sync', 'the watches'): a node may hold several keys. */
  leads: string;
  /** How often the key is renewed or tried for (cluster.heartbeatMs). */
  heartbeatMs: number;
  /** How long the key lasts without renewal (default 3 × heartbeatMs; at least 2 ×). */
  ttlMs?: number;
  log: Logger;
  /** This node became the leader. */
  onGain?: () => void;
  /** This node is no longer the leader (lost the key, could not renew it, or closed). */
  onLose?: () => void;
}

export class Leader {
  readonly #options: LeaderOptions;
  readonly #redis: Redis;
  readonly #owned: boolean;
  readonly #ttlMs: number;
  #leader = false;
  #timer: NodeJS.Timeout | undefined;
  #expiry: NodeJS.Timeout | undefined;
  #campaigning: Promise<void> | undefined;
  #closed = false;
  #failing = false;

  private constructor(options: LeaderOptions, redis: Redis, owned: boolean) {
    this.#options = options;
    this.#redis = redis;
    this.#owned = owned;
    this.#ttlMs = Math.max(options.ttlMs ?? 3 * options.heartbeatMs, 2 * options.heartbeatMs);
  }

  /** Connects (when given a URL), tries for the key once, then every heartbeat. */
  static async open(options: LeaderOptions): Promise<Leader> {
    const owned = typeof options.redis === 'string';
    const redis = typeof options.redis === 'string' ? await connectRedis(options.redis, { what: 'the cluster leader key' }) : options.redis;
    const leader = new Leader(options, redis, owned);
    await leader.#campaign();
    leader.#schedule();
    return leader;
  }

  get isLeader(): boolean {
    return this.#leader;
  }

  /** The id of the node that holds the key now (undefined: none, or Redis did not answer). */
  async holder(): Promise<string | undefined> {
    try {
      return (await this.#redis.get(this.#options.key)) ?? undefined;
    } catch {
      return undefined;
    }
  }

  /** Stops trying, and gives the key up when this node holds it. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    await this.#campaigning;
    // Released whether or not this node counted itself leader: a try that landed while
    // closing holds the key too. Only the key naming this node is deleted.
    try {
      await this.#redis.eval(RELEASE, 1, this.#options.key, this.#options.id);
    } catch (err) {
      if (this.#leader)
        this.#options.log.warn({ err: (err as Error).message, leads: this.#options.leads }, 'the leader key could not be released: it expires by itself');
    }
    this.#set(false);
    if (this.#owned) await closeRedis(this.#redis);
  }

  #schedule(): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => {
      void this.#campaign().finally(() => this.#schedule());
    }, this.#options.heartbeatMs);
    this.#timer.unref();
  }

  #campaign(): Promise<void> {
    this.#campaigning = (async () => {
      const sentAt = Date.now();
      let held: boolean;
      try {
        held = (await this.#redis.eval(CAMPAIGN, 1, this.#options.key, this.#options.id, String(this.#ttlMs))) === 1;
        if (this.#failing) this.#options.log.info({ leads: this.#options.leads }, 'the leader key can be renewed again');
        this.#failing = false;
      } catch (err) {
        // Unknown: keep what we were until the expiry timer says otherwise.
        if (!this.#failing)
          this.#options.log.warn(
            { err: (err as Error).message, leader: this.#leader, leads: this.#options.leads },
            'the leader key could not be renewed or tried for',
          );
        this.#failing = true;
        return;
      }
      if (this.#closed) return; // close() is waiting for this, and releases the key
      if (held) {
        // Give up one heartbeat before the key can have expired, unless renewed meanwhile.
        clearTimeout(this.#expiry);
        const left = sentAt + this.#ttlMs - this.#options.heartbeatMs - Date.now();
        this.#expiry = setTimeout(
          () => {
            this.#options.log.warn({ leads: this.#options.leads }, 'leadership given up: the leader key could not be renewed in time');
            this.#set(false);
          },
          Math.max(0, left),
        );
        this.#expiry.unref();
      }
      this.#set(held);
    })();
    return this.#campaigning;
  }

  #set(leader: boolean): void {
    if (!leader) {
      clearTimeout(this.#expiry);
      this.#expiry = undefined;
    }
    if (leader === this.#leader) return;
    this.#leader = leader;
    const { id, leads } = this.#options;
    this.#options.log.info({ node: id, leads }, leader ? `this node now leads ${leads}` : `this node no longer leads ${leads}`);
    if (leader) this.#options.onGain?.();
    else this.#options.onLose?.();
  }
}
