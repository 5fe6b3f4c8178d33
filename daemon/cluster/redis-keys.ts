// Where a cluster keeps its shared, fast-changing state in Redis: every key starts with the
// cluster's name (cluster.name, default "trawl"), so that clusters can share one server.
//
//   <name>:nodes              sorted set: node id → its last heartbeat (ms, Redis's clock)
//   <name>:node:<id>          hash: url, state, startedAt, version, holdsVersion (membership.ts)
//   <name>:holds:<id>         hash: repository id → what the node holds of its index (holdings.ts)
//   <name>:indexes            hash: repository id → its published index (published.ts)
//   <name>:events             pub/sub channel: "nodes", "holds", "index:<id>" wake the readers
//   <name>:leader             string with an expiry: the node that lists the connections (leader.ts)
//   <name>:watches:leader     string with an expiry: the node that checks the watches and
//                             delivers their changes (leader.ts; daemon.ts joinCluster)
//   <name>:listed             string: when the last listing finished, ms (cluster-sync.ts)
//   <name>:listing            hash: repository id → its job as the last listing queued it, so
//                             that any node can queue it again (cluster-sync.ts requeue)
//   <name>:generation:<id>    string: the last generation handed to a build of the repository (published.ts)
//   <name>:generation:packs   string: the last generation of compound shards handed out (published.ts)
//   <name>:sync:* (BullMQ)    the index job queue, BullMQ's own keys under that prefix (jobs.ts)
//   <name>:asked:tickets      hash: repository id → requests for its sync so far (sync-answers.ts)
//   <name>:asked:since        hash: repository id → when its first request not yet taken by a build came, ms
//   <name>:asked:answers      hash: repository id → its last build's outcome, and the requests it answered
//   <name>:asked:news         pub/sub channel: each build's outcome, and "listing" (asked-syncs.ts)

export class ClusterKeys {
  readonly nodes: string;
  readonly indexes: string;
  readonly events: string;
  readonly leader: string;
  readonly watchesLeader: string;
  readonly listed: string;
  readonly listing: string;
  /** The syncs asked for one repository at a time (sync-answers.ts). */
  readonly asked: { tickets: string; since: string; answers: string; news: string };
  /** BullMQ's key prefix (its queue name is added after it). */
  readonly queuePrefix: string;

  constructor(readonly name: string) {
    this.nodes = `${name}:nodes`;
    this.indexes = `${name}:indexes`;
    this.events = `${name}:events`;
    this.leader = `${name}:leader`;
    this.watchesLeader = `${name}:watches:leader`;
    this.listed = `${name}:listed`;
    this.listing = `${name}:listing`;
    this.asked = { tickets: `${name}:asked:tickets`, since: `${name}:asked:since`, answers: `${name}:asked:answers`, news: `${name}:asked:news` };
    this.queuePrefix = `${name}:sync`;
  }

  node(id: string): string {
    return `${this.name}:node:${id}`;
  }

  holds(id: string): string {
    return `${this.name}:holds:${id}`;
  }
}
